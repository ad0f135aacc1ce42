// When an admitted request is over on Node's http server, so that what it owes (a concurrency
// lease, a refund) is settled once, and at the right time.
//
// Node emits `finish` when a response was sent and `close` when the response (or its connection)
// closes, but a pipelined response queued behind another on a connection that dies hears neither:
// only its socket's `close` tells. And a client gone does not mean its handler stopped: by
// default a request is over only once its handler has ended the response (`res.end`, wrapped on
// that response, or `res.destroy`, or a stream piped into it taken off once its client left) or
// said so ({@link handlerDone}: Koa, whose `respond` skips `res.end` for a client gone), and the
// response finished or the client left.

/** The part of a Node socket the lifecycle watches. */
export interface SocketLike {
  readonly destroyed: boolean
  once(event: 'close', listener: () => void): unknown
}

/** The part of Node's `ServerResponse` the lifecycle watches (its `req`, `socket`, `end`: Node's). */
export interface LifecycleTarget {
  readonly statusCode: number
  readonly writableFinished: boolean
  /** Node 18+: the response (or its connection) has closed. */
  readonly closed?: boolean
  /** Node's: null while a pipelined response waits behind another. */
  readonly socket?: SocketLike | null
  /** Node 15.7+: the request this response answers. */
  readonly req?: { readonly socket?: SocketLike | null } | undefined
  end?: unknown
  destroy?: unknown
  once(event: 'finish' | 'close' | 'unpipe', listener: () => void): unknown
  removeListener?(event: 'finish' | 'close' | 'unpipe', listener: () => void): unknown
}

/** Called once with the final status, or `undefined` when the client left first. */
export type Settle = (status: number | undefined) => void

// The status a response the server destroyed under a connected client ends with: it failed.
const SERVER_FAILED = 500

// The connection of a response: its own socket, or its request's while it waits in a pipeline.
function socketOf(res: LifecycleTarget): SocketLike | undefined {
  return res.socket ?? res.req?.socket ?? undefined
}

/** True when the client of `res` is gone: the response or its connection closed. */
export function clientGone(res: LifecycleTarget): boolean {
  return res.closed === true || socketOf(res)?.destroyed === true
}

// One `close` listener per socket, however many requests it serves (keep-alive, pipelining): the
// requests waiting on it are a set, each removed when settled.
const watchers = new WeakMap<SocketLike, Set<() => void>>()

function fire(socket: SocketLike): void {
  const set = watchers.get(socket)
  watchers.delete(socket)
  if (set !== undefined) for (const gone of set) gone()
}

/** Calls `gone` when `socket` closes, until the returned function is called. */
export function onSocketClose(socket: SocketLike, gone: () => void): () => void {
  let set = watchers.get(socket)
  if (set === undefined) {
    set = new Set()
    watchers.set(socket, set)
    socket.once('close', () => fire(socket))
  }
  set.add(gone)
  const waiting = set
  return () => {
    waiting.delete(gone)
  }
}

// What Koa's middleware calls once its downstream is over, per response with something owed.
const doneSignals = new WeakMap<object, () => void>()

/**
 * Tells the lifecycle that the handler of `res` is over though it may not have called `res.end`
 * (Koa skips it for a client gone): at once, or, when `body` is a stream still open, once it ends
 * or closes. A no-op for a response that owes nothing.
 */
export function handlerDone(res: object, body?: unknown): void {
  const signal = doneSignals.get(res)
  if (signal === undefined) return
  const stream = body as StreamLike | null | undefined
  if (
    stream == null ||
    typeof stream.pipe !== 'function' ||
    typeof stream.once !== 'function' ||
    stream.destroyed === true ||
    stream.closed === true
  )
    signal()
  else {
    stream.once('end', signal)
    stream.once('close', signal)
  }
}

/**
 * Runs a framework's downstream (`run`, Koa's `next`) and, once it settles, calls
 * {@link handlerDone} with the body it left (`body()`). Only a response that owes something (a
 * lease, a refund) waits: for any other, this is `run()`.
 */
