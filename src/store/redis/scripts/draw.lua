-- draw.lua - one step of the opening draw on Redis (lib.lua prepended;
-- the model is lib.lua's "The opening draw"; store_redis_draw.c runs the
-- steps: Lua has no SHA-256, so waitroomd computes the ranks and each step
-- here reads or writes a bounded part of the pre-queue).
-- ARGV: A_DRAW (scripts.def): MODE (an M_DRAW), ID (the calling instance's
-- id), then by mode:
--   STATE: nothing. Reply {phase, beacon, round}: phase 0 no opening waits
--     for its draw now (none due, no commit, or publicLog or
--     preQueueShuffle off), 1 it waits for its beacon's round (the
--     commit's beacon URL and round: fetch them), 2 the draw may run.
--   BEACON: ROUND, RANDOMNESS (hex; '' with an error), ERROR. Keeps the
--     first answer for the committed round (drand, or derr). Reply 1 kept,
--     0 no commit waits for that round's answer.
--   BEGIN: nothing. When the draw may run (phase 2) and the draw's lease
--     is free, expired or ID's: {1, seed, beacon, round, randomness,
--     error} (K_LOG's fields, '' where absent); else {0}.
--   READ: CURSOR ('-inf', or '(<key>': after that key), COUNT (500). The
--     pre-queue people keyed below DRAW_LATE (drawn already, or not yet),
--     from CURSOR on, in key order: {1, user, key, their logm entry ('':
--     none), ...} (keys as integers); {0} when no commit awaits its draw or
--     another instance holds the lease.
--   APPLY: then user, key pairs (250; key '' for someone without a
--     log id). Each one still keyed below DRAW_LATE: in the log's line
--     ('i') with a key, keyed by it; anyone else (a page join that has not
--     counted: their log entry keeps their log id with the new key, so
--     they count as a line join) to the late band at the next order key.
--     Reply {1}, or {0} as READ.
--   FINISH: TAIL, the draw leaf's bytes after its n (core/logleaf.c's,
--     from waitroomd: seed, beacon, round, randomness, beaconError). When
--     nobody is left keyed in [0, DRAW_LATE) (not drawn yet): the draw leaf
--     with n = the people drawn, the commit's fields gone, the opening
--     begun (lib.lua open_begin): {1, n}; else {0, how many are left}, or
--     {0, -1} as READ's {0}.
-- The lease (dlease, '<ID> <until us>', LEASE_US): one instance draws at a
-- time; one that stops (a crash) is followed by another after LEASE_US,
-- which reads the pre-queue again, the part drawn included: the keys are a
-- function of the ranks, so it draws the same order.
local LEASE_US = 10000000
local mode, id = ARGV[A_DRAW.MODE], ARGV[A_DRAW.ID]
local now = now_us()

-- 0, 1 or 2: STATE's phase.
local function phase()
  if redis.call('HGET', K_STATE, 'opening') == '1' or redis.call('ZCARD', K_PRE) == 0 then
    return 0
  end
  local opens_at = opens_at_of(redis.call('HGET', K_CONFIG, 'opensAt'))
  if (opens_at and now < opens_at * 1000) or not draw_waits() then
    return 0
  end
  return draw_due(opens_at, now) and 2 or 1
end

-- Takes or renews the lease for id: false when another instance holds it
-- or no commit awaits its draw.
local function leased()
  if not log_committed() then
    return false
  end
  local holder, until_us = string.match(redis.call('HGET', K_LOG, 'dlease') or '', '^(%S+) (%d+)$')
  if holder and holder ~= id and tonumber(until_us) > now then
    return false
  end
  redis.call('HSET', K_LOG, 'dlease', id .. ' ' .. fmt(now + LEASE_US))
  return true
end

if mode == M_DRAW.STATE then
  local p = phase()
  if p == 0 then
    return {0, '', ''}
  end
  local d = redis.call('HMGET', K_LOG, 'dbeacon', 'dround')
  return {p, d[1] or '', d[2] or ''}
