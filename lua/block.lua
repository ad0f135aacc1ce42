--[[
block.lua: blocks a limiter key until now + duration_ms (Redis time): every consume or peek of
it is refused until then, counting nothing (see lib/block.lua). A block that ends later already
is kept: blocks never shorten. A limiter's `reset` deletes the block key.
KEYS[1]    the block key: the key's (first policy's) state key + ':block'
KEYS[2]    the block marker of its namespace (and slot; lib/block.lua): made to live at least until the block
           ends (never shortened), so the scripts that decide requests look for blocks until
           then; also when the block key already held the later end, in case the marker was
           lost since (deleted by hand, or evicted)
ARGV[1]    now_ms ('' reads Redis TIME), ARGV[2] offset_ms (lib/time.lua)
ARGV[3]    duration_ms (integer >= 1)
Reply: the ms the block has left (the later of the two ends).
]]
local ends_ms = now_ms + tonumber(ARGV[3])
local held_ms = redis.call('PEXPIRETIME', KEYS[1])
if held_ms > 0 and held_ms - offset_ms >= ends_ms then
  ends_ms = held_ms - offset_ms
else
  redis.call('SET', KEYS[1], '1', 'PXAT', int(ends_ms + offset_ms))
end
-- the marker: -2 is no key (-1, a key without expiry, already lasts)
local marker_ms = redis.call('PEXPIRETIME', KEYS[2])
if marker_ms ~= -1 and marker_ms < ends_ms + offset_ms then
  redis.call('SET', KEYS[2], '1', 'PXAT', int(ends_ms + offset_ms))
end
return ends_ms - now_ms
