--[[
lib/block.lua: a limiter key's block (a limiter's `block(key, duration)`). The block is one key
beside the request's state key (its first policy's, with the `limits` script): that key's name
plus ':block', outside the `{hash tag}`, so the same Cluster slot. It holds '1' and expires when
the block ends (written by block.lua with `SET ... PXAT` from Redis time; a later end never
shortens). block_left(key) is the ms the block on state key `key` has left (0: none); a key
repeated back to back in a batch is looked up once.
]]
local block_key, block_ms = false, 0
local function block_left(key)
  if key == block_key then return block_ms end
  block_key = key
  block_ms = 0
  local ends_ms = redis.call('PEXPIRETIME', key .. ':block')
  if ends_ms > 0 and ends_ms - offset_ms > now_ms then block_ms = ends_ms - offset_ms - now_ms end
  return block_ms
end

-- A blocked request's decision from what its policy holds now (a peek): refused, nothing
-- remaining, and no Retry-After or reset before the block ends (nor before the policy's own).
local function blocked_decision(remaining, reset_ms, retry_after_ms, left_ms)
  return 0, 0, math.max(reset_ms, left_ms), math.max(retry_after_ms, left_ms)
end
