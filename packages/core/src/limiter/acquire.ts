// Waiting for a slot (limiter.acquire and limiter.run), for outbound calls and jobs.
import { parseWait } from '../common/duration.js'
import { LimiterError, LimiterRangeError, LimiterTypeError } from '../common/errors.js'
import { own } from '../common/option-names.js'
import { type Decision, isUncounted } from '../decision/decision.js'
import { refusedByConcurrency } from '../policies/limits.js'
import { ceilingOf, isCost, type NamedPolicy } from '../policies/policy.js'
import { PRIORITY_RANKS, type Priority, priorityName, priorityRank } from '../shed/priority.js'
import { costError } from './cost.js'
import type { AcquireOptions, ConsumeOptions, Limiter } from './types.js'
import { type Wake, Wakers } from './wakers.js'

export { Wakers }

interface Parsed {
  readonly cost: number
  readonly maxWaitMs: number
  readonly signal: AbortSignal | undefined
  /** `{ priority }` for consume, when one is given. */
  readonly consume: ConsumeOptions | undefined
  /** The priority's rank (normal when none is given). */
  readonly rank: number
}

/** What a limiter's acquire waits by: its wait allowance, and the default `maxWait`. */
export interface Waiting {
  /** The limiter's wait allowance: `maxDelay`, or the wait `delayAfter` allows (else 0). */
  readonly waitMs: number
  /** `maxWait` when a call gives none: `acquire: { maxWait }`, else `waitMs`. */
  readonly maxWaitMs: number
}

function parse(
  policies: readonly NamedPolicy[],
  options: AcquireOptions | undefined,
  maxWaitMs: number,
): Parsed {
  const normal = PRIORITY_RANKS.normal
  if (options === undefined)
    return { cost: 1, maxWaitMs, signal: undefined, consume: undefined, rank: normal }
  if (options === null || typeof options !== 'object')
    throw new LimiterTypeError(
      'options',
      options,
      'an object { cost?, maxWait?, signal?, priority? }',
    )
  const maxWait = own(options, 'maxWait')
  const signal = own(options, 'signal')
  if (signal !== undefined && !(signal instanceof AbortSignal))
    throw new LimiterTypeError('signal', signal, 'an AbortSignal')
  const priority = own(options, 'priority') as Priority | undefined
  const rank = priorityRank(priority)
  const cost = own(options, 'cost')
  return {
    // checked before the caller queues: a cost that can never pass fails now, not after maxWait
    cost: cost === undefined ? 1 : checkedCost(policies, cost, rank),
    maxWaitMs: maxWait === undefined ? maxWaitMs : parseWait(maxWait, 'maxWait'),
    signal,
    consume: priority === undefined ? undefined : { priority },
    rank,
  }
}

// acquire's cost: consume's check (costError), and under a fleet reserve no more than the
// caller's class may ever hold (its ceiling), which would otherwise wait out its whole maxWait,
// at the head of the line, for a slot it can never have.
function checkedCost(policies: readonly NamedPolicy[], cost: unknown, rank: number): number {
  let maxCost = Number.POSITIVE_INFINITY
  for (const p of policies) if (p.burst < maxCost) maxCost = p.burst
  if (!isCost(cost, 0, maxCost)) throw costError(cost, 0, maxCost, policies.length)
  for (const p of policies) {
    if (p.ceilings === undefined) continue
    const ceiling = ceilingOf(p, rank)
    if (cost > ceiling)
      throw new LimiterRangeError(
        'cost',
        cost,
        `can never be admitted at priority ${JSON.stringify(priorityName(rank))}: the fleet reserve of policy ${JSON.stringify(p.name)} lets that class hold at most ${ceiling} of its ${p.limit} slots (its ceiling)`,
        'ERR_LIMITER_COST',
      )
  }
  return cost
}

// The callers waiting on each signal, behind one 'abort' listener per signal: a hundred
// acquirers sharing one signal add one listener, not a hundred (Node warns past 10).
const aborts = new WeakMap<AbortSignal, { callers: Set<() => void>; listener: () => void }>()

/** Calls `fn` once `signal` aborts; returns how to stop listening. */
function onAbort(signal: AbortSignal, fn: () => void): () => void {
  let entry = aborts.get(signal)
  if (entry === undefined) {
    const callers = new Set<() => void>()
    const listener = (): void => {
      aborts.delete(signal)
      for (const caller of callers) caller()
    }
    entry = { callers, listener }
    aborts.set(signal, entry)
    signal.addEventListener('abort', listener, { once: true })
  }
  const { callers, listener } = entry
  callers.add(fn)
  return () => {
    callers.delete(fn)
    if (callers.size > 0 || aborts.get(signal)?.callers !== callers) return
    aborts.delete(signal)
    signal.removeEventListener('abort', listener)
  }
}

