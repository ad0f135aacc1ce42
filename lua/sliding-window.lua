--[[
sliding-window.lua: two-counter weighted estimate. Windows are aligned to multiples of
`window_ms` since the epoch (Redis time). A request is admitted when
  previous * (window_ms - elapsed) + (current + cost) * window_ms <= limit * window_ms
(the usual estimate previous * overlap + current + cost <= limit, on integers). `burst` is
unused (equals limit for this algorithm).

State: KEYS[i] holds the counters, a string "<start_ms> <current> <previous>", where start_ms is
the aligned start of the window `current` belongs to, with a PXAT expiry at the time the state
is empty.

sliding_window.decide(key, limit, window_ms, burst, cost, op, ticket, slot) and
sliding_window.commit(slot): see gcra.lua (a penalty, 'p', adds `cost` to the current count).
]]
local sliding_window = { tickets = false }
do
  -- the smallest wait after which `need` passes, given no other traffic
  local function wait_ms(limit, w, elapsed, previous, current, need)
    -- later in this window: previous * (w - e) <= (limit - current - need) * w
    local room = limit - current - need
    if room >= 0 and previous > 0 then
      local most = floor(room * w / previous)
      if most >= 1 then return w - most - elapsed end
    end
    -- in the next window `current` becomes the previous count and the new count starts at 0
    if current == 0 then return w - elapsed end
    local most = floor((limit - need) * w / current)
    if most >= 1 then return w - elapsed + max(0, w - most) end
    -- the window after that: both counts are gone
    return 2 * w - elapsed
  end

  -- A key that occurs more than once in the batch is read once and written once, at the end of
  -- the batch: its state is held in these tables meanwhile (held_start[key] false: empty;
  -- held_until[key] the expiry of a write to make, false to delete the key, nil if there is
  -- none). Every other key is read and written in place.
  local repeated = false
  local held_start, held_count, held_previous, held_until, held_order
  -- writes a check ('k') left pending, by slot (made on first use)
  local pending_key, pending_start, pending_count, pending_previous, pending_window

  function sliding_window.begin(keys)
    repeated = repeated_keys(keys)
    if repeated then
      held_start, held_count, held_previous, held_until, held_order = {}, {}, {}, {}, {}
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
      redis.call('SET', key, format('%d %d %d', state_start, count, previous), 'PXAT',
        int(expires_ms + offset_ms))
    else
      redis.call('DEL', key)
    end
  end

  function sliding_window.finish()
    if not repeated then return end
    repeated = false -- now write in place
    for i = 1, #held_order do
      local key = held_order[i]
      write(key, held_start[key], held_count[key], held_previous[key], held_until[key])
    end
  end

  function sliding_window.commit(slot)
    local start_ms = pending_start[slot]
    write(pending_key[slot], start_ms, pending_count[slot], pending_previous[slot],
      start_ms + 2 * pending_window[slot])
  end

  function sliding_window.decide(key, limit, w, burst, cost, op, ticket, slot)
    local start_ms = now_ms - (now_ms % w)
    local state_start, state_count, state_previous = false, 0, 0
    if repeated and held_start[key] ~= nil then
      state_start, state_count, state_previous = held_start[key], held_count[key], held_previous[key]
    else
      -- a key of another type (an error reply) reads as empty, like a value of another shape
      local raw = redis.pcall('GET', key)
      local a, b, c
      if type(raw) == 'string' then a, b, c = match(raw, '^(%d+) (%d+) (%d+)$') end
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
        count = max(0, state_count - cost)
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
      return 0, 0, 0, 0, -1
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
    if op == 'p' then
      -- a penalty: counted in the current window past the limit
      write(key, start_ms, current + cost, previous, start_ms + 2 * w)
      return 0, 0, 0, 0, -1
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
    local pending = false
    if allowed and not peek then
      if op == 'k' then
        if not pending_key then
          pending_key, pending_start, pending_count, pending_previous, pending_window = {}, {}, {}, {}, {}
        end
        pending_key[slot], pending_start[slot], pending_count[slot] = key, start_ms, current
        pending_previous[slot], pending_window[slot] = previous, w
        pending = true
      else
        write(key, start_ms, current, previous, start_ms + 2 * w)
      end
    end

    local used = previous * (w - elapsed) + current * w
    local reset_ms = 0
    if current > 0 then
      reset_ms = window_left_ms + w
    elseif previous > 0 then
      reset_ms = window_left_ms
    end
    local remaining = max(0, floor((limit * w - used) / w))
    if allowed then return 1, remaining, reset_ms, 0, -1, pending end
    return 0, remaining, reset_ms, retry_after_ms, -1, false
  end
end
