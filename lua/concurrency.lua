--[[
concurrency.lua: at most `limit` slots in flight per key. Each admission of cost c holds a lease
of c slots until it is released or until `window_ms` after it was taken (a crashed process's
leases expire on their own). `burst` equals limit.

State: KEYS[i] is a sorted set of the slots held: members are lease ids (a lease of cost c holds
`<id>`, then `<id>#2` to `<id>#c`), scored by the time they expire (ms, by Redis time). The key
expires with its last slot (PEXPIREAT); a slot that expired is removed by the next decision on
the key. Lease ids come from the caller (unique per admission, never a timestamp: two admissions
in one millisecond are two leases).

concurrency.decide(key, limit, window_ms, burst, cost, op, ticket, slot, retry_ms) and
concurrency.commit(slot): see gcra.lua, with these differences. `ticket` is the lease,
"<cost>:<id>": the one a consume ('c' or 'k') takes if admitted, or the one a refund ('r')
releases (removing its slots; '' releases nothing: a concurrency policy gives back only a lease
it is shown). The fifth value returned is 1 when the lease was taken, else -1. remaining is the
free slots; reset_ms the time until the last slot held expires; a refusal's retry_after_ms is
the time until enough slots expire on their own, capped at `retry_ms` (the policy's estimate:
a slot frees when a request ends, which nobody can know). A key holding anything else reads as
empty and is replaced by the next admission. A consume whose lease is held already (the same
call run twice: a client re-sent it after losing the reply) is admitted on its own slots; a
set of policies that refuses it then gives that lease back (lib/limits.lua).
Fleet reserve: a ticket may start with "<ceiling>/" (a consume's lease "<ceiling>/<cost>:<id>",
or "<ceiling>/" alone for a peek), the most slots in use, all classes together, that still
admit this request's priority class (the caller computes it from the policy's `reserve`). The
request is admitted when held + need <= ceiling; a refusal where held + need <= limit is the
reserve's (the slots left are kept for higher classes): its fifth value is -2, and its
retry_after_ms the time until held + need <= ceiling by expiries alone (capped at retry_ms).
`remaining` stays the free slots of the key, whatever the class. A release strips the prefix.
]]
local concurrency = { tickets = true }
do
  local CHUNK = 1000 -- members per ZADD or ZREM (Lua's unpack has a stack limit)

  -- The members of lease "<cost>:<id>".
  local function members_of(lease)
    local c, id = match(lease, '^(%d+):(.+)$')
    if not c then return {} end
    local out = { id }
    for i = 2, tonumber(c) do out[i] = id .. '#' .. i end
    return out
  end

  -- How many of `members` are stored with an expiry already past (read only; called only when
  -- the key holds expired slots at all).
  local function stale_of(key, members)
    local stale = 0
    for from = 1, #members, CHUNK do
      local scores = redis.call('ZMSCORE', key, unpack(members, from, min(from + CHUNK - 1, #members)))
      for i = 1, #scores do
        if scores[i] and tonumber(scores[i]) <= now_ms then stale = stale + 1 end
      end
    end
    return stale
  end

  -- Adds the lease's members, expiring at `expires_ms`, and makes the key live until `last_ms`.
  -- Returns how many were not there yet (all, unless the lease is held already).
  -- `gone`: how many expired slots the key still stores (the decision counted around them).
  local function take(key, lease, expires_ms, last_ms, replace, gone)
    if replace then redis.call('DEL', key) end
    -- the ZADD is the first write (a decision writes nothing): Redis checks `maxmemory` only up
    -- to a script's first write, so under OOM the admission fails rather than grows the key
    local members = members_of(lease)
    -- slots of this lease that expired but are still stored (a call re-sent after its lease
    -- expired): the ZADD renews them without counting them as added
    local added = 0
    if gone > 0 then added = stale_of(key, members) end
    local args = {}
    for i = 1, #members do
      args[#args + 1] = expires_ms
      args[#args + 1] = members[i]
      if #args == 2 * CHUNK or i == #members then
        added = added + redis.call('ZADD', key, unpack(args))
        args = {}
      end
    end
    -- the slots that expired go now (the decision counted around them)
    if gone > 0 then redis.call('ZREMRANGEBYSCORE', key, '-inf', now_ms) end
    redis.call('PEXPIREAT', key, int(last_ms + offset_ms))
    return added
  end

  local function release(key, lease)
    local members = members_of(lease)
    for from = 1, #members, CHUNK do
      redis.pcall('ZREM', key, unpack(members, from, min(from + CHUNK - 1, #members)))
    end
  end

  function concurrency.begin() end
  function concurrency.finish() end

  local pending_key, pending_lease, pending_expires, pending_last, pending_replace
  local pending_held, pending_limit, pending_gone

  -- Takes the lease a check left pending. Returns the admission's remaining and reset_ms as
  -- written (a lease held already adds nothing), no delay, and 1: the lease was taken.
  function concurrency.commit(slot)
    local last_ms = pending_last[slot]
    local added = take(pending_key[slot], pending_lease[slot], pending_expires[slot], last_ms,
      pending_replace[slot], pending_gone[slot])
    return pending_limit[slot] - pending_held[slot] - added, last_ms - now_ms, 0, 1
  end

  function concurrency.decide(key, limit, window_ms, burst, cost, op, ticket, slot, retry_ms)
    local ceiling = limit
    local cap, lease = string.match(ticket, '^(%d+)/(.*)$')
    if cap then
      ceiling = min(limit, tonumber(cap))
      ticket = lease
    end
    if op == 'r' then
      if ticket ~= '' then release(key, ticket) end
      return 0, 0, 0, 0, -1
    end
    -- the slots still held, read without writing (expired ones are dropped as a lease is taken):
    -- `gone` of the set's first members expired
    local held, gone = 0, 0
    local replace = false
    local live = redis.pcall('ZCOUNT', key, '(' .. now_ms, '+inf')
    if type(live) == 'number' then
      held = live
      gone = redis.call('ZCARD', key) - held
    else
      replace = true -- another type: empty, replaced by the next admission
    end
    local last_ms = now_ms
    if held > 0 then last_ms = tonumber(redis.call('ZRANGE', key, -1, -1, 'WITHSCORES')[2]) end

    local peek = cost == 0
    local need = cost
    if peek then need = 1 end
    local allowed = held + need <= ceiling
    if not allowed and not peek and ticket ~= '' and held >= need and held <= ceiling then
      -- the lease is held already: this very consume, run again (a client that re-sent the call
      -- after losing its reply, as ioredis does when it reconnects). Its slots are in `held`:
      -- it is admitted on them, not refused for them (taking them again adds nothing)
      local id = match(ticket, '^%d+:(.+)$')
      local score = id and redis.call('ZSCORE', key, id)
      if score and tonumber(score) > now_ms then allowed = true end
    end
    if not allowed then
      -- the slot whose expiry makes room for `need`: the (held + need - ceiling)-th earliest
      -- (none when the class's ceiling is below `need`: expiries alone never make room)
      local retry_after_ms = retry_ms
      if held + need - ceiling <= held then
        local at = redis.call('ZRANGE', key, gone + held + need - ceiling - 1,
          gone + held + need - ceiling - 1, 'WITHSCORES')
        retry_after_ms = min(retry_ms, tonumber(at[2]) - now_ms)
      end
      local reset_ms = 0
      if held > 0 then reset_ms = last_ms - now_ms end
      local why = -1
      if held + need <= limit then why = -2 end
      return 0, max(0, limit - held), reset_ms, retry_after_ms, why, false, 0
    end
    local taken = -1
    local pending = false
    if not peek and ticket ~= '' then
      local expires_ms = now_ms + window_ms
      if expires_ms > last_ms then last_ms = expires_ms end
      if op == 'k' then
        if not pending_key then
          pending_key, pending_lease, pending_expires, pending_last, pending_replace = {}, {}, {}, {}, {}
          pending_held, pending_limit, pending_gone = {}, {}, {}
        end
        pending_key[slot], pending_lease[slot], pending_expires[slot] = key, ticket, expires_ms
        pending_last[slot], pending_replace[slot] = last_ms, replace
        pending_held[slot], pending_limit[slot], pending_gone[slot] = held, limit, gone
        pending = true
        held = held + need
      else
        held = held + take(key, ticket, expires_ms, last_ms, replace, gone)
      end
      taken = 1
    end
    local reset_ms = 0
    if held > 0 then reset_ms = last_ms - now_ms end
    return 1, limit - held, reset_ms, 0, taken, pending, 0
  end
end
