--[[
lib/time.lua: the batch's time, read once per script call (every script opens with it).
ARGV[1]    now_ms: '' reads Redis TIME (always, in production); an integer only in tests. Either
           may follow a 'u': every key of the batch is distinct (the store checks), so a plain
           path (one-policy.lua, packed-pair.lua) may read all of them first, with one MGET
ARGV[2]    offset_ms: added to every expiry written (and, where state lives in an expiry, taken
           from every expiry read); 0 in production (tests on an injected clock pass one that
           keeps keys alive in real time)
]]
-- The library functions the scripts call on every decision, as locals: a global, and a
-- library's field, is a table lookup on each use (callgrind: 2% of a two-policy decision).
local floor, ceil, max, min = math.floor, math.ceil, math.max, math.min
local format, match, type, tonumber = string.format, string.match, type, tonumber

local now_ms
local clock, distinct = ARGV[1], false
if string.byte(clock) == 117 then
  -- 'u'
  clock, distinct = string.sub(clock, 2), true
end
if clock == '' then
  local time = redis.call('TIME')
  now_ms = tonumber(time[1]) * 1000 + floor(tonumber(time[2]) / 1000)
else
  now_ms = tonumber(clock)
end
local offset_ms = tonumber(ARGV[2])

-- An integer as a command argument. Redis turns a Lua number argument into text with "%.17g",
-- a floating-point conversion that costs as much as a GET; "%d" is an integer's (callgrind: about
-- 3,000 instructions less per SET ... PXAT). Exact for every integer below 2^53.
local function int(n)
  return format('%d', n)
end
