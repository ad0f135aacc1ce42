// The full results as markdown: headline, then one section per measurement.
import { SCENARIOS } from '../config.mjs'
import { bestPeer } from '../decisions.mjs'
import { honoPairedSection } from '../http/hono-paired.mjs'
import { limitsRequests } from '../http/variants.mjs'
import { memoryPairedSection } from '../memory-paired.mjs'
import { overloadSection } from '../overload-report.mjs'
import { ratio } from '../stats.mjs'
import { concurrencySection } from './concurrency.mjs'
import { eventsSection } from './events.mjs'
import { ms, num, pct, rate, table, times } from './format.mjs'
import { gcraRepsText, headlineTable } from './headline.mjs'
import { twoLimitsSection } from './two-limits.mjs'
import { waitersSection } from './waiters.mjs'

const NOT_RUN = '_Not run._'

function meta(m) {
  const versions = Object.entries(m.versions)
    .map(([name, version]) => `${name} ${version}`)
    .join(', ')
  return [
    `- Date: ${m.date}; took ${Math.round(m.elapsedS)} s (${Object.entries(m.sectionS ?? {})
      .map(([name, s]) => `${name} ${s} s`)
      .join(', ')}; profile \`${m.profile}\`)`,
    `- Command: \`${m.command}\``,
    `- Machine: ${m.machine}`,
    `- Versions: ${versions}`,
    `- Method: ${m.method}`,
  ].join('\n')
}

function commandsText(commands) {
  const entries = Object.entries(commands ?? {}).sort((a, b) => b[1] - a[1])
  return entries.length === 0
    ? '-'
    : entries.map(([name, n]) => `${name} ${n.toFixed(2)}`).join(', ')
}

function decisionsSection(rows) {
  const parts = []
  for (const scenario of SCENARIOS) {
    for (const inFlight of [...new Set(rows.map((r) => r.inFlight))]) {
      const these = rows.filter((r) => r.scenario === scenario.id && r.inFlight === inFlight)
      if (these.length === 0) continue
      const body = these.map((r) => {
        const peer = bestPeer(rows, r.store, r.scenario, r.inFlight)
        return [
          r.owner === 'ours' ? `**${r.label}**` : r.label,
          r.store,
          rate(r.perSecond),
          times(ratio(r.perSecond, peer?.perSecond)),
          ms(r.p50Ms),
          ms(r.p99Ms),
          num(r.cpuUsPerDecision, 2),
          r.store === 'redis' ? num(r.redisCpuUsPerDecision, 2) : '-',
          pct(r.allowedShare),
          r.store === 'redis' ? num(r.sentPerDecision, 2) : '-',
          r.store === 'redis' ? num(r.executedPerDecision, 2) : '-',
          r.reps.map((n) => rate(n)).join(' / '),
          r.warning ? `⚠ ${r.warning}` : '',
        ]
      })
      parts.push(
        `### ${scenario.title}, ${inFlight} in flight\n\n` +
          table(
            [
              'contender',
              'store',
              'dec/s',
              'x best peer (same store)',
              'p50 ms',
              'p99 ms',
              'CPU µs/dec',
              'Redis CPU µs/dec',
              'allowed',
              'cmds sent/dec',
              'cmds executed/dec',
              'each run (dec/s)',
              'warning',
            ],
            body,
          ),
      )
    }
  }
  return parts.join('\n\n')
}

function commandsSection(rows) {
  const inFlight = Math.max(...rows.map((r) => r.inFlight))
  const redis = rows.filter((r) => r.store === 'redis' && r.inFlight === inFlight)
  const ids = [...new Set(redis.map((r) => r.id))]
  const body = ids.map((id) => {
    const d = redis.find((r) => r.id === id && r.scenario === 'distinct')
    const h = redis.find((r) => r.id === id && r.scenario === 'hot')
    return [
      d?.label ?? id,
      num(d?.sentPerDecision, 2),
      commandsText(d?.commands),
      num(h?.sentPerDecision, 2),
      commandsText(h?.commands),
    ]
  })
  return table(
    [
      'contender',
      '10k keys: sent/dec',
      '10k keys: executed per decision',
      'hot key: sent/dec',
      'hot key: executed per decision',
    ],
    body,
  )
}

// "+3.1" / "-0.4": a difference in µs.
const signed = (n) => (Number.isFinite(n) ? `${n >= 0 ? '+' : ''}${num(n)}` : '-')

function httpSection(http) {
  if (http.length === 0) return NOT_RUN
  const body = http.map((r) => {
    const bare = http.find((b) => b.framework === r.framework && b.variant === 'bare')
    const floor = http.find((b) => b.framework === r.framework && b.variant === 'reference/floor')
    const limits = limitsRequests(r.variant)
    return [
      r.framework,
      r.variant.startsWith('ours/') ? `**${r.variant}**` : r.variant,
      r.mode,
      r.skip ? `skipped: ${r.skip.split('\n')[0]}` : rate(r.perSecond),
      r.skip ? '-' : times(ratio(r.perSecond, bare?.perSecond)),
      r.skip ? '-' : num(r.cpuUsPerRequest),
      r.skip || r.variant === 'bare' ? '-' : signed(r.cpuUsPerRequest - bare?.cpuUsPerRequest),
      r.skip || !limits ? '-' : signed(r.cpuUsPerRequest - floor?.cpuUsPerRequest),
      r.skip || !r.variant.endsWith('/redis') ? '-' : num(r.redisCpuUsPerRequest),
      r.skip ? '-' : ms(r.p50Ms),
      r.skip ? '-' : ms(r.p99Ms),
      r.skip ? '-' : pct(r.non2xxShare),
      r.skip ? '-' : String(r.errors),
      r.warning ? `⚠ ${r.warning}` : '',
    ]
  })
  return table(
    [
      'framework',
      'variant',
      'limits',
      'req/s',
      'x bare',
      'server CPU µs/req',
      'µs/req over bare',
      'µs/req over floor',
      'Redis CPU µs/req',
      'p50 ms',
      'p99 ms',
      'non-2xx',
      'errors',
      'warning',
    ],
    body,
  )
}

