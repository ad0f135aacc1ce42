// Hostile user keys on a real Redis, for every algorithm: huge, binary, unicode, lone surrogates,
// braces, colons, newlines, glob characters. They work and stay distinct (the same decisions as
// MemoryStore), each Redis key stays inside its namespace and hash tag with a bounded name and a
// bounded MEMORY USAGE, and an empty key is a clear error that never reaches the store.
import { describe, expect, it } from 'vitest'
import {
  ALGORITHMS,
  createLimiter,
  encodeTag,
  type Limiter,
  MAX_TAG_BYTES,
  MemoryStore,
  RedisStore,
} from '../src/index.js'
import { scanKeys, useRedis } from './setup/redis.js'

const redis = useRedis()

const MB = 1024 * 1024
const latin1 = Array.from({ length: 256 }, (_, i) => String.fromCharCode(i)).join('')
/** Keys an attacker can send; every one distinct from every other. */
const HOSTILE = [
  'a'.repeat(MB),
  `${'a'.repeat(MB - 1)}b`,
  '€'.repeat(MB / 3), // 1 MB of UTF-8
  '{'.repeat(MB),
  '}'.repeat(MB),
  latin1,
  latin1.split('').reverse().join(''),
  '\u0000',
  '\u0000\u0000',
  'a\nb',
  'a\r\nb',
  '\n',
  '*',
  '?',
  '[a-z]',
  '\\',
  '{',
  '}',
  '{}',
  '}{',
  '{a}',
  ':',
  '::',
  'a:b',
  'x}:rl:other:{y',
  '%',
  '%7B',
  '%7D',
  '%25',
  '%H',
  '%h',
  '%u',
  '%ud800',
  ' ',
  '🚦',
  '\u200d',
  '\u202e',
  'ключ',
  '鍵',
  // Lone UTF-16 surrogates: no UTF-8 form (Node sends each as U+FFFD).
  '\ud800',
  '\udbff',
  '\udc00',
  '\udfff',
  '\ufffd',
  '\ud83d',
  '\udea6',
  'a\ud800b',
  'a\udc00b',
  `${'x'.repeat(300)}\ud800`,
  `${'x'.repeat(300)}\udfff`,
  `${'x'.repeat(300)}\ufffd`,
]

describe.each(ALGORITHMS)('hostile keys on Redis: %s', (algorithm) => {
  const prefix = `hk-${algorithm}:`
  const make = (store: RedisStore | MemoryStore): Limiter =>
    createLimiter({ algorithm, limit: 1, window: '1h', prefix, store, failureMode: 'closed' })

  it('work, stay distinct, and decide as MemoryStore does', async () => {
    expect(new Set(HOSTILE).size).toBe(HOSTILE.length)
    const errors: unknown[] = []
    const onRedis = createLimiter({
      algorithm,
      limit: 1,
      window: '1h',
      prefix,
      store: new RedisStore({ client: redis.client }),
      failureMode: 'closed',
      // Encoding four 1 MB keys takes a slow host past the default 500 ms deadline: this test
      // is about what the keys become, not about the deadline.
      timeout: '10s',
      onError: (error) => errors.push(error),
    })
    const inMemory = make(new MemoryStore())
    // All at once (batched into few script calls), then one by one.
    const first = await Promise.all(HOSTILE.map((key) => onRedis.consume(key)))
    const second: boolean[] = []
    for (const key of HOSTILE) second.push((await onRedis.consume(key)).allowed)
    const memory: boolean[] = []
    for (const key of HOSTILE) memory.push((await inMemory.consume(key)).allowed)
    for (const key of HOSTILE) memory.push((await inMemory.consume(key)).allowed)
    expect(errors.map(String)).toEqual([])
    expect([...first.map((d) => d.allowed), ...second]).toEqual(memory)
    expect(first.every((d) => d.allowed)).toBe(true)
    expect(second.every((allowed) => !allowed)).toBe(true)
  })

  it('stay inside their namespace and hash tag, with bounded names and bounded memory', async () => {
    const namespace = `${prefix}${make(new MemoryStore()).name}:`
    const stored = await scanKeys(redis.client, `${prefix}*`)
    expect(stored).toHaveLength(HOSTILE.length)
    const tags = new Set<string>()
    for (const name of stored) {
      // namespace + '{' + tag + '}' (+ ':t'): one tag, nothing outside it but the namespace.
      const match = /^([^{}]*)\{([^{}]*)\}(:t)?$/.exec(name)
      expect(match?.[1], name.slice(0, 80)).toBe(namespace)
      tags.add(match?.[2] as string)
      expect(Buffer.byteLength(name)).toBeLessThanOrEqual(namespace.length + MAX_TAG_BYTES + 4)
      const bytes = (await redis.client.call('MEMORY', 'USAGE', name, 'SAMPLES', '0')) as number
      expect(bytes, name.slice(0, 80)).toBeLessThanOrEqual(512)
    }
    // Each user key has exactly its own tag (so a Cluster routes all its keys together).
    expect(tags).toEqual(new Set(HOSTILE.map(encodeTag)))
  })
})