export function untilHandlerDone<T>(
  res: object,
  run: () => Promise<T>,
  body: () => unknown,
): Promise<T> {
  if (!doneSignals.has(res)) return run()
  return run().then(
    (value) => {
      handlerDone(res, body())
      return value
    },
    (error: unknown) => {
      handlerDone(res)
      throw error
    },
  )
}

interface StreamLike {
  readonly destroyed?: boolean
  readonly closed?: boolean
  pipe?: unknown
  once?: (event: 'end' | 'close', listener: () => void) => unknown
}

/**
 * Settles what a request owes once it is over. With `hold` (the default: `releaseOnDisconnect`
 * off), that is when its handler ended the response (`res.end`, or {@link handlerDone}) and then
 * the response finished (its status) or the client left (`undefined`), whichever comes first.
 * Without `hold`, or for a response with no `end` to watch: at `finish`, or as soon as the client
 * leaves. A pipelined response that waits behind another hears its socket's `close`.
 */
export function settleWhenOver(res: LifecycleTarget, settle: Settle, hold: boolean): void {
  const wait = hold && typeof res.end === 'function'
  let ended = !wait
  let gone = false
  let over = false
  // the handler destroyed the response while its client was still there: a server failure
  // (a stream that errored, Koa 3's pipeline), which a status-less end would call an abort
  let failed = false
  let unwatch: (() => void) | undefined
  const done = (status: number | undefined): void => {
    if (over) return
    over = true
    res.removeListener?.('finish', onFinish)
    res.removeListener?.('close', onClose)
    res.removeListener?.('unpipe', onUnpipe)
    unwatch?.()
    if (wait) doneSignals.delete(res)
    settle(status)
  }
  const left = (): void => {
    gone = true
    if (ended) done(failed ? SERVER_FAILED : undefined)
  }
  const onFinish = (): void => done(res.statusCode)
  const onClose = (): void => (res.writableFinished ? done(res.statusCode) : left())
  const handlerEnded = (): void => {
    if (ended) return
    ended = true
    if (gone || clientGone(res)) done(failed ? SERVER_FAILED : undefined)
  }
  // A stream piped into the response and taken off it once its client left is the handler's
  // work ending: Nest's StreamableFile destroys its source then, and ends nothing.
  const onUnpipe = (): void => {
    if (gone || clientGone(res)) handlerEnded()
    else res.once('unpipe', onUnpipe)
  }
  // `finish` itself says the response finished: light-my-request (Fastify's inject) emits it
  // while `writableFinished` is still false.
  res.once('finish', onFinish)
  res.once('close', onClose)
  // a response waiting in a pipeline hears nothing of its own if the connection dies
  const socket = res.socket == null ? res.req?.socket : undefined
  if (socket != null) unwatch = onSocketClose(socket, left)
  if (wait) {
    wrapEnding(res, 'end', handlerEnded)
    // a handler may end the response by destroying it (`res.destroy()`, or `pipeline` when its
    // client left mid-stream): Node itself never calls it when a client leaves. Without this,
    // what such a request holds stayed held (a shedder's admission for good)
    wrapEnding(res, 'destroy', handlerEnded, () => {
      if (!gone && !clientGone(res) && !res.writableFinished) failed = true
    })
    res.once('unpipe', onUnpipe)
    doneSignals.set(res, handlerEnded)
  }
  if (clientGone(res)) left()
}

// Wraps `end` or `destroy` on this response only: the handler ending the response ends its work.
function wrapEnding(
  res: LifecycleTarget,
  name: 'end' | 'destroy',
  ended: () => void,
  before?: () => void,
): void {
  const method = res[name]
  if (typeof method !== 'function') return
  res[name] = function (this: unknown, ...args: unknown[]) {
    before?.()
    const result = method.apply(this, args)
    ended()
    return result
  }
}
