import { describe, expect, it } from 'vitest'
import { clusterSlot, keySlot, slotTag } from './cluster-slot.js'
import { blockedMarker } from './redis-keys.js'

describe('slotTag', () => {
  it('gives every one of the 16,384 slots a tag of 1 to 4 base-36 digits in that slot', () => {
    for (let slot = 0; slot < 16384; slot++) {
      const tag = slotTag(slot)
      expect(tag).toMatch(/^[0-9a-z]{1,4}$/)
      expect(clusterSlot(tag)).toBe(slot)
    }
  })

  it("names a namespace's block marker, and on a Cluster each slot's in that slot", () => {
    expect(blockedMarker('rl:login:fw:', undefined)).toBe('rl:login:fw:blocked')
    for (const slot of [0, 1, 5461, 12182, 16383]) {
      const marker = blockedMarker('rl:login:fw:', slot)
      expect(marker).toBe(`rl:login:fw:blocked{${slotTag(slot)}}`)
      expect(keySlot(marker)).toBe(slot)
    }
  })

  it('matches the slots Redis documents', () => {
    // CLUSTER KEYSLOT values from the Redis Cluster specification's examples
    expect(keySlot('foo')).toBe(12182)
    expect(keySlot('{user1000}.following')).toBe(keySlot('{user1000}.followers'))
    expect(keySlot('123456789')).toBe(0x31c3 % 16384)
  })
})
