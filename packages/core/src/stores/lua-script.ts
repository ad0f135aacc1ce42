// The shape of an embedded Lua script.

/**
 * One embedded Redis script: its source, SHA-1 (for EVALSHA), and how many KEYS and ARGV
 * slots each request of a batch takes (after the five batch-wide ARGV: now_ms, offset_ms,
 * limit, window_ms and burst).
 */
export interface LuaScript {
  readonly name: string
  readonly sha1: string
  readonly keysPerRequest: number
  readonly argsPerRequest: number
  readonly source: string
}
