// Whether a batch's keys are all distinct, for the scripts that then read them with one MGET
// (lua/lib/time.lua): decided on their hash tags, cheaply, on every batch a store sends.

// A 16-bit hash of each tag marks a slot with the current round: a batch whose tags mark
// distinct slots has distinct tags. 128 distinct tags share a slot in about 12% of batches; only
// those (and a batch with a repeated tag, or tags made to collide) hash their strings into a Set.
// The slots are one fixed table for the process: nothing here grows with keys or clients.
const SLOTS = 1 << 16
const marks = new Uint32Array(SLOTS)
let round = 0

/** Whether no two of `tags` are equal. */
export function allDistinct(tags: readonly string[]): boolean {
  round = (round + 1) >>> 0
  if (round === 0) {
    marks.fill(0)
    round = 1
  }
  for (const tag of tags) {
    const slot = slotOf(tag)
    if (marks[slot] === round) return new Set(tags).size === tags.length
    marks[slot] = round
  }
  return true
}

/** The slot a tag marks: a 16-bit hash of its characters. */
export function slotOf(tag: string): number {
  let h = tag.length
  for (let i = 0; i < tag.length; i++) h = (Math.imul(h, 31) + tag.charCodeAt(i)) | 0
  return (h ^ (h >>> 16)) & (SLOTS - 1)
}
