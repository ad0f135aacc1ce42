// Decisions per second across processes: each process adds what it counted since its last write
// (HINCRBY of the difference) into one hash per policy and minute, field `second:series`, so the
// hashes hold the fleet's sums; readers read the last 15 minutes' hashes back. Each process also
// marks itself in a sorted set scored by when it last wrote, to say how many processes report.
// Plain HINCRBY/HGETALL/ZADD/EXPIRE: Redis 7 and Valkey, no modules. Bounded: at most 15 hashes
// of 300 fields per policy (16 minutes' expiry), and what is not yet written fits in the ring.
import { type PolicyRecord, SECONDS, SERIES } from './recorder.js'
import type { Send } from './redis-sync.js'

const TTL_SECONDS = 16 * 60
/** A process that has not written for this long no longer counts as reporting. */
export const REPORTING_MS = 30_000
/** How far back a write looks for counts not yet written (a write is due every 5 s). */
const LOOKBACK_SECONDS = 120

function ratesKey(prefix: string, policy: string, minute: number): string {
  return `${prefix}rates:{${policy.replaceAll(/[{}]/g, '_')}}:${minute}`
}

/** What this process has written of one policy's ring: per second, the counts sent. */
export class RateWriter {
  readonly #record: PolicyRecord
  readonly #seconds = new Float64Array(SECONDS).fill(-1)
  readonly #sent = new Uint32Array(SECONDS * SERIES.length)

  constructor(record: PolicyRecord) {
    this.#record = record
  }

  /** Adds to the shared hashes what was counted since the last write (up to 2 minutes back). */
  async write(send: Send, prefix: string, nowMs: number): Promise<void> {
    const record = this.#record
    record.settle()
    const last = Math.floor(nowMs / 1000)
    const touched = new Set<string>()
    const writes: Array<Promise<unknown>> = []
    for (let second = last - LOOKBACK_SECONDS; second <= last; second++) {
      const slot = second % SECONDS
      if (record.seconds[slot] !== second) continue
      if (this.#seconds[slot] !== second) {
        this.#seconds[slot] = second
        this.#sent.fill(0, slot * SERIES.length, (slot + 1) * SERIES.length)
      }
      const key = ratesKey(prefix, record.id, Math.floor(second / 60))
      for (let s = 0; s < SERIES.length; s++) {
        const at = slot * SERIES.length + s
        const delta = (record.counts[at] ?? 0) - (this.#sent[at] ?? 0)
        if (delta <= 0) continue
        touched.add(key)
        this.#sent[at] = (this.#sent[at] ?? 0) + delta
        writes.push(
          send(key, ['HINCRBY', key, `${second}:${s}`, String(delta)]).catch((error: unknown) => {
            // not added: try again next time, if the second is still held
            if (this.#seconds[slot] === second) this.#sent[at] = (this.#sent[at] ?? 0) - delta
            throw error
          }),
        )
      }
    }
    for (const key of touched) writes.push(send(key, ['EXPIRE', key, String(TTL_SECONDS)]))
    await settleAll(writes)
  }
}

// Waits for every write, then rethrows the first failure.
async function settleAll(writes: Array<Promise<unknown>>): Promise<void> {
  const results = await Promise.allSettled(writes)
  const failed = results.find((r) => r.status === 'rejected')
  if (failed !== undefined) throw (failed as PromiseRejectedResult).reason
}

/**
 * The fleet's decisions per second of `policy` over the last 15 minutes: `SECONDS / step`
 * points per series, oldest first, the mean per second over each step (as `PolicyRecord.rates`).
 */
export async function readFleetRates(
  send: Send,
  prefix: string,
  policy: string,
  nowMs: number,
  stepSeconds: number,
): Promise<number[][]> {
  const last = Math.floor(nowMs / 1000)
  const first = last - SECONDS + 1
  const points = SECONDS / stepSeconds
  const out = SERIES.map(() => new Array<number>(points).fill(0))
  const minutes: number[] = []
  for (let m = Math.floor(first / 60); m <= Math.floor(last / 60); m++) minutes.push(m)
  const replies = await Promise.all(
    minutes.map((m) => {
      const key = ratesKey(prefix, policy, m)
      return send(key, ['HGETALL', key])
    }),
  )
  for (const reply of replies) {
    for (const [field, value] of fieldsOf(reply)) {
      const [second, s] = field.split(':').map(Number) as [number, number]
      if (!(second >= first && second <= last) || out[s] === undefined) continue
      const series = out[s] as number[]
      const point = Math.floor((second - first) / stepSeconds)
      series[point] = (series[point] ?? 0) + Number(value)
    }
  }
  return out.map((series) => series.map((total) => total / stepSeconds))
}

/** Marks this process as reporting; answers how many processes reported in the last 30 s. */
export async function reportProcess(
  send: Send,
  prefix: string,
  pid: string,
  nowMs: number,
): Promise<number> {
  const key = `${prefix}processes`
  await send(key, ['ZADD', key, String(nowMs), pid])
  await send(key, ['ZREMRANGEBYSCORE', key, '-inf', String(nowMs - REPORTING_MS)])
  await send(key, ['PEXPIRE', key, String(REPORTING_MS)])
  return Number(await send(key, ['ZCARD', key]))
}

// HGETALL answers a flat array (ioredis `call`, node-redis 4 `sendCommand`) or an object.
export function fieldsOf(reply: unknown): Array<[string, string]> {
  const pairs: Array<[string, string]> = []
  if (Array.isArray(reply)) {
    for (let i = 0; i + 1 < reply.length; i += 2)
      pairs.push([String(reply[i]), String(reply[i + 1])])
  } else if (reply !== null && typeof reply === 'object') {
    for (const [field, value] of Object.entries(reply)) pairs.push([field, String(value)])
  }
  return pairs
}