function memorySection(rows) {
  if (rows.length === 0) return NOT_RUN
  const body = rows.map((r) => [
    r.owner === 'ours' ? `**${r.label}**` : r.label,
    num(r.usedMemoryPerKey, 0),
    num(r.memoryUsagePerKey, 0),
    num(r.redisKeysPerKey, 2),
    pct(r.ttlShare),
    pct(r.allowedShare),
    r.warning ? `⚠ ${r.warning}` : '',
  ])
  return table(
    [
      'contender',
      'bytes/key (used_memory delta)',
      'MEMORY USAGE/key',
      'Redis keys/key',
      'with TTL',
      'allowed',
      'warning',
    ],
    body,
  )
}

function slidingLogSection(rows) {
  if (rows.length === 0) return NOT_RUN
  const body = rows.map((r) => [
    r.label,
    String(r.limit),
    String(r.keys),
    num(r.usedMemoryPerKey, 0),
    num(r.memoryUsagePerKey, 0),
    num(r.bytesPerEntry, 1),
    pct(r.allowedShare),
    r.warning ? `⚠ ${r.warning}` : '',
  ])
  return table(
    [
      'contender',
      'limit (full log)',
      'keys',
      'bytes/key',
      'MEMORY USAGE/key',
      'bytes per logged request',
      'allowed',
      'warning',
    ],
    body,
  )
}

/** The whole report. */
export function markdown(results) {
  const ran = results.decisions.length > 0
  const { inFlight, markdown: headline } = ran
    ? headlineTable(results)
    : { inFlight: '-', markdown: NOT_RUN }
  const keys = results.memory[0]?.keys
  return `# limiter benchmark: ${results.meta.date}

${meta(results.meta)}

## Headline (Redis stores, ${inFlight} in flight, ${keys ?? '-'} keys for bytes/key)

${headline}

Ratios compare with the best peer measured in this same run. "x EVALSHA" is the ratio to a
trivial one-key INCR script sent with EVALSHA at the same concurrency: one plain round trip.
${ran ? `\n${gcraRepsText(results)}\n` : ''}
## 1. Decisions/s and latency, no HTTP, one process

${ran ? decisionsSection(results.decisions) : NOT_RUN}

### MemoryStore, paired (${results.memoryPaired ? `${results.memoryPaired.rounds} interleaved rounds of ${results.memoryPaired.runMs} ms, ${results.memoryPaired.inFlight} in flight` : 'not run'})

${memoryPairedSection(results.memoryPaired)}

Every in-memory contender runs once per round, each in a fresh child process, the order reversed
every other round; a contender's ratio to the best peer (the peer with the highest median share of
each round's fastest peer's rate) is taken within each round. "floor" is no limiter: the clock, one \`Map\` counter and a promise,
what every in-process limiter pays per decision; its ratio bounds what any limiter can reach
against that peer on this harness.

## 2. HTTP (autocannon, ${results.meta.httpConnections} connections; server in a child process)

${httpSection(results.http)}

"server CPU" is the server process's CPU time (user + system) per request during the measured
load, "over bare" its difference to the bare framework: what the limiter costs the server, which
holds steadier than req/s when the load generator, the server and Redis share the machine's cores.
"reference/floor" limits nothing: it reads the client IP and sets two header fields the size of
ours, the least any limiter that sends headers does; "over floor" is what the limiter costs beyond
that.

### Hono, paired (${results.honoPaired ? `${results.honoPaired.reps} interleaved rounds of ${results.honoPaired.n} requests, ${results.honoPaired.inflight} in flight` : 'not run'})

${honoPairedSection(results.honoPaired)}

Each request goes through @hono/node-server's own listener on an in-memory socket, in this
process's child, so the figure is the server's CPU per request with no load generator or kernel
beside it; "over floor" is the median and quartiles of the paired differences (a round's time
minus the floor's in the same round). "default": each side on its default headers (ours draft-10
and gcra, hono-rate-limiter draft-6 and its fixed window); "draft-6 both": ours on draft-6 and
fixed-window too. See bench/README.md.

## 3. Redis memory per key (${keys ?? '-'} keys, one decision each)

${memorySection(results.memory)}

### Sliding logs at their limit (ours: a 10-byte record per millisecond with admissions; koa-ratelimit: a sorted-set member per request)

${slidingLogSection(results.slidingLog)}

## 4. Redis commands per decision (${inFlight} in flight)

"sent" counts commands the client wrote (round trips, before pipelining); "executed" is the
\`INFO commandstats\` delta, which also counts the commands a Lua script runs.

${ran ? commandsSection(results.decisions) : NOT_RUN}

## 5. Two limits on one key

${twoLimitsSection(results.twoLimits ?? [])}
${concurrencySection(results.concurrency ?? [], results.outbound)}
${eventsSection(results.events ?? [])}
${waitersSection(results.waiters ?? [])}
${results.overload ? overloadSection(results.overload) : ''}
${results.meta.notes.length > 0 ? `\n## Notes\n\n${results.meta.notes.map((n) => `- ${n}`).join('\n')}\n` : ''}`
}
