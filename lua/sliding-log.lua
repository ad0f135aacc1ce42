--[[
sliding-log.lua: exact. A request of cost c at time t is admitted when the cost admitted in
(t - window_ms, t] plus c is at most `limit`. One sorted-set member per admitted request;
rejected requests are not recorded.

Decides a batch of n requests of one policy in order, at one Redis time. For request i
(1-based), with k = 2 * (i - 1) and a = 5 + 2 * (i - 1):
KEYS[k+1]  the log: a sorted set, score = admission time (ms), member = "<seq>" for cost 1
           or "<seq>:<cost>"; seq is unique per key (it restarts only when the log is empty)
KEYS[k+2]  the tally: a string "<sum> <seq> <oldest_ms>": total cost in the log, the last seq
           used, and the oldest member's score (so the common call skips looking for expired
           members when none can have expired)
ARGV[a+1]  the request: its cost (integer >= 0; 0 peeks: decides for cost 1, writes nothing),
           or minus the cost to refund
ARGV[a+2]  ticket (refund only): the member a consume returned; '' removes the newest members
           whose costs fit in the refunded cost
           (a batch of consumes of cost 1 sends no ARGV[a+1], ARGV[a+2] at all)
and for the whole batch:
ARGV[1]    now_ms: '' reads Redis TIME (always, in production); an integer only in tests
ARGV[2]    ttl_slack_ms: added to every PX; 0 in production
ARGV[3]    limit: cost admitted per window (integer >= 1)
ARGV[4]    window_ms: window length in ms (integer >= 1)
ARGV[5]    burst: unused (equals limit for this algorithm)

Reply, per consume in order (a refund adds nothing): allowed, `remaining, reset_ms, ticket`;
refused, `-1 - remaining, reset_ms, retry_after_ms, ticket`. The ticket is the member added
('' if none).
]]
local now_ms
if ARGV[1] == '' then
  local time = redis.call('TIME')
  now_ms = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
else
  now_ms = tonumber(ARGV[1])
end
local ttl_slack_ms = tonumber(ARGV[2])
local limit = tonumber(ARGV[3])
local window_ms = tonumber(ARGV[4])

local function cost_of(member)
  local c = string.match(member, ':(%d+)$')
  if c then return tonumber(c) end
  return 1
end

-- Writes the tally and both TTLs after members were removed; deletes both keys when empty.
local function settle(log_key, tally_key, window_ms, sum, seq)
  if sum <= 0 then
    redis.call('DEL', log_key, tally_key)
    return
  end
  local first = redis.call('ZRANGE', log_key, 0, 0, 'WITHSCORES')
  local last = redis.call('ZRANGE', log_key, -1, -1, 'WITHSCORES')
  local ttl_ms = tonumber(last[2]) + window_ms - now_ms + ttl_slack_ms
  redis.call('SET', tally_key, string.format('%d %d %d', sum, seq, tonumber(first[2])), 'PX', ttl_ms)
  redis.call('PEXPIRE', log_key, ttl_ms)
end

local function refund(log_key, tally_key, window_ms, cost, ticket, cutoff_ms, expired, sum, seq)
  if #expired > 0 then redis.call('ZREMRANGEBYSCORE', log_key, '-inf', cutoff_ms) end
  if ticket ~= '' then
    if redis.call('ZSCORE', log_key, ticket) then
      redis.call('ZREM', log_key, ticket)
      sum = sum - cost_of(ticket)
    end
  else
    local left = cost
    local newest = redis.call('ZREVRANGE', log_key, 0, -1)
    for i = 1, #newest do
      if left == 0 then break end
      local c = cost_of(newest[i])
      if c <= left then
        redis.call('ZREM', log_key, newest[i])
        sum = sum - c
        left = left - c
      end
    end
  end
  settle(log_key, tally_key, window_ms, sum, seq)
end

