import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { allDistinct, slotOf } from './distinct-tags.js'

describe('allDistinct', () => {
  it('says whether no two tags are equal, for any tags', () => {
    const tagArb = fc.oneof(fc.constantFrom('a', 'b', '10.0.0.1', ''), fc.string({ maxLength: 40 }))
    fc.assert(
      fc.property(fc.array(tagArb, { maxLength: 300 }), (tags) => {
        expect(allDistinct(tags)).toBe(new Set(tags).size === tags.length)
      }),
      { numRuns: 2000 },
    )
  })

  it('tells distinct tags that share a slot from a repeated tag', () => {
    const bySlot = new Map<number, string>()
    let pair: [string, string] | undefined
    for (let i = 0; pair === undefined; i++) {
      const tag = `10.${i >> 16}.${(i >> 8) & 255}.${i & 255}`
      const other = bySlot.get(slotOf(tag))
      if (other !== undefined) pair = [other, tag]
      else bySlot.set(slotOf(tag), tag)
    }
    const [a, b] = pair
    expect(a).not.toBe(b)
    expect(allDistinct(['x', a, 'y', b])).toBe(true)
    expect(allDistinct(['x', a, 'y', b, a])).toBe(false)
    expect(allDistinct([a, 'x', a])).toBe(false)
    // each call starts afresh: the marks of the last one do not count
    expect(allDistinct([a])).toBe(true)
    expect(allDistinct([b])).toBe(true)
  })
})
