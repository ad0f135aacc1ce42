// Sends node-redis commands in waves, so that Redis works while the process does.
//
// node-redis (majors 4 to 6) writes the commands of one event-loop iteration together, from a
// setImmediate; ioredis writes each as it comes. A busy store makes several script calls per
// iteration (one per full batch): through node-redis they reach Redis in one write, Redis
// answers them in one read, and the process and Redis take turns, each idle while the other
// works (our decisions/s on node-redis measured 66-73% of those on ioredis, with Node idle 74%
// of the time). A wave sends an iteration's first call at once and holds the others of that
// iteration until the next: Redis starts on the first while the process still makes the rest,
// and the answers come back in parts, as they do from ioredis (89-96% in `pnpm bench`).
//
// Calls reach node-redis in the order they were made. A held call whose server went down in the
// meantime (see `down`) fails instead of joining node-redis's offline queue.

type Call = () => Promise<unknown>

interface Held {
  readonly call: Call
  readonly resolve: (reply: unknown) => void
  readonly reject: (error: unknown) => void
}

// A synchronous throw (a client library of another shape than expected) as a rejection.
function attempt(call: Call): Promise<unknown> {
  try {
    return call()
  } catch (error) {
    return Promise.reject(error)
  }
}

/** The waves of one connection (one server). */
export class Waves {
  readonly #down: () => string | undefined
  // A call has gone in this iteration: the next ones wait for the next iteration.
  #open = false
  #held: Held[] = []

  /** `down` says why the server cannot take a command now (then held calls fail), or undefined. */
  constructor(down: () => string | undefined) {
    this.#down = down
  }

  /** Sends a command (`call` hands it to node-redis) now, or with the next iteration's wave. */
  send(call: Call): Promise<unknown> {
    if (!this.#open) {
      this.#open = true
      const sent = attempt(call)
      setImmediate(this.#next)
      return sent
    }
    return new Promise((resolve, reject) => {
      this.#held.push({ call, resolve, reject })
    })
  }

  // Runs after node-redis's own setImmediate (queued first) wrote the wave's first call.
  readonly #next = (): void => {
    const held = this.#held
    if (held.length === 0) {
      this.#open = false
      return
    }
    this.#held = []
    const down = this.#down()
    for (const { call, resolve, reject } of held) {
      if (down !== undefined) reject(new Error(down))
      else attempt(call).then(resolve, reject)
    }
    setImmediate(this.#next)
  }
}
