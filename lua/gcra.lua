--[[
gcra.lua: the generic cell rate algorithm. Emission interval T = window_ms / limit, burst
tolerance burst x T. A request of cost c moves the theoretical arrival time (TAT) to
max(TAT, now) + c x T and is admitted when that is at most now + burst x T.
The TAT is an exact rational, ms + frac / den with 0 <= frac < den and den = limit when
written, so adding c x T adds exactly c x window_ms to frac. Distances are in units of 1/limit ms.
token-bucket and leaky-bucket make exactly these decisions and run this module.

State: KEYS[i] holds the TAT in the key's expiry (PEXPIRETIME, Redis 7.0+): '0' when frac is 0
(the TAT is the expiry), else "<frac> <den>" (the TAT is the expiry - 1 ms + frac / den).

gcra.decide(key, limit, window_ms, burst, cost, op, ticket, slot, after, wait) decides one
request (lib/one-policy.lua and lib/limits.lua call it): cost is an integer >= 0 (0 peeks: decides
for cost 1, writes nothing); op is 'c' (consume), 'r' (refund `cost`, never earlier than now),
'p' (penalty: count `cost` past the limit, at most one window past a full bucket; returns nothing) or
'k' (check: decide as a consume, but keep the write pending under `slot` instead of making it;
gcra.commit(slot, hold) makes it). Returns allowed (1 or 0), remaining, reset_ms,
retry_after_ms, a reservation's ticket (below; -1 for anything else), for 'k' whether a write is
pending, and delay_ms.

Waiting (a limiter's maxDelay or delayAfter; `after` and `wait` nil otherwise): the first
`after` of a burst pass at once; a request beyond them whose wait, delay_ms = ceil((TAT' - now -
after x T) / 1 ms), fits in `wait` (units of 1/limit ms) is admitted with that delay, reserving
its slot: the TAT becomes max(TAT, now + the wait) + c x T, as if it were admitted when its wait
ends (the exact wait, in units; delay_ms rounds it up to whole ms for the caller). Beyond `wait` it is refused, retry_after_ms being the time until it would pass without
waiting. A consume's `ticket`, when not '', is its own wait cap in whole ms (a caller that waits
less than the policy allows): the request is refused, reserving nothing, beyond the lesser of
the two. commit(slot, hold) reserves at `hold` ms instead when several policies wait together
(hold: the longest of their delays).

Refunds. A reservation comes with a ticket, {tat_ms, tat_frac, moved}: the TAT it left (Redis
time) and how far it moved it, in units; the caller passes it back with the request's cost as
"<limit>:<tat_ms>:<tat_frac>:<moved>:<cost>". Its refund gives back all it moved (its whole cost
refunded) or that part of its cost, only while it is the tail of the queue, the TAT still the
one it left; otherwise nothing: a later reservation
holds the slot the TAT would move back into, and the next request would be given it too. A
refund without a ticket (of an admission that did not wait) gives back cost x T, unless someone
waits (a waiting policy's TAT more than `after` x T ahead), for the same reason. So while a
reservation waits, the TAT moves back only by a tail's refund, never below what it was before
that tail: a waiting reservation's ticket never matches a later one's TAT.
]]
local gcra = { tickets = 'reserved' }
do
  -- A key that occurs more than once in the batch is read once and written once, at the end of
  -- the batch: meanwhile held_ahead[key] holds its TAT as distance from now in units of 1/limit
  -- ms (0 or less: empty), held_raw[key] the value Redis has and held_dirty[key] whether it is to
  -- be written. Every other key is read and written in place.
  local repeated = false
  local held_ahead, held_raw, held_dirty, held_order, held_limit
  -- writes a check ('k') left pending, by slot (made on first use)
  local pending_key, pending_limit, pending_ahead, pending_raw, pending_before, pending_step
  local pending_w, pending_tolerance, pending_delay

  -- Called once per batch of one policy (lib/one-policy.lua), before its decisions.
  function gcra.begin(keys, limit)
    held_limit = limit
    repeated = repeated_keys(keys)
    if repeated then held_ahead, held_raw, held_dirty, held_order = {}, {}, {}, {} end
  end

  -- The TAT lives in the key's expiry: the key expires exactly when the state is empty again.
  -- A whole-ms TAT expires at it and holds '0' (a shared integer: no memory for the value); a
  -- fractional one expires 1 ms after its whole part and holds "<frac> <den>". A TAT not after
  -- now (ahead <= 0) deletes the key. `raw` is the value the key holds.
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
    local frac = ahead % limit
    local ms = now_ms + (ahead - frac) / limit
    if frac == 0 then
      if raw == '0' then
        redis.call('PEXPIREAT', key, int(ms + offset_ms))
      else
        redis.call('SET', key, '0', 'PXAT', int(ms + offset_ms))
      end
    else
      redis.call('SET', key, format('%d %d', frac, limit), 'PXAT', int(ms + 1 + offset_ms))
    end
  end

  function gcra.finish()
    if not repeated then return end
    repeated = false -- now write in place
    for i = 1, #held_order do
      local key = held_order[i]
      write(key, held_limit, held_ahead[key], held_raw[key])
    end
  end

  -- A reservation's ticket: the TAT it left, as whole ms (Redis time) and the fraction in units
  -- of 1/limit ms, and how far it moved the TAT, in those units (lib/reply.lua sends it).
  local function ticket_of(limit, ahead, moved)
    return { now_ms + floor(ahead / limit), ahead % limit, moved }
  end

  -- What a refund of `units` (its cost x T) gives back, the TAT `ahead` units from now. With a
  -- reservation's ticket, "<limit>:<ms>:<frac>:<moved>:<cost>": only while that reservation is
  -- still the tail of the queue (the TAT is what it left: nobody reserved after it); refunding
  -- its whole cost, all it moved the TAT (its cost and the gap its wait left before it: a
  -- longer wait of another policy decided with it, or a cost above `after`), so the queue ends
  -- where it did before it; a part of its cost, that part. Any other reservation's slot stays
  -- spent, since moving the TAT back would give the next request a slot a waiter holds. Without
  -- one (an admission that did not wait): its cost, unless someone waits (a waiting policy's
  -- TAT past what passes at once), for the same reason.
  local function refundable(ticket, limit, tat_ms, tat_frac, ahead, units, after, w)
    if ahead <= 0 then return 0 end
    if ticket and ticket ~= '' then
      local l, ms, frac, moved, cost = match(ticket, '^(%d+):(%d+):(%d+):(%d+):(%d+)$')
      if not l or tonumber(l) ~= limit or tonumber(ms) ~= tat_ms or tonumber(frac) ~= tat_frac then
        return 0
      end
      if units >= tonumber(cost) * w then return tonumber(moved) end
      return min(units, tonumber(moved))
    end
    if after and ahead > after * w then return 0 end
    return units
  end

  -- Makes the write a check left pending; with `hold` longer than its own delay (several
  -- policies that wait, reserving together), reserves at `hold` ms from now instead. Returns the
  -- remaining, reset_ms and delay_ms of the admission as written, and a reservation's ticket.
  function gcra.commit(slot, hold)
    local limit, ahead = pending_limit[slot], pending_ahead[slot]
    local delay_ms = pending_delay[slot]
    if hold and hold > delay_ms then
      ahead = max(pending_before[slot], hold * limit) + pending_step[slot]
      delay_ms = hold
    end
    write(pending_key[slot], limit, ahead, pending_raw[slot])
    local w = pending_w[slot]
    local ticket = -1
    if delay_ms > 0 then ticket = ticket_of(limit, ahead, ahead - pending_before[slot]) end
    return max(0, floor((pending_tolerance[slot] - ahead) / w)), ceil(ahead / limit),
      delay_ms, ticket
  end

  function gcra.decide(key, limit, w, burst, cost, op, ticket, slot, after, wait)
    local tolerance = burst * w
    -- the TAT, never earlier than now, in the current denominator
    local tat_ms = now_ms
    local tat_frac = 0
    local raw
    local held = repeated and held_ahead[key]
    if held then
      raw = held_raw[key]
      if held > 0 then
        tat_ms = now_ms + floor(held / limit)
        tat_frac = held % limit
      end
    else
      raw = redis.pcall('GET', key)
      -- a key of another type (an error reply) reads as empty, like a value of another shape
      -- (the usual value, '0', is told without a C call)
      if raw ~= '0' and type(raw) ~= 'string' then raw = false end
      if raw then
        local expires_ms = redis.call('PEXPIRETIME', key) - offset_ms
        local ms = expires_ms
        local frac = 0
        local den = limit
        if raw ~= '0' then
          local b, c = match(raw, '^(%d+) (%d+)$')
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
            frac = ceil(frac * limit / den)
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
      local ahead = (tat_ms - now_ms) * limit + tat_frac
      local back = refundable(ticket, limit, tat_ms, tat_frac, ahead, cost * w, after, w)
      if back > 0 then write(key, limit, ahead - back, raw) end
      return 0, 0, 0, 0, -1
    end
    if op == 'p' then
      -- a penalty: max(TAT, now) + cost x T without the burst check, but never more than one
      -- window past a full bucket (nor earlier than the TAT already is)
      local before = (tat_ms - now_ms) * limit + tat_frac
      local ahead = before + cost * w
      local most = tolerance + limit * w
      if ahead > most then ahead = max(before, most) end
      write(key, limit, ahead, raw)
      return 0, 0, 0, 0, -1
    end

    -- check
    local peek = cost == 0
    local need = cost
    if peek then need = 1 end
    -- the TAT after the request, in units from now (TAT + need x T: exact in units)
    local before = (tat_ms - now_ms) * limit + tat_frac
    local ahead = before + need * w
    -- how far the request is past what passes at once, in units; its wait in whole ms
    local late = ahead - tolerance
    local allowed = late <= 0
    if wait then
      late = ahead - after * w
      -- a consume's ticket: its own wait cap in whole ms, when it waits less than the policy
      local most = wait
      if ticket ~= '' then
        local cap = tonumber(ticket) * limit
        if cap < most then most = cap end
      end
      allowed = late <= most
    end
    local delay_ms = 0
    if late > 0 then delay_ms = ceil(late / limit) end

    -- commit
    local used = before
    local pending = false
    local ticket_out = -1
    if allowed and not peek then
      used = ahead
      -- admitted when its wait ends: `late` units from now, exactly (delay_ms is rounded up)
      if wait and delay_ms > 0 then used = max(before, late) + need * w end
      if op == 'k' then
        if not pending_key then
          pending_key, pending_limit, pending_ahead, pending_raw = {}, {}, {}, {}
          pending_before, pending_step, pending_w, pending_tolerance, pending_delay = {}, {}, {}, {}, {}
        end
        pending_key[slot], pending_limit[slot], pending_ahead[slot], pending_raw[slot] = key, limit, used, raw
        pending_before[slot], pending_step[slot] = before, need * w
        pending_w[slot], pending_tolerance[slot], pending_delay[slot] = w, tolerance, delay_ms
        pending = true
      else
        write(key, limit, used, raw)
        if wait and delay_ms > 0 then ticket_out = ticket_of(limit, used, used - before) end
      end
    end

    -- floor and ceil of quotients of integers (used >= 0), without a C call each
    local remaining, room = 0, tolerance - used
    if room > 0 then remaining = (room - room % w) / w end
    local reset_ms = used % limit
    if reset_ms > 0 then reset_ms = limit - reset_ms end
    reset_ms = (used + reset_ms) / limit
    if allowed then return 1, remaining, reset_ms, 0, ticket_out, pending, delay_ms end
    return 0, remaining, reset_ms, delay_ms, -1, false, 0
  end

  -- The one-policy script's commonest batch (lib/one-policy.lua asks first): every request a
  -- consume of cost 1, no key blocked, none repeated, a policy that does not wait (`after`
  -- nil). It makes gcra.decide's decisions, replies and writes (plain-batch.test.ts runs both
  -- on the same states) in one loop: no Lua function call per request (each costs Redis ~500
  -- instructions), the TAT read and written inline. A state that needs the general rules (a
  -- fraction written under another limit, a value of another shape or type) is decided by
  -- gcra.decide. Returns the reply, or nil for a batch it does not take.
  function gcra.plain(limit, w, burst, after)
    if repeated or after then return nil end
    local now, off, tolerance = now_ms, offset_ms, burst * w
    local get, call = redis.pcall, redis.call
    local reply, n = {}, 0
    local ahead_of = read_ahead()
    for i = 1, #KEYS do
      local key = KEYS[i]
      local raw
      if ahead_of then raw = ahead_of[i] else raw = get('GET', key) end
      -- the TAT as distance from now in units of 1/limit ms (0: empty), read as gcra.decide does
      local before, usual = 0, true
      if raw == '0' then
        local ms = call('PEXPIRETIME', key) - off
        if ms >= now then before = (ms - now) * limit end
      elseif raw then
        local b, c
        if type(raw) == 'string' then b, c = match(raw, '^(%d+) (%d+)$') end
        if b and tonumber(c) == limit then
          local ms = call('PEXPIRETIME', key) - off - 1
          if ms >= now then before = (ms - now) * limit + tonumber(b) end
        else
          usual = false
        end
      end
      if not usual then
        n = put_consume(reply, n, gcra.decide, key, limit, w, burst)
      else
        local ahead = before + w
        if ahead <= tolerance then
          -- admitted: write's steps, inline
          local frac = ahead % limit
          local ms = now + (ahead - frac) / limit
          if frac == 0 then
            if raw == '0' then
              call('PEXPIREAT', key, format('%d', ms + off))
            else
              call('SET', key, '0', 'PXAT', format('%d', ms + off))
            end
          else
            call('SET', key, format('%d %d', frac, limit), 'PXAT', format('%d', ms + 1 + off))
          end
          local remaining, room = 0, tolerance - ahead
          if room > 0 then remaining = (room - room % w) / w end
          if frac > 0 then ms = ms + 1 end
          reply[n + 1], reply[n + 2] = remaining, ms - now
          n = n + 2
        else
          local remaining, room = 0, tolerance - before
          if room > 0 then remaining = (room - room % w) / w end
          local reset = before % limit
          if reset > 0 then reset = limit - reset end
          reply[n + 1], reply[n + 2], reply[n + 3] =
            -1 - remaining, (before + reset) / limit, ceil((ahead - tolerance) / limit)
          n = n + 3
        end
      end
    end
    return reply
  end
end
