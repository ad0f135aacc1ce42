// Test support: what an adapter supplies to run the shared contracts (adapter-contract.ts and the
// contracts it runs), in a module of their own so every contract imports them one way.
import { runningCounter, type StoreLike } from './adapter-helpers.js'

/** Limiter options as the contract writes them; each harness casts them to its own type. */
export type ContractOptions = { readonly [option: string]: unknown }

/** What came back from one request. */
export interface Reply {
  readonly status: number
  readonly headers: Record<string, string | string[] | number | undefined>
  readonly body: string
}

/** Sends `GET path` (with `headers`) to an app. */
export type Send = (path: string, headers?: Record<string, string>) => Promise<Reply>

/** A listening server: the base URL, how many `/slow` responses it finished, and how to stop it. */
export interface Listening {
  readonly url: string
  finishedCount(): number
  /** When each handler started (`performance.now()`), in order, whatever the route. */
  handlerStarts(): readonly number[]
  /** The most `/slow` handlers that ran at once (from their start to their answer). */
  peakRunning(): number
  close(): Promise<void>
}

/** What an adapter supplies to run the contract. */
export interface AdapterHarness {
  /**
   * An app with one limiter (`options`) in front of a handler that answers `{ ok, rateLimit }` as
   * JSON with status 200 (or `?status=`), where `rateLimit` is the decision the adapter hands on;
   * errors from the limiter answer 500 with `{ message, code }` as JSON.
   */
  app(options: ContractOptions): Send | Promise<Send>
  /**
   * A server listening on 127.0.0.1 with one limiter (`options`) in front of `GET /` answering
   * `ok`, `GET /slow` answering `late` 400 ms later (long enough for the
   * next requests to be decided while it runs, on a busy machine too), and `GET /fail` whose handler throws (the
   * framework answers 500).
   */
  listen(options: ContractOptions): Promise<Listening>
  /** A fresh MemoryStore. */
  store(): StoreLike
  /** The errors that setting up a limiter with `options` gives, one per way the app can start. */
  optionErrors(options: ContractOptions): unknown[] | Promise<unknown[]>
  /** Option callbacks that read the request, in the adapter's vocabulary. */
  readonly callbacks: {
    /** `skip`: true when the `x-internal` header is `yes`. */
    readonly skipInternal: unknown
    /** `deny`: true when the `x-banned` header is `yes`. */
    readonly denyBanned: unknown
    /** `cost`: the `cost` query parameter, 1 without one. */
    readonly costFromQuery: unknown
    /** `message`: `{ path }` with the request's path. */
    readonly pathMessage: unknown
  }
}

/** What a harness's listening app records of its handlers, for the contract's `Listening`. */
export interface HandlerProbe {
  /** A handler of any route starts. */
  started(): void
  /** `/slow`'s handler, once started: runs 400 ms, then `answer()`, then counts as finished. */
  slow(answer?: () => void): Promise<void>
  /** `server` (its url and close) with what the probe saw. */
  listening(server: { readonly url: string; close(): Promise<void> }): Listening
}

/** A probe for one listening app (see {@link HandlerProbe}). */
export function handlerProbe(): HandlerProbe {
  let finished = 0
  const starts: number[] = []
  const running = runningCounter()
  return {
    started: () => {
      starts.push(performance.now())
    },
    async slow(answer = () => {}) {
      running.start()
      await new Promise((r) => setTimeout(r, 400))
      running.stop()
      answer()
      finished++
    },
    listening: (server) => ({
      ...server,
      finishedCount: () => finished,
      handlerStarts: () => starts,
      peakRunning: () => running.peak,
    }),
  }
}
