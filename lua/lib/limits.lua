--[[
lib/limits.lua: the driver of the several-policies script. Decides n requests in order, each
under the same P policies (a limiter's `limits`), all or nothing: a request is admitted only if
every policy admits it, and then every policy counts it; if any refuses, none counts it.
KEYS[(i - 1) * P + p]   request i's state key under policy p (all of one request's keys share
                        the user key's hash tag: one Cluster slot)
ARGV[3]                 P, the policies per request (2 to 8)
ARGV[3 + 4(p-1) + 1..4] policy p: its state module ('fw', 'sw', 'sl', 'gc' or 'cc'), limit,
                        window_ms and capacity (lib/capacity.lua)
then for request i, with a = 3 + 4P + 2(i - 1):
ARGV[a + 1]             its cost (integer >= 0; 0 peeks), minus the cost to refund, 'l' to
                        release its leases (the concurrency policies' only), or 'p<cost>' to
                        penalize every policy but concurrency (count the cost past the limit),
                        then peek
ARGV[a + 2]             its tickets: P entries joined by ',': a refund's or release's (the
                        sliding-log policies' "<time>:<cost>", the concurrency policies'
                        leases, a gcra reservation's "<limit>:<ms>:<frac>:<moved>"), a
                        consume's new leases (concurrency policies) and own wait cap in
                        whole ms (waiting gcra policies), '' for the others (a
                        batch of consumes of cost 1 without concurrency policies sends
                        neither for any request)
A key whose first policy's state key has a block (lib/block.lua) is refused by every policy
and counts nothing (a penalty still counts).
Reply, per consume or penalty in order (refunds and releases add nothing), per policy in order:
lib/reply.lua's encoding of that policy's decision (with a gcra reservation's ticket), then, for
a policy whose module's tickets are `true`, its fifth value (sliding-log: the time its admission
was recorded at; concurrency: 1 if its lease was taken; -1 if none). After a refusal each policy reports what it holds now: nothing was
counted. Policies that wait (gcra's `wait`) and admit all reserve at the longest of their delays.
]]
local modules = { fw = fixed_window, sw = sliding_window, sl = sliding_log, gc = gcra, cc = concurrency }
local policies = tonumber(ARGV[3])
local decide, commit, tickets, leases, limit, window_ms, burst, extra_a, extra_b =
  {}, {}, {}, {}, {}, {}, {}, {}, {}
for p = 1, policies do
  local b = 3 + 4 * (p - 1)
  local module = modules[ARGV[b + 1]]
  decide[p] = module.decide
  commit[p] = module.commit
  tickets[p] = module.tickets
  leases[p] = module == concurrency
  limit[p] = tonumber(ARGV[b + 2])
  window_ms[p] = tonumber(ARGV[b + 3])
  burst[p], extra_a[p], extra_b[p] = capacity_of(ARGV[b + 4])
end
local base = 3 + 4 * policies
local plain = #ARGV == base
-- When every other policy admits, one policy can decide as a consume ('c', writing what it
-- admits at once) instead of a check whose write waits for a commit: the same decision and the
-- same state, without the pending write's bookkeeping (callgrind: ~6,000 instructions per
-- decision for gcra, a fifth of a one-policy decision). `direct` is that policy, checked after
-- all the others (each policy reads only its own key, so the order changes nothing else): a
-- gcra one if any, else fixed-window or sliding-window (which write on 'c' exactly what 'k' then
-- commit would); none when a policy waits (waiting ones all reserve at the longest wait, known
-- only after every check). `order` is the order of the checks.
local direct = false
for p = 1, policies do
  if decide[p] == gcra.decide then
    if extra_a[p] then
      direct = false
      break
    end
    direct = p
  elseif not (direct and decide[direct] == gcra.decide)
    and (decide[p] == fixed_window.decide or decide[p] == sliding_window.decide) then
    direct = p
  end
end
local order = {}
for p = 1, policies do
  if p ~= direct then order[#order + 1] = p end
end
if direct then order[policies] = direct end

-- The refund ticket of each policy, from "t1,t2,...".
local function tickets_of(text)
  local out = {}
  local from = 1
  for p = 1, policies do
    local comma = string.find(text, ',', from, true)
    if comma then
      out[p] = string.sub(text, from, comma - 1)
      from = comma + 1
    else
      out[p] = string.sub(text, from)
      from = #text + 2
    end
  end
  return out
end

-- one request's per-policy results, reused from request to request
local allowed, remaining, reset_ms, retry_after_ms, at_ms, pending, delay_ms = {}, {}, {}, {}, {}, {}, {}
local none = {}
local blocks = any_blocked(KEYS, policies)
local reply = {}
local n = 0
for i = 1, #KEYS / policies do
  local a = base + 2 * (i - 1)
  local cost = 1
  local given = none
  if not plain then
    given = tickets_of(ARGV[a + 2])
    cost = tonumber(ARGV[a + 1])
  end
  local first = (i - 1) * policies
  if not cost and ARGV[a + 1] ~= 'l' then
    -- 'p<cost>': a penalty on every policy but concurrency (counted past the limit), then a peek
    cost = tonumber(string.sub(ARGV[a + 1], 2))
    for p = 1, policies do
      if not leases[p] then
        decide[p](KEYS[first + p], limit[p], window_ms[p], burst[p], cost, 'p', '', p, extra_a[p], extra_b[p])
      end
    end
    cost = 0
  end
  -- one block per limiter key, beside its first policy's state
  local left_ms = 0
  if blocks and cost and cost >= 0 then left_ms = block_left(KEYS[first + 1]) end
  if left_ms > 0 then
    -- blocked: nothing is counted; each policy says what it holds now
    for p = 1, policies do
      local _, r, t, w =
        decide[p](KEYS[first + p], limit[p], window_ms[p], burst[p], 0, 'c', '', p, extra_a[p], extra_b[p])
      allowed[p], remaining[p], reset_ms[p], retry_after_ms[p] = blocked_decision(r, t, w, left_ms)
      n = put_decision(reply, n, allowed[p], remaining[p], reset_ms[p], retry_after_ms[p], 0)
      if tickets[p] == true then
        n = n + 1
        reply[n] = -1
      end
    end
  elseif not cost then
    -- 'l': release the leases
    for p = 1, policies do
      if leases[p] then decide[p](KEYS[first + p], limit[p], window_ms[p], burst[p], 0, 'r', given[p]) end
    end
  elseif cost < 0 then
    for p = 1, policies do
      decide[p](KEYS[first + p], limit[p], window_ms[p], burst[p], -cost, 'r', given[p], p,
        extra_a[p], extra_b[p])
    end
  else
    -- check every policy, writing nothing
    local all = true
    local hold = 0
    for j = 1, policies do
      local p = order[j]
      local op = 'k'
      if p == direct and all then op = 'c' end
      allowed[p], remaining[p], reset_ms[p], retry_after_ms[p], at_ms[p], pending[p], delay_ms[p] =
        decide[p](KEYS[first + p], limit[p], window_ms[p], burst[p], cost, op, given[p] or '', p,
          extra_a[p], extra_b[p])
      if allowed[p] ~= 1 then all = false
      elseif delay_ms[p] and delay_ms[p] > hold then hold = delay_ms[p] end
    end
    if all then
      -- commit every policy (those that wait, at the longest wait)
      for p = 1, policies do
        if pending[p] then
          local r, t, d, ticket = commit[p](p, hold)
          if r then remaining[p], reset_ms[p], delay_ms[p], at_ms[p] = r, t, d, ticket end
        end
      end
    else
      -- nothing is counted: a policy that would have admitted reports what it holds now. A
      -- lease this consume holds already (the call run twice, lua/concurrency.lua) is given back
      for p = 1, policies do
        if leases[p] and allowed[p] == 1 and given[p] and given[p] ~= '' then
          decide[p](KEYS[first + p], limit[p], window_ms[p], burst[p], 0, 'r', given[p])
        end
        if allowed[p] == 1 then
          local _
          _, remaining[p], reset_ms[p] =
            decide[p](KEYS[first + p], limit[p], window_ms[p], burst[p], 0, 'c', '', p, extra_a[p], extra_b[p])
          at_ms[p] = -1
          delay_ms[p] = 0
        end
      end
    end
    for p = 1, policies do
      n = put_decision(reply, n, allowed[p], remaining[p], reset_ms[p], retry_after_ms[p], delay_ms[p],
        at_ms[p])
      if tickets[p] == true then
        n = n + 1
        reply[n] = at_ms[p]
      end
    end
  end
end
return reply
