--[[
fixed-window.lua: at most `limit` cost per window; a key's window opens at its first
admitted request and lasts `window_ms`.

Decides a batch of n requests of one policy in order, at one Redis time. For request i
(1-based):
KEYS[i]    the counter: a string "<start_ms> <count>"
ARGV[5+i]  the request: its cost (integer >= 0; 0 peeks: decides for cost 1, writes nothing),
           or minus the cost to refund
           (a batch of consumes of cost 1 sends no ARGV[5+i] at all)
and for the whole batch:
ARGV[1]    now_ms: '' reads Redis TIME (always, in production); an integer only in tests
ARGV[2]    ttl_slack_ms: added to every PX; 0 in production, a margin in clock-injected tests
ARGV[3]    limit: cost admitted per window (integer >= 1)
ARGV[4]    window_ms: window length in ms (integer >= 1)
ARGV[5]    burst: unused (equals limit for this algorithm)

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

local function decide(key, limit, window_ms, cost, op)
  -- check
  local start_ms = now_ms
  local count = 0
  local current = false
  local raw = redis.call('GET', key)
  if raw then
    local s, c = string.match(raw, '^(%d+) (%d+)$')
    s = tonumber(s)
    if now_ms < s + window_ms then
      start_ms = s
      count = tonumber(c)
      current = true
    end
  end
  local window_left_ms = start_ms + window_ms - now_ms

  if op == 'r' then
    -- a window refunded to zero is deleted: its key must not outlive an empty state
    if current and count > cost then
      redis.call('SET', key, string.format('%d %d', start_ms, count - cost), 'PX', window_left_ms + ttl_slack_ms)
    else
      redis.call('DEL', key)
    end
    return 0, 0, 0, 0
  end

  local peek = cost == 0
  local need = cost
  if peek then need = 1 end
  local allowed = count + need <= limit

  -- commit
  if allowed and not peek then
    count = count + need
    redis.call('SET', key, string.format('%d %d', start_ms, count), 'PX', window_left_ms + ttl_slack_ms)
  end

  local reset_ms = 0
  if count > 0 then reset_ms = window_left_ms end
  if allowed then return 1, math.max(0, limit - count), reset_ms, 0 end
  return 0, math.max(0, limit - count), reset_ms, window_left_ms
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
  local allowed, remaining, reset_ms, retry_after_ms = decide(KEYS[i], limit, window_ms, cost, op)
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
