--[[
fixed-window.lua: at most `limit` cost per window; a key's window opens at its first admitted
request and lasts `window_ms` (a policy change to a shorter window ends an open one no later
than the new length from the first request that sees the change, which stores that end even
when it is refused or peeks; a longer one applies from the next window). `burst` is unused
(equals limit for this algorithm).

State: KEYS[i] is the counter: its integer value is the count, its expiry (PEXPIRETIME, Redis
7.0+) the window's end.

fixed_window.decide(key, limit, window_ms, burst, cost, op, ticket, slot) and
fixed_window.commit(slot): see gcra.lua (a penalty, 'p', adds `cost` to the window's count).
]]
local fixed_window = { tickets = false }
do
  -- A key that occurs more than once in the batch is read once and written once, at the end of
  -- the batch: meanwhile its window (count, end; count 0: none open) is held in these tables,
  -- next to what Redis has (its count and end, false when it holds no open window) and whether
  -- it is to be written. Every other key is read and written in place.
  local repeated = false
  local held_count, held_end, stored_count, stored_end, held_dirty, held_order
  -- writes a check ('k') left pending, by slot (made on first use)
  local pending_key, pending_count, pending_end, pending_was_count, pending_was_end

  function fixed_window.begin(keys)
    repeated = repeated_keys(keys)
    if repeated then
      held_count, held_end, stored_count, stored_end, held_dirty, held_order = {}, {}, {}, {}, {}, {}
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
      if count ~= was_count then redis.call('INCRBY', key, int(count - was_count)) end
    else
      -- a new window, or one a policy change shortened
      redis.call('SET', key, int(count), 'PXAT', int(end_ms + offset_ms))
    end
  end

  function fixed_window.finish()
    if not repeated then return end
    repeated = false -- now write in place
    for i = 1, #held_order do
      local key = held_order[i]
      write(key, held_count[key], held_end[key], stored_count[key], stored_end[key])
    end
  end

  function fixed_window.commit(slot)
    write(pending_key[slot], pending_count[slot], pending_end[slot], pending_was_count[slot],
      pending_was_end[slot])
  end

  function fixed_window.decide(key, limit, window_ms, burst, cost, op, ticket, slot)
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
        local e = min(expires_ms, end_ms)
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

    if op == 'p' then
      -- a penalty: counted in the open window (or a new one) past the limit
      write(key, count + cost, end_ms, was_count, was_end_ms)
      return 0, 0, 0, 0, -1
    end
    if op == 'r' then
      count = max(0, count - cost)
      write(key, count, end_ms, was_count, was_end_ms)
      return 0, 0, 0, 0, -1
    end

    local peek = cost == 0
    local need = cost
    if peek then need = 1 end
    local allowed = count + need <= limit

    -- commit
    local admitted = allowed and not peek
    local pending = false
    if admitted then count = count + need end
    if admitted and op == 'k' then
      if not pending_key then
        pending_key, pending_count, pending_end, pending_was_count, pending_was_end = {}, {}, {}, {}, {}
      end
      pending_key[slot], pending_count[slot], pending_end[slot] = key, count, end_ms
      pending_was_count[slot], pending_was_end[slot] = was_count, was_end_ms
      pending = true
    elseif admitted or (was_end_ms and end_ms < was_end_ms) then
      -- a shortened window keeps the end its first request saw, refused or peeking:
      -- recomputed from each later request, it would never end
      write(key, count, end_ms, was_count, was_end_ms)
    end

    local reset_ms = 0
    if count > 0 then reset_ms = window_left_ms end
    if allowed then return 1, max(0, limit - count), reset_ms, 0, -1, pending end
    return 0, max(0, limit - count), reset_ms, window_left_ms, -1, false
  end
end
