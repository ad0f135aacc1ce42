--[[
lib/one-policy.lua: the driver of a one-policy script. Decides KEYS[1..n], one request each, in
order, with `algorithm` (the module the embed step names), under one policy for the batch:
ARGV[3]    limit (integer >= 1)
ARGV[4]    window_ms (integer >= 1)
ARGV[5]    capacity: burst (integer >= 1), and what the module needs besides (lib/capacity.lua)
ARGV[5+i]  request i: its cost (integer >= 0; 0 peeks), minus the cost to refund, or 'p<cost>' to
           penalize (count the cost past the limit, then peek; not for concurrency); a module
           with tickets (sliding-log, concurrency, gcra) takes two per request, the cost then
           the ticket (a refund's; a concurrency consume's new lease; a waiting gcra
           consume's own wait cap, in whole ms; '' for none). A batch of
           consumes of cost 1 of a module without leases sends none of these at all.
A key with a block (lib/block.lua) is refused and counts nothing (a penalty still counts).
Reply, per consume or penalty in order (a refund adds nothing): lib/reply.lua's encoding (with
a gcra reservation's ticket), then, for a module whose tickets are `true`, its fifth value
(sliding-log: the time its admission was recorded at; concurrency: 1 if the lease was taken; -1
if none).
A module may define plain(limit, window_ms, burst, a) (gcra.lua and fixed-window.lua do): the
batch decided on a faster path of its own when every request is a consume of cost 1 and no key
is blocked. It returns the reply, or nil for a batch it leaves to the loop below.
]]
local limit = tonumber(ARGV[3])
local window_ms = tonumber(ARGV[4])
local burst, extra_a, extra_b = capacity_of(ARGV[5])
local decide = algorithm.decide
local tickets = algorithm.tickets
local per = 1
if tickets then per = 2 end
local plain = #ARGV == 5
algorithm.begin(KEYS, limit, window_ms)
local blocks = any_blocked(KEYS, 1)
if plain and not blocks and algorithm.plain then
  local reply = algorithm.plain(limit, window_ms, burst, extra_a)
  if reply then return reply end
end
local reply = {}
local n = 0
for i = 1, #KEYS do
  local key = KEYS[i]
  local cost = 1
  local ticket = ''
  local op = 'c'
  if not plain then
    local a = 5 + per * (i - 1)
    local given = ARGV[a + 1]
    cost = tonumber(given)
    -- 'p<cost>': a penalty (counted past the limit), then a peek
    if not cost then
      op = 'p'
      cost = tonumber(string.sub(given, 2))
    end
    if tickets then ticket = ARGV[a + 2] end
  end
  if cost < 0 then
    decide(key, limit, window_ms, burst, -cost, 'r', ticket, 1, extra_a, extra_b)
  else
    if op == 'p' then
      decide(key, limit, window_ms, burst, cost, 'p', '', 1, extra_a, extra_b)
      cost = 0
    end
    local left_ms = 0
    if blocks then left_ms = block_left(key) end
    if left_ms > 0 then
      -- blocked: nothing is counted; the policy says what it holds now
      cost = 0
      ticket = ''
    end
    local allowed, remaining, reset_ms, retry_after_ms, at_ms, _, delay_ms =
      decide(key, limit, window_ms, burst, cost, 'c', ticket, 1, extra_a, extra_b)
    if left_ms > 0 then
      allowed, remaining, reset_ms, retry_after_ms =
        blocked_decision(remaining, reset_ms, retry_after_ms, left_ms)
      delay_ms = 0
    end
    if allowed == 1 and (not delay_ms or delay_ms == 0) then
      -- the usual decision, admitted at once, without a call (lib/reply.lua's first shape)
      n = n + 2
      reply[n - 1], reply[n] = remaining, reset_ms
    else
      n = put_decision(reply, n, allowed, remaining, reset_ms, retry_after_ms, delay_ms, at_ms)
    end
    if tickets == true then
      n = n + 1
      reply[n] = at_ms
    end
  end
end
algorithm.finish()
return reply
