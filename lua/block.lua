--[[
block.lua: blocks a limiter key until now + duration_ms (Redis time): every consume or peek of
it is refused until then, counting nothing (see lib/block.lua). A block that ends later already
is kept: blocks never shorten. A limiter's `reset` deletes the block key.
KEYS[1]    the block key: the key's (first policy's) state key + ':block'
ARGV[1]    now_ms ('' reads Redis TIME), ARGV[2] offset_ms (lib/time.lua)
ARGV[3]    duration_ms (integer >= 1)
Reply: the ms the block has left (the later of the two ends).
]]
local ends_ms = now_ms + tonumber(ARGV[3])
local held_ms = redis.call('PEXPIRETIME', KEYS[1])
if held_ms > 0 and held_ms - offset_ms >= ends_ms then return held_ms - offset_ms - now_ms end
redis.call('SET', KEYS[1], '1', 'PXAT', int(ends_ms + offset_ms))
return ends_ms - now_ms
