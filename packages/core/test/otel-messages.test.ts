// The OpenTelemetry bridge on messages published by hand on the limiter channels: how each
// field maps to metrics and attributes, with the real metrics SDK.
import { channel } from 'node:diagnostics_channel'
import { afterEach, describe, expect, it } from 'vitest'
import {
  CIRCUIT_CHANNEL,
  type CircuitEvent,
  createLimiter,
  DECISION_CHANNEL,
  type Decision,
  type DecisionEvent,
  FAILURE_CHANNEL,
  type FailureEvent,
  type Limiter,
  LimiterError,
  MemoryStore,
  type PolicyDecision,
} from '../src/index.js'
import { MAX_TALLIES } from '../src/observability/otel/attributes.js'
import {
  DURATION_BUCKETS_S,
  instrumentLimiters,
  type LimiterInstrumentation,
} from '../src/observability/otel/index.js'
import { sharedBy } from '../src/observability/otel/meters.js'
import { type MetricsSdk, metricsSdk, table } from './setup/otel.js'

const decisions = channel(DECISION_CHANNEL)
const failures = channel(FAILURE_CHANNEL)
const circuits = channel(CIRCUIT_CHANNEL)

let running: LimiterInstrumentation[] = []
afterEach(() => {
  for (const r of running) r.stop()
  running = []
})

function start(sdk: MetricsSdk, limiters?: (l: Limiter) => boolean) {
  const r = instrumentLimiters({ meterProvider: sdk.meterProvider, limiters })
  running.push(r)
  return r
}

function policy(name: string, allowed: boolean, remaining: number, retryAfterMs = 0) {
  return { name, allowed, limit: 10, remaining, resetMs: 1000, retryAfterMs } as PolicyDecision
}

function decision(
  policies: PolicyDecision[],
  source: Decision['source'] = 'store',
  allowed = policies.every((p) => p.allowed),
): Decision {
  return {
    allowed,
    limit: 10,
    remaining: 0,
    resetMs: 0,
    retryAfterMs: 0,
    delayMs: 0,
    source,
    policies,
  }
}

function publish(limiter: Limiter, d: Decision, extra: Partial<DecisionEvent> = {}) {
  const event: DecisionEvent = {
    limiter,
    key: 'k',
    cost: 1,
    decision: d,
    source: d.source,
    store: 'redis',
    durationMs: 2,
    shadow: false,
    ...extra,
  }
  decisions.publish(event)
}

const two = createLimiter({
  name: 'api',
  limits: [
    { name: 'second', limit: 10, window: '1s' },
    { name: 'minute', limit: 100, window: '1m' },
    { name: 'hour', limit: 1000, window: '1h' },
  ],
})

