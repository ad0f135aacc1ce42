// The Fetch lifecycle of a request: what it owes is settled when its response body ends (read to
// the end, cancelled, or failed) or its `request.signal` aborts (by default not before its handler
// is over: see the kit's `admitted`); a `maxDelay` wait ends on abort.

/** The host's `waitUntil` (Workers, Vercel, Deno Deploy): keeps the runtime up for a promise. */
export type WaitUntil = (promise: Promise<unknown>) => void

/**
 * Hands a settlement's promise to `waitUntil` when the host offers one; otherwise it runs on its
 * own. The promise never rejects (the store's failures go to the limiter's `onError`), and a
 * `waitUntil` that throws (called after the response was sent) is ignored.
 */
export function keepAlive(promise: Promise<unknown> | undefined, waitUntil?: WaitUntil): void {
  if (promise === undefined || waitUntil === undefined) return
  try {
    waitUntil(promise)
  } catch {
    // too late for this runtime to wait: the promise runs on anyway
  }
}

/** What a request owes, settled with the final status (`undefined`: the client went away). */
export type Settle = (status: number | undefined) => void

/**
 * Settles `settle` with `undefined` when `signal` aborts (the client went away), at once if it
 * has already; returns how to stop listening.
 */
export function settleOnAbort(signal: AbortSignal, settle: Settle): () => void {
  if (signal.aborted) {
    settle(undefined)
    return () => {}
  }
  const aborted = (): void => settle(undefined)
  signal.addEventListener('abort', aborted, { once: true })
  return () => signal.removeEventListener('abort', aborted)
}

/**
 * `res` whose body settles `settle`: with the status once read to its end, with `undefined` once
 * cancelled (the client went away) or failed. A response without a body settles at once; one
 * that cannot be copied (a 101 upgrade) too, with its status.
 */
export function settleWithBody(res: Response, settle: Settle): Response {
  const source = res.body
  if (source === null) {
    settle(res.status)
    return res
  }
  let reader: ReadableStreamDefaultReader<Uint8Array> | undefined
  const body = new ReadableStream<Uint8Array>({
    async pull(controller) {
      try {
        // a body already read or locked by another reader fails here: the request is over
        reader ??= source.getReader()
        const chunk = await reader.read()
        if (chunk.done) {
          controller.close()
          settle(res.status)
        } else controller.enqueue(chunk.value)
      } catch (error) {
        settle(undefined)
        controller.error(error)
      }
    },
    cancel(reason) {
      settle(undefined)
      return reader === undefined ? source.cancel(reason) : reader.cancel(reason)
    },
  })
  try {
    return new Response(body, res)
  } catch {
    settle(res.status)
    return res
  }
}

/**
 * Resolves `true` after `ms`, or `false` as soon as `signal` aborts (the client left while its
 * request waited for its reserved slot).
 */
export function waitOut(ms: number, signal: AbortSignal): Promise<boolean> {
  if (signal.aborted) return Promise.resolve(false)
  return new Promise((resolve) => {
    const left = (): void => {
      clearTimeout(timer)
      resolve(false)
    }
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', left)
      resolve(true)
    }, ms)
    signal.addEventListener('abort', left, { once: true })
  })
}
