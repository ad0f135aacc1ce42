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

  -- The one-policy script's commonest batch (lib/one-policy.lua asks first): every request a
  -- consume of cost 1, no key blocked, none repeated back to back. It makes decide's decisions,
  -- replies and writes (plain-batch.test.ts runs both on the same states) in one loop, with no
  -- Lua function call per request. A state that needs the general rules (a window a policy
  -- change shortened, a value that is not a whole count) is decided by decide. Returns the
  -- reply, or nil for a batch it does not take.
  function fixed_window.plain(limit, window_ms)
    if repeated then return nil end
    local now, off = now_ms, offset_ms
    local get, call = redis.pcall, redis.call
    local reply, n = {}, 0
    local ahead_of = read_ahead()
    for i = 1, #KEYS do
      local key = KEYS[i]
      local raw
      if ahead_of then raw = ahead_of[i] else raw = get('GET', key) end
      -- the open window's count and end, read as decide does (`live`: Redis holds it)
      local count, end_ms, live, usual = 0, now + window_ms, false, true
      if type(raw) == 'string' then
        local c = tonumber(raw)
        local expires_ms = call('PEXPIRETIME', key) - off
        if c and now < expires_ms then
          if expires_ms > end_ms or c < 0 or c % 1 ~= 0 then
            usual = false
          else
            count, end_ms, live = c, expires_ms, true
          end
        end
      end
      if not usual then
        n = put_consume(reply, n, fixed_window.decide, key, limit, window_ms, limit)
      elseif count < limit then
        if live then
          call('INCR', key)
        else
          call('SET', key, '1', 'PXAT', format('%d', end_ms + off))
        end
        reply[n + 1], reply[n + 2] = limit - count - 1, end_ms - now
        n = n + 2
      else
        local left_ms = end_ms - now
        reply[n + 1], reply[n + 2], reply[n + 3] = -1, left_ms, left_ms
        n = n + 3
      end
    end
    return reply
  end
end
