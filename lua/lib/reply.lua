--[[
lib/reply.lua: one consume's decision in a reply: allowed, 2 integers `remaining, reset_ms`;
allowed after a wait (a reserved slot), 6 integers `remaining, -1 - delay_ms, reset_ms`, then
the reservation's ticket (gcra.lua: `tat_ms, tat_frac, moved`; `-1, -1, -1` for a peek, which
reserves nothing); refused, 3 integers `-1 - remaining, reset_ms, retry_after_ms`. Returns the
reply's new length.
]]
local function put_decision(reply, n, allowed, remaining, reset_ms, retry_after_ms, delay_ms, ticket)
  if allowed == 1 and delay_ms and delay_ms > 0 then
    reply[n + 1] = remaining
    reply[n + 2] = -1 - delay_ms
    reply[n + 3] = reset_ms
    if type(ticket) == 'table' then
      reply[n + 4], reply[n + 5], reply[n + 6] = ticket[1], ticket[2], ticket[3]
    else
      reply[n + 4], reply[n + 5], reply[n + 6] = -1, -1, -1
    end
    return n + 6
  end
  if allowed == 1 then
    reply[n + 1] = remaining
    reply[n + 2] = reset_ms
    return n + 2
  end
  reply[n + 1] = -1 - remaining
  reply[n + 2] = reset_ms
  reply[n + 3] = retry_after_ms
  return n + 3
end

-- A consume of cost 1 that a module's plain path (lib/one-policy.lua) leaves to the general
-- rules: decided by `decide` (the module's), its decision put in the reply. Returns the reply's
-- new length.
local function put_consume(reply, n, decide, key, limit, window_ms, burst)
  local allowed, remaining, reset_ms, retry_after_ms =
    decide(key, limit, window_ms, burst, 1, 'c', '', 1)
  return put_decision(reply, n, allowed, remaining, reset_ms, retry_after_ms, 0, -1)
end
