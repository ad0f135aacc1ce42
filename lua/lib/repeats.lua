--[[
lib/repeats.lua: the keys a batch holds more than once (a busy client, or one global key).
A module that finds repeats holds their state in Lua tables and writes each once, at the end of
the batch (its `finish`); the decisions and the state left behind are exactly those of one call
per request. Only a batch where some key directly follows itself is searched (Lua compares
interned strings at no cost): that is how a busy key shows up, its requests back to back, and it
keeps batches of distinct keys free of the bookkeeping.
]]
local function repeated_keys(keys)
  if distinct then return false end
  for i = 2, #keys do
    if keys[i] == keys[i - 1] then
      local repeated, seen = {}, {}
      for j = 1, #keys do
        local key = keys[j]
        if seen[key] then repeated[key] = true else seen[key] = true end
      end
      return repeated
    end
  end
  return false
end

-- The values of KEYS (false where a key holds no string), read with one MGET, when the store
-- said every key of the batch is distinct (lib/time.lua); otherwise false, and a plain path reads
-- each key with a GET of its own, in turn (a key that comes again must see what the batch wrote
-- to it). One MGET costs Redis one command's dispatch for the batch instead of one per key.
local function read_ahead()
  if not distinct or #KEYS < 2 then return false end
  return redis.call('MGET', unpack(KEYS))
end