/** How a pause ended: its timer, a release in this process, or the line's poll. */
type Woken = 'timer' | 'release' | 'poll'

// Resolves after `ms`, or when woken in `line`; rejects with the signal's reason once it aborts.
function pause(
  ms: number,
  signal: AbortSignal | undefined,
  line?: (wake: Wake) => () => void,
): Promise<Woken> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted === true) return reject(signal.reason)
    let leave: (() => void) | undefined
    let stopAbort: (() => void) | undefined
    const done = (): void => {
      clearTimeout(timer)
      leave?.()
      stopAbort?.()
    }
    const timer = setTimeout(() => {
      done()
      resolve('timer')
    }, ms)
    if (signal !== undefined)
      stopAbort = onAbort(signal, () => {
        done()
        reject(signal.reason)
      })
    leave = line?.((polled) => {
      done()
      resolve(polled ? 'poll' : 'release')
    })
  })
}

function refused(decision: Decision, key: string, maxWaitMs: number): LimiterError {
  const how =
    maxWaitMs === 0
      ? 'to wait for one, pass { maxWait } to acquire/run, or set acquire: { maxWait } on the limiter'
      : 'to wait longer, pass a longer { maxWait } to acquire/run, or set acquire: { maxWait } on the limiter'
  return new LimiterError(
    'ERR_LIMITER_REFUSED',
    `no slot for key ${JSON.stringify(key)} within maxWait (${maxWaitMs} ms); retry in ${decision.retryAfterMs} ms (${how})`,
    { decision },
  )
}

// An admission whose wait is longer than the caller's, as the refusal it is for that caller:
// Retry-After is when it would pass without waiting.
function tooLate(decision: Decision): Decision {
  const { limit, resetMs, source, policies } = decision
  return Object.freeze({
    allowed: false,
    limit,
    remaining: 0,
    resetMs,
    retryAfterMs: decision.delayMs,
    delayMs: 0,
    source,
    policies,
  })
}

// One ask of the store: the caller's deadline, and when the store was asked.
interface Turn {
  readonly deadline: number
  readonly askedAt: number
}

// Whether `decision` reserved further ahead (the limiter's maxDelay) than the caller will wait:
// the time it had left when the store was asked, in whole ms as delayMs is. (The limiter's stores
// never do, given the caller's `maxDelay`; a custom store may not read it.)
const tooFar = (decision: Decision, turn: Turn): boolean =>
  decision.delayMs > 0 && decision.delayMs > Math.ceil(turn.deadline - turn.askedAt)

// Admissions given back after an abort, per limiter and key: made together once the abort's
// microtasks have run, newest first. A refund gives a reservation back only while it is its
// queue's tail, so waiters that give up together (on one signal, or a burst of disconnects) give
// every slot back, each the tail once those after it are back; in the order they heard of the
// abort, all but the last would be mid-queue, their slots lost to everyone until due.
const owing = new WeakMap<Limiter, Map<string, Owed[]>>()

interface Owed {
  /** When the admission was received: its place in its key's queue, in this process. */
  readonly seq: number
  readonly cost: number
  readonly decision: Decision
  readonly done: () => void
}

let received = 0
/** The next admission's place (see Owed.seq): a key's admissions arrive in the order reserved. */
const receivedNow = (): number => ++received

function giveBack(limiter: Limiter, key: string, owed: Omit<Owed, 'done'>): Promise<void> {
  const keys = owing.get(limiter) ?? new Map<string, Owed[]>()
  owing.set(limiter, keys)
  let due = keys.get(key)
  if (due === undefined) {
    const all: Owed[] = []
    keys.set(key, all)
    setTimeout(() => {
      keys.delete(key)
      all.sort((a, b) => b.seq - a.seq)
      for (const o of all) void limiter.refund(key, o.cost, o.decision).then(o.done, o.done)
    }, 0)
    due = all
  }
  const list = due
  return new Promise((resolve) => list.push({ ...owed, done: resolve }))
}

