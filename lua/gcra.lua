--[[
gcra.lua: the generic cell rate algorithm. Emission interval T = window_ms / limit, burst
tolerance burst x T. A request of cost c moves the theoretical arrival time (TAT) to
max(TAT, now) + c x T and is admitted when that is at most now + burst x T.
The TAT is an exact rational, ms + frac / den with 0 <= frac < den and den = limit when
written, so adding c x T adds exactly c x window_ms to frac. Distances are in units of 1/limit ms.

Decides a batch of n requests of one policy in order, at one Redis time. For request i
(1-based):
KEYS[i]    the TAT, kept in the key's expiry (PEXPIRETIME, Redis 7.0+): '0' when frac is 0 (the
           TAT is the expiry), else "<frac> <den>" (the TAT is the expiry - 1 ms + frac / den)
ARGV[5+i]  the request: its cost (integer >= 0; 0 peeks: decides for cost 1, writes nothing),
           or minus the cost to refund (never earlier than now)
           (a batch of consumes of cost 1 sends no ARGV[5+i] at all)
and for the whole batch:
ARGV[1]    now_ms: '' reads Redis TIME (always, in production); an integer only in tests
ARGV[2]    offset_ms: added to every expiry written, taken from every expiry read; 0 in
           production (tests on an injected clock pass one that keeps keys alive in real time)
ARGV[3]    limit: requests per window (integer >= 1)
ARGV[4]    window_ms: window length in ms (integer >= 1)
ARGV[5]    burst: requests that may pass at once (integer >= 1)

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
local burst = tonumber(ARGV[5])

-- A key that occurs more than once in the batch (a busy client) is read once and written once,
-- at the end of the batch, however many of its requests the batch holds: meanwhile held_ahead[key]
-- holds its TAT as distance from now in units of 1/limit ms (0 or less: empty), held_raw[key] the
-- value Redis has and held_dirty[key] whether it is to be written. Every other key is read and
-- written in place. Only a batch where some key follows itself is searched for repeats (Lua
-- compares interned strings at no cost), so distinct keys build no tables.
local repeated = false
local held_ahead, held_raw, held_dirty, held_order
for i = 2, #KEYS do
  if KEYS[i] == KEYS[i - 1] then
    repeated, held_ahead, held_raw, held_dirty, held_order = {}, {}, {}, {}, {}
    local seen = {}
    for j = 1, #KEYS do
      local key = KEYS[j]
      if seen[key] then repeated[key] = true else seen[key] = true end
    end
    break
  end
end

-- The TAT lives in the key's expiry: the key expires exactly when the state is empty again.
-- A whole-ms TAT expires at it and holds '0' (a shared integer: no memory for the value); a
-- fractional one expires 1 ms after its whole part and holds "<frac> <den>". A TAT not after now
-- (ahead <= 0) deletes the key. `raw` is the value the key holds.
local function write(key, limit, ahead, raw)
  if repeated and repeated[key] then
    if not held_dirty[key] then
      held_dirty[key] = true
      held_order[#held_order + 1] = key
    end
    held_ahead[key] = ahead
    return
  end
  if ahead <= 0 then
    redis.call('DEL', key)
    return
  end
  local ms = now_ms + math.floor(ahead / limit)
  local frac = ahead % limit
  if frac == 0 then
    if raw == '0' then
      redis.call('PEXPIREAT', key, ms + offset_ms)
    else
      redis.call('SET', key, '0', 'PXAT', ms + offset_ms)
    end
  else
    redis.call('SET', key, string.format('%d %d', frac, limit), 'PXAT', ms + 1 + offset_ms)
  end
end

local function decide(key, limit, w, burst, cost, op)
  local tolerance = burst * w
  -- the TAT, never earlier than now, in the current denominator
  local tat_ms = now_ms
  local tat_frac = 0
  local raw
  local held = repeated and held_ahead[key]
  if held then
    raw = held_raw[key]
    if held > 0 then
      tat_ms = now_ms + math.floor(held / limit)
      tat_frac = held % limit
    end
  else
    raw = redis.pcall('GET', key)
    -- a key of another type (an error reply) reads as empty, like a value of another shape
    if type(raw) ~= 'string' then raw = false end
    if raw then
      local expires_ms = redis.call('PEXPIRETIME', key) - offset_ms
      local ms = expires_ms
      local frac = 0
      local den = limit
      if raw ~= '0' then
        local b, c = string.match(raw, '^(%d+) (%d+)$')
        if b then
          ms = expires_ms - 1
          frac = tonumber(b)
          den = tonumber(c)
        else
          -- not this format (a key written by something else): treat as empty
          ms = now_ms - 1
        end
      end
      if ms >= now_ms then
        if den ~= limit then
          -- a changed limit re-expresses the fraction, rounding the TAT later
          frac = math.ceil(frac * limit / den)
          if frac >= limit then
            ms = ms + 1
            frac = frac - limit
          end
        end
        tat_ms = ms
        tat_frac = frac
      end
    end
    if repeated and repeated[key] then
      held_ahead[key] = (tat_ms - now_ms) * limit + tat_frac
      held_raw[key] = raw
    end
  end

  if op == 'r' then
    write(key, limit, (tat_ms - now_ms) * limit + tat_frac - cost * w, raw)
    return 0, 0, 0, 0
  end

  -- check
  local peek = cost == 0
  local need = cost
  if peek then need = 1 end
  local sum = tat_frac + need * w
  local next_ms = tat_ms + math.floor(sum / limit)
  local next_frac = sum % limit
  local ahead = (next_ms - now_ms) * limit + next_frac
  local allowed = ahead <= tolerance

  -- commit
  local used = (tat_ms - now_ms) * limit + tat_frac
  if allowed and not peek then
    used = ahead
    write(key, limit, ahead, raw)
  end

  local remaining = math.max(0, math.floor((tolerance - used) / w))
  if allowed then return 1, remaining, math.ceil(used / limit), 0 end
  return 0, remaining, math.ceil(used / limit), math.ceil((ahead - tolerance) / limit)
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
if repeated then
  repeated = false -- now write in place
  for i = 1, #held_order do
    local key = held_order[i]
    write(key, limit, held_ahead[key], held_raw[key])
  end
end
return reply
