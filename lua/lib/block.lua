--[[
lib/block.lua: a limiter key's block (a limiter's `block(key, duration)`). The block is one key
beside the request's state key (its first policy's, with the `limits` script): that key's name
plus ':block', outside the `{hash tag}`, so the same Cluster slot. It holds '1' and expires when
the block ends (written by block.lua with `SET ... PXAT` from Redis time; a later end never
shortens). block.lua also keeps a block marker alive until then: one key per namespace (per
namespace and hash slot on a Cluster), the namespace + 'blocked' (on a Cluster followed by a
hash tag of the slot), which lives as long as the longest block written under it. A batch holds
the keys of one namespace (the store groups them so), and every script that decides requests
takes that namespace's marker as its last KEYS entry and removes it from KEYS here, before
anything counts them. any_blocked(keys, step) says whether any of keys[1], keys[1 + step], ...
has a block: while the marker is gone (no block on the namespace, the usual case) one EXISTS of
the marker; otherwise one EXISTS of the batch's block keys (callgrind: the marker saves one gcra
decision 2.1k of its 20.1k instructions). Then block_left(key) is the
ms the block on state key `key` has left (0: none); a key repeated back to back in a batch is
looked up once.
]]
local blocked_marker = KEYS[#KEYS]
KEYS[#KEYS] = nil
local function any_blocked(keys, step)
  if redis.call('EXISTS', blocked_marker) == 0 then return false end
  local names = {}
  for i = 1, #keys, step do names[#names + 1] = keys[i] .. ':block' end
  return redis.call('EXISTS', unpack(names)) > 0
end

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
  return 0, 0, max(reset_ms, left_ms), max(retry_after_ms, left_ms)
end