local function decide(log_key, tally_key, limit, window_ms, cost, op, ticket)
  local cutoff_ms = now_ms - window_ms
  -- the tally, less what has left the window
  local sum = 0
  local seq = 0
  local oldest_ms = 0
  local tally = redis.call('GET', tally_key)
  if tally then
    local a, b, c = string.match(tally, '^(%d+) (%d+) (%d+)$')
    sum = tonumber(a)
    seq = tonumber(b)
    oldest_ms = tonumber(c)
  end
  local expired = {}
  if sum > 0 and oldest_ms <= cutoff_ms then
    expired = redis.call('ZRANGEBYSCORE', log_key, '-inf', cutoff_ms)
    for i = 1, #expired do sum = sum - cost_of(expired[i]) end
  end
  -- ids restart only when the log is empty (every member costs at least 1)
  if sum == 0 then seq = 0 end

  if op == 'r' then
    refund(log_key, tally_key, window_ms, cost, ticket, cutoff_ms, expired, sum, seq)
    return 0, 0, 0, 0, ''
  end

  -- check
  local peek = cost == 0
  local need = cost
  if peek then need = 1 end
  local allowed = sum + need <= limit
  local retry_after_ms = 0
  if not allowed then
    -- walk the oldest entries until enough cost has left the window
    local excess = sum + need - limit
    local oldest = redis.call('ZRANGEBYSCORE', log_key, '(' .. cutoff_ms, '+inf', 'WITHSCORES', 'LIMIT', 0, excess)
    local freed = 0
    for i = 1, #oldest, 2 do
      freed = freed + cost_of(oldest[i])
      if freed >= excess then
        retry_after_ms = tonumber(oldest[i + 1]) + window_ms - now_ms
        break
      end
    end
  end

  -- commit
  local member = ''
  local newest_ms = now_ms
  if allowed and not peek then
    if sum == 0 then
      -- an empty log: whatever is left has expired
      if tally then redis.call('DEL', log_key) end
      oldest_ms = now_ms
    elseif #expired > 0 then
      redis.call('ZREMRANGEBYSCORE', log_key, '-inf', cutoff_ms)
      oldest_ms = tonumber(redis.call('ZRANGE', log_key, 0, 0, 'WITHSCORES')[2])
    end
    seq = seq + 1
    if need == 1 then
      member = string.format('%d', seq)
    else
      member = string.format('%d:%d', seq, need)
    end
    sum = sum + need
    redis.call('ZADD', log_key, now_ms, member)
    redis.call('PEXPIRE', log_key, window_ms + ttl_slack_ms)
    redis.call('SET', tally_key, string.format('%d %d %d', sum, seq, oldest_ms), 'PX', window_ms + ttl_slack_ms)
  elseif sum > 0 then
    local last = redis.call('ZRANGE', log_key, -1, -1, 'WITHSCORES')
    newest_ms = tonumber(last[2])
  end

  local reset_ms = 0
  if sum > 0 then reset_ms = newest_ms + window_ms - now_ms end
  local flag = 0
  if allowed then flag = 1 end
  return flag, math.max(0, limit - sum), reset_ms, retry_after_ms, member
end

local reply = {}
local n = 0
for i = 1, #KEYS / 2 do
  local k = 2 * (i - 1)
  local a = 5 + 2 * (i - 1)
  local cost = 1
  local ticket = ''
  if #ARGV > 5 then
    cost = tonumber(ARGV[a + 1])
    ticket = ARGV[a + 2]
  end
  local op = 'c'
  if cost < 0 then
    op = 'r'
    cost = -cost
  end
  local allowed, remaining, reset_ms, retry_after_ms, member =
    decide(KEYS[k + 1], KEYS[k + 2], limit, window_ms, cost, op, ticket)
  -- a refund replies nothing; a consume replies 2 integers when allowed, 3 when refused
  if op == 'c' then
    if allowed == 1 then
      reply[n + 1] = remaining
      reply[n + 2] = reset_ms
      n = n + 2
    else
      reply[n + 1] = -1 - remaining
      reply[n + 2] = reset_ms
      reply[n + 3] = retry_after_ms
      n = n + 3
    end
    reply[n + 1] = member
    n = n + 1
  end
end
return reply
