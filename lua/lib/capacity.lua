--[[
lib/capacity.lua: a policy's capacity argument, "<burst>" or "<burst>/<a>[/<b>]": what an
algorithm needs besides burst travels with it (a concurrency policy's Retry-After estimate, a
waiting GCRA policy's `after` and `wait`; see their modules). Returns burst, a, b (nil when
absent).
]]
local function capacity_of(text)
  local burst, a, b = match(text, '^(%d+)/(%d+)/?(%d*)$')
  if not burst then return tonumber(text) end
  return tonumber(burst), tonumber(a), tonumber(b)
end
