import { METHODS } from 'node:http'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { LimiterError, LimiterRangeError, LimiterTypeError } from '../common/errors.js'
import { declaredRouteKey, ipKey, routeKey, userKey } from './keys.js'

describe('ipKey', () => {
  it.each<[string, string, number | undefined]>([
    ['203.0.113.9', '203.0.113.9', undefined],
    ['::ffff:203.0.113.9', '203.0.113.9', undefined],
    ['::FFFF:203.0.113.9', '203.0.113.9', undefined],
    ['::ffff:cb00:7109', '203.0.113.9', undefined],
    ['0:0:0:0:0:ffff:cb00:7109', '203.0.113.9', 128],
    ['2001:db8::1', '2001:db8::/64', undefined],
    ['2001:0DB8:0000:0000:ffff:1:2:3', '2001:db8::/64', undefined],
    ['2001:db8:0:0:1::7', '2001:db8::/64', undefined],
    ['2001:db8:aaaa:bbbb:cccc:dddd:eeee:ffff', '2001:db8:aaaa:bbbb::/64', undefined],
    ['2001:db8:aaaa:bbbb:cccc:dddd:eeee:ffff', '2001:db8:aaaa::/48', 48],
    ['2001:db8:aaaa:bbbb:cccc:dddd:eeee:ffff', '2001:db8:aaaa:bbbb:cccc:dddd:eeee:ffff/128', 128],
    ['2001:db8:aaaa:bbbb:cccc:dddd:eeee:ffff', '2000::/3', 3],
    ['2001:db8:1:0:0:1:0:1', '2001:db8:1::1:0:1/128', 128],
    ['2001:0:0:1:0:0:0:1', '2001:0:0:1::1/128', 128],
    ['fe80::1%eth0', 'fe80::/64', undefined],
    ['::1', '::/64', undefined],
    ['::1', '::1/128', 128],
    ['::', '::/64', undefined],
    ['not-an-ip', 'not-an-ip', undefined],
  ])('%s (/%s) -> %s', (ip, expected, ipv6Subnet) => {
    expect(ipKey(ip, ipv6Subnet === undefined ? undefined : { ipv6Subnet })).toBe(expected)
  })

  it.each([0, 129, 1.5, -64])('rejects ipv6Subnet %s with a RangeError naming it', (ipv6Subnet) => {
    expect(() => ipKey('::1', { ipv6Subnet })).toThrow(LimiterRangeError)
    expect(() => ipKey('::1', { ipv6Subnet })).toThrow(/ipv6Subnet/)
  })

  it('rejects a non-number ipv6Subnet with a TypeError', () => {
    expect(() => ipKey('::1', { ipv6Subnet: '64' as unknown as number })).toThrow(LimiterTypeError)
  })

  it.each([undefined, null, ''])('throws a clear error when the IP is missing (%s)', (ip) => {
    expect(() => ipKey(ip)).toThrow(LimiterError)
    expect(() => ipKey(ip)).toThrow(/No client IP.*`key` option/)
  })

  const group = fc.integer({ min: 0, max: 0xffff })
  const groups = fc.array(group, { minLength: 8, maxLength: 8 })
  const full = (g: readonly number[]): string => g.map((n) => n.toString(16)).join(':')
  const padded = (g: readonly number[]): string =>
    g.map((n) => n.toString(16).toUpperCase().padStart(4, '0')).join(':')
  const notMapped = (g: readonly number[]): boolean =>
    !(g.slice(0, 5).every((n) => n === 0) && g[5] === 0xffff)

  it('maps every address of one /64 to one key, and different /64s to different keys', () => {
    fc.assert(
      fc.property(groups, groups, groups, (a, b, c) => {
        fc.pre(notMapped(a) && notMapped(c))
        const sameNet = [...a.slice(0, 4), ...b.slice(4)]
        fc.pre(notMapped(sameNet))
        expect(ipKey(full(sameNet))).toBe(ipKey(full(a)))
        if (a.slice(0, 4).join() !== c.slice(0, 4).join())
          expect(ipKey(full(c))).not.toBe(ipKey(full(a)))
      }),
    )
  })

  it('gives every spelling of one address the same key, for any prefix', () => {
    fc.assert(
      fc.property(groups, fc.integer({ min: 1, max: 128 }), (g, ipv6Subnet) => {
        fc.pre(notMapped(g))
        const key = ipKey(full(g), { ipv6Subnet })
        expect(ipKey(padded(g), { ipv6Subnet })).toBe(key)
        expect(
          ipKey(
            `${full(g.slice(0, 6))}:${g[6]! >> 8}.${g[6]! & 255}.${g[7]! >> 8}.${g[7]! & 255}`,
            { ipv6Subnet },
          ),
        ).toBe(key)
        expect(key.endsWith(`/${ipv6Subnet}`)).toBe(true)
      }),
    )
  })

  it('folds IPv4-mapped IPv6 to the IPv4 address', () => {
    fc.assert(
      fc.property(fc.ipV4(), (ip) => {
        expect(ipKey(ip)).toBe(ip)
        expect(ipKey(`::ffff:${ip}`)).toBe(ip)
        const [a = 0, b = 0, c = 0, d = 0] = ip.split('.').map(Number)
        expect(ipKey(`::ffff:${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`)).toBe(
          ip,
        )
      }),
    )
  })
})

describe('userKey', () => {
  it.each<[string | number, string | undefined, string]>([
    [42, undefined, 'user:42'],
    ['alice', '/reports/7?page=2', 'user:alice /reports/7'],
    ['a b', '/x', 'user:a%20b /x'],
    ['100%', '/x#frag', 'user:100%25 /x'],
  ])('%s + %s -> %s', (id, url, expected) => {
    expect(userKey(id, url)).toBe(expected)
  })

  it('keeps ids with spaces apart from paths', () => {
    expect(userKey('a /x')).not.toBe(userKey('a', '/x'))
  })

  it.each(['', undefined, null, Number.NaN])('rejects a missing user id (%s)', (id) => {
    expect(() => userKey(id as string)).toThrow(/userId/)
  })
})

describe('routeKey', () => {
  it.each([
    ['get', '/users/:id', 'GET /users/:id'],
    ['HEAD', '/users/:id', 'GET /users/:id'],
    ['POST', '/login', 'POST /login'],
  ])('%s %s -> %s', (method, pattern, expected) => {
    expect(routeKey(method, pattern)).toBe(expected)
  })

  it('rejects an empty pattern', () => {
    expect(() => routeKey('GET', '')).toThrow(/pattern/)
  })
})

describe('declaredRouteKey', () => {
  it.each<[readonly string[], string, string]>([
    [['GET'], '/a', 'GET /a'],
    [['HEAD', 'GET'], '/a', 'GET /a'],
    [['head'], '/a', 'GET /a'],
    [['post', 'get', 'GET'], '/x', 'GET,POST /x'],
    [['PROPFIND', 'DELETE'], '/x', 'DELETE,PROPFIND /x'],
    [METHODS, '/api', '/api'],
    [METHODS.filter((m) => m !== 'HEAD'), '/api', '/api'],
    [[], '/any', '/any'],
  ])('%j %s -> %s', (methods, pattern, expected) => {
    expect(declaredRouteKey(methods, pattern)).toBe(expected)
  })
})
