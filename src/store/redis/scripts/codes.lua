-- codes.lua - presale codes of a queue (store.h codes; lib.lua and
-- lib_group.lua prepended: the codes hash and the counters are described
-- there). ARGV: A_CODES (scripts.def): KIND, GROUP, USES, EXPIRES_MS,
-- HASHES (the codes' SHA-256 hex, 64 characters each, run together; the
-- store never sees a code). Reply: R_CODES: CODE, and COUNTS per group of
-- the config after the call (G.code_counts).
--   'c' create: every hash new (none kept already, none twice) or nothing
--       written (-3); GROUP one of the config (-2 otherwise); each code
--       "gid:USES:0:EXPIRES_MS:0", the group's issued count up.
--   'k' check: the same checks, nothing written (the store checks every
--       part of a large create before it writes the first: store_redis_group.c)
--   'd' delete: the codes of HASHES that GROUP's create wrote (a create
--       whose later part failed is undone); issued down by as many
--   'l' list; 'r' revoke the code of HASHES (-4 when no group of the
--       config has it): revoked from now on, counted once
local A, R = A_CODES, R_CODES
local out = R._NEW
local kind, hashes = ARGV[A.KIND], ARGV[A.HASHES]
local v = redis.call('HGET', K_CONFIG, 'grp')
if not v and redis.call('EXISTS', K_CONFIG) == 0 then
  out[R.CODE] = -1
  return out
end
local G = group_lib(v)
local K_CODES, K_GSTAT = KEYS[28], KEYS[29]
local n = math.floor(#hashes / 64)

-- The hashes of HASHES, each once (a list), or nil when one is there twice.
local function list()
  local seen, hs = {}, {}
  for i = 1, n do
    local h = string.sub(hashes, 64 * i - 63, 64 * i)
    if seen[h] then
      return nil
    end
    seen[h], hs[i] = true, h
  end
  return hs
end

if kind == 'c' or kind == 'k' or kind == 'd' then
  local slot = G.on and G.slot_of(ARGV[A.GROUP])
  if not slot then
    out[R.CODE] = -2
  elseif kind == 'd' then
    local gid, gone = G.gid[G.line[slot]], 0
    for _, h in ipairs(list() or {}) do
      if G.code_get(h) == gid then
        gone = gone + redis.call('HDEL', K_CODES, h)
      end
    end
    redis.call('HINCRBY', K_GSTAT, 'i' .. slot, -gone)
  else
    local hs = list()
    local i = 1
    while hs and i <= #hs do -- none kept already
      local j = math.min(i + 999, #hs)
      for _, e in ipairs(redis.call('HMGET', K_CODES, unpack(hs, i, j))) do
        if e then
          hs = nil
          break
        end
      end
      i = j + 1
    end
    if not hs then
      out[R.CODE] = -3
    elseif kind == 'c' then
      local rec = ':' .. fmt(tonumber(ARGV[A.USES])) .. ':0:' .. fmt(tonumber(ARGV[A.EXPIRES_MS])) ..
        ':0'
      local kv, gid = {}, G.gid[G.line[slot]]
      for k = 1, #hs do
        kv[2 * k - 1], kv[2 * k] = hs[k], gid .. rec
      end
      chunked('HSET', K_CODES, kv)
      redis.call('HINCRBY', K_GSTAT, 'i' .. slot, #hs)
    end
  end
elseif kind == 'r' then
  local gid, uses, spent, exp, rev = nil, 0, 0, -1, false
  if G.on then
    gid, uses, spent, exp, rev = G.code_get(string.sub(hashes, 1, 64))
  end
  local i = gid and G.by_gid[gid]
  if not i then
    out[R.CODE] = -4
  elseif not rev then
    redis.call('HSET', K_CODES, string.sub(hashes, 1, 64),
      table.concat({gid, fmt(uses), fmt(spent), fmt(exp), '1'}, ':'))
    redis.call('HINCRBY', K_GSTAT, 'r' .. G.slot[i], 1)
  end
end
if G.on then
  out[R.COUNTS] = G.code_counts()
end
return out
