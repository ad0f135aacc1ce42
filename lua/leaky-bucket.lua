--[[
leaky-bucket.lua: the meter (policing) form. The level drains at `limit` per `window_ms` and
holds at most `burst`; a request of cost c raises it by c or, if that would overflow, is
rejected. State is in integer units: one request is `scale_ms` units (the window when
written); the level drains `limit` units per ms.

Decides a batch of n requests of one policy in order, at one Redis time. For request i
(1-based):
KEYS[i]    the bucket: a string "<units> <at_ms> <scale_ms>"
ARGV[5+i]  the request: its cost (integer >= 0; 0 peeks: decides for cost 1, writes nothing),
           or minus the cost to refund (never below empty)
           (a batch of consumes of cost 1 sends no ARGV[5+i] at all)
and for the whole batch:
ARGV[1]    now_ms: '' reads Redis TIME (always, in production); an integer only in tests
ARGV[2]    ttl_slack_ms: added to every PX; 0 in production
ARGV[3]    limit: requests drained per window (integer >= 1)
ARGV[4]    window_ms: window length in ms (integer >= 1)
ARGV[5]    burst: capacity in requests (integer >= 1)

Reply, per consume in order (a refund adds nothing): allowed, 2 integers `remaining, reset_ms`;
refused, 3 integers `-1 - remaining, reset_ms, retry_after_ms`.
]]
local now_ms
if ARGV[1] == '' then
  local time = redis.call('TIME')
  now_ms = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
else
  now_ms = tonumber(ARGV[1])
end
local ttl_slack_ms = tonumber(ARGV[2])
local limit = tonumber(ARGV[3])
local window_ms = tonumber(ARGV[4])
local burst = tonumber(ARGV[5])

local function decide(key, limit, w, burst, cost, op)
  local capacity = burst * w
  -- level now
  local units = 0
  local raw = redis.call('GET', key)
  if raw then
    local a, b, c = string.match(raw, '^(%d+) (%d+) (%d+)$')
    units = tonumber(a)
    local scale_ms = tonumber(c)
    -- a changed window rescales the state, rounding toward a fuller bucket
    if scale_ms ~= w then units = math.ceil(units * w / scale_ms) end
    local elapsed = math.max(0, now_ms - tonumber(b))
    units = math.max(0, units - elapsed * limit)
  end

  if op == 'r' then
    units = math.max(0, units - cost * w)
    if units == 0 then
      redis.call('DEL', key)
    else
      local ttl_ms = math.ceil(units / limit)
      redis.call('SET', key, string.format('%d %d %d', units, now_ms, w), 'PX', ttl_ms + ttl_slack_ms)
    end
    return 0, 0, 0, 0
  end

  -- check
  local peek = cost == 0
  local need = cost * w
  if peek then need = w end
  local allowed = units + need <= capacity

  -- commit
  if allowed and not peek then units = units + need end
  local to_empty_ms = math.ceil(units / limit)
  if allowed and not peek then
    redis.call('SET', key, string.format('%d %d %d', units, now_ms, w), 'PX', to_empty_ms + ttl_slack_ms)
  end

  local remaining = math.max(0, math.floor((capacity - units) / w))
  if allowed then return 1, remaining, to_empty_ms, 0 end
  return 0, remaining, to_empty_ms, math.ceil((units + need - capacity) / limit)
end

local reply = {}
local n = 0
for i = 1, #KEYS do
  local cost = 1
  if #ARGV > 5 then cost = tonumber(ARGV[5 + i]) end
  local op = 'c'
  if cost < 0 then
    op = 'r'
    cost = -cost
  end
  local allowed, remaining, reset_ms, retry_after_ms = decide(KEYS[i], limit, window_ms, burst, cost, op)
  -- a refund replies nothing; a consume replies 2 integers when allowed, 3 when refused
  if op == 'c' then
    if allowed == 1 then
      reply[n + 1] = remaining
      reply[n + 2] = reset_ms
      n = n + 2
    else
      reply[n + 1] = -1 - remaining
      reply[n + 2] = reset_ms
      reply[n + 3] = retry_after_ms
      n = n + 3
    end
  end
end
return reply
