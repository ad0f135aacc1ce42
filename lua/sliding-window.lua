--[[
sliding-window.lua: two-counter weighted estimate. Windows are aligned to multiples of
`window_ms` since the epoch (Redis time). A request is admitted when
  previous * (window_ms - elapsed) + (current + cost) * window_ms <= limit * window_ms
(the usual estimate previous * overlap + current + cost <= limit, on integers).

Decides a batch of n requests of one policy in order, at one Redis time. For request i
(1-based):
KEYS[i]    the counters: a string "<start_ms> <current> <previous>", where start_ms is the
           aligned start of the window `current` belongs to
ARGV[5+i]  the request: its cost (integer >= 0; 0 peeks: decides for cost 1, writes nothing),
           or minus the cost to refund
           (a batch of consumes of cost 1 sends no ARGV[5+i] at all)
and for the whole batch:
ARGV[1]    now_ms: '' reads Redis TIME (always, in production); an integer only in tests
ARGV[2]    offset_ms: added to every expiry written (SET ... PXAT, absolute ms, which Redis
           propagates as is); 0 in production (tests on an injected clock pass one that keeps
           keys alive in real time)
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

-- the smallest wait after which `need` passes, given no other traffic
local function wait_ms(limit, w, elapsed, previous, current, need)
  -- later in this window: previous * (w - e) <= (limit - current - need) * w
  local room = limit - current - need
  if room >= 0 and previous > 0 then
    local most = math.floor(room * w / previous)
    if most >= 1 then return w - most - elapsed end
  end
  -- in the next window `current` becomes the previous count and the new count starts at 0
  if current == 0 then return w - elapsed end
  local most = math.floor((limit - need) * w / current)
  if most >= 1 then return w - elapsed + math.max(0, w - most) end
  -- the window after that: both counts are gone
  return 2 * w - elapsed
end

-- A key that occurs more than once in the batch (a busy client) is read once and written once,
-- at the end of the batch, however many of its requests the batch holds: its state is held in
-- these tables meanwhile (held_start[key] false: empty; held_until[key] the expiry of a write to
-- make, false to delete the key, nil if there is none). Every other key is read and written in
-- place. Only a batch where some key follows itself is searched for repeats (Lua compares
-- interned strings at no cost), so distinct keys build no tables.
local repeated = false
local held_start, held_count, held_previous, held_until, held_order
for i = 2, #KEYS do
  if KEYS[i] == KEYS[i - 1] then
    repeated = {}
    held_start, held_count, held_previous, held_until, held_order = {}, {}, {}, {}, {}
    local seen = {}
    for j = 1, #KEYS do
      local key = KEYS[j]
      if seen[key] then repeated[key] = true else seen[key] = true end
    end
    break
  end
end

-- writes the state expiring at expires_ms, or deletes the key when state_start is false
local function write(key, state_start, count, previous, expires_ms)
  if repeated and repeated[key] then
    if held_until[key] == nil then held_order[#held_order + 1] = key end
    held_start[key] = state_start
    held_count[key] = count
    held_previous[key] = previous
    held_until[key] = expires_ms or false
  elseif state_start then
    redis.call('SET', key, string.format('%d %d %d', state_start, count, previous), 'PXAT', expires_ms + offset_ms)
  else
    redis.call('DEL', key)
  end
end

local function decide(key, limit, w, cost, op)
  local start_ms = now_ms - (now_ms % w)
  local state_start, state_count, state_previous = false, 0, 0
  if repeated and held_start[key] ~= nil then
    state_start, state_count, state_previous = held_start[key], held_count[key], held_previous[key]
  else
    -- a key of another type (an error reply) reads as empty, like a value of another shape
    local raw = redis.pcall('GET', key)
    local a, b, c
    if type(raw) == 'string' then a, b, c = string.match(raw, '^(%d+) (%d+) (%d+)$') end
    -- another shape reads as empty, replaced by the next write
    if a then state_start, state_count, state_previous = tonumber(a), tonumber(b), tonumber(c) end
    if repeated and repeated[key] then
      held_start[key], held_count[key], held_previous[key] = state_start, state_count, state_previous
    end
  end

  if op == 'r' then
    local count = 0
    local previous = 0
    if state_start and state_start >= start_ms - w then
      count = math.max(0, state_count - cost)
      if state_start >= start_ms then previous = state_previous end
    end
    if count == 0 and previous == 0 then
      write(key, false)
    else
      -- the state matters until its last non-zero count leaves the estimate
      local ttl_ms = state_start + w - now_ms
      if count > 0 then ttl_ms = ttl_ms + w end
      write(key, state_start, count, state_previous, now_ms + ttl_ms)
    end
    return 0, 0, 0, 0
  end

  -- check
  local current = 0
  local previous = 0
  if state_start then
    if state_start >= start_ms then
      current = state_count
      previous = state_previous
    elseif state_start >= start_ms - w then
      previous = state_count
    end
  end
  local elapsed = now_ms - start_ms
  local peek = cost == 0
  local need = cost
  if peek then need = 1 end
  local allowed = previous * (w - elapsed) + (current + need) * w <= limit * w
  if allowed and not peek then current = current + need end
  local retry_after_ms = 0
  if not allowed then retry_after_ms = wait_ms(limit, w, elapsed, previous, current, need) end

  -- commit
  local window_left_ms = w - elapsed
  if allowed and not peek then write(key, start_ms, current, previous, start_ms + 2 * w) end

  local used = previous * (w - elapsed) + current * w
  local reset_ms = 0
  if current > 0 then
    reset_ms = window_left_ms + w
  elseif previous > 0 then
    reset_ms = window_left_ms
  end
  local remaining = math.max(0, math.floor((limit * w - used) / w))
  if allowed then return 1, remaining, reset_ms, 0 end
  return 0, remaining, reset_ms, retry_after_ms
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
    write(key, held_start[key], held_count[key], held_previous[key], held_until[key])
  end
end
return reply
