--[[
lib/one-policy.lua: the driver of a one-policy script. Decides KEYS[1..n], one request each, in
order, with `algorithm` (the module the embed step names), under one policy for the batch:
ARGV[3]    limit (integer >= 1)
ARGV[4]    window_ms (integer >= 1)
ARGV[5]    capacity: burst (integer >= 1), and what the module needs besides (lib/capacity.lua)
ARGV[5+i]  request i: its cost (integer >= 0; 0 peeks), or minus the cost to refund; a module
           with tickets (sliding-log, concurrency) takes two per request, the cost then the
           ticket (a refund's; a concurrency consume's new lease). A batch of consumes of cost 1
           of a module without tickets sends none of these at all.
Reply, per consume in order (a refund adds nothing): lib/reply.lua's encoding, then, for a
module with tickets, its fifth value (sliding-log: the time its admission was recorded at;
concurrency: 1 if the lease was taken; -1 if none).
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
local reply = {}
local n = 0
for i = 1, #KEYS do
  local cost = 1
  local ticket = ''
  if not plain then
    local a = 5 + per * (i - 1)
    cost = tonumber(ARGV[a + 1])
    if tickets then ticket = ARGV[a + 2] end
  end
  local op = 'c'
  if cost < 0 then
    op = 'r'
    cost = -cost
  end
  local allowed, remaining, reset_ms, retry_after_ms, at_ms, _, delay_ms =
    decide(KEYS[i], limit, window_ms, burst, cost, op, ticket, 1, extra_a, extra_b)
  if op == 'c' then
    n = put_decision(reply, n, allowed, remaining, reset_ms, retry_after_ms, delay_ms)
    if tickets then
      n = n + 1
      reply[n] = at_ms
    end
  end
end
algorithm.finish()
return reply
