--[[
fixed-window.lua: at most `limit` cost per window; a key's window opens at its first
admitted request and lasts `window_ms` (a policy change to a shorter window ends an open one no
later than the new length from the first request that sees the change, which stores that end
even when it is refused or peeks; a longer one applies from the next window).

Decides a batch of n requests of one policy in order, at one Redis time. For request i
(1-based):
KEYS[i]    the counter: its integer value is the count, its expiry (PEXPIRETIME, Redis 7.0+) the
           window's end
ARGV[5+i]  the request: its cost (integer >= 0; 0 peeks: decides for cost 1, writes nothing but a
           shortened window's end), or minus the cost to refund
           (a batch of consumes of cost 1 sends no ARGV[5+i] at all)
and for the whole batch:
ARGV[1]    now_ms: '' reads Redis TIME (always, in production); an integer only in tests
ARGV[2]    offset_ms: added to every expiry written, taken from every expiry read; 0 in
           production (tests on an injected clock pass one that keeps keys alive in real time)
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
local offset_ms = tonumber(ARGV[2])
local limit = tonumber(ARGV[3])
local window_ms = tonumber(ARGV[4])

-- A key that occurs more than once in the batch (a busy client) is read once and written once,
-- at the end of the batch, however many of its requests the batch holds: meanwhile its window
-- (count, end; count 0: none open) is held in these tables, next to what Redis has (its count and
-- end, false when it holds no open window) and whether it is to be written. Every other key is
-- read and written in place. Only a batch where some key follows itself is searched for repeats
-- (Lua compares interned strings at no cost), so distinct keys build no tables.
local repeated = false
local held_count, held_end, stored_count, stored_end, held_dirty, held_order
for i = 2, #KEYS do
  if KEYS[i] == KEYS[i - 1] then
    repeated = {}
    held_count, held_end, stored_count, stored_end, held_dirty, held_order = {}, {}, {}, {}, {}, {}
    local seen = {}
    for j = 1, #KEYS do
      local key = KEYS[j]
      if seen[key] then repeated[key] = true else seen[key] = true end
    end
    break
  end
end

-- Makes Redis hold the window (count, end_ms) where it holds (was_count, was_end_ms), in the
-- fewest commands: a count of 0 deletes the key.
local function write(key, count, end_ms, was_count, was_end_ms)
  if repeated and repeated[key] then
    held_count[key] = count
    held_end[key] = end_ms
    if not held_dirty[key] then
      held_dirty[key] = true
      held_order[#held_order + 1] = key
    end
  elseif count == 0 then
    -- a window refunded to zero is deleted: its key must not outlive an empty state
    redis.call('DEL', key)
  elseif was_end_ms == end_ms then
    if count ~= was_count then redis.call('INCRBY', key, count - was_count) end
  else
    -- a new window, or one a policy change shortened
    redis.call('SET', key, count, 'PXAT', end_ms + offset_ms)
  end
end

local function decide(key, limit, window_ms, cost, op)
  -- check: the window's end is the key's expiry, its count the key's integer value
  local end_ms = now_ms + window_ms
  local count = 0
  local was_count = 0
  local was_end_ms = false
  if repeated and held_count[key] then
    was_count = stored_count[key]
    was_end_ms = stored_end[key]
    if held_count[key] > 0 then
      count = held_count[key]
      end_ms = held_end[key]
    end
  else
    -- a key of another type (an error reply) reads as empty, like a value of another shape
    local raw = redis.pcall('GET', key)
    if type(raw) == 'string' then
      local n = tonumber(raw)
      local expires_ms = redis.call('PEXPIRETIME', key) - offset_ms
      -- a window shortened by a policy change ends no later than the new length from now (the
      -- first request that sees the change stores that end)
      local e = math.min(expires_ms, end_ms)
      if n and now_ms < e then
        end_ms = e
        count = n
        was_count = n
        was_end_ms = expires_ms
      end
    end
    if repeated and repeated[key] then
      held_count[key] = count
      held_end[key] = end_ms
      stored_count[key] = was_count
      stored_end[key] = was_end_ms
    end
  end
  local window_left_ms = end_ms - now_ms

  if op == 'r' then
    count = math.max(0, count - cost)
    write(key, count, end_ms, was_count, was_end_ms)
    return 0, 0, 0, 0
  end

  local peek = cost == 0
  local need = cost
  if peek then need = 1 end
  local allowed = count + need <= limit

  -- commit
  local admitted = allowed and not peek
  if admitted then count = count + need end
  -- a shortened window keeps the end its first request saw, refused or peeking: recomputed
  -- from each later request, it would never end
  if admitted or (was_end_ms and end_ms < was_end_ms) then
    write(key, count, end_ms, was_count, was_end_ms)
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
if repeated then
  repeated = false -- now write in place
  for i = 1, #held_order do
    local key = held_order[i]
    write(key, held_count[key], held_end[key], stored_count[key], stored_end[key])
  end
end
return reply
