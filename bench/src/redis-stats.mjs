// Reading the private Redis: INFO fields, command counts, and memory per key.

function parseInfo(text) {
  const fields = {}
  for (const line of text.split('\r\n')) {
    const at = line.indexOf(':')
    if (at > 0 && !line.startsWith('#')) fields[line.slice(0, at)] = line.slice(at + 1)
  }
  return fields
}

/**
 * Calls per command from `INFO commandstats`, e.g. `{ evalsha: 10, incr: 10 }`. Redis counts
 * the commands a script runs too, so this is the server's work, not its round trips.
 */
export async function commandCalls(admin) {
  const fields = parseInfo(await admin.info('commandstats'))
  const calls = {}
  for (const [name, value] of Object.entries(fields)) {
    if (!name.startsWith('cmdstat_')) continue
    calls[name.slice('cmdstat_'.length)] = Number(/calls=(\d+)/.exec(value)?.[1] ?? 0)
  }
  return calls
}

/** `after - before` per command, leaving out the harness's own INFO calls. */
export function callsDelta(before, after) {
  const delta = {}
  for (const [name, count] of Object.entries(after)) {
    const d = count - (before[name] ?? 0)
    if (d > 0 && name !== 'info') delta[name] = d
  }
  return delta
}

/** `used_memory` in bytes. */
export async function usedMemory(admin) {
  return Number(parseInfo(await admin.info('memory')).used_memory)
}

/** The server's version string. */
export async function redisVersion(admin) {
  return parseInfo(await admin.info('server')).redis_version
}

/**
 * `MEMORY USAGE` (all samples of nested values) averaged over up to `samples` random keys,
 * and the share of those keys that carry a TTL.
 */
export async function sampleKeys(admin, samples) {
  let bytes = 0
  let withTtl = 0
  let seen = 0
  for (let i = 0; i < samples; i++) {
    const key = await admin.randomkey()
    if (key === null) break
    bytes += Number(await admin.memory('USAGE', key, 'SAMPLES', '0'))
    if ((await admin.pttl(key)) > 0) withTtl++
    seen++
  }
  return {
    memoryUsage: seen === 0 ? Number.NaN : bytes / seen,
    ttlShare: seen === 0 ? Number.NaN : withTtl / seen,
  }
}

/** The Redis server's own CPU time so far, in µs (`INFO cpu`: user + system). */
export async function serverCpuUs(admin) {
  const fields = parseInfo(await admin.info('cpu'))
  return (Number(fields.used_cpu_user) + Number(fields.used_cpu_sys)) * 1e6
}
