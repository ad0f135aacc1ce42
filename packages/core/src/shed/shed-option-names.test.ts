// Regression: createShedder and createAdaptiveLimit took any option name, so
// @fastify/under-pressure's `maxHeapUsedBytes` (and `thresholds: { heapUsed }`) left the heap
// unwatched without a word.
import { describe, expect, it } from 'vitest'
import { createAdaptiveLimit } from './adaptive.js'
import { createShedder } from './shedder.js'
import type { ShedderOptions } from './types.js'

const refusal = (make: () => unknown): string => {
  try {
    const made = make() as { close?: () => void }
    made.close?.()
  } catch (error) {
    expect(error).toBeInstanceOf(RangeError)
    return (error as Error).message
  }
  return 'accepted'
}
const shed = (options: object) => refusal(() => createShedder(options as ShedderOptions))

describe("createShedder refuses @fastify/under-pressure's names, saying ours", () => {
  it.each([
    [
      'maxEventLoopDelay',
      200,
      "is `thresholds: { delay }` here, in ms or a duration such as '200ms'",
    ],
    ['maxEventLoopUtilization', 0.98, 'is `thresholds: { elu }` here (0 to 1)'],
    ['maxHeapUsedBytes', 1e9, 'is `thresholds: { heap }` here (bytes)'],
    ['maxRssBytes', 1e9, 'there is no RSS signal: `thresholds: { heap }`'],
    ['retryAfter', 10, "a refusal's `retryAfterMs` is worked out by the shedder"],
    ['sampleInterval', 100, 'did you mean `interval`?'],
    ['heap', 1e9, 'a threshold: `thresholds: { heap }`'],
    ['min', 4, "adaptive concurrency's: `adaptive: { min }`"],
    ['recovry', 5, 'did you mean `recovery`?'],
  ])('%s', (name, value, hint) => {
    const message = shed({ [name]: value })
    expect(message.startsWith(`Invalid \`${name}\`: is not an option (`)).toBe(true)
    expect(message).toContain(hint)
  })

  it('an unknown name far from any gets no guess', () => {
    expect(shed({ totallyUnknown: 1 })).toBe('Invalid `totallyUnknown`: is not an option, got 1.')
  })
})

describe('nested options are name-checked too', () => {
  it.each([
    ['eventLoopDelay', 'did you mean `delay`?'],
    ['heapUsed', 'did you mean `heap`?'],
    ['maxHeapUsedBytes', 'did you mean `heap`?'],
    ['eventLoopUtilization', 'did you mean `elu`?'],
    ['rssBytes', 'there is no RSS signal'],
    ['inFlight', 'did you mean `inflight`?'],
  ])('thresholds.%s', (name, hint) => {
    expect(shed({ thresholds: { [name]: 1 } })).toContain(
      `Invalid \`thresholds.${name}\`: is not an option (${hint}`,
    )
  })

  it('thresholds must be an object', () => {
    expect(() => createShedder({ thresholds: 0.9 } as never)).toThrow(
      /`thresholds`: expected an object, got 0\.9/,
    )
  })

  it.each([
    ['minLimit', 'min'],
    ['maxLimit', 'max'],
    ['maxConcurrency', 'max'],
    ['initialLimit', 'initial'],
    ['rttTolerance', 'tolerance'],
  ])('adaptive.%s, in the shedder and alone', (name, meant) => {
    const expected = `Invalid \`adaptive.${name}\`: is not an option (did you mean \`${meant}\`?)`
    expect(shed({ adaptive: { [name]: 10 } })).toContain(expected)
    expect(refusal(() => createAdaptiveLimit({ [name]: 10 } as never))).toContain(expected)
  })

  it("a reviewer's createAdaptiveLimit({ minLimit, maxLimit }) names the first", () => {
    expect(refusal(() => createAdaptiveLimit({ minLimit: 2, maxLimit: 50 } as never))).toMatch(
      /^Invalid `adaptive\.minLimit`: is not an option \(did you mean `min`\?\)/,
    )
  })

  it('every option of ours is still taken', () => {
    const shedder = createShedder({
      name: 's',
      interval: '1s',
      recovery: 3,
      steps: 10,
      recoveryBand: 0.05,
      mode: 'shadow',
      thresholds: { elu: 0.9, delay: '100ms', inflight: 100, queue: '1s', heap: 1e9 },
      adaptive: {
        name: 'a',
        min: 2,
        max: 50,
        initial: 10,
        window: '250ms',
        minSamples: 10,
        probeSamples: 20,
        tolerance: 1.1,
        smoothing: 0.5,
        queueSize: 1,
        probeInterval: '30s',
        probeJitter: 0.1,
        probeRatio: 0.25,
        reserve: 0.2,
      },
    })
    expect(shedder.state().adaptive?.limit).toBe(10)
    shedder.close()
    expect(createAdaptiveLimit({ min: 2, max: 50 }).state().limit).toBe(20)
  })
})

describe('shedFirst', () => {
  it('refuses an unknown name, at the top and in queue', async () => {
    const { shedFirst } = await import('../http/shed-first.js')
    const shedder = createShedder()
    try {
      const listener = () => {}
      const bad = (options: object) =>
        refusal(() => shedFirst(shedder, listener, options as Parameters<typeof shedFirst>[2]))
      expect(bad({ priorty: 'low' })).toMatch(
        /`priorty`: is not an option \(did you mean `priority`\?\)/,
      )
      expect(bad({ queue: { maxwait: 50 } })).toMatch(
        /`queue.maxwait`: is not an option \(did you mean `maxWait`\?\)/,
      )
      expect(bad({ priority: 'low', queue: { maxWait: 50, maxSize: 10 } })).not.toMatch(/option/)
    } finally {
      shedder.close()
    }
  })
})
