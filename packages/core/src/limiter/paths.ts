// The ways a limiter reaches its store, one chosen at construction: in process (MemoryStore,
// synchronous), a custom in-process store (a promise, no deadline), or a remote store (under a
// deadline and circuit breaker, with the blocked-key cache and failure policy).

import { monotonicMs } from '../common/clock.js'
import { LimiterError } from '../common/errors.js'
import {
  type Decision,
  type DecisionSource,
  LimiterDecision,
  type Ticket,
} from '../decision/decision.js'
import { BIND, BIND_ONE, BIND_SET, MemoryStore } from '../stores/memory-store.js'
import {
  type StoreCall,
  type StoreDecision,
  type StoreSink,
  SUBMIT,
  type SubmittingStore,
} from '../stores/store.js'
import { createBlockedCache, remembering } from './blocked-cache.js'
import { type BlockPath, type Fallback, localBlocks, memoryBlocks, remoteBlocks } from './blocks.js'
import { type Decisions, storeAnswers } from './decisions.js'
import { asLimiterError } from './failure.js'
import { type CircuitListener, createGuard, type Handlers } from './guard.js'
import type { LimiterSettings } from './settings.js'
import type { FailedOperation } from './types.js'

/** What a limiter asks of its store, for a key and cost already validated. */
export interface StorePath extends BlockPath {
  /**
   * `rank`: the request's priority rank (a concurrency policy's `reserve` reads it); `waitMs`: the
   * most it may wait for a reserved slot (see StoreCall.waitMs).
   */
  decide(key: string, cost: number, rank?: number, waitMs?: number): Decision | Promise<Decision>
  /**
   * `decide(key, 1)`, synchronously: the common case's own path, where the store has one (a
   * MemoryStore with one policy). Exactly `decide`'s decision (a property test holds them equal).
   */
  readonly one?: ((key: string, atMs?: number) => Decision) | undefined
  /** Gives `cost` back where the decision's `source` counted it (`'local'`: the fallback's store). */
  refund(key: string, cost: number, ticket: Ticket, source?: DecisionSource): Promise<void>
  /**
   * Gives back the leases `ticket` names (a limiter with a concurrency policy; never rejects),
   * where the decision's `source` took them.
   */
  release(key: string, ticket: Ticket, source: DecisionSource): Promise<void>
  reset(key: string): Promise<void>
}

/**
 * How a limiter reports a store failure (to `onError` and the failure channel, at most once per
 * failure); `circuitOpen`: the failing domain's circuit is open after it.
 */
export type Report = (
  error: LimiterError,
  key: string,
  circuitOpen?: boolean,
  operation?: FailedOperation,
) => void

/** The store path for `settings`: chosen once, so no call asks which store it has. */
export function storePathOf(
  settings: LimiterSettings,
  decisions: Decisions,
  report: Report,
  onCircuit?: CircuitListener,
): StorePath {
  const { store } = settings
  if (store instanceof MemoryStore) return memoryPath(store, settings, decisions)
  const failed = failurePolicy(settings, decisions, report)
  if (store.local === true) return localPath(settings, decisions, report, failed)
  return remotePath(settings, decisions, report, failed, onCircuit)
}

// The StoreCall of a request: several policies travel as the limiter's set.
function callMaker(settings: LimiterSettings) {
  const { set, policy, namespace, clock } = settings
  const several = set.policies.length > 1
  return (
    key: string,
    cost: number,
    ticket?: Ticket,
    rank?: number,
    waitMs?: number,
  ): StoreCall => ({
    policy,
    namespace,
    key,
    cost,
    rank,
    waitMs,
    ticket: typeof ticket === 'string' ? ticket : undefined,
    tickets: several && Array.isArray(ticket) ? ticket : undefined,
    set: several ? set : undefined,
    nowMs: clock?.(),
  })
}

// The store's decision function, synchronous: one policy, or all of them together.
function boundDecide(
  store: MemoryStore,
  settings: LimiterSettings,
): (
  key: string,
  cost: number,
  nowMs: number | undefined,
  rank?: number,
  waitMs?: number,
) => StoreDecision | StoreDecision[] {
  const { set } = settings
  return set.policies.length > 1
    ? store[BIND_SET](set).consume
    : store[BIND](settings.namespace, settings.policy)
}

