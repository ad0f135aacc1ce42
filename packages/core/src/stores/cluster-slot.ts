// Redis Cluster hash slots: CRC16 (XMODEM) of the hash tag, modulo 16384.

const TABLE = new Uint16Array(256)
for (let i = 0; i < 256; i++) {
  let crc = i << 8
  for (let bit = 0; bit < 8; bit++)
    crc = crc & 0x8000 ? ((crc << 1) ^ 0x1021) & 0xffff : (crc << 1) & 0xffff
  TABLE[i] = crc
}

/** The number of hash slots of a Redis Cluster. */
const SLOTS = 16384

// The slot of bytes[0..length).
function slotOfBytes(bytes: ArrayLike<number>, length: number): number {
  let crc = 0
  for (let i = 0; i < length; i++)
    crc = ((crc << 8) & 0xffff) ^ (TABLE[((crc >> 8) ^ (bytes[i] as number)) & 0xff] as number)
  return crc % SLOTS
}

/** The Cluster slot of a key whose hash tag is `tag` (the text between the braces). */
export function clusterSlot(tag: string): number {
  const bytes = Buffer.from(tag, 'utf8')
  return slotOfBytes(bytes, bytes.length)
}

/** The Cluster slot of a whole key, by Redis's rule: its first `{...}` if not empty, else all of it. */
export function keySlot(key: string): number {
  const open = key.indexOf('{')
  if (open >= 0) {
    const close = key.indexOf('}', open + 1)
    if (close > open + 1) return clusterSlot(key.slice(open + 1, close))
  }
  return clusterSlot(key)
}

// For each slot, the least number whose base-36 digits hash to it (found on first use: every
// slot is met by 87,573 numbers, at most 4 digits, in a few ms); 16,384 numbers, 64 KiB.
let slotNumbers: Uint32Array | undefined

function findSlotNumbers(): Uint32Array {
  const numbers = new Uint32Array(SLOTS).fill(0xffffffff)
  const digits = new Uint8Array(8)
  let left = SLOTS
  for (let n = 0; left > 0; n++) {
    const text = n.toString(36)
    for (let i = 0; i < text.length; i++) digits[i] = text.charCodeAt(i)
    const slot = slotOfBytes(digits, text.length)
    if (numbers[slot] === 0xffffffff) {
      numbers[slot] = n
      left--
    }
  }
  return numbers
}

/** A short hash tag (1 to 4 base-36 digits) whose Cluster slot is `slot` (0 to 16383). */
export function slotTag(slot: number): string {
  slotNumbers ??= findSlotNumbers()
  return (slotNumbers[slot] as number).toString(36)
}
