import { describe, expect, it } from 'vitest'
import { headerPolicy } from './headers.js'
import { PROBLEM_JSON, problemBody, QUOTA_EXCEEDED_TYPE, windowText } from './problem.js'

describe('windowText', () => {
  it.each([
    [1000, '1 second'],
    [1500, '1500 ms'],
    [60_000, '1 minute'],
    [900_000, '15 minutes'],
    [3_600_000, '1 hour'],
    [172_800_000, '2 days'],
    [90_000, '90 seconds'],
  ])('%d ms -> %s', (ms, text) => {
    expect(windowText(ms)).toBe(text)
  })
})

describe('problemBody', () => {
  it('is an RFC 9457 document of the draft quota-exceeded type', () => {
    const decision = {
      allowed: false,
      limit: 5,
      remaining: 0,
      resetMs: 900_000,
      retryAfterMs: 1001,
      delayMs: 0,
      source: 'store' as const,
      policies: [],
    }
    const { contentType, body } = problemBody(429, headerPolicy('login', 5, 900_000), decision)
    expect(contentType).toBe(PROBLEM_JSON)
    expect(JSON.parse(body)).toEqual({
      type: QUOTA_EXCEEDED_TYPE,
      title: 'Request quota exceeded',
      status: 429,
      detail: 'The limit is 5 requests per 15 minutes. Retry in 2 seconds.',
      'violated-policies': ['login'],
    })
  })

  it('writes the same bytes as JSON.stringify, for each status and an escaped name', () => {
    const policy = headerPolicy('a "quoted"\\name', 1, 1000)
    for (const [status, retryAfterMs] of [
      [429, 1000],
      [503, 2500],
      [429, 3000],
    ] as const) {
      const decision = {
        allowed: false,
        limit: 1,
        remaining: 0,
        resetMs: 1000,
        retryAfterMs,
        delayMs: 0,
        source: 'store' as const,
        policies: [],
      }
      const seconds = Math.ceil(retryAfterMs / 1000)
      expect(problemBody(status, policy, decision).body).toBe(
        JSON.stringify({
          type: QUOTA_EXCEEDED_TYPE,
          title: 'Request quota exceeded',
          status,
          detail: `The limit is 1 request per 1 second. Retry in ${seconds} second${seconds === 1 ? '' : 's'}.`,
          'violated-policies': [policy.name],
        }),
      )
    }
  })
})