function memoryPath(
  store: MemoryStore,
  settings: LimiterSettings,
  decisions: Decisions,
): StorePath {
  const { clock, set } = settings
  const call = callMaker(settings)
  const bound = set.policies.length > 1 ? store[BIND_SET](set) : undefined
  if (bound === undefined) {
    const { namespace, policy } = settings
    const consume = store[BIND](namespace, policy)
    const { fromStore } = decisions
    // the store's common consume answers this limiter's Decision itself, where it has one
    const one =
      store[BIND_ONE](namespace, policy, decisions.answer, fromStore) ??
      ((key: string, at: number | undefined) => fromStore(consume(key, 1, at)))
    return {
      one: clock === undefined ? one : (key, at) => one(key, at ?? clock()),
      decide(key, cost, rank, waitMs) {
        const d = consume(key, cost, clock?.(), rank, waitMs)
        const { allowed, remaining, resetMs, retryAfterMs, ticket, delayMs } = d
        return decisions.one(allowed, remaining, resetMs, retryAfterMs, ticket, 'store', delayMs)
      },
      refund: (key, cost, ticket) => store.refund(call(key, cost, ticket)),
      release: (key, ticket) => store.release(call(key, 0, ticket)),
      reset: (key) => store.reset(call(key, 0)),
      ...memoryBlocks(store, call, decisions),
    }
  }
  return {
    decide: (key, cost, rank, waitMs) =>
      decisions.of(bound.consume(key, cost, clock?.(), rank, waitMs), 'store'),
    refund(key, cost, ticket) {
      bound.refund(key, cost, Array.isArray(ticket) ? ticket : [], clock?.())
      return Promise.resolve()
    },
    release(key, ticket) {
      bound.release(key, Array.isArray(ticket) ? ticket : [], clock?.())
      return Promise.resolve()
    },
    reset(key) {
      bound.reset(key)
      return Promise.resolve()
    },
    ...memoryBlocks(store, call, decisions),
  }
}

/** The decision for a failed store call, from `failureMode` (reported first). */
type Failed = ((
  cause: unknown,
  call: StoreCall,
  circuitOpen?: boolean,
) => Decision | Promise<Decision>) & {
  /**
   * The process-local store of `failureMode: 'local'` as a path, once it has decided something:
   * what it counted is given back (refund, release) and reset there, not in the failed store.
   */
  readonly fallbackPath: () => StorePath | undefined
  /** What `block` and `penalize` fall back on. */
  readonly fallback: Fallback
}

function failurePolicy(settings: LimiterSettings, decisions: Decisions, report: Report): Failed {
  const { failureMode } = settings
  // a process-local MemoryStore holding the same policies decides until the store is back
  let store: MemoryStore | undefined
  let local: ReturnType<typeof boundDecide> | undefined
  const failed = (cause: unknown, call: StoreCall, circuitOpen?: boolean) => {
    const error = storeFailure(cause, settings)
    report(error, call.key, circuitOpen)
    if (failureMode !== 'local') return decisions.failed(failureMode, error)
    store ??= new MemoryStore()
    local ??= boundDecide(store, settings)
    const { key, cost, nowMs, rank, waitMs } = call
    return Promise.resolve(decisions.of(local(key, cost, nowMs, rank, waitMs), 'local'))
  }
  let path: StorePath | undefined
  const fallbackPath = (): StorePath | undefined => {
    if (store === undefined) return undefined
    path ??= memoryPath(store, settings, decisions)
    return path
  }
  const fallback: Fallback = {
    failed,
    report(cause, key) {
      const error = storeFailure(cause, settings)
      report(error, key)
      return error
    },
    local() {
      if (failureMode !== 'local') return undefined
      store ??= new MemoryStore()
      return store
    },
  }
  return Object.assign(failed, { fallbackPath, fallback })
}

// What `failureMode: 'local'`'s fallback counted is given back there: a decision it made (source
// 'local') is refunded or released in its store, never in the failed one.
function refundLocal(failed: Failed, key: string, cost: number, ticket: Ticket): Promise<void> {
  return failed.fallbackPath()?.refund(key, cost, ticket) ?? Promise.resolve()
}

