// What one run measures: the scenarios, and the full and quick profiles.

/** A distinct IPv4-looking key for index `i` (what the peers key on by default). */
export const ipKey = (i) => `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`

const DISTINCT_KEYS = 10_000
const HOT_KEY = '10.255.255.254'
const BUSY_KEY = '10.255.255.253'

/** The no-HTTP scenarios of section 1. */
export const SCENARIOS = [
  {
    id: 'distinct',
    title: '10,000 distinct keys, all allowed',
    // 100k a day: never reached in a run, and every algorithm's state outlives the ~0.2 s
    // between two hits of one key (a bucket refills one request in 864 ms), so decisions
    // update existing state instead of creating it afresh each time.
    limit: 100_000,
    windowMs: 86_400_000,
    keyAt: (i) => ipKey(i % DISTINCT_KEYS),
  },
  {
    id: 'busy',
    title: 'one busy key, all allowed',
    // What a limiter sees when one key stands for many clients (a global limit, one API key)
    // or one client sends many requests at once: many admissions of one key in flight. Ours
    // read and write such a key once per Redis batch; the peers make one round trip each.
    // (1e9 a minute, as the HTTP section's passing limit: never reached in a run.)
    limit: 1_000_000_000,
    windowMs: 60_000,
    keyAt: () => BUSY_KEY,
  },
  {
    id: 'hot',
    title: 'one hot key far over its limit',
    limit: 10,
    windowMs: 60_000,
    keyAt: () => HOT_KEY,
  },
]

/**
 * The "two limits on one key" scenario (section 5): every key holds 100 per second (GCRA) and
 * 10,000 per day (fixed window), decided together. Neither limit is reached in a run (a key is
 * hit every ~10,000 decisions), so every request is allowed and the figures measure what the
 * second policy costs. `quota` is the small deterministic phase that counts what each contender's
 * counters hold for refused requests: one key, 3 per second and 5 per day, `bursts` bursts of
 * `burstSize` requests one after another, each burst in its own per-second window (`gapMs` from
 * one burst's start to the next: past the 1 s window of every contender).
 */
export const TWO_LIMITS = {
  id: 'two-limits',
  inFlight: 256,
  limits: [
    { name: 'second', limit: 100, windowMs: 1000, algorithm: 'gcra' },
    { name: 'day', limit: 10_000, windowMs: 86_400_000, algorithm: 'fixed-window' },
  ],
  keyAt: (i) => ipKey(i % DISTINCT_KEYS),
  quota: {
    limits: [
      { name: 'second', limit: 3, windowMs: 1000, algorithm: 'gcra' },
      { name: 'day', limit: 5, windowMs: 86_400_000, algorithm: 'fixed-window' },
    ],
    bursts: 4,
    burstSize: 5,
    gapMs: 1200,
  },
}

/**
 * Section 6, a concurrency limit (requests in flight) per key: 10,000 keys, each request takes a
 * slot and gives it back at once, 256 in flight; 100 in flight per key is never reached.
 */
export const CONCURRENCY = {
  id: 'concurrency',
  inFlight: 256,
  limit: 100,
  windowMs: 60_000,
  keyAt: (i) => ipKey(i % DISTINCT_KEYS),
}

/** The outbound example (section 6): its run, as `examples/outbound` measures it. */
export const OUTBOUND = { seconds: 5, quota: 100 }

/** The HTTP limits: "pass" never limits, "limited" lets 100 per minute through (the rest get 429). */
export const HTTP_MODES = {
  pass: { limit: 1_000_000_000, windowMs: 60_000 },
  limited: { limit: 100, windowMs: 60_000 },
}

export const PROFILES = {
  full: {
    name: 'full',
    reps: 3,
    inFlight: [64, 256],
    redisRunMs: 1500,
    memoryRunMs: 500,
    warmupMs: 300,
    scenarios: ['distinct', 'busy', 'hot'],
    memoryStoreScenarios: ['distinct', 'hot'],
    // section 1's MemoryStore comparison in interleaved rounds (memory-paired.mjs)
    paired: { rounds: 11, runMs: 300, warmupMs: 200 },
    keysForMemory: 100_000,
    slidingLog: [
      { limit: 10, keys: 2000 },
      { limit: 100, keys: 1000 },
      { limit: 1000, keys: 200 },
    ],
    http: {
      reps: 3,
      durationS: 4,
      warmupS: 1,
      connections: 64,
      modes: ['pass', 'limited'],
      peers: 'all',
    },
  },
  quick: {
    name: 'quick',
    reps: 3,
    inFlight: [256],
    redisRunMs: 300,
    memoryRunMs: 250,
    warmupMs: 100,
    scenarios: ['distinct', 'hot'],
    memoryStoreScenarios: ['distinct'],
    paired: { rounds: 5, runMs: 200, warmupMs: 200 },
    keysForMemory: 10_000,
    slidingLog: [
      { limit: 10, keys: 200 },
      { limit: 100, keys: 100 },
    ],
    http: {
      reps: 1,
      durationS: 1.5,
      warmupS: 0.5,
      connections: 64,
      modes: ['pass'],
      // One peer per framework (its Redis variant) keeps the quick run short; Nest's throttler
      // runs with both stores (its memory store is the one most Nest apps use).
      peers: [
        'express-rate-limit/redis',
        'koa-ratelimit/redis',
        '@fastify/rate-limit/redis',
        'hono-rate-limiter/redis',
        '@nestjs/throttler/memory',
        '@nestjs/throttler/redis',
      ],
    },
  },
}

/**
 * Section 7, client libraries: the same decisions through ioredis and node-redis (10,000 keys,
 * all allowed, 256 in flight).
 */
export const CLIENTS_SCENARIO = {
  id: 'clients',
  title: '10,000 distinct keys, all allowed',
  inFlight: 256,
  limit: 100_000,
  windowMs: 86_400_000,
  keyAt: (i) => ipKey(i % DISTINCT_KEYS),
}
