// acquire / run and the line of waiters: under a fleet reserve a slot only a higher class may take
// goes to its waiter, not to a lower-class head the reserve refuses; a cost that can never pass
// (bad, above the burst, above the class's ceiling) is refused before the caller queues; an abort
// during a store ask rejects once the ask is answered, its admission given back.
import { describe, expect, it } from 'vitest'
import {
  createLimiter,
  type Decision,
  type Limiter,
  type Store,
  type StoreCall,
} from '../src/index.js'
import { onDecision, type Told } from './setup/decisions.js'
import { useRedis } from './setup/redis.js'
import { storeCases } from './setup/stores.js'

const redis = useRedis()
let unique = 0

/** Resolves with the first decision of `limiter` that `wanted` accepts, from now on. */
function nextDecision(limiter: Limiter, wanted: (told: Told) => boolean): Promise<Told> {
  return new Promise((resolve) => {
    const stop = onDecision((told) => {
      if (told.limiter !== limiter || !wanted(told)) return
      stop()
      resolve(told)
    })
  })
}

// Lets what follows a store's answer run (the refused caller joins its line in microtasks).
const turns = async (): Promise<void> => {
  for (let i = 0; i < 3; i++) await new Promise((resolve) => setImmediate(resolve))
}

/** Lets the asks in flight for `key` be answered (a store answers one client's calls in order). */
async function quiet(limiter: Limiter, key: string): Promise<void> {
  await turns()
  await limiter.peek(key, { priority: 'critical' })
  await turns()
}

/**
 * Starts `start()` (an acquire) and resolves, once its first ask (of class `priority`) is
 * answered, with what it started (in a tuple: the acquire's promise itself is not awaited).
 */
async function asked<T>(limiter: Limiter, priority: string, start: () => T): Promise<[T]> {
  const told = nextDecision(limiter, (t) => t.priority === priority)
  const started = start()
  await told
  await turns()
  return [started]
}

function reserved(store: Store, limit: number, reserve: Record<string, number>): Limiter {
  return createLimiter({
    algorithm: 'concurrency',
    limit,
    window: '1m',
    reserve,
    name: `acquire-line${unique++}`,
    store,
  })
}

