--[[
lib/time.lua: the batch's time, read once per script call (every script opens with it).
ARGV[1]    now_ms: '' reads Redis TIME (always, in production); an integer only in tests
ARGV[2]    offset_ms: added to every expiry written (and, where state lives in an expiry, taken
           from every expiry read); 0 in production (tests on an injected clock pass one that
           keeps keys alive in real time)
]]
local now_ms
if ARGV[1] == '' then
  local time = redis.call('TIME')
  now_ms = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
else
  now_ms = tonumber(ARGV[1])
end
local offset_ms = tonumber(ARGV[2])
