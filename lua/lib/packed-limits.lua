--[[
lib/packed-limits.lua: the driver of the `packed-limits` script: the `limits` script's decisions
(lib/limits.lua: all or nothing, n requests in order) for a set of 2 to 8 policies that are each
GCRA that does not wait (or token-bucket, leaky-bucket) or fixed-window, with the whole set's
state in ONE key: one GET and at most one SET per request, whatever the number of policies
(the `limits` script reads and writes each policy's own key, 2 to 3 commands per policy).
KEYS[i]       request i's packed state key (the set's namespace and the user key's hash tag);
              its block is that name plus ':block' (lib/block.lua)
ARGV[3..]     as lib/limits.lua: P, then each policy's module ('gc' or 'fw'), limit, window_ms
              and capacity (burst), then per request its cost (a refund: minus its cost; a
              penalty: 'p<cost>'; 'l', a release, does nothing: no lease here) and its tickets
              ('': none of these policies has one), both left out when every request of the
              batch is a consume of cost 1
State: one string of 8-byte little-endian doubles (integers, exact below 2^53), each policy's in
order: gcra's ms, frac, den (the TAT is ms + frac / den; it matters only while ms >= now, as
gcra.lua's key would exist), fixed-window's count, end_ms (the window open while now < end_ms).
The key expires when every policy is empty again (the latest of their ends); times in the value
are Redis time. A value of another length (or type) reads as empty.
Reply: as lib/limits.lua (none of these policies adds a fifth value).
This part defines the general loop, decide_batch; the script's last part, lib/packed-pair.lua,
runs it, or its own loop for the commonest batch of a pair of policies.
]]
local policies = tonumber(ARGV[3])
-- per policy: gcra or not, limit, window_ms, and gcra's tolerance (burst x T, in units of
-- 1/limit ms); the value's layout: 8-byte doubles (exact for integers below 2^53), 3 per gcra
-- policy and 2 per fixed-window one, read and written by the struct library (no text to parse)
local is_gcra, limit, window_ms, tolerance = {}, {}, {}, {}
local layout, width = { '<' }, 0
for p = 1, policies do
  local b = 3 + 4 * (p - 1)
  local gc = ARGV[b + 1] == 'gc'
  is_gcra[p] = gc
  limit[p] = tonumber(ARGV[b + 2])
  window_ms[p] = tonumber(ARGV[b + 3])
  tolerance[p] = tonumber(ARGV[b + 4]) * window_ms[p]
  if gc then
    layout[#layout + 1] = 'ddd'
    width = width + 24
  else
    layout[#layout + 1] = 'dd'
    width = width + 16
  end
end
layout = table.concat(layout)
local pack, unpack_values = struct.pack, struct.unpack
-- what runs per request, as locals (a global, and a library's field, is a lookup on each use)
local redis_call, redis_pcall, unpack = redis.call, redis.pcall, unpack
local base = 3 + 4 * policies
local plain = #ARGV == base

-- One request's state, per policy: `held` is gcra's TAT as units of 1/limit ms ahead of now (0:
-- empty), fixed-window's count; `ends` the window's end (fixed-window); `after` what it would
-- hold with the request counted, and `fits` whether that is within its limit. `stored` is the
-- value as read (gcra policies are written back from it unchanged when the request counts
-- nowhere), `stored_ends` when the key expires (-1: it holds no value of this layout), as the
-- last write computed it.
local held, ends, after, fits = {}, {}, {}, {}
local stored, stored_ends = false, -1

-- Policy p's `after` and `fits` for `need`; returns `fits`.
local function check(p, need)
  local next_held
  if is_gcra[p] then
    next_held = held[p] + need * window_ms[p]
    fits[p] = next_held <= tolerance[p]
  else
    next_held = held[p] + need
    fits[p] = next_held <= limit[p]
  end
  after[p] = next_held
  return fits[p]
end

-- Reads the key into the tables above (a value of another length, or another type, reads as
-- empty and is replaced by the next write), checking `need` (false: no check) under every
-- policy. Returns whether every policy fits it, and whether any changed (a shortened window).
local function read(key, need)
  -- a missing key reads false; one of another type an error table, whose length is 0
  local raw = redis_pcall('GET', key)
  local valid = raw and #raw == width
  local at = 1
  local all, any = true, false
  local last = 0
  for p = 1, policies do
    local l = limit[p]
    if is_gcra[p] then
      local ms, frac, den = 0, 0, l
      if valid then ms, frac, den, at = unpack_values('<ddd', raw, at) end
      if frac > 0 then
        if ms + 1 > last then last = ms + 1 end
      elseif ms > last then
        last = ms
      end
      local ahead = 0
      if ms >= now_ms and den > 0 then
        if den ~= l then
          -- a changed limit re-expresses the fraction, rounding the TAT later (as gcra.lua)
          frac = ceil(frac * l / den)
          if frac >= l then
            ms = ms + 1
            frac = frac - l
          end
        end
        ahead = (ms - now_ms) * l + frac
      end
      held[p] = ahead
      if need then
        -- what the policy would hold with `need` counted, and whether that fits
        local next_held = ahead + need * window_ms[p]
        after[p] = next_held
        if next_held <= tolerance[p] then fits[p] = true else fits[p], all = false, false end
      end
    else
      local count, end_ms = 0, 0
      if valid then count, end_ms, at = unpack_values('<dd', raw, at) end
      -- a window shortened by a policy change ends no later than the new length from now (the
      -- first request that sees the change stores that end: fixed-window.lua)
      local h, e = 0, now_ms + window_ms[p]
      if count > 0 then
        if end_ms > last then last = end_ms end
        if end_ms >= e then
          h = count
          if e ~= end_ms then any = true end
        elseif now_ms < end_ms then
          h, e = count, end_ms
        end
      end
      held[p], ends[p] = h, e
      if need then
        local next_held = h + need
        after[p] = next_held
        if next_held <= l then fits[p] = true else fits[p], all = false, false end
      end
    end
  end
  stored, stored_ends = valid and raw, valid and last or -1
  return all, any
end

-- A penalty (count `cost` past the limit) or a refund (give `cost` back), on every policy.
local function adjust(cost, penalty)
  for p = 1, policies do
    if is_gcra[p] then
      local w = window_ms[p]
      if penalty then
        -- at most one window past a full bucket, never earlier than the TAT already is
        local most = tolerance[p] + limit[p] * w
        local a = held[p] + cost * w
        if a > most then a = max(held[p], most) end
        held[p] = a
      else
        held[p] = max(0, held[p] - cost * w)
      end
    elseif penalty then
      held[p] = held[p] + cost
    else
      held[p] = max(0, held[p] - cost)
    end
  end
end

-- How `settle` writes the state back: gcra policies as they hold now, or as read (a refused
-- request that shortened a fixed window); fixed-window policies always as they hold now.
local HELD, STORED = 1, 2

-- Settles one request in one pass over the policies: appends each policy's decision to `reply`
-- (unless nil), counting the request in all of them when `counts` (every policy fits it, and it
-- is no peek; `left_ms`: the key's block), and, with `writes` (HELD or STORED), writes the key
-- back: it expires when the last policy is empty, and an expiry that stays the same is kept, as
-- when a long fixed window outlasts the others: the value, as long as the one it replaces, is
-- written over it in place with SETRANGE (no expiry to format or to set, no object to allocate,
-- and an integer reply; SET ... KEEPTTL costs Redis about 1,900 instructions more per write,
-- callgrind). Returns the reply's new length. One loop rather than a step each: this runs per
-- decision.
local fields = {}
local function settle(key, reply, n, counts, left_ms, writes)
  local f, ends_ms = 0, 0
  for p = 1, policies do
    local now_held, l, gc = held[p], limit[p], is_gcra[p]
    if counts then now_held = after[p] end
    if reply then
      local remaining, reset_ms, retry_ms, fit = 0, 0, 0, fits[p]
      if gc then
        -- floor and ceil of quotients of integers >= 0, without a C call each
        local w, room = window_ms[p], tolerance[p] - now_held
        if room > 0 then remaining = (room - room % w) / w end
        reset_ms = now_held % l
        if reset_ms > 0 then reset_ms = l - reset_ms end
        reset_ms = (now_held + reset_ms) / l
        if not fit then retry_ms = ceil((after[p] - tolerance[p]) / l) end
      else
        remaining = l - now_held
        if remaining < 0 then remaining = 0 end
        local window_left_ms = ends[p] - now_ms
        if now_held > 0 then reset_ms = window_left_ms end
        if not fit then retry_ms = window_left_ms end
      end
      if left_ms > 0 then
        -- blocked: nothing counted, refused until the block ends (lib/block.lua)
        n = n + 3
        reply[n - 2], reply[n - 1], reply[n] = -1, max(reset_ms, left_ms), max(retry_ms, left_ms)
      elseif fit then
        n = n + 2
        reply[n - 1], reply[n] = remaining, reset_ms
      else
        n = n + 3
        reply[n - 2], reply[n - 1], reply[n] = -1 - remaining, reset_ms, retry_ms
      end
    end
    if writes and gc then
      local ms, frac, den = 0, 0, l
      if writes == STORED then
        if stored then ms, frac, den = unpack_values('<ddd', stored, 8 * f + 1) end
      elseif now_held > 0 then
        frac = now_held % l
        ms = now_ms + (now_held - frac) / l
      end
      fields[f + 1], fields[f + 2], fields[f + 3] = ms, frac, den
      f = f + 3
      if frac > 0 then ms = ms + 1 end
      if ms > ends_ms then ends_ms = ms end
    elseif writes then
      local end_ms = ends[p]
      if now_held <= 0 then now_held, end_ms = 0, 0 end
      fields[f + 1], fields[f + 2] = now_held, end_ms
      f = f + 2
      if end_ms > ends_ms then ends_ms = end_ms end
    end
  end
  if not writes then return n end
  if ends_ms == stored_ends and ends_ms > now_ms then
    redis_call('SETRANGE', key, '0', pack(layout, unpack(fields, 1, f)))
  elseif ends_ms > now_ms then
    redis_call('SET', key, pack(layout, unpack(fields, 1, f)), 'PXAT', int(ends_ms + offset_ms))
  else
    redis_call('DEL', key)
  end
  return n
end

-- Decides the batch, any requests of any set (lib/packed-pair.lua decides the commonest faster).
local function decide_batch(blocks)
  local reply = {}
  local n = 0
  for i = 1, #KEYS do
    local key = KEYS[i]
    local given = false
    local cost = 1
    if not plain then
      given = ARGV[base + 2 * i - 1]
      cost = tonumber(given)
    end
    local left_ms = 0
    if blocks and given ~= 'l' and (not cost or cost >= 0) then left_ms = block_left(key) end
    if cost and cost >= 0 then
      -- a consume (0: a peek, and a blocked key's), all or nothing
      if left_ms > 0 then cost = 0 end
      local need = cost
      if cost == 0 then need = 1 end
      local all, any = read(key, need)
      local counts = all and cost > 0
      local writes = (counts and HELD) or (any and STORED)
      n = settle(key, reply, n, counts, left_ms, writes)
    elseif given ~= 'l' then
      -- 'p<cost>': a penalty on every policy (counted past the limit), then a peek; or a refund
      read(key, false)
      if cost then
        adjust(-cost, false)
        settle(key, nil, n, false, 0, HELD)
      else
        adjust(tonumber(string.sub(given, 2)), true)
        for p = 1, policies do check(p, 1) end
        n = settle(key, reply, n, false, left_ms, HELD)
      end
    end
    -- 'l', a release: these policies hold no leases
  end
  return reply
end
