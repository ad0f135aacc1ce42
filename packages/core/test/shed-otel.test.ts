// limiter.shed: the OpenTelemetry bridge counts what shedders refuse, by class and signal.
import { afterEach, expect, it } from 'vitest'
import { instrumentLimiters, type LimiterInstrumentation } from '../src/observability/otel/index.js'
import { SHED_HOOKS } from '../src/shed/hooks.js'
import { createShedder, type ShedderOptions } from '../src/shed/index.js'
import { tickShedder } from '../src/shed/shedder.js'
import { type MetricsSdk, metricsSdk, table } from './setup/otel.js'

let sdk: MetricsSdk | undefined
let bridge: LimiterInstrumentation | undefined
afterEach(async () => {
  bridge?.stop()
  await sdk?.shutdown()
})

function shedderOver(name: string, mode: 'enforce' | 'shadow') {
  const reading = { elu: 1, delayMs: 0, heapUsedBytes: 0 }
  const shedder = createShedder({
    name,
    mode,
    [SHED_HOOKS]: { manual: true, signals: { read: () => reading, close() {} } },
  } as ShedderOptions)
  // traffic in every named class, then over at every tick: low goes at the first, normal after
  // two more intervals over in a row
  for (const p of ['high', 'normal', 'low'] as const) {
    const a = shedder.admit(p)
    if (a.admitted) a.done()
  }
  for (let i = 0; i < 3; i++) tickShedder(shedder)
  return shedder
}

const row = (name: string, priority: string, signal: string, shadow: boolean) =>
  `limiter.name=${name},limiter.priority=${priority},limiter.shadow=${shadow},limiter.signal=${signal}`

it('counts shed requests by shedder, class, signal and shadow, until stop()', async () => {
  sdk = metricsSdk()
  bridge = instrumentLimiters({ meterProvider: sdk.meterProvider })
  const api = shedderOver('api', 'enforce')
  const dry = shedderOver('dry', 'shadow')
  for (const p of ['low', 'low', 'normal', 'high', 'critical', 7] as const) api.admit(p)
  dry.admit('low')
  // refused after admission (shedFirst's queue): counted like the rest, by their own signal
  expect(api.refuse('high', 'queue')).toMatchObject({ admitted: false, retryAfterMs: 1000 })
  expect(dry.refuse('low', 'queue')).toBeUndefined()
  expect(table(await sdk.points('limiter.shed'))).toEqual({
    [row('api', 'low', 'elu', false)]: 2,
    [row('api', 'normal', 'elu', false)]: 1,
    [row('api', '7', 'elu', false)]: 1,
    [row('api', 'high', 'queue', false)]: 1,
    [row('dry', 'low', 'elu', true)]: 1,
    [row('dry', 'low', 'queue', true)]: 1,
  })
  bridge.stop()
  api.admit('low')
  expect(table(await sdk.points('limiter.shed'))[row('api', 'low', 'elu', false)]).toBe(2)
})