describe('limiter.decisions from hand-made messages', () => {
  it('names the policy that decided: the fewest remaining, or the longest refusal', async () => {
    const sdk = metricsSdk()
    start(sdk)
    // admitted: the fewest remaining, first on a tie
    publish(
      two,
      decision([policy('second', true, 5), policy('minute', true, 3), policy('hour', true, 3)]),
    )
    // refused: among the refusing policies, the longest retryAfterMs, first on a tie
    publish(
      two,
      decision([
        policy('second', false, 0, 500),
        policy('minute', true, 1),
        policy('hour', false, 0, 9000),
      ]),
    )
    publish(
      two,
      decision([
        policy('second', true, 0),
        policy('minute', false, 0, 7),
        policy('hour', false, 0, 7),
      ]),
    )
    publish(
      two,
      decision(
        [policy('second', false, 0, 900), policy('minute', true, 0), policy('hour', true, 0)],
        'blocked-cache',
      ),
    )
    expect(table(await sdk.points('limiter.decisions'))).toEqual({
      'limiter.name=api,limiter.policy=minute,limiter.result=allowed,limiter.shadow=false,limiter.store=redis': 1,
      'limiter.name=api,limiter.policy=hour,limiter.result=limited,limiter.shadow=false,limiter.store=redis': 1,
      'limiter.name=api,limiter.policy=minute,limiter.result=limited,limiter.shadow=false,limiter.store=redis': 1,
      'limiter.name=api,limiter.policy=second,limiter.result=limited,limiter.shadow=false,limiter.store=redis': 1,
    })
    // only the store's decisions have a duration: 3, not the blocked-cache one
    const [duration] = await sdk.points('limiter.store.duration')
    expect(duration?.attributes).toEqual({ 'limiter.name': 'api', 'limiter.store': 'redis' })
    expect(duration?.histogram?.count).toBe(3)
    expect(duration?.histogram?.sum).toBeCloseTo(0.006, 9)
    await sdk.shutdown()
  })

  // Regression: one tally per distinct limiter name, forever (per-customer limit sets made
  // 60,000 names, +32 MB, of which the SDK exports 2,000).
  it('keeps at most MAX_TALLIES series apart; what the idlest count next goes to `other`', async () => {
    const sdk = metricsSdk()
    start(sdk, (l) => l.name.startsWith('customer-') || l.name === 'hot')
    const { tallies } = sharedBy(sdk.meterProvider.getMeter('@limiter/core'))
    const store = new MemoryStore()
    const hot = createLimiter({ name: 'hot', limit: 10, window: '1m', store })
    const allowed = decision([policy('p', true, 1)])
    // more than MAX_TALLIES, fewer than the 2,000 series the SDK itself keeps (past those, it
    // folds on its own)
    const customers = Array.from({ length: 1.8 * MAX_TALLIES }, (_, i) =>
      createLimiter({ name: `customer-${i}`, limit: 10, window: '1m', store }),
    )
    let most = 0
    // two rounds: in the second, the customers whose series fell out count in `other`
    for (let round = 0; round < 2; round++) {
      for (const [i, customer] of customers.entries()) {
        publish(customer, allowed)
        publish(hot, allowed)
        most = Math.max(most, tallies.decisions.size)
        // the SDK collects now and then, as a periodic reader does
        if (i % 300 === 0) await sdk.points('limiter.decisions')
      }
    }
    expect(most).toBeLessThanOrEqual(MAX_TALLIES)
    const points = await sdk.points('limiter.decisions')
    const other = points.filter((p) => p.attributes['limiter.name'] === 'other')
    expect(other.map((p) => p.attributes)).toEqual([
      {
        'limiter.name': 'other',
        'limiter.policy': 'other',
        'limiter.result': 'allowed',
        'limiter.store': 'redis',
        'limiter.shadow': false,
        'otel.metric.overflow': true,
      },
    ])
    expect(other[0]?.value).toBeGreaterThan(customers.length - MAX_TALLIES)
    // the hot limiter moves between every two passes: it never fell out
    const row = (name: string) =>
      `limiter.name=${name},limiter.policy=${name},limiter.result=allowed,limiter.shadow=false,limiter.store=redis`
    expect(table(points)[row('hot')]).toBe(2 * customers.length)
    // every count is reported once: the SDK keeps a folded series' last value, and `other`
    // has only what came after
    const total = points.reduce((sum, p) => sum + p.value, 0)
    expect(total).toBe(4 * customers.length)
    await sdk.shutdown()
  })

  // Regression (found from outside): tallies folded idle series, but the SDK keeps every set it
  // has observed, and past 2,000 over the process's life it dropped the new ones: 15,000
  // decisions of 5,000 short-lived names exported 5,997, and a later limiter none at all.
  it('past MAX_TALLIES sets over the process life, every decision still adds up', async () => {
    const sdk = metricsSdk()
    start(sdk, (l) => l.name.startsWith('churn-') || l.name === 'late')
    const store = new MemoryStore()
    const allowed = decision([policy('p', true, 1)])
    const names = 2.5 * MAX_TALLIES
    for (let i = 0; i < names; i++) {
      const churn = createLimiter({ name: `churn-${i}`, limit: 10, window: '1m', store })
      for (let k = 0; k < 3; k++) publish(churn, allowed)
      if (i % 250 === 0) await sdk.points('limiter.decisions')
    }
    const late = createLimiter({ name: 'late', limit: 10, window: '1m', store })
    for (let k = 0; k < 10; k++) publish(late, allowed)
    const points = await sdk.points('limiter.decisions')
    expect(points.length).toBeLessThanOrEqual(MAX_TALLIES + 1)
    expect(points.reduce((sum, p) => sum + p.value, 0)).toBe(3 * names + 10)
    await sdk.shutdown()
  })

  it('maps failure modes and shadow to results, and skips peeks', async () => {
    const sdk = metricsSdk()
    start(sdk)
    const ok = [policy('second', true, 1), policy('minute', true, 1), policy('hour', true, 1)]
    publish(two, decision(ok, 'fail-open'))
    publish(two, decision(ok, 'fail-closed', false))
    publish(two, decision(ok, 'local'))
    publish(two, decision(ok, 'local', false), { store: 'memory' })
    publish(two, decision([policy('second', false, 0, 5), ...ok.slice(1)]), { shadow: true })
    publish(two, decision(ok), { cost: 0 })
    expect(table(await sdk.points('limiter.decisions'))).toEqual({
      'limiter.name=api,limiter.policy=second,limiter.result=failed_open,limiter.shadow=false,limiter.store=redis': 1,
      'limiter.name=api,limiter.policy=second,limiter.result=failed_closed,limiter.shadow=false,limiter.store=redis': 1,
      'limiter.name=api,limiter.policy=second,limiter.result=local,limiter.shadow=false,limiter.store=redis': 1,
      'limiter.name=api,limiter.policy=second,limiter.result=local,limiter.shadow=false,limiter.store=memory': 1,
      'limiter.name=api,limiter.policy=second,limiter.result=limited,limiter.shadow=true,limiter.store=redis': 1,
    })
    // the shadow refusal was a store decision: one duration; failure modes made none
    expect((await sdk.points('limiter.store.duration'))[0]?.value).toBe(1)
    await sdk.shutdown()
  })

  it('records only the limiters the filter accepts, asking once per limiter', async () => {
    const sdk = metricsSdk()
    const one = createLimiter({ limit: 5, window: '1s', name: 'one' })
    const asked: string[] = []
    start(sdk, (l) => {
      asked.push(l.name)
      return l.name === 'one'
    })
    for (let i = 0; i < 3; i++) {
      publish(one, decision([policy('one', true, 4 - i)]))
      publish(
        two,
        decision([policy('second', true, 1), policy('minute', true, 1), policy('hour', true, 1)]),
      )
    }
    expect(asked).toEqual(['one', 'api'])
    expect(table(await sdk.points('limiter.decisions'))).toEqual({
      'limiter.name=one,limiter.policy=one,limiter.result=allowed,limiter.shadow=false,limiter.store=redis': 3,
    })
    await sdk.shutdown()
  })
})

