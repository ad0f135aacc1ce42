import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { boundedKey } from './bounded-key.js'

describe('boundedKey', () => {
  it('keeps a short key as it is', () => {
    expect(boundedKey('user:42')).toBe('user:42')
    expect(boundedKey('é'.repeat(100))).toBe('é'.repeat(100))
  })

  it('holds any key in at most ~200 bytes', () => {
    for (const key of [
      'x'.repeat(201),
      'é'.repeat(101),
      '😀'.repeat(10_000),
      `\u0000${'a'.repeat(500)}`,
    ])
      expect(Buffer.byteLength(boundedKey(key))).toBeLessThanOrEqual(201)
  })

  it('is one-to-one: distinct keys stay distinct, long or short, however they start', () => {
    const keys = fc.oneof(
      fc.string({ unit: 'binary', maxLength: 80 }),
      fc.string({ unit: 'binary', minLength: 60, maxLength: 400 }),
      fc.string({ maxLength: 10 }).map((s) => `\u0000${s}`),
      fc.string({ unit: 'grapheme', minLength: 60, maxLength: 120 }),
    )
    fc.assert(
      fc.property(keys, keys, (a, b) => {
        if (a !== b) expect(boundedKey(a)).not.toBe(boundedKey(b))
        else expect(boundedKey(a)).toBe(boundedKey(b))
      }),
      { numRuns: 2000 },
    )
  })

  it('a long key and its digest, given as a key, do not meet', () => {
    const long = 'a'.repeat(300)
    expect(boundedKey(boundedKey(long))).not.toBe(boundedKey(long))
    // Two long keys that differ only in their last character.
    expect(boundedKey(`${long}b`)).not.toBe(boundedKey(`${long}c`))
  })
})
