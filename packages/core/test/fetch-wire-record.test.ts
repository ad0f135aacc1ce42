// wireRecord: a refusal's fields as a Fetch `Headers` lists them, for a host that writes a plain
// record as it is (@hono/node-server's own Response).
import { describe, expect, it } from 'vitest'
import { wireRecord } from '../src/fetch/index.js'

const draft10 = { 'RateLimit-Policy': 'p', RateLimit: 'r', 'Retry-After': '5', 'content-type': 't' }
const draft6 = {
  'RateLimit-Policy': 'p',
  'RateLimit-Limit': '1',
  'RateLimit-Remaining': '0',
  'RateLimit-Reset': '5',
  'Retry-After': '5',
  'content-type': 't',
}

describe('wireRecord', () => {
  it('lists the names lower-case and sorted, each with its value', () => {
    const out = wireRecord(draft10)
    expect(out).toEqual({
      'content-type': 't',
      ratelimit: 'r',
      'ratelimit-policy': 'p',
      'retry-after': '5',
    })
    expect(Object.keys(out ?? {})).toEqual([...new Headers(draft10).keys()])
  })

  it('keeps one layout at a time: records of other names, one after another, each come out right', () => {
    for (let i = 0; i < 3; i++) {
      for (const record of [draft10, draft6, { 'X-One': 'a' }, {}]) {
        const out = wireRecord(record)
        expect(Object.entries(out ?? {})).toEqual([...new Headers(record)])
      }
    }
    // the same names with other values: the values of this record, not of the last
    expect(wireRecord({ ...draft10, 'Retry-After': '9' })?.['retry-after']).toBe('9')
  })

  it('answers undefined for two names that differ by case only (a Headers keeps one)', () => {
    expect(wireRecord({ 'Retry-After': '1', 'retry-after': '2' })).toBeUndefined()
    expect(wireRecord(draft10)).toBeDefined()
  })
})