// An admission: waits its delayMs (if within the caller's time left), or gives it back. `seq`:
// its place in the key's queue (Owed.seq).
async function admitted(
  limiter: Limiter,
  key: string,
  cost: number,
  decision: Decision,
  signal: AbortSignal | undefined,
  turn: Turn,
  maxWaitMs: number,
  seq: number,
): Promise<Decision> {
  if (tooFar(decision, turn)) {
    await limiter.refund(key, cost, decision).catch(() => undefined)
    throw refused(tooLate(decision), key, maxWaitMs)
  }
  if (decision.delayMs === 0 && signal?.aborted !== true) return decision
  try {
    signal?.throwIfAborted()
    await pause(decision.delayMs, signal)
    return decision
  } catch (error) {
    await giveBack(limiter, key, { seq, cost, decision })
    throw error
  }
}

/**
 * `limiter.acquire`: consumes until admitted within `maxWait` (default `waiting.maxWaitMs`). A
 * rate refusal sleeps until its slot can be reserved (its Retry-After, less the limiter's
 * `waitMs`), or, its slot (its Retry-After) being further than is left, or a block, refuses at
 * once. A concurrency refusal waits in its key's line, first in first out (by class
 * first, under a fleet reserve): a release in this process wakes one waiter per slot it frees,
 * and the line's head polls with backoff for slots freed elsewhere; a newcomer queues behind the
 * line without asking. An admission with `delayMs` waits it out. Aborting gives a reservation
 * back (one aborted during a store ask rejects once it is answered, its admission given back).
 * A `cost` that can never pass (above the smallest burst, or a fleet reserve's ceiling for the
 * caller's class) throws `ERR_LIMITER_COST` before the caller queues.
 */
export async function acquire(
  limiter: Limiter,
  wakers: Wakers,
  waiting: Waiting,
  key: string,
  options: AcquireOptions | undefined,
  shadow = false,
): Promise<Decision> {
  const { cost, maxWaitMs, signal, consume, rank } = parse(
    limiter.policies,
    options,
    waiting.maxWaitMs,
  )
  signal?.throwIfAborted()
  // a shadow limiter observes: its decision is made and counted, and the caller goes at once
  if (shadow) return limiter.consume(key, cost, consume)
  const deadline = performance.now() + maxWaitMs
  const { inLine, queue } = lineOf(limiter, wakers, key, rank, maxWaitMs)
  let woken: Woken = queue ? await pause(maxWaitMs, signal, inLine) : 'timer'
  let firstAsk = queue ? undefined : wakers.firstAsk(key)
  for (;;) {
    // the slot's wait counts from the ask (the reply's latency is not the caller's wait), in
    // whole ms as delayMs is
    const turn: Turn = { deadline, askedAt: performance.now() }
    const heard = (decision: Decision | undefined) => tell(wakers, key, woken, decision)
    const asking = ask(limiter, key, cost, firstAsk, consume, turn, waiting.waitMs)
    const decision = await answer(asking, signal, heard, (late) =>
      giveBack(limiter, key, { seq: receivedNow(), cost, decision: late }),
    )
    firstAsk = undefined
    if (decision.allowed) {
      heard(decision)
      return admitted(limiter, key, cost, decision, signal, turn, maxWaitMs, receivedNow())
    }
    const left = deadline - performance.now()
    const lined = refusedByConcurrency(limiter.policies, decision)
    // a failed store's refusal (failureMode 'closed') has no slot to reserve sooner: it sleeps
    // its whole Retry-After, not a rapid retry against a store that is down
    const allowanceMs = isUncounted(decision) ? 0 : waiting.waitMs
    const sleepMs = lined ? left : Math.max(1, decision.retryAfterMs - allowanceMs)
    // the slot a rate policy refuses for is its Retry-After away (a reservation made after
    // sleepMs waits the rest), so one further than is left ends the wait now, as does a block,
    // though a concurrency policy refused too: no release can help within maxWait
    const slotMs = lined ? fixedWaitMs(limiter, decision) : decision.retryAfterMs
    if (left <= 0 || slotMs > Math.ceil(left)) {
      heard(decision)
      throw refused(decision, key, maxWaitMs)
    }
    // in line by arrival, within its class (a woken waiter that lost the slot to another
    // process is back at the head), then it tells the line, once it awaits its turn: a slot
    // freed meanwhile is its own
    const next = pause(
      Math.min(sleepMs, Math.max(1, Math.ceil(left))),
      signal,
      lined ? inLine : undefined,
    )
    queueMicrotask(() => heard(decision))
    woken = await next
  }
}

