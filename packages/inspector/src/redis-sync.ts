// Top refused keys across processes: each process writes its summary of the current minute (and
// the last, until it is complete) into one hash per policy, minute and process, listed in a set
// per policy and minute; readers merge the last 15 minutes. Plain HSET/SADD/EXPIRE/HGETALL/
// SMEMBERS, so Redis 6+ and Valkey do it without modules. `{policy}` is a hash tag: on a Cluster,
// one policy's keys share a slot.
import { randomBytes } from 'node:crypto'
import { hostname } from 'node:os'
import { RedisStore } from '@limiter/core'
import type { HeavyHitter, SummaryData } from './space-saving.js'

/** Sends one command (`key`: the key it touches, for a Cluster). */
export type Send = (key: string, args: string[]) => Promise<unknown>

/** A Redis client to share summaries through: ioredis (`call`) or node-redis (`sendCommand`). */
export type InspectorRedis = object

const TTL_SECONDS = 16 * 60

// A summary's hash: its own data (`n:k`) under `DATA_FIELD`, and each key under `KEY_FIELD` and
// the key, so no client key can name the data field. (Older versions wrote each key as it is,
// beside the data under `LEGACY_DATA_FIELD`: a client key of that text erased the summary.)
const DATA_FIELD = 'summary'
const KEY_FIELD = 'k:'
const LEGACY_DATA_FIELD = '\u0000meta'

/** How to send one command on `client`, or undefined if it is no Redis client we know. */
export function senderOf(client: unknown): Send | undefined {
  if (client instanceof RedisStore) return senderOf(client.client)
  if (client === null || typeof client !== 'object') return undefined
  const c = client as Record<string, unknown>
  if (typeof c.sendCommand === 'function' && 'masters' in c && 'slots' in c) {
    const send = c.sendCommand as (key: string, ro: boolean, args: string[]) => Promise<unknown>
    return (key, args) => send.call(client, key, false, args)
  }
  if (typeof c.sendCommand === 'function' && typeof c.evalSha === 'function') {
    const send = c.sendCommand as (args: string[]) => Promise<unknown>
    return (_key, args) => send.call(client, args)
  }
  if (typeof c.call === 'function') {
    const call = c.call as (command: string, ...args: string[]) => Promise<unknown>
    return (_key, args) => call.call(client, args[0] as string, ...args.slice(1))
  }
  return undefined
}

/** This process's name in Redis: host, pid and a random part (pids repeat across hosts). */
export function processId(): string {
  return `${hostname()}:${process.pid}:${randomBytes(3).toString('hex')}`
}

function tagged(prefix: string, policy: string, minute: number): string {
  return `${prefix}{${policy.replaceAll(/[{}]/g, '_')}}:${minute}`
}

// The summary's hash replaced in one step, so a reader sees the old one or the new, never none:
// DEL and HSET sent apart left an empty hash between them. (Not MULTI: the client is the app's,
// shared with its limiters, and a transaction on it would take their commands in too.)
const REPLACE_HASH =
  "redis.call('DEL', KEYS[1]) redis.call('HSET', KEYS[1], unpack(ARGV, 2)) " +
  "redis.call('EXPIRE', KEYS[1], ARGV[1]) return 1"

/** Writes `summary` as this process's for `policy` and `minute`. */
export async function writeSummary(
  send: Send,
  prefix: string,
  pid: string,
  policy: string,
  minute: number,
  summary: SummaryData,
): Promise<void> {
  const base = tagged(prefix, policy, minute)
  const hash = `${base}:${pid}`
  const fields = [DATA_FIELD, `${summary.n}:${summary.k}`]
  for (const item of summary.items) fields.push(KEY_FIELD + item.key, `${item.count}:${item.error}`)
  // at most 2 x 1024 + 2 fields (topK is at most 1024): within Lua's unpack limit
  await send(hash, ['EVAL', REPLACE_HASH, '1', hash, String(TTL_SECONDS), ...fields])
  await send(base, ['SADD', `${base}:procs`, pid])
  await send(base, ['EXPIRE', `${base}:procs`, String(TTL_SECONDS)])
}

/** Every process's summary of `policy` for `minute`. */
export async function readSummaries(
  send: Send,
  prefix: string,
  policy: string,
  minute: number,
): Promise<SummaryData[]> {
  const base = tagged(prefix, policy, minute)
  const pids = (await send(base, ['SMEMBERS', `${base}:procs`])) as string[]
  const out: SummaryData[] = []
  for (const pid of pids ?? []) {
    const hash = `${base}:${pid}`
    const reply = await send(hash, ['HGETALL', hash])
    const summary = parseHash(reply)
    if (summary !== undefined) out.push(summary)
  }
  return out
}

// HGETALL answers a flat array (ioredis `call`, node-redis 4 `sendCommand`) or an object.
function pairsOf(reply: unknown): Array<[string, string]> {
  const pairs: Array<[string, string]> = []
  if (Array.isArray(reply)) {
    for (let i = 0; i + 1 < reply.length; i += 2)
      pairs.push([String(reply[i]), String(reply[i + 1])])
  } else if (reply !== null && typeof reply === 'object') {
    for (const [field, value] of Object.entries(reply)) pairs.push([field, String(value)])
  }
  return pairs
}

function counts(value: string): [number, number] {
  const [a, b] = value.split(':').map(Number)
  return [Number.isFinite(a) ? (a as number) : 0, Number.isFinite(b) ? (b as number) : 0]
}

/**
 * A summary from its hash, or undefined (an empty or unknown hash). A hash in the older layout
 * (data under `"\u0000meta"`, keys as they are), written by a process of an older version during
 * a rolling deploy, is read as that version read it; it expires 16 minutes after its last write.
 */
export function parseHash(reply: unknown): SummaryData | undefined {
  const pairs = pairsOf(reply)
  const legacy = pairs.some(([field]) => field === LEGACY_DATA_FIELD)
  const dataField = legacy ? LEGACY_DATA_FIELD : DATA_FIELD
  const keyField = legacy ? '' : KEY_FIELD
  let n = 0
  let k = 0
  const items: HeavyHitter[] = []
  for (const [field, value] of pairs) {
    const [a, b] = counts(value)
    if (field === dataField) {
      n = a
      k = b
    } else if (field.startsWith(keyField))
      items.push({ key: field.slice(keyField.length), count: a, error: b })
  }
  return k > 0 ? { n, k, items } : undefined
}
