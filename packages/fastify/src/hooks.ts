// The request hook: runs one limiter for one request, as a callback hook or an async one.
import {
  type CheckResult,
  type LimitedResponse,
  limitedResponse,
  type RateLimitCheck,
  settleCheck,
  whenDue,
  withCheck,
} from '@limiter/core/http'
import type { FastifyReply, FastifyRequest } from 'fastify'
import type { LimitHook } from './options.js'
import type { Resolved } from './types.js'

/** A callback-style Fastify hook. */
export type CallbackHook = (
  request: FastifyRequest,
  reply: FastifyReply,
  done: (error?: Error) => void,
) => void

// Called once a request is settled: with an error, or with whether the reply was sent.
type Settled = (error: unknown, sent: boolean) => void

// Runs a limiter for one request. With synchronous callbacks and MemoryStore it settles in this
// turn, so a callback-style hook lets Fastify go straight on (no promise per request).
export function limit(
  rl: Resolved,
  scope: string,
  request: FastifyRequest,
  reply: FastifyReply,
  settled: Settled,
): void {
  withCheck(
    rl,
    request,
    scope,
    (check) => proceed(rl, request, reply, check, settled),
    (error) => settled(error, false),
  )
}

function proceed(
  rl: Resolved,
  request: FastifyRequest,
  reply: FastifyReply,
  check: CheckResult,
  settled: Settled,
): void {
  if (check === undefined) {
    settled(undefined, false)
    return
  }
  if (check.denied) {
    send(reply, check.response)
    settled(undefined, true)
    return
  }
  request.rateLimit = check.decision
  // Headers go through the reply (Fastify writes them at send); several limiters append members.
  const outcome = settleCheck(rl, check, reply.raw, {
    getHeader: (name) => reply.getHeader(name),
    setHeader: (name, value) => reply.header(name, value),
  })
  if (outcome === 'proceed') {
    // After a reserved slot's delay (maxDelay). A client gone meanwhile never reaches the route:
    // the hook then never settles (settling would let Fastify run the handler; nothing is sent).
    whenDue(rl, check, reply.raw, () => settled(undefined, false))
    return
  }
  if (outcome === 'ended') {
    settled(undefined, true)
    return
  }
  respond(rl, request, reply, check).then(
    () => settled(undefined, true),
    (error: unknown) => settled(error, false),
  )
}

async function respond(
  rl: Resolved,
  request: FastifyRequest,
  reply: FastifyReply,
  check: RateLimitCheck,
): Promise<void> {
  if (rl.onLimited !== undefined && (await sentBy(rl.onLimited, request, reply, check))) return
  // (an onLimited that only looked, logging or counting as @fastify/rate-limit's onExceeded
  // notification does, must not let the request through: the default answer goes instead)
  send(reply, await limitedResponse(rl, request, check))
}

// Whether `onLimited` sent the reply, or started to: `reply.sent` stays false while an async
// onSend hook of the app runs, so the calls to `send` are watched while it runs.
async function sentBy(
  onLimited: NonNullable<Resolved['onLimited']>,
  request: FastifyRequest,
  reply: FastifyReply,
  check: RateLimitCheck,
): Promise<boolean> {
  const send = reply.send
  const own = Object.hasOwn(reply, 'send')
  let called = false
  reply.send = function (this: FastifyReply, ...args: Parameters<FastifyReply['send']>) {
    called = true
    return send.apply(this, args)
  }
  try {
    await onLimited(request, reply, check.decision)
  } finally {
    if (own) reply.send = send
    else delete (reply as { send?: unknown }).send
  }
  return called || reply.sent
}

function send(reply: FastifyReply, response: LimitedResponse): void {
  reply.code(response.status).type(response.contentType).send(response.body)
}

// Route hooks are callback hooks over `limit` (app.rateLimit() wraps `limit` in a promise instead,
// since its hooks are typed async). `phase` is the hook they run in.
export function callbackHook(rl: Resolved, scope: string, phase: LimitHook): CallbackHook {
  return (request, reply, done) =>
    limit(rl, scope, request, reply, (error, sent) => {
      // A reply this hook sent ends the request: Fastify's callback hooks then skip done().
      if (error !== undefined) done(withBodyHint(error, phase, request) as Error)
      else if (!sent) done()
    })
}

// A key that failed in onRequest on a request that carries a body (not parsed yet there) most
// likely read the body.
function withBodyHint(error: unknown, phase: LimitHook, request: FastifyRequest): unknown {
  if (
    phase === 'onRequest' &&
    request.body === undefined &&
    (request.headers['content-length'] !== undefined ||
      request.headers['transfer-encoding'] !== undefined) &&
    error instanceof Error &&
    (error as { code?: unknown }).code === 'ERR_LIMITER_KEY'
  ) {
    error.message +=
      " (the key runs in 'onRequest', before the body is parsed: use `hook: 'preHandler'` to key on the body)"
  }
  return error
}