describe.each(storeCases(redis))('%s', (_name, store) => {
  it('a slot only critical may take goes to the critical waiter, not the normal head', async () => {
    const limiter = reserved(store(), 10, { critical: 0.2 })
    const key = `hol${unique}`
    const held: Decision[] = []
    // normal may hold 8 (its ceiling), critical the last 2: all 10 in use
    for (let i = 0; i < 8; i++) held.push(await limiter.consume(key, 1))
    for (let i = 0; i < 2; i++) held.push(await limiter.consume(key, 1, { priority: 'critical' }))
    expect(held.every((d) => d.allowed)).toBe(true)
    const stop = new AbortController()
    const settled: string[] = []
    const [normal] = await asked(limiter, 'normal', () =>
      limiter.acquire(key, { maxWait: '20s', signal: stop.signal }).then(
        (d) => {
          settled.push('normal admitted')
          return d
        },
        () => settled.push('normal gave up'),
      ),
    )
    const [critical] = await asked(limiter, 'critical', () =>
      limiter.acquire(key, { maxWait: '20s', priority: 'critical', signal: stop.signal }),
    )
    // one slot free, 9 in use: critical may take it (ceiling 10), normal may not (ceiling 8)
    const taken = nextDecision(
      limiter,
      (t) => t.decision.allowed || t.decision.reason === 'reserve',
    )
    await limiter.release(key, held.pop() as Decision)
    // the first to hear of it is the critical waiter, admitted: the normal head is not woken
    // to be refused by the reserve while the critical one waits out its maxWait
    const first = await taken
    expect(first.priority).toBe('critical')
    expect(first.decision.allowed).toBe(true)
    const admitted = await critical
    expect(admitted.allowed).toBe(true)
    expect(settled).toEqual([])
    stop.abort()
    await normal
    expect(settled).toEqual(['normal gave up'])
    await limiter.release(key, admitted)
    for (const d of held) await limiter.release(key, d)
  })

  it('within a class the line stays first come, first served; higher classes go first', async () => {
    // critical keeps half: high and normal may both hold 5 (the same ceiling), and each slot
    // freed below it is one either may take
    const limiter = reserved(store(), 10, { critical: 0.5 })
    const key = `order${unique}`
    const held: Decision[] = []
    for (let i = 0; i < 5; i++) held.push(await limiter.consume(key, 1))
    const order: string[] = []
    const acquire = (name: string, priority: 'normal' | 'high') =>
      limiter.acquire(key, { maxWait: '20s', priority }).then((d) => {
        order.push(name)
        return d
      })
    const waiting = [
      ...(await asked(limiter, 'normal', () => acquire('normal 1', 'normal'))),
      // above normal, with a reserve: asks at once (refused), then waits in line
      ...(await asked(limiter, 'high', () => acquire('high 1', 'high'))),
      // the line is busy: queues at once, without asking
      acquire('normal 2', 'normal'),
      ...(await asked(limiter, 'high', () => acquire('high 2', 'high'))),
    ]
    const admitted: Decision[] = []
    for (const at of [1, 3, 0, 2]) {
      await limiter.release(key, held.pop() as Decision)
      admitted.push(await (waiting[at] as Promise<Decision>))
      await quiet(limiter, key)
    }
    // high goes before normal, each class in the order it came
    expect(order).toEqual(['high 1', 'high 2', 'normal 1', 'normal 2'])
    for (const d of [...admitted, ...held]) await limiter.release(key, d)
  })

  it('a cost above the class ceiling is refused at once, and does not block the line', async () => {
    const limiter = reserved(store(), 10, { critical: 0.5 })
    const key = `ceiling${unique}`
    const five = await limiter.acquire(key, { cost: 5 })
    const [waiter] = await asked(limiter, 'normal', () =>
      limiter.acquire(key, { cost: 1, maxWait: '20s' }),
    )
    // normal may hold at most 5: a cost of 6 can never pass, whatever is released
    const error = await limiter.acquire(key, { cost: 6, maxWait: '20s' }).catch((e) => e)
    expect(error).toBeInstanceOf(RangeError)
    expect(error).toMatchObject({ code: 'ERR_LIMITER_COST', option: 'cost', value: 6 })
    expect(error.message).toMatch(/"normal".*at most 5 of its 10 slots/)
    await expect(limiter.run(key, () => 'ran', { cost: 6, maxWait: '20s' })).rejects.toMatchObject({
      code: 'ERR_LIMITER_COST',
    })
    await expect(
      limiter.acquire(key, { cost: 9, priority: 'low', maxWait: '20s' }),
    ).rejects.toMatchObject({ code: 'ERR_LIMITER_COST' })
    // consume answers such a cost with a refusal, as before (documented)
    expect((await limiter.consume(key, 6)).allowed).toBe(false)
    // critical's ceiling is the whole limit: 5 more fit beside the 5 in use
    const critical = await limiter.acquire(key, { cost: 5, priority: 'critical' })
    expect(critical.allowed).toBe(true)
    await limiter.release(key, critical)
    await limiter.release(key, five)
    const small = await waiter
    expect(small.allowed).toBe(true)
    await limiter.release(key, small)
  })

  it('a bad cost is refused before queueing, as consume refuses it, while others wait', async () => {
    const limiter = createLimiter({
      algorithm: 'concurrency',
      limit: 2,
      window: '1m',
      acquire: { maxWait: '20s' },
      name: `acquire-line${unique++}`,
      store: store(),
    })
    const key = `bad${unique}`
    const held = [await limiter.acquire(key), await limiter.acquire(key)]
    const [waiter] = await asked(limiter, 'normal', () => limiter.acquire(key))
    const costs: unknown[] = []
    onDecision((told) => {
      if (told.limiter === limiter) costs.push(told.cost)
    })
    for (const cost of [Number.NaN, -1, 2.5, 3, null, '1', Number.POSITIVE_INFINITY]) {
      const error = await limiter.acquire(key, { cost } as never).catch((e) => e)
      expect(error, `cost ${String(cost)}`).toMatchObject({ code: 'ERR_LIMITER_COST' })
      await expect(limiter.consume(key, cost as never)).rejects.toMatchObject({
        code: 'ERR_LIMITER_COST',
        message: error.message,
      })
      await expect(limiter.run(key, () => 1, { cost } as never)).rejects.toMatchObject({
        code: 'ERR_LIMITER_COST',
      })
    }
    // none of them reached the store (the line's polls are the waiter's, cost 1)
    expect(costs.filter((c) => c !== 1)).toEqual([])
    // the waiter is still first in line: a release goes to it
    await limiter.release(key, held.pop() as Decision)
    const next = await waiter
    expect(next.allowed).toBe(true)
    await limiter.release(key, next)
    await limiter.release(key, held.pop() as Decision)
  })

  it('an abort while the store ask is out rejects once it is answered, its admission given back', async () => {
    const gate = gated(store())
    const limiter = createLimiter({
      algorithm: 'concurrency',
      limit: 1,
      window: '1m',
      timeout: '60s',
      name: `acquire-line${unique++}`,
      store: gate.store,
    })
    const key = `abort${unique}`
    gate.hold()
    const stop = new AbortController()
    const acquiring = limiter.acquire(key, { maxWait: '20s', signal: stop.signal })
    await gate.asked
    stop.abort(new Error('caller gave up'))
    // the store then admits it: the caller rejects with the signal's reason, and by then the
    // slot is back, so a caller that asks at once gets it (maxWait 0: no waiting for it)
    gate.open()
    await expect(acquiring).rejects.toThrow('caller gave up')
    expect(gate.answered).toBe(1)
    const next = await limiter.acquire(key, { maxWait: 0 })
    expect(next.allowed).toBe(true)
    await limiter.release(key, next)
  })
})

// A store whose consume, once `hold()` is called, waits until `open()`.
function gated(inner: Store) {
  let release: () => void = () => undefined
  let held: Promise<void> | undefined
  let asked: () => void = () => undefined
  let done: () => void = () => undefined
  const gate = {
    answered: 0,
    /** Resolves once the first consume is answered. */
    done: new Promise<void>((resolve) => {
      done = resolve
    }),
    asked: new Promise<void>((resolve) => {
      asked = resolve
    }),
    hold(): void {
      held = new Promise((resolve) => {
        release = resolve
      })
    },
    open(): void {
      held = undefined
      release()
    },
    store: {
      async consume(call: StoreCall) {
        const waiting = held
        asked()
        if (waiting !== undefined) await waiting
        const decision = await inner.consume(call)
        gate.answered++
        done()
        return decision
      },
      refund: (call: StoreCall) => inner.refund(call),
      reset: (call: Omit<StoreCall, 'cost'>) => inner.reset(call),
      release: (call: StoreCall) => (inner.release as NonNullable<Store['release']>)(call),
    } satisfies Store,
  }
  return gate
}
