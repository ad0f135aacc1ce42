// Redis Cluster hash slots: CRC16 (XMODEM) of the hash tag, modulo 16384.

const TABLE = new Uint16Array(256)
for (let i = 0; i < 256; i++) {
  let crc = i << 8
  for (let bit = 0; bit < 8; bit++)
    crc = crc & 0x8000 ? ((crc << 1) ^ 0x1021) & 0xffff : (crc << 1) & 0xffff
  TABLE[i] = crc
}

/** The Cluster slot of a key whose hash tag is `tag` (the text between the braces). */
export function clusterSlot(tag: string): number {
  const bytes = Buffer.from(tag, 'utf8')
  let crc = 0
  for (const byte of bytes)
    crc = ((crc << 8) & 0xffff) ^ (TABLE[((crc >> 8) ^ byte) & 0xff] as number)
  return crc % 16384
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
