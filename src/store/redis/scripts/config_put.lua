-- config_put.lua - creates or replaces a queue's config (lib.lua prepended;
-- touches KEYS[1] and, when tickMs changes, KEYS[5]).
-- ARGV[1]: the config JSON; then the config hash's fields as name, value
-- pairs (ARGV[2], ARGV[3], ...): one per row of src/core/qconfig.c's table
-- with a store name (enabled, paused, rate, tickMs, maxActive, maxQueueSize,
-- ttlSec, sessionSec, idleSec, opensAt (epoch ms, '' = none), shuffle, ...),
-- written as they come, so C and Lua share no list of positions.
-- version: Redis TIME in us when the queue is created (so a queue deleted
-- and created again never reuses a version a cache may hold), then +1 on
-- every put. Reply: the new version (integer).
-- The end of a sale: a pair named stockLeft (sent when the config sets what
-- is left: a PUT, or a PATCH naming stock; '' = no stock) goes to state,
-- not to the config hash, and the sold-out moment follows (lib.lua, "Stock").
-- A change of tickMs resets the admission tick and carry (KEYS[5]): the last
-- tick is counted in the old tick length, and a longer new tick would
-- otherwise compare below it and stop admission.
-- A change of the autotune object (or its removal) drops the rate
-- autotune.lua keeps (state autoRate, autoStep, autoCut): it starts again.
-- A pair named push ('0' off) is not kept: push off deletes the queue's
-- Web Push subscriptions and parked claims (KEYS[17], KEYS[18]).
-- Priority groups (lib_group.lua): a pair named groups (the config's group
-- names in priority order, comma separated, '' none) becomes the config
-- hash's grp (config_groups below); a group that leaves the config while
-- it has people or live codes refuses the whole put: reply -5
-- (WR_EGROUP), nothing written.
local new_tick, new_autotune, stock, groups, push
local pairs_ = {}
for i = 2, #ARGV - 1, 2 do
  if ARGV[i] == 'tickMs' then
    new_tick = ARGV[i + 1]
  elseif ARGV[i] == 'autotune' then
    new_autotune = ARGV[i + 1]
  end
  if ARGV[i] == 'stockLeft' then
    stock = ARGV[i + 1]
  elseif ARGV[i] == 'groups' then
    groups = ARGV[i + 1]
  elseif ARGV[i] == 'push' then
    push = ARGV[i + 1]
  else
    pairs_[#pairs_ + 1] = ARGV[i]
    pairs_[#pairs_ + 1] = ARGV[i + 1]
  end
end

-- The new grp for the group names of groups: a name already in the
-- config keeps its slot and gid (its line, codes and counters); a new one
-- gets a free slot, emptied, and the next gid. Of a group that leaves:
-- nil when it still has people (its line; held, back or a live pass: gm)
-- or live codes, else its line, counters, codes and stale gm entries go.
local function config_groups()
  local old, now = group_lib(redis.call('HGET', K_CONFIG, 'grp')), now_us()
  local K_CODES, K_GSTAT = KEYS[28], KEYS[29]
  local entries, keep, leaving, gids = {}, {}, {}, {}
  for name in string.gmatch(groups, '[^,]+') do
    local slot = old.on and old.slot_of(name)
    entries[#entries + 1] = {name, slot, slot and old.gid[old.line[slot]]}
    if slot then
      keep[slot] = true
    end
  end
  for i = 1, old.on and old.n or 0 do
    if not keep[old.slot[i]] then
      if redis.call('ZCARD', old.key(old.slot[i])) > 0 then
        return nil
      end
      leaving[old.slot[i]], gids[old.gid[i]] = true, true
    end
  end
  local stale, dead = {}, {}
  if next(leaving) then
    local kv = redis.call('HGETALL', KEYS[27])
    for i = 1, #kv, 2 do
      if leaving[tonumber(kv[i + 1])] then
        local u = kv[i]
        local _, _, exp = parse_token(redis.call('HGET', K_TOKENS, u))
        if redis.call('ZSCORE', K_HELD, u) or redis.call('ZSCORE', K_BACK, u) or
            (exp and exp > now) then
          return nil
        end
        stale[#stale + 1] = u
      end
    end
    local cursor = '0'
    repeat -- (the codes of the groups that leave: O(codes), a rare admin step)
      local r = redis.call('HSCAN', K_CODES, cursor, 'COUNT', 1000)
      cursor = r[1]
      for i = 1, #r[2], 2 do
        local gid, uses, spent, exp, rev = string.match(r[2][i + 1],
          '^(%d+):(%d+):(%d+):(%-?%d+):([01])$')
        if gids[gid] then
          if rev == '0' and tonumber(spent) < tonumber(uses) and
              (tonumber(exp) < 0 or tonumber(exp) > idiv(now, 1000)) then
            return nil
          end
          dead[#dead + 1] = r[2][i]
        end
      end
    until cursor == '0'
  end
  chunked('HDEL', KEYS[27], stale)
  chunked('HDEL', K_CODES, dead)
  local used = {}
  for slot in pairs(keep) do
    used[slot] = true
  end
  local out = {}
  for _, e in ipairs(entries) do
    if not e[2] then -- a new group: a free slot, emptied
      local slot = 1
      while used[slot] do
        slot = slot + 1
      end
      e[2], e[3] = slot, fmt(redis.call('HINCRBY', K_GSTAT, 'gseq', 1))
      leaving[slot] = true
    end
    used[e[2]] = true
    out[#out + 1] = e[1] .. ':' .. fmt(e[2]) .. ':' .. e[3]
  end
  for slot in pairs(leaving) do -- (a group's admissions stay out of the standard line's)
    local gone = tonumber(redis.call('HGET', K_GSTAT, 'a' .. slot) or '0')
    if gone > 0 then
      redis.call('HINCRBY', K_STATE, 'removedAdmitted', gone)
    end
    local f = {'a' .. slot, 'i' .. slot, 'u' .. slot, 'r' .. slot, 'w' .. slot}
    for b = 0, 59 do
      f[#f + 1] = 'b' .. slot .. ':' .. b
    end
    redis.call('HDEL', K_GSTAT, unpack(f))
    redis.call('DEL', KEYS[18 + slot])
  end
  return table.concat(out, ',')
end

local grp
if groups then
  grp = config_groups()
  if not grp then
    return -5
  end
end
if (redis.call('HGET', K_CONFIG, 'autotune') or '') ~= (new_autotune or '') then
  redis.call('HDEL', K_STATE, 'autoRate', 'autoStep', 'autoCut')
end
local old_tick = redis.call('HGET', K_CONFIG, 'tickMs')
if old_tick and old_tick ~= new_tick then
  redis.call('HDEL', K_STATE, 'lastTick', 'carryMicro')
end
local version
if redis.call('HEXISTS', K_CONFIG, 'version') == 0 then
  version = now_us()
  redis.call('HSET', K_CONFIG, 'version', fmt(version))
else
  version = redis.call('HINCRBY', K_CONFIG, 'version', 1)
end
redis.call('HSET', K_CONFIG, 'json', ARGV[1], unpack(pairs_))
if grp == '' then
  redis.call('HDEL', K_CONFIG, 'grp')
  redis.call('HDEL', K_STATE, 'shareCarry')
elseif grp then
  redis.call('HSET', K_CONFIG, 'grp', grp)
end
if push == '0' then
  redis.call('DEL', K_PUSH, K_PUSHDUE)
end
if stock == '' then
  redis.call('HDEL', K_STATE, 'stockLeft')
elseif stock then
  redis.call('HSET', K_STATE, 'stockLeft', stock)
end
if stock then
  stock_note(now_us())
end
return version
