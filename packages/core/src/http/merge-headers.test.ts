import { describe, expect, it } from 'vitest'
import type { HeaderPair } from './headers.js'
import { mergeHeaders } from './merge-headers.js'

describe('mergeHeaders', () => {
  const current =
    (headers: Record<string, string | number | string[]>) =>
    (name: string): string | number | string[] | undefined =>
      headers[name.toLowerCase()]

  it.each<[string, Record<string, string | number | string[]>, HeaderPair[], HeaderPair[]]>([
    [
      'appends draft-10 members',
      { 'ratelimit-policy': '"a";q=1;w=1', ratelimit: '"a";r=0;t=1' },
      [
        ['RateLimit-Policy', '"b";q=5;w=60'],
        ['RateLimit', '"b";r=4;t=60'],
      ],
      [
        ['RateLimit-Policy', '"a";q=1;w=1, "b";q=5;w=60'],
        ['RateLimit', '"a";r=0;t=1, "b";r=4;t=60'],
      ],
    ],
    [
      'reads multi-valued headers',
      { 'ratelimit-policy': ['"a";q=1;w=1', '"c";q=2;w=2'] },
      [['RateLimit-Policy', '"b";q=5;w=60']],
      [['RateLimit-Policy', '"a";q=1;w=1, "c";q=2;w=2, "b";q=5;w=60']],
    ],
    [
      'does not repeat an identical policy member',
      { 'ratelimit-policy': '100;w=60' },
      [['RateLimit-Policy', '100;w=60']],
      [['RateLimit-Policy', '100;w=60']],
    ],
    [
      'sets a header that is not there',
      {},
      [['RateLimit', '"b";r=4;t=60']],
      [['RateLimit', '"b";r=4;t=60']],
    ],
    [
      'keeps the later Retry-After',
      { 'retry-after': '30' },
      [['Retry-After', '3']],
      [['Retry-After', '30']],
    ],
    [
      'takes a later Retry-After',
      { 'retry-after': 3 },
      [['Retry-After', '30']],
      [['Retry-After', '30']],
    ],
    [
      'draft-6: the fewest remaining wins (existing)',
      { 'ratelimit-remaining': '1', 'ratelimit-limit': '5' },
      [
        ['RateLimit-Limit', '100'],
        ['RateLimit-Remaining', '42'],
        ['RateLimit-Reset', '17'],
      ],
      [],
    ],
    [
      'draft-6: the fewest remaining wins (incoming)',
      { 'ratelimit-remaining': '50' },
      [
        ['RateLimit-Limit', '100'],
        ['RateLimit-Remaining', '42'],
        ['RateLimit-Reset', '17'],
      ],
      [
        ['RateLimit-Limit', '100'],
        ['RateLimit-Remaining', '42'],
        ['RateLimit-Reset', '17'],
      ],
    ],
    [
      'legacy: the fewest remaining wins',
      { 'x-ratelimit-remaining': '0' },
      [
        ['X-RateLimit-Limit', '100'],
        ['X-RateLimit-Remaining', '42'],
        ['X-RateLimit-Reset', '17'],
      ],
      [],
    ],
    [
      'draft-7: the fewest remaining wins',
      { ratelimit: 'limit=5, remaining=1, reset=3', 'ratelimit-policy': '5;w=10' },
      [
        ['RateLimit-Policy', '100;w=60'],
        ['RateLimit', 'limit=100, remaining=42, reset=17'],
      ],
      [['RateLimit-Policy', '5;w=10, 100;w=60']],
    ],
    [
      'a draft-10 member replaces a draft-7 dictionary',
      { ratelimit: 'limit=5, remaining=1, reset=3' },
      [['RateLimit', '"b";r=4;t=60']],
      [['RateLimit', '"b";r=4;t=60']],
    ],
  ])('%s', (_name, existing, incoming, expected) => {
    expect(mergeHeaders(incoming, current(existing))).toEqual(expected)
  })

  it('accumulates within one batch', () => {
    const incoming: HeaderPair[] = [
      ['RateLimit-Policy', '"a";q=1;w=1'],
      ['RateLimit-Policy', '"b";q=1;w=1'],
    ]
    expect(mergeHeaders(incoming, () => undefined)).toEqual([
      ['RateLimit-Policy', '"a";q=1;w=1, "b";q=1;w=1'],
    ])
  })
})
