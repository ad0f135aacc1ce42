// The shape of an embedded Lua script.

/** One embedded Redis script: its source, SHA-1 (for EVALSHA) and how many KEYS it takes. */
export interface LuaScript {
  readonly name: string
  readonly sha1: string
  readonly numberOfKeys: number
  readonly source: string
}