function releaseLocal(failed: Failed, key: string, ticket: Ticket): Promise<void> {
  return failed.fallbackPath()?.release(key, ticket, 'local') ?? Promise.resolve()
}

// `reset` lifts the key in the fallback's store too (a block is copied there, for an outage).
function withLocalReset(failed: Failed, key: string, remote: Promise<void>): Promise<void> {
  const local = failed.fallbackPath()?.reset(key)
  return local === undefined ? remote : Promise.all([local, remote]).then(() => undefined)
}

// A store failure, with where the store is when the error does not say already.
function storeFailure(cause: unknown, settings: LimiterSettings): LimiterError {
  const error = asLimiterError(cause)
  const address = (settings.store as { address?: unknown }).address
  if (error.address !== undefined || typeof address !== 'string') return error
  return new LimiterError(error.code, error.message, {
    cause: error.cause,
    address,
    clientError: error.clientError,
  })
}

// A custom in-process store: its promise, no deadline, failures through failureMode.
function localPath(
  settings: LimiterSettings,
  decisions: Decisions,
  report: Report,
  failed: Failed,
): StorePath {
  const { store } = settings
  const call = callMaker(settings)
  const reported = (key: string, operation: FailedOperation) => (error: unknown) =>
    report(storeFailure(error, settings), key, false, operation)
  return {
    decide(key, cost, rank, waitMs) {
      const c = call(key, cost, undefined, rank, waitMs)
      return store.consume(c).then(
        (d) => decisions.of(d, 'store'),
        (error: unknown) => failed(error, c),
      )
    },
    refund: (key, cost, ticket, source) =>
      source === 'local'
        ? refundLocal(failed, key, cost, ticket)
        : store.refund(call(key, cost, ticket)).catch(reported(key, 'refund')),
    release: (key, ticket, source) =>
      source === 'local'
        ? releaseLocal(failed, key, ticket)
        : (store.release?.(call(key, 0, ticket)) ?? Promise.resolve()).catch(
            reported(key, 'release'),
          ),
    reset: (key) =>
      withLocalReset(failed, key, store.reset(call(key, 0)).catch(reported(key, 'reset'))),
    ...localBlocks(store, call, decisions, failed.fallback),
  }
}

// A remote store: every call under the guard's deadline and circuit breaker; refusals with
// nothing remaining answered from the blocked-key cache meanwhile.
function remotePath(
  settings: LimiterSettings,
  decisions: Decisions,
  report: Report,
  failed: Failed,
  onCircuit: CircuitListener | undefined,
): StorePath {
  const { store, timeoutMs, breaker } = settings
  const guard = createGuard(timeoutMs, breaker, onCircuit)
  const call = callMaker(settings)
  const blocked = settings.blocked.maxKeys === 0 ? undefined : createBlockedCache(settings.blocked)
  // Each failure domain of the store (a Cluster node) has its own circuit.
  const domainOf = (c: StoreCall): string => store.failureDomain?.(c) ?? ''
  const circuitOpen = (c: StoreCall): boolean => guard.isOpen(domainOf(c))
  const handlers = remoteHandlers(settings, decisions, report, failed, blocked, circuitOpen)

  return {
    decide(key, cost, rank, waitMs) {
      const c = call(key, cost, undefined, rank, waitMs)
      let sentAtMs = 0
      if (blocked !== undefined) {
        sentAtMs = c.nowMs ?? monotonicMs()
        const hit = blocked.get(key, cost === 0 ? 1 : cost, sentAtMs)
        if (hit !== undefined) return decisions.blocked(hit.decision, hit.elapsedMs)
      }
      return guard.run(c, domainOf(c), sentAtMs, handlers.consume)
    },
    refund(key, cost, ticket, source) {
      if (source === 'local') return refundLocal(failed, key, cost, ticket)
      const c = call(key, cost, ticket)
      blocked?.clear(key, c.nowMs ?? monotonicMs())
      return guard.run(c, domainOf(c), 0, handlers.refund)
    },
    release(key, ticket, source) {
      if (source === 'local') return releaseLocal(failed, key, ticket)
      const c = call(key, 0, ticket)
      blocked?.clear(key, c.nowMs ?? monotonicMs())
      return guard.run(c, domainOf(c), 0, handlers.release)
    },
    reset(key) {
      const c = call(key, 0)
      blocked?.clear(key, c.nowMs ?? monotonicMs())
      return withLocalReset(failed, key, guard.run(c, domainOf(c), 0, handlers.reset))
    },
    ...remoteBlocks({
      settings,
      decisions,
      fallback: failed.fallback,
      guard,
      call,
      domainOf,
      blocked,
    }),
  }
}

