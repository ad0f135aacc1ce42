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
    ['2001:db8::1', '2001:db8::/56', undefined],
    ['2001:0DB8:0000:0000:ffff:1:2:3', '2001:db8::/56', undefined],
    ['2001:db8:0:0:1::7', '2001:db8::/56', undefined],
    ['2001:db8:0:ff:1::7', '2001:db8::/56', undefined],
    ['2001:db8:0:100::7', '2001:db8:0:100::/56', undefined],
    ['2001:db8:aaaa:bbbb:cccc:dddd:eeee:ffff', '2001:db8:aaaa:bb00::/56', undefined],
    ['2001:db8:aaaa:bbbb:cccc:dddd:eeee:ffff', '2001:db8:aaaa:bbbb::/64', 64],
    ['2001:db8:aaaa:bbbb:cccc:dddd:eeee:ffff', '2001:db8:aaaa::/48', 48],
    ['2001:db8:aaaa:bbbb:cccc:dddd:eeee:ffff', '2001:db8:aaaa:bbbb:cccc:dddd:eeee:ffff/128', 128],
    ['2001:db8:aaaa:bbbb:cccc:dddd:eeee:ffff', '2000::/3', 3],
    ['2001:db8:1:0:0:1:0:1', '2001:db8:1::1:0:1/128', 128],
    ['2001:0:0:1:0:0:0:1', '2001:0:0:1::1/128', 128],
    ['fe80::1%eth0', 'fe80::/56', undefined],
    ['::1', '::/56', undefined],
    ['::1', '::1/128', 128],
    ['::', '::/56', undefined],
    ['not-an-ip', 'not-an-ip', undefined],
    // not addresses with a port: unchanged
    ['203.0.113.7:', '203.0.113.7:', undefined],
    ['203.0.113.7:65536', '203.0.113.7:65536', undefined],
    ['203.0.113.999:80', '203.0.113.999:80', undefined],
    ['[203.0.113.7]', '[203.0.113.7]', undefined],
    ['[not-an-ip]:80', '[not-an-ip]:80', undefined],
    ['[2001:db8::1]:', '[2001:db8::1]:', undefined],
    ['example.com:80', 'example.com:80', undefined],
    ['unix:/tmp/app.sock', 'unix:/tmp/app.sock', undefined],
  ])('%s (/%s) -> %s', (ip, expected, ipv6Subnet) => {
    expect(ipKey(ip, ipv6Subnet === undefined ? undefined : { ipv6Subnet })).toBe(expected)
  })

  // Azure Application Gateway appends `client:port` to X-Forwarded-For; bracketed IPv6 (RFC 7239
  // style) may carry a port too: without stripping them, each connection had a budget of its own.
  it.each<[string, string, number | undefined]>([
    ['203.0.113.7:50000', '203.0.113.7', undefined],
    ['203.0.113.7:0', '203.0.113.7', undefined],
    ['203.0.113.7:65535', '203.0.113.7', undefined],
    ['[2001:db8::1]:443', '2001:db8::/56', undefined],
    ['[2001:db8::1]', '2001:db8::/56', undefined],
    ['[2001:DB8:0:0:1::7]:8080', '2001:db8::/56', undefined],
    ['[2001:db8::1]:443', '2001:db8::1/128', 128],
    ['[::ffff:203.0.113.9]:443', '203.0.113.9', undefined],
    ['[fe80::1%eth0]:80', 'fe80::/56', undefined],
  ])('a port or brackets (%s) give the bare address its key: %s', (ip, expected, ipv6Subnet) => {
    expect(ipKey(ip, ipv6Subnet === undefined ? undefined : { ipv6Subnet })).toBe(expected)
    const bare = ip.replace(/^\[|\](?::\d+)?$|:\d+$/g, '')
    expect(ipKey(ip, ipv6Subnet === undefined ? undefined : { ipv6Subnet })).toBe(
      ipKey(bare, ipv6Subnet === undefined ? undefined : { ipv6Subnet }),
    )
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

  // the default /56: the first three groups and the high byte of the fourth
  const net56 = (g: readonly number[]): string => `${g.slice(0, 3).join()},${g[3]! >> 8}`

  it('maps every address of one /56 to one key, and different /56s to different keys', () => {
    fc.assert(
      fc.property(groups, groups, groups, (a, b, c) => {
        fc.pre(notMapped(a) && notMapped(c))
        const sameNet = [...a.slice(0, 3), (a[3]! & 0xff00) | (b[3]! & 0xff), ...b.slice(4)]
        fc.pre(notMapped(sameNet))
        expect(ipKey(full(sameNet))).toBe(ipKey(full(a)))
        if (net56(a) !== net56(c)) expect(ipKey(full(c))).not.toBe(ipKey(full(a)))
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
        expect(ipKey(`[${full(g)}]:443`, { ipv6Subnet })).toBe(key)
      }),
    )
  })

  it('folds IPv4-mapped IPv6 to the IPv4 address', () => {
    fc.assert(
      fc.property(fc.ipV4(), (ip) => {
        expect(ipKey(ip)).toBe(ip)
        expect(ipKey(`${ip}:50000`)).toBe(ip)
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