describe('failures and circuits from hand-made messages', () => {
  const error = (code: 'ERR_LIMITER_STORE' | 'ERR_LIMITER_TIMEOUT') =>
    new LimiterError(code, 'Rate limit store failed')
  const fail = (limiter: Limiter, e: LimiterError) =>
    failures.publish({ limiter, key: 'k', error: e, circuitOpen: false } satisfies FailureEvent)
  const circuit = (limiter: Limiter, domain: string, state: 'open' | 'closed') =>
    circuits.publish({ limiter, domain, state } satisfies CircuitEvent)

  it('counts failures by error.type, and open circuits per limiter, each domain once', async () => {
    const sdk = metricsSdk()
    const r = start(sdk)
    fail(two, error('ERR_LIMITER_STORE'))
    fail(two, error('ERR_LIMITER_TIMEOUT'))
    fail(two, error('ERR_LIMITER_TIMEOUT'))
    expect(table(await sdk.points('limiter.store.failures'))).toEqual({
      'error.type=ERR_LIMITER_STORE,limiter.name=api': 1,
      'error.type=ERR_LIMITER_TIMEOUT,limiter.name=api': 2,
    })
    circuit(two, 'a:1', 'closed') // closed before we saw it open: not counted
    circuit(two, 'a:1', 'open')
    circuit(two, 'a:1', 'open') // a repeat changes nothing
    circuit(two, 'b:2', 'open')
    expect(table(await sdk.points('limiter.circuits.open'))).toEqual({ 'limiter.name=api': 2 })
    circuit(two, 'a:1', 'closed')
    expect(table(await sdk.points('limiter.circuits.open'))).toEqual({ 'limiter.name=api': 1 })
    // stop() takes the circuits it counted as open off the gauge, and stops listening; the
    // counts stay as they were
    r.stop()
    r.stop()
    expect(table(await sdk.points('limiter.circuits.open'))).toEqual({ 'limiter.name=api': 0 })
    circuit(two, 'c:3', 'open')
    fail(two, error('ERR_LIMITER_STORE'))
    publish(
      two,
      decision([policy('second', true, 1), policy('minute', true, 1), policy('hour', true, 1)]),
    )
    expect(table(await sdk.points('limiter.circuits.open'))).toEqual({ 'limiter.name=api': 0 })
    expect(
      table(await sdk.points('limiter.store.failures'))[
        'error.type=ERR_LIMITER_STORE,limiter.name=api'
      ],
    ).toBe(1)
    expect(await sdk.points('limiter.decisions')).toEqual([])
    expect(decisions.hasSubscribers).toBe(false)
    await sdk.shutdown()
  })

  it('never lets a bad message escape as an exception', async () => {
    const sdk = metricsSdk()
    start(sdk)
    expect(() => decisions.publish({ nonsense: true })).not.toThrow()
    expect(() => failures.publish(null)).not.toThrow()
    await new Promise((r) => setImmediate(r)) // a subscriber's throw would surface by now
    await sdk.shutdown()
  })
})

describe('instruments', () => {
  it('have the units and the meter documented', async () => {
    const sdk = metricsSdk()
    start(sdk)
    publish(
      two,
      decision([policy('second', true, 1), policy('minute', true, 1), policy('hour', true, 1)]),
    )
    fail(two)
    circuits.publish({ limiter: two, domain: '', state: 'open' } satisfies CircuitEvent)
    const units = Object.fromEntries(
      await Promise.all(
        [
          'limiter.decisions',
          'limiter.store.duration',
          'limiter.store.failures',
          'limiter.circuits.open',
        ].map(async (name) => {
          const d = await sdk.descriptor(name)
          return [name, `${d?.kind} ${d?.unit}`]
        }),
      ),
    )
    expect(units).toEqual({
      'limiter.decisions': 'counter {decision}',
      'limiter.store.duration': 'histogram s',
      'limiter.store.failures': 'counter {failure}',
      'limiter.circuits.open': 'up-down {circuit}',
    })
    expect((await sdk.descriptor('limiter.decisions'))?.scope).toBe('@limiter/core')
    // the histogram uses the advised buckets
    const [duration] = await sdk.points('limiter.store.duration')
    expect(duration?.histogram?.buckets.boundaries).toEqual([...DURATION_BUCKETS_S])
    await sdk.shutdown()

    function fail(limiter: Limiter) {
      failures.publish({
        limiter,
        key: 'k',
        error: new LimiterError('ERR_LIMITER_STORE', 'x'),
        circuitOpen: true,
      } satisfies FailureEvent)
    }
  })
})