/**
 * What a consume answered after its deadline gives back: failureMode answered its caller, so the
 * leases it took are released (no one holds them: they would keep their slots for a whole
 * `window`), and what it counted is refunded too, unless failureMode let the request through
 * (`'open'`: it went ahead, and is counted). Sent straight to the store: its answer just came,
 * while the circuit may be open from the very timeouts it answers (no one waits: no deadline).
 */
function lateUndo(
  settings: LimiterSettings,
  decisions: Decisions,
): (c: StoreCall, value: unknown) => void {
  const { set, failureMode, store } = settings
  const call = callMaker(settings)
  const refund = failureMode !== 'open'
  return (c, value) => {
    if (c.cost === 0 || !(refund || set.leases)) return
    const decision = decisions.of(value as StoreDecision | StoreDecision[], 'store')
    if (!decision.allowed) return
    const back = call(c.key, c.cost, LimiterDecision.ticketOf(decision, decisions.owner))
    // (a custom store that throws, or rejects, loses only this give-back)
    Promise.resolve()
      .then(() => (refund ? store.refund(back) : store.release?.(back)))
      .catch(() => undefined)
  }
}

// A failed release, refund or reset, reported (nothing else to do: no decision waits on it).
function failureReport(
  settings: LimiterSettings,
  report: Report,
  circuitOpen: (c: StoreCall) => boolean,
) {
  return (operation: FailedOperation) =>
    (c: StoreCall, error: unknown): undefined => {
      report(storeFailure(error, settings), c.key, circuitOpen(c), operation)
      return undefined
    }
}

interface RemoteHandlers {
  consume: Handlers<Decision>
  refund: Handlers<void>
  release: Handlers<void>
  reset: Handlers<void>
}

// What each kind of remote call does with the store's answer, fixed per limiter.
function remoteHandlers(
  settings: LimiterSettings,
  decisions: Decisions,
  report: Report,
  failed: Failed,
  blocked: ReturnType<typeof createBlockedCache> | undefined,
  circuitOpen: (c: StoreCall) => boolean,
): RemoteHandlers {
  const { store, set } = settings
  // A store with the internal entry point settles the guard's entry itself; any other store's
  // promise is bridged to it.
  const submitting = SUBMIT in store ? (store as SubmittingStore) : undefined
  const bridge =
    (run: (c: StoreCall) => Promise<unknown>) =>
    (c: StoreCall, sink: StoreSink): void => {
      run(c).then(
        (value) => sink.resolve(value),
        (error: unknown) => sink.reject(error),
      )
    }
  const remembered = remembering(blocked, set)
  const remember = (c: StoreCall, decision: Decision, sentAtMs: number): Decision =>
    remembered(c.key, c.cost === 0 ? 1 : c.cost, sentAtMs, decision)
  const reported = failureReport(settings, report, circuitOpen)
  return {
    consume: {
      submit:
        submitting === undefined
          ? bridge((c) => store.consume(c))
          : (c, sink) => submitting[SUBMIT](c, 'c', sink),
      ...storeAnswers(decisions, remember),
      error: (c, error) => failed(error, c, circuitOpen(c)),
      late: lateUndo(settings, decisions),
    },
    refund: {
      submit:
        submitting === undefined
          ? bridge((c) => store.refund(c))
          : (c, sink) => submitting[SUBMIT](c, 'r', sink),
      value: () => undefined,
      error: reported('refund'),
      pastOpenCircuit: true,
    },
    release: {
      submit:
        submitting === undefined
          ? bridge((c) => store.release?.(c) ?? Promise.resolve())
          : (c, sink) => submitting[SUBMIT](c, 'l', sink),
      value: () => undefined,
      error: reported('release'),
      pastOpenCircuit: true,
    },
    reset: {
      submit: bridge((c) => store.reset(c)),
      value: () => undefined,
      error: reported('reset'),
      pastOpenCircuit: true,
    },
  }
}