describe('lone surrogates', () => {
  it('no longer share one Redis counter (Node sent each as U+FFFD, so distinct keys collided)', async () => {
    const limiter = createLimiter({
      limit: 1,
      window: '1m',
      prefix: 'surrogates:',
      store: new RedisStore({ client: redis.client }),
      failureMode: 'closed',
    })
    const keys = [
      '\ud800',
      '\udfff',
      '\ufffd',
      `${'k'.repeat(250)}\ud800`,
      `${'k'.repeat(250)}\udbff`,
    ]
    for (const key of keys) expect((await limiter.consume(key)).allowed).toBe(true)
    expect(encodeTag('\ud800')).toBe('%ud800')
    expect(encodeTag('\ud83d\udea6')).toBe('🚦') // a valid pair is left alone
    expect(encodeTag(`${'k'.repeat(250)}\ud800`)).toMatch(/^%h[\w-]{43}$/)
    expect(encodeTag('k'.repeat(300))).toMatch(/^%H[\w-]{43}$/)
  })

  it.each([
    ['prefix', { prefix: 'a\ud800:' }],
    ['name', { name: '\udc00' }],
  ])('in `%s` are refused at construction (two such names would merge)', (option, extra) => {
    expect(() => createLimiter({ limit: 1, window: 1, ...extra })).toThrow(
      new RegExp(`\`${option}\`.*lone surrogates`),
    )
  })
})

describe('keys that are not keys', () => {
  it.each([
    ['an empty string', ''],
    ['undefined', undefined],
    ['null', null],
    ['a number', 42],
    ['a Buffer', Buffer.from('k')],
  ])('%s is a clear error from every method, and never reaches the store', async (_name, key) => {
    const errors: unknown[] = []
    const limiter = createLimiter({
      limit: 1,
      window: '1m',
      prefix: 'nokey:',
      store: new RedisStore({ client: redis.client }),
      onError: (error) => errors.push(error),
    })
    for (const call of [
      () => limiter.consume(key as string),
      () => limiter.peek(key as string),
      () => limiter.reset(key as string),
      () => limiter.refund(key as string),
    ]) {
      const error = await call().then(
        () => undefined,
        (e: unknown) => e,
      )
      expect(error).toBeInstanceOf(TypeError)
      expect(error).toMatchObject({ code: 'ERR_LIMITER_KEY', option: 'key' })
      expect((error as Error).message).toMatch(/^Invalid `key`: expected a non-empty string, got /)
    }
    expect(errors.map(String)).toEqual([])
    expect(await scanKeys(redis.client, 'nokey:*')).toEqual([])
  })
})

describe('decisions that are not decisions', () => {
  it.each([
    ['null', null],
    ['a string', 'x'],
    ['a number', 1],
  ])(
    '%s given to refund or release is a clear error, and never reaches the store',
    async (_name, decision) => {
      const limiter = createLimiter({
        limits: [
          { name: 'rate', limit: 5, window: '1m' },
          { name: 'slots', algorithm: 'concurrency', limit: 2, window: '1m' },
        ],
        prefix: 'nodecision:',
        store: new RedisStore({ client: redis.client }),
      })
      for (const call of [
        () => limiter.refund('k', 1, decision as never),
        () => limiter.release('k', decision as never),
      ]) {
        // (before: a bare TypeError from reading the decision's private field, with no code)
        const error = await call().then(
          () => undefined,
          (e: unknown) => e,
        )
        expect(error).toBeInstanceOf(TypeError)
        expect(error).toMatchObject({ code: 'ERR_LIMITER_OPTION', option: 'decision' })
        expect((error as Error).message).toMatch(/^Invalid `decision`: expected the Decision/)
      }
      expect(await scanKeys(redis.client, 'nodecision:*')).toEqual([])
    },
  )
})
