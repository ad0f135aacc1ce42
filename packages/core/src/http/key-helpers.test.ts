import { isIPv4 as nodeIsIPv4, isIPv6 as nodeIsIPv6 } from 'node:net'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { isIPv4, isIPv6 } from './key-helpers.js'

// Text that looks like an address: digits, hex, dots, colons, a zone.
const addressLike = fc.oneof(
  fc.stringMatching(/^[0-9a-fA-F:.%]{0,45}$/),
  fc.ipV4(),
  fc.ipV4Extended(),
  fc.ipV6(),
  fc.tuple(fc.ipV6(), fc.stringMatching(/^[0-9a-z.-]{0,6}$/)).map(([ip, zone]) => `${ip}%${zone}`),
)

describe('isIPv4 and isIPv6 without node:net', () => {
  it('agree with node:net on address-like text', () => {
    fc.assert(
      fc.property(addressLike, (text) => {
        expect(isIPv4(text)).toBe(nodeIsIPv4(text))
        expect(isIPv6(text)).toBe(nodeIsIPv6(text))
      }),
      { numRuns: 5000 },
    )
  })

  it.each(['1.2.3.4', '::1', '::ffff:1.2.3.4', 'fe80::1%eth0', '01.2.3.4', '1.2.3', '1::2::3', ''])(
    '%s as node:net says',
    (text) => {
      expect(isIPv4(text)).toBe(nodeIsIPv4(text))
      expect(isIPv6(text)).toBe(nodeIsIPv6(text))
    },
  )
})
