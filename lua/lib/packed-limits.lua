--[[
lib/packed-limits.lua: the driver of the `packed-limits` script: the `limits` script's decisions
(lib/limits.lua: all or nothing, n requests in order) for a set of 2 to 8 policies that are each
GCRA that does not wait (or token-bucket, leaky-bucket) or fixed-window, with the whole set's
state in ONE key: one GET and at most one SET per request, whatever the number of policies
(the `limits` script reads and writes each policy's own key, 2 to 3 commands per policy).
KEYS[2i - 1]  request i's packed state key (the set's namespace and the user key's hash tag)
KEYS[2i]      request i's first policy's state key: its block is that name plus ':block'
              (lib/block.lua), as with `limits`; this script never reads or writes the key itself
ARGV[3..]     as lib/limits.lua: P, then each policy's module ('gc' or 'fw'), limit, window_ms
              and capacity (burst), then per request its cost (a refund: minus its cost; a
              penalty: 'p<cost>'; 'l', a release, does nothing: no lease here) and its tickets
              ('': none of these policies has one), both left out when every request of the
              batch is a consume of cost 1
State: one string, each policy's fields in order, separated by spaces: gcra "<ms> <frac> <den>"
(the TAT is ms + frac / den; it matters only while ms >= now, as gcra.lua's key would exist),
fixed-window "<count> <end_ms>" (the window open while now < end_ms). The key expires when every
policy is empty again (the latest of their ends); times in the value are Redis time.
Reply: as lib/limits.lua (none of these policies adds a fifth value).
]]
local policies = tonumber(ARGV[3])
local is_gcra, limit, window_ms, burst = {}, {}, {}, {}
local pattern, layout = { '^' }, {}
for p = 1, policies do
  local b = 3 + 4 * (p - 1)
  is_gcra[p] = ARGV[b + 1] == 'gc'
  limit[p] = tonumber(ARGV[b + 2])
  window_ms[p] = tonumber(ARGV[b + 3])
  burst[p] = tonumber(ARGV[b + 4])
  if p > 1 then
    pattern[#pattern + 1] = ' '
    layout[#layout + 1] = ' '
  end
  if is_gcra[p] then
    pattern[#pattern + 1] = '(%d+) (%d+) (%d+)'
    layout[#layout + 1] = '%d %d %d'
  else
    pattern[#pattern + 1] = '(%d+) (%d+)'
    layout[#layout + 1] = '%d %d'
  end
end
pattern[#pattern + 1] = '$'
pattern = table.concat(pattern)
layout = table.concat(layout)
local base = 3 + 4 * policies
local plain = #ARGV == base

-- One request's state, per policy: gcra's TAT as units of 1/limit ms ahead of now (`ahead`, 0:
-- empty) and as read (`f1..f3`, written back unchanged while the policy does not count);
-- fixed-window's count and window end (`ahead` the count, `f2` the end, `f1` the end as read).
local ahead, f1, f2, f3, changed = {}, {}, {}, {}, {}
local fields = {}

-- Reads the key into the tables above (a value of another shape, or another type, reads as
-- empty and is replaced by the next write).
local function read(key)
  local raw = redis.pcall('GET', key)
  local got = {}
  if type(raw) == 'string' then got = { match(raw, pattern) } end
  local at = 1
  for p = 1, policies do
    changed[p] = false
    local l = limit[p]
    if is_gcra[p] then
      local ms, frac, den = tonumber(got[at]), tonumber(got[at + 1]), tonumber(got[at + 2])
      at = at + 3
      f1[p], f2[p], f3[p] = ms or 0, frac or 0, den or l
      ahead[p] = 0
      if ms and ms >= now_ms and den > 0 then
        if den ~= l then
          -- a changed limit re-expresses the fraction, rounding the TAT later (as gcra.lua)
          frac = ceil(frac * l / den)
          if frac >= l then
            ms = ms + 1
            frac = frac - l
          end
        end
        ahead[p] = (ms - now_ms) * l + frac
      end
    else
      local count, end_ms = tonumber(got[at]), tonumber(got[at + 1])
      at = at + 2
      f1[p] = end_ms or 0
      ahead[p], f2[p] = 0, now_ms + window_ms[p]
      -- a window shortened by a policy change ends no later than the new length from now (the
      -- first request that sees the change stores that end: fixed-window.lua)
      local e = min(end_ms or 0, now_ms + window_ms[p])
      if count and now_ms < e then
        ahead[p], f2[p] = count, e
        if e ~= end_ms then changed[p] = true end
      end
    end
  end
end

-- Writes the tables back: the key expires when the last policy is empty.
local function write(key)
  local n, ends_ms = 0, 0
  for p = 1, policies do
    local l = limit[p]
    if is_gcra[p] then
      local ms, frac, den = f1[p], f2[p], f3[p]
      if changed[p] then
        ms, frac, den = now_ms + floor(ahead[p] / l), ahead[p] % l, l
        if ahead[p] <= 0 then ms, frac = 0, 0 end
      end
      fields[n + 1], fields[n + 2], fields[n + 3] = ms, frac, den
      n = n + 3
      if frac > 0 then ms = ms + 1 end
      if ms > ends_ms then ends_ms = ms end
    else
      local count, end_ms = ahead[p], f2[p]
      if count <= 0 then count, end_ms = 0, 0 end
      fields[n + 1], fields[n + 2] = count, end_ms
      n = n + 2
      if end_ms > ends_ms then ends_ms = end_ms end
    end
  end
  if ends_ms > now_ms then
    redis.call('SET', key, format(layout, unpack(fields, 1, n)), 'PXAT', int(ends_ms + offset_ms))
  else
    redis.call('DEL', key)
  end
end

-- Policy p's decision on `cost` (0 peeks: the decision for 1, counting nothing); counts it
-- when `count`. Returns allowed, remaining, reset_ms, retry_after_ms.
local function decide(p, cost, count)
  local need = cost
  if cost == 0 then need = 1 end
  if is_gcra[p] then
    local w, l = window_ms[p], limit[p]
    local tolerance = burst[p] * w
    local next_ahead = ahead[p] + need * w
    if next_ahead > tolerance then
      return 0, max(0, floor((tolerance - ahead[p]) / w)), ceil(ahead[p] / l),
        ceil((next_ahead - tolerance) / l)
    end
    local used = ahead[p]
    if count and cost > 0 then
      used = next_ahead
      ahead[p] = used
      changed[p] = true
    end
    return 1, max(0, floor((tolerance - used) / w)), ceil(used / l), 0
  end
  local c = ahead[p]
  local left_ms = f2[p] - now_ms
  if c + need > limit[p] then
    local reset_ms = 0
    if c > 0 then reset_ms = left_ms end
    return 0, max(0, limit[p] - c), reset_ms, left_ms
  end
  if count and cost > 0 then
    c = c + need
    ahead[p] = c
    changed[p] = true
  end
  local reset_ms = 0
  if c > 0 then reset_ms = left_ms end
  return 1, max(0, limit[p] - c), reset_ms, 0
end

-- A penalty (count `cost` past the limit) or a refund (give `cost` back), on every policy.
local function adjust(cost, penalty)
  for p = 1, policies do
    changed[p] = true
    if is_gcra[p] then
      local w = window_ms[p]
      if penalty then
        -- at most one window past a full bucket, never earlier than the TAT already is
        local most = burst[p] * w + limit[p] * w
        local a = ahead[p] + cost * w
        if a > most then a = max(ahead[p], most) end
        ahead[p] = a
      else
        ahead[p] = max(0, ahead[p] - cost * w)
      end
    elseif penalty then
      ahead[p] = ahead[p] + cost
    else
      ahead[p] = max(0, ahead[p] - cost)
    end
  end
end

local allowed, remaining, reset_ms, retry_after_ms = {}, {}, {}, {}
local blocks = false
do
  local names = {}
  for i = 2, #KEYS, 2 do names[#names + 1] = KEYS[i] .. ':block' end
  blocks = redis.call('EXISTS', unpack(names)) > 0
end
local reply = {}
local n = 0
for i = 1, #KEYS / 2 do
  local key = KEYS[2 * i - 1]
  local a = base + 2 * (i - 1)
  local cost = 1
  if not plain then cost = tonumber(ARGV[a + 1]) end
  read(key)
  if ARGV[a + 1] == 'l' then
    -- a release: these policies hold no leases
    cost = false
  elseif not cost then
    -- 'p<cost>': a penalty on every policy (counted past the limit), then a peek
    adjust(tonumber(string.sub(ARGV[a + 1], 2)), true)
    cost = 0
  end
  if not cost then
    -- nothing to do
  elseif cost < 0 then
    adjust(-cost, false)
  else
    local left_ms = 0
    if blocks then left_ms = block_left(KEYS[2 * i]) end
    if left_ms > 0 then cost = 0 end
    -- check every policy, counting nothing; then count in all, or in none
    local all = true
    for p = 1, policies do
      allowed[p], remaining[p], reset_ms[p], retry_after_ms[p] = decide(p, cost, false)
      if allowed[p] ~= 1 then all = false end
    end
    if all and cost > 0 then
      for p = 1, policies do
        allowed[p], remaining[p], reset_ms[p], retry_after_ms[p] = decide(p, cost, true)
      end
    end
    for p = 1, policies do
      if left_ms > 0 then
        allowed[p], remaining[p], reset_ms[p], retry_after_ms[p] =
          blocked_decision(remaining[p], reset_ms[p], retry_after_ms[p], left_ms)
      end
      n = put_decision(reply, n, allowed[p], remaining[p], reset_ms[p], retry_after_ms[p], 0)
    end
  end
  local dirty = false
  for p = 1, policies do
    if changed[p] then dirty = true end
  end
  if dirty then write(key) end
end
return reply
