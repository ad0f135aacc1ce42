--[[
sliding-log.lua: exact. A request of cost c at time t is admitted when the cost admitted in
(t - window_ms, t] plus c is at most `limit`. One record per millisecond in which requests
were admitted; rejected requests are not recorded. `burst` is unused (equals limit).

State: one string per user key, read and written in place (GETRANGE, SETRANGE), so an
admission costs the same whatever the log holds:
  the older admissions, one 10-byte record each, oldest first: time in ms (6 bytes) and the
  cost admitted at it (4), unsigned big-endian;
  then a 28-byte trailer, unsigned big-endian: the total cost held (4 bytes), the offset
  (1-based) of the first record still held (4), that record's time (6; the newest time when
  none), the newest admission's time (6) and the cost admitted at it (4), and the length of
  the whole string (4).
Each time appears once: requests admitted in the newest millisecond add to the trailer's
record; a request in a later millisecond writes that record over the old trailer and a new
trailer after it (one SETRANGE). Records that left the window (time <= now - window) are
skipped by moving the offset at the next admission; the string is rewritten without them when
they are at least half of the records. A refusal or a peek writes nothing. A key that recurs
in the batch has its trailer written once, at the end of the batch (see below). Times never go
backwards: an admission is recorded at max(now, newest time), so a clock that steps back keeps
entries longer (never admits more). `limit` is at most 2^32 - 1 (checked by the library),
which bounds every cost held. A key holding anything else (another type or shape) reads as
empty and is replaced by the next admission.

sliding_log.decide(key, limit, window_ms, burst, cost, op, ticket, slot) and
sliding_log.commit(slot): see gcra.lua, with two differences. The fifth value returned is the time
the admission was recorded at (-1 if none): with the request's cost it is the ticket a later
refund passes back. And a refund takes `ticket`, "<time>:<cost>" of the admission to take back
(that much cost, at most, from the record of that time; nothing once it has left the window),
or '' to take the refunded cost back from the newest records. A penalty ('p') records `cost`
as an admission would, past the limit (at most up to a total of 2^32 - 1), and returns nothing.
]]
local sliding_log = { tickets = true }
do
  -- the policy of the request being decided (decide sets them)
  local limit, window_ms, cutoff_ms

  local TRAIL = '>I4I4I6I6I4I4'
  local TRAIL_LEN = 28
  local REC = '>I6I4'
  local REC_LEN = 10
  local REC_TRAIL = REC .. string.sub(TRAIL, 2) -- a record, then a trailer
  local CHUNK = 32 * REC_LEN
  local pack = struct.pack
  local unpack = struct.unpack

  -- Calls visit(time, cost) for the records in bytes [from, stop] (1-based), oldest first, until
  -- it returns true; returns the offset of the record it stopped at (or stop + 1).
  local function walk(key, from, stop, visit)
    while from < stop do
      local chunk = redis.call('GETRANGE', key, from - 1, min(from + CHUNK - 1, stop) - 1)
      if #chunk < REC_LEN then return from end
      for j = 1, #chunk - REC_LEN + 1, REC_LEN do
        local t, c = unpack(REC, chunk, j)
        if visit(t, c) then return from end
        from = from + REC_LEN
      end
    end
    return from
  end

  -- Writes a list of {time, cost} (oldest first, none empty) as the whole log, or deletes it.
  local function rewrite(key, list)
    local n = #list
    if n == 0 then
      redis.call('DEL', key)
      return
    end
    local parts = {}
    local sum = 0
    for i = 1, n do
      sum = sum + list[i][2]
      if i < n then parts[i] = pack(REC, list[i][1], list[i][2]) end
    end
    local newest = list[n]
    local size = (n - 1) * REC_LEN + TRAIL_LEN
    parts[n] = pack(TRAIL, sum, 1, list[1][1], newest[1], newest[2], size)
    redis.call('SET', key, table.concat(parts), 'PXAT', int(newest[1] + window_ms + offset_ms))
  end

  -- The log: sum, start, oldest, newest, newest_c, size, with the records that left the window
  -- skipped (sum is nil when the log is empty or holds nothing in the window).
  local function open(key)
    local trail = redis.pcall('GETRANGE', key, -TRAIL_LEN, -1)
    if type(trail) ~= 'string' or #trail ~= TRAIL_LEN then return nil end
    local sum, start, oldest, newest, newest_c, size = unpack(TRAIL, trail)
    local body_end = size - TRAIL_LEN
    if sum <= 0 or start < 1 or start > body_end + 1 or (body_end + 1 - start) % REC_LEN ~= 0
      or newest <= cutoff_ms then
      return nil
    end
    if oldest <= cutoff_ms then
      local found = false
      start = walk(key, start, body_end, function(t, c)
        if t > cutoff_ms then
          oldest = t
          found = true
          return true
        end
        sum = sum - c
        return false
      end)
      if not found then oldest = newest end
    end
    return sum, start, oldest, newest, newest_c, size
  end

  -- The log as a list of {time, cost}, oldest first, from `start` (all in the window).
  local function records_of(key, start, newest, newest_c, size)
    local list = {}
    local body_end = size - TRAIL_LEN
    if start <= body_end then
      local body = redis.call('GETRANGE', key, start - 1, body_end - 1)
      for j = 1, #body - REC_LEN + 1, REC_LEN do
        list[#list + 1] = {unpack(REC, body, j)}
      end
    end
    list[#list + 1] = {newest, newest_c}
    return list
  end

  local function refund(key, list, cost, ticket)
    if ticket ~= '' then
      local t, c = match(ticket, '^(%d+):(%d+)$')
      t = tonumber(t) or -1
      c = tonumber(c) or 0
      for i = #list, 1, -1 do
        local r = list[i]
        if r[1] == t then
          r[2] = r[2] - min(c, r[2])
          break
        end
        if r[1] < t then break end
      end
    else
      local left = cost
      for i = #list, 1, -1 do
        if left == 0 then break end
        local r = list[i]
        local take = min(left, r[2])
        r[2] = r[2] - take
        left = left - take
      end
    end
    local kept = {}
    for i = 1, #list do
      if list[i][2] > 0 then kept[#kept + 1] = list[i] end
    end
    rewrite(key, kept)
  end

  -- A key that occurs more than once in the batch (a busy client) keeps its trailer in these
  -- tables between its requests (held_sum[key] false: empty), and an admission in a millisecond
  -- that already has a record (every admission after the first in one batch) updates only the
  -- held trailer: the trailer is written once, at the end of the batch. Writes that change the
  -- records (a new key, a new record, a rewrite) go to Redis at once, as for every other key.
  -- Only a batch where some key follows itself is searched for repeats (Lua compares interned
  -- strings at no cost), so distinct keys build no tables.
  local repeated = false
  local held_sum, held_start, held_oldest, held_newest, held_newest_c, held_size
  local held_dirty, held_order

  function sliding_log.begin(keys)
    repeated = repeated_keys(keys)
    if repeated then
      held_sum, held_start, held_oldest, held_newest, held_newest_c, held_size = {}, {}, {}, {}, {}, {}
      held_dirty, held_order = {}, {}
    end
  end

  -- Holds a repeated key's trailer (sum false: empty, or unknown when nil); dirty: not yet in Redis.
  local function hold(key, sum, start, oldest, newest, newest_c, size, dirty)
    if not repeated[key] then return end
    held_sum[key] = sum or false
    held_start[key], held_oldest[key], held_newest[key] = start, oldest, newest
    held_newest_c[key], held_size[key] = newest_c, size
    if dirty and not held_dirty[key] then held_order[#held_order + 1] = key end
    held_dirty[key] = dirty
  end

  -- Records an admission of `need` in the log read as (sum, start, oldest, newest, newest_c,
  -- size) (sum nil: empty); returns the time it was recorded at.
  local function commit(key, need, held, sum, start, oldest, newest, newest_c, size)
    if not sum then
      redis.call('SET', key, pack(TRAIL, need, 1, now_ms, now_ms, need, TRAIL_LEN), 'PXAT',
        int(now_ms + window_ms + offset_ms))
      if repeated then hold(key, need, 1, now_ms, now_ms, need, TRAIL_LEN, false) end
      return now_ms
    end
    if newest >= now_ms then
      -- this millisecond (or a later one, after the clock stepped back) already has a record;
      -- the key's expiry (newest + window) stays as it is
      if repeated and repeated[key] then
        hold(key, held, start, oldest, newest, newest_c + need, size, true)
      else
        redis.call('SETRANGE', key, size - TRAIL_LEN,
          pack(TRAIL, held, start, oldest, newest, newest_c + need, size))
      end
      return newest
    end
    if start - 1 >= size + REC_LEN - TRAIL_LEN - start + 1 and start > 1 then
      -- the skipped records are at least half: rewrite without them
      local list = records_of(key, start, newest, newest_c, size)
      list[#list + 1] = {now_ms, need}
      rewrite(key, list)
      if repeated then
        hold(key, held, 1, list[1][1], now_ms, need, (#list - 1) * REC_LEN + TRAIL_LEN, false)
      end
      return now_ms
    end
    -- the trailer's record joins the others; a new trailer follows it
    redis.call('SETRANGE', key, size - TRAIL_LEN,
      pack(REC_TRAIL, newest, newest_c, held, start, oldest, now_ms, need, size + REC_LEN))
    redis.call('PEXPIREAT', key, int(now_ms + window_ms + offset_ms))
    if repeated then hold(key, held, start, oldest, now_ms, need, size + REC_LEN, false) end
    return now_ms
  end

  -- writes a check ('k') left pending, by slot (made on first use)
  local pending_write

  function sliding_log.commit(slot)
    pending_write[slot]()
  end

  function sliding_log.decide(key, policy_limit, policy_window_ms, burst, cost, op, ticket, slot)
    limit, window_ms, cutoff_ms = policy_limit, policy_window_ms, now_ms - policy_window_ms
    local sum, start, oldest, newest, newest_c, size
    if repeated and held_sum[key] ~= nil then
      if held_sum[key] then
        sum, start, oldest = held_sum[key], held_start[key], held_oldest[key]
        newest, newest_c, size = held_newest[key], held_newest_c[key], held_size[key]
      end
    else
      sum, start, oldest, newest, newest_c, size = open(key)
      if repeated then hold(key, sum, start, oldest, newest, newest_c, size, false) end
    end
    if op == 'r' then
      -- a refund rewrites the log without what has left the window (nothing left: no key)
      if sum then
        refund(key, records_of(key, start, newest, newest_c, size), cost, ticket)
      else
        redis.call('DEL', key)
      end
      -- the rewrite holds everything: read the key afresh next time
      if repeated and repeated[key] then
        held_sum[key] = nil
        held_dirty[key] = false
      end
      return 0, 0, 0, 0, -1
    end
    local held = sum or 0
    if op == 'p' then
      -- a penalty: an admission of `cost` recorded past the limit (the total held stays within
      -- the 4 bytes the trailer gives it)
      local c = min(cost, 4294967295 - held)
      if c > 0 then commit(key, c, held + c, sum, start, oldest, newest, newest_c, size) end
      return 0, 0, 0, 0, -1
    end

    -- check
    local peek = cost == 0
    local need = cost
    if peek then need = 1 end
    local allowed = held + need <= limit
    local retry_after_ms = 0
    if not allowed and sum then
      -- walk the oldest records until enough cost has left the window
      local excess = held + need - limit
      local freed = 0
      walk(key, start, size - TRAIL_LEN, function(t, c)
        freed = freed + c
        if freed >= excess then
          retry_after_ms = t + window_ms - now_ms
          return true
        end
        return false
      end)
      if freed < excess and freed + newest_c >= excess then
        retry_after_ms = newest + window_ms - now_ms
      end
    end

    -- commit
    local newest_ms = newest or now_ms
    local at_ms = -1
    local pending = false
    if allowed and not peek then
      held = held + need
      if op == 'k' then
        -- where commit will record it: this millisecond, or a later newest one
        if not sum or newest < now_ms then newest_ms = now_ms end
        local total = held
        pending_write = pending_write or {}
        pending_write[slot] = function()
          limit, window_ms, cutoff_ms = policy_limit, policy_window_ms, now_ms - policy_window_ms
          commit(key, need, total, sum, start, oldest, newest, newest_c, size)
        end
        pending = true
      else
        newest_ms = commit(key, need, held, sum, start, oldest, newest, newest_c, size)
      end
      at_ms = newest_ms
    end

    local reset_ms = 0
    if held > 0 then reset_ms = newest_ms + window_ms - now_ms end
    if allowed then return 1, max(0, limit - held), reset_ms, 0, at_ms, pending end
    return 0, max(0, limit - held), reset_ms, retry_after_ms, at_ms, false
  end

  function sliding_log.finish()
    if not repeated then return end
    repeated = false
    for i = 1, #held_order do
      local key = held_order[i]
      if held_dirty[key] then
        held_dirty[key] = false -- a key listed twice (dirty again after an append) is written once
        local size = held_size[key]
        redis.call('SETRANGE', key, size - TRAIL_LEN, pack(TRAIL, held_sum[key], held_start[key],
          held_oldest[key], held_newest[key], held_newest_c[key], size))
      end
    end
  end
end
