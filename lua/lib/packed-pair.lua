--[[
lib/packed-pair.lua: the end of the `packed-limits` script, and its commonest batch decided
with less Lua: a set of TWO policies (a limit per second and one per day, say), every request
a consume of cost 1, no key blocked. decide_pair makes decide_batch's decisions, replies and
writes (lib/packed-limits.lua; packed-pair.test.ts runs both on the same states), with the two
policies' numbers and states in locals instead of tables indexed by policy, one struct call to
read the value, and no Lua function call per request (each costs Redis ~500 instructions; the
whole is ~25% fewer instructions per decision than decide_batch). A state that needs the general
rules (a policy's limit changed since it was written, a fixed window shortened) is decided by
read and settle. The blocks between `-- each policy $:` and `-- end of each policy` are written
once per policy by the build (packages/core/scripts/embed-lua.mjs), `$` replaced by 1, then 2.
]]
local function decide_pair()
  local now, get, call, values, format = now_ms, redis_pcall, redis_call, unpack_values, layout
  local g1, l1, w1, t1 = is_gcra[1], limit[1], window_ms[1], tolerance[1]
  local g2, l2, w2, t2 = is_gcra[2], limit[2], window_ms[2], tolerance[2]
  local reply, n = {}, 0
  local ahead_of = read_ahead()
  for i = 1, #KEYS do
    local key = KEYS[i]
    local raw
    if ahead_of then raw = ahead_of[i] else raw = get('GET', key) end
    local valid = raw and #raw == width
    -- each policy's fields as stored (gcra: ms, frac, den; fixed-window: count, end_ms), or
    -- empty; `last`: when the key expires, as the last write computed it
    local a1, b1, c1, a2, b2, c2 = 0, 0, l1, 0, 0, l2
    if valid and g1 then
      a1, b1, c1, a2, b2, c2 = values(format, raw)
    elseif valid then
      a1, b1, a2, b2, c2 = values(format, raw)
    end
    local last, slow = 0, false
    -- per policy: `h` what it holds (as in read), `e` a fixed window's end, `x` what it would
    -- hold with the request counted, `f` whether that fits
    local h1, e1, x1, f1, h2, e2, x2, f2
    -- each policy $:
    if g$ then
      if b$ > 0 then
        if a$ + 1 > last then last = a$ + 1 end
      elseif a$ > last then
        last = a$
      end
      h$ = 0
      if a$ >= now and c$ > 0 then
        if c$ ~= l$ then slow = true end
        h$ = (a$ - now) * l$ + b$
      end
      x$ = h$ + w$
      f$ = x$ <= t$
    else
      h$, e$ = 0, now + w$
      if a$ > 0 then
        if b$ > last then last = b$ end
        if b$ >= e$ then
          h$ = a$
          if b$ ~= e$ then slow = true end
        elseif now < b$ then
          h$, e$ = a$, b$
        end
      end
      x$ = h$ + 1
      f$ = x$ <= l$
    end
    -- end of each policy
    if slow then
      local all, any = read(key, 1)
      n = settle(key, reply, n, all, 0, (all and HELD) or (any and STORED))
    else
      local counts = f1 and f2
      -- each policy $:
      do
        local held, remaining, reset, retry = h$, 0, 0, 0
        if counts then held = x$ end
        if g$ then
          local room = t$ - held
          if room > 0 then remaining = (room - room % w$) / w$ end
          reset = held % l$
          if reset > 0 then reset = l$ - reset end
          reset = (held + reset) / l$
          if not f$ then retry = ceil((x$ - t$) / l$) end
        else
          remaining = l$ - held
          if remaining < 0 then remaining = 0 end
          retry = e$ - now
          if held > 0 then reset = retry end
        end
        if f$ then
          reply[n + 1], reply[n + 2] = remaining, reset
          n = n + 2
        else
          reply[n + 1], reply[n + 2], reply[n + 3] = -1 - remaining, reset, retry
          n = n + 3
        end
      end
      -- end of each policy
      if counts then
        -- the fields to write, and when the key expires: the latest of the policies' ends
        local ends_ms = 0
        -- each policy $:
        if g$ then
          b$ = x$ % l$
          a$, c$ = now + (x$ - b$) / l$, l$
          if b$ > 0 then
            if a$ + 1 > ends_ms then ends_ms = a$ + 1 end
          elseif a$ > ends_ms then
            ends_ms = a$
          end
        else
          a$, b$ = x$, e$
          if e$ > ends_ms then ends_ms = e$ end
        end
        -- end of each policy
        local value
        if g1 then
          value = pack(format, a1, b1, c1, a2, b2, c2)
        else
          value = pack(format, a1, b1, a2, b2, c2)
        end
        -- counted, each policy holds something past now, so the end is later than now; an
        -- unchanged end keeps the expiry, the value written over the one read (as settle)
        if valid and ends_ms == last then
          call('SETRANGE', key, '0', value)
        else
          call('SET', key, value, 'PXAT', int(ends_ms + offset_ms))
        end
      end
    end
  end
  return reply
end

local blocks = any_blocked(KEYS, 1)
if plain and not blocks and policies == 2 then return decide_pair() end
return decide_batch(blocks)