elseif mode == M_DRAW.BEACON then
  local d = redis.call('HMGET', K_LOG, 'dseed', 'dbeacon', 'dround', 'drand', 'derr')
  if not d[1] or not d[2] or d[3] ~= ARGV[3] or d[4] or d[5] then
    return 0
  end
  if ARGV[4] ~= '' then
    redis.call('HSET', K_LOG, 'drand', ARGV[4])
  else
    redis.call('HSET', K_LOG, 'derr', ARGV[5])
  end
  return 1
elseif mode == M_DRAW.BEGIN then
  if phase() ~= 2 or not leased() then
    return {0}
  end
  local d = redis.call('HMGET', K_LOG, 'dseed', 'dbeacon', 'dround', 'drand', 'derr')
  return {1, d[1] or '', d[2] or '', d[3] or '', d[4] or '', d[5] or ''}
end

if not leased() then
  return mode == M_DRAW.FINISH and {0, -1} or {0}
end
if mode == M_DRAW.READ then
  local from = ARGV[3] ~= '' and ARGV[3] or '-inf'
  local kv = redis.call('ZRANGEBYSCORE', K_PRE, from, '(' .. fmt(DRAW_LATE), 'WITHSCORES', 'LIMIT',
    0, tonumber(ARGV[4]))
  local out = {1}
  if #kv > 0 then
    local users = {}
    for i = 1, #kv, 2 do
      users[#users + 1] = kv[i]
    end
    local e = redis.call('HMGET', K_LOGM, unpack(users))
    for i = 1, #users do
      out[#out + 1], out[#out + 2], out[#out + 3] = users[i], fmt(tonumber(kv[2 * i])), e[i] or ''
    end
  end
  return out
elseif mode == M_DRAW.APPLY then
  local users, keys = {}, {}
  for i = 3, #ARGV - 1, 2 do
    users[#users + 1], keys[#keys + 1] = ARGV[i], ARGV[i + 1]
  end
  if #users == 0 then
    return {1}
  end
  local last = tonumber(redis.call('HGET', K_STATE, 'lastScore') or '0')
  local e = redis.call('HMGET', K_LOGM, unpack(users))
  local zs, ms, last0 = {}, {}, last
  for i = 1, #users do
    local k = tonumber(redis.call('ZSCORE', K_PRE, users[i]) or DRAW_LATE)
    if k < DRAW_LATE then
      local s, _, u = log_entry_of(e[i])
      if s == 'i' and keys[i] ~= '' then
        zs[#zs + 1], zs[#zs + 2] = keys[i], users[i]
      elseif k >= 0 then
        -- not drawn: the next order key, behind the drawn (as a late join)
        last = math.max(now, last + 1)
        zs[#zs + 1], zs[#zs + 2] = fmt(DRAW_LATE + last), users[i]
        if s == 'q' then
          ms[#ms + 1], ms[#ms + 2] = users[i], 'p:' .. fmt(last) .. ':' .. u
        end
      end
    end
  end
  if #zs > 0 then
    redis.call('ZADD', K_PRE, 'XX', unpack(zs))
  end
  if #ms > 0 then
    redis.call('HSET', K_LOGM, unpack(ms))
  end
  if last ~= last0 then
    redis.call('HSET', K_STATE, 'lastScore', fmt(last))
  end
  return {1}
elseif mode == M_DRAW.FINISH then
  local left = redis.call('ZCOUNT', K_PRE, '0', '(' .. fmt(DRAW_LATE))
  if left > 0 then
    return {0, left}
  end
  local n = redis.call('ZCOUNT', K_PRE, '-inf', '(0')
  log_append('draw', ',"n":' .. fmt(n) .. ARGV[3], now)
  log_uncommit()
  open_begin(nil, now)
  return {1, n}
end
return redis.error_reply('draw.lua: unknown mode')