// How a caller waits in `key`'s line (`inLine`), and whether it queues at once without asking:
// callers already wait for this key's slots, or ask for all of them (it would ask out of turn).
// With a fleet reserve the line is by class, then arrival, so a slot only a higher class may take
// goes to its waiter, not to a lower-class head the reserve refuses again and again; and a caller
// above normal asks at once (those waiting may be held back by the reserve, not by a lack of
// slots for it).
function lineOf(limiter: Limiter, wakers: Wakers, key: string, rank: number, maxWaitMs: number) {
  const seq = wakers.arrive()
  const reserve = hasReserve(limiter)
  const lineRank = reserve ? rank : PRIORITY_RANKS.normal
  const passes = reserve && rank < PRIORITY_RANKS.normal
  return {
    inLine: (wake: Wake) => wakers.add(key, seq, wake, lineRank),
    queue: maxWaitMs > 0 && !passes && wakers.busy(key, slotsOf(limiter)),
  }
}

// The store's answer to an ask; a failed ask is told to the line (`heard`) as nothing heard. A
// signal that aborts meanwhile rejects with its reason once the answer is in and an admission in
// it given back (`giveBack`): so a caller that acts after the rejection (asks again, or gives up)
// finds the slot back, never its own reservation still held. The wait for the answer is bounded
// by the limiter's `timeout`.
function answer(
  asking: Promise<Decision>,
  signal: AbortSignal | undefined,
  heard: (decision: Decision | undefined) => void,
  giveBack: (decision: Decision) => Promise<unknown>,
): Promise<Decision> {
  return asking.then(
    async (decision) => {
      if (signal?.aborted !== true) return decision
      heard(decision)
      if (decision.allowed) await giveBack(decision)
      throw signal.reason
    },
    (error: unknown) => {
      heard(undefined)
      throw error
    },
  )
}

// Asks the store; a caller's first ask counts (Wakers.busy) until it hears back. A caller with
// less time left (in whole ms, as `tooFar` counts it) than the limiter's wait (`waitMs`, the
// furthest a reservation can be ahead) asks with that as its own `maxDelay`: the store refuses,
// reserving nothing, a slot further away than that. (Reserving it and giving it back would
// restore the slot only while it is still the queue's tail: concurrent callers, in this process
// or another, would mostly leave theirs spent for everyone.)
function ask(
  limiter: Limiter,
  key: string,
  cost: number,
  firstAsk: (() => void) | undefined,
  options: ConsumeOptions | undefined,
  turn: Turn,
  waitMs: number,
) {
  const leftMs = Math.ceil(turn.deadline - turn.askedAt)
  const asking =
    leftMs < waitMs
      ? limiter.consume(key, cost, { ...options, maxDelay: Math.max(0, leftMs) })
      : limiter.consume(key, cost, options)
  if (firstAsk !== undefined) void asking.then(firstAsk, firstAsk)
  return asking
}

// A woken waiter tells its line what it heard: admitted with slots left, it wakes more.
function tell(wakers: Wakers, key: string, woken: Woken, decision: Decision | undefined): void {
  if (woken === 'timer') return
  const admitted = decision?.allowed === true
  wakers.asked(key, admitted, woken === 'poll', admitted ? (decision?.remaining ?? 0) : 0)
}

// Whether a concurrency policy of the limiter keeps a fleet reserve.
function hasReserve(limiter: Limiter): boolean {
  return limiter.policies.some((p) => p.reserve !== undefined)
}

// The slots of the limiter's concurrency policies (the fewest; none: Infinity).
function slotsOf(limiter: Limiter): number {
  let fewest = Number.POSITIVE_INFINITY
  for (const p of limiter.policies)
    if (p.algorithm === 'concurrency' && p.limit < fewest) fewest = p.limit
  return fewest
}

// The longest Retry-After of a refusal that no release can shorten (0: none): a rate policy's,
// or a concurrency policy's beyond its own estimate, which is at most its `retryAfter` (or the
// time its oldest lease expires, within `window`): only a block refuses longer.
function fixedWaitMs(limiter: Limiter, decision: Decision): number {
  let most = 0
  decision.policies.forEach((p, i) => {
    const policy = limiter.policies[i]
    const fixed =
      policy?.algorithm !== 'concurrency' ||
      p.retryAfterMs > (policy.retryAfterMs ?? policy.windowMs)
    if (fixed && !p.allowed && p.retryAfterMs > most) most = p.retryAfterMs
  })
  return most
}

/** `limiter.run`: `fn` inside a slot, always released. */
export async function runInSlot<T>(
  limiter: Limiter,
  key: string,
  fn: (decision: Decision) => T | PromiseLike<T>,
  options: AcquireOptions | undefined,
): Promise<T> {
  if (typeof fn !== 'function') throw new LimiterTypeError('fn', fn, 'a function')
  const decision = await limiter.acquire(key, options)
  try {
    return await fn(decision)
  } finally {
    await limiter.release(key, decision)
  }
}
