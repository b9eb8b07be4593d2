-- lib_log.lua - the public log's leaves on Redis (docs/API.md 1.3, "A line
-- anyone can check"; docs/DESIGN.md "The public log"). store_redis.c
-- prepends it to every queue script, before lib.lua, so that every step
-- that changes a person's standing appends its leaf in the same script:
-- the log's order is the order Redis applied the changes, whichever
-- instance sent them, and no change is ever without its leaf or a leaf
-- without its change.
--
-- KEYS (after lib.lua's twelve; the {queue} hash tag, built in C):
--   KEYS[13] wr:{q}:log   HASH n (leaves), at (the last leaf's "at"), and
--                              the signer's fields (store_redis_log.c): hs
--                              (leaves hashed), cp, cps, cpr, stop
--   KEYS[14] wr:{q}:logl  HASH leaf index (decimal) -> the leaf's bytes
--   KEYS[15] wr:{q}:logm  HASH user -> who they are to the log:
--                              'i:<index>:<u>' in the log's line (index:
--                              their join leaf), 'a:<index>:<u>' admitted
--                              while their pass is live (an unseen expiry
--                              puts them back: lib.lua unseen_expire),
--                              'p:<t>:<u>' ('q:' in the pre-queue) a
--                              page join that has not counted yet (its
--                              order key and log id, for when it does)
--   KEYS[16] wr:{q}:logh  HASH '<level>:<index>' -> the 32-byte hash of
--                              a complete subtree, written by the signer
--                              (store_redis_logtree.c, log_hashed.lua);
--                              level 0: the leaf hashes of leaves < hs.
--                              Read here by receipts only (log_receipt)
--   and while an opening's commit awaits its draw (docs/DESIGN.md "The
--   opening draw on Redis"), fields of KEYS[13]: dseed (the seed, hex:
--   secret until the draw leaf reveals it; present = committed), dbeacon
--   and dround (the commit's beacon and round, absent without one), the
--   beacon's answer drand (its randomness, hex) or derr (why there is
--   none), dlease ('<instance> <until us>': who runs the draw, draw.lua)
-- The config hash's log = '1' while publicLog is on. The log (KEYS 13,
-- 14, 16) outlives the queue: queue_delete.lua deletes only logm. Leaves are the
-- bytes core/logleaf.c encodes (the same keys in the same order); the
-- Merkle tree over them is kept by C (store_redis_log.c: Lua has no
-- SHA-256). The log id u is computed by C (HMAC-SHA-256 under the queue's
-- log salt) and passed with every join of a log queue.
local K_LOG, K_LOGL, K_LOGM, K_LOGH = KEYS[13], KEYS[14], KEYS[15], KEYS[16]
-- per call: on (publicLog, read once), n and at (read at the first append)
local LOG = {}

local function log_on()
  if LOG.on == nil then
    LOG.on = redis.call('HGET', KEYS[1], 'log') == '1'
  end
  return LOG.on
end

local function log_fmt(n)
  return string.format('%d', n)
end

-- Appends the leaf {"e":e,"at":AT<rest>} at now ("at" never goes back):
-- its index.
local function log_append(e, rest, now)
  if not LOG.n then
    local m = redis.call('HMGET', K_LOG, 'n', 'at')
    LOG.n, LOG.at = tonumber(m[1] or '0'), tonumber(m[2] or '0')
  end
  if now > LOG.at then
    LOG.at = now
  end
  local i = LOG.n
  redis.call('HSET', K_LOGL, log_fmt(i), '{"e":"' .. e .. '","at":' .. log_fmt(LOG.at) .. rest .. '}')
  LOG.n = i + 1
  redis.call('HSET', K_LOG, 'n', log_fmt(LOG.n), 'at', log_fmt(LOG.at))
  return i
end

-- A logm value (or false): state ('i', 'a', 'p', 'q' or nil), index or
-- t, u.
local function log_entry_of(v)
  local s, i, u = string.match(v or '', '^(%a):(%d*):(%x+)$')
  return s, tonumber(i), u
end

-- user's entry in logm (log_entry_of).
local function log_entry(user)
  return log_entry_of(redis.call('HGET', K_LOGM, user))
end

-- user got a place that counts, with log id u, at order key t (pre: in
-- the pre-queue; grp: the name of their priority group, or nil): their
-- join leaf, unless they are in the log's line.
local function log_join(user, u, t, pre, now, grp)
  if not log_on() or not u or u == '' or log_entry(user) == 'i' then
    return
  end
  local i = log_append('join', ',"u":"' .. u .. '","t":' .. log_fmt(t) ..
    (pre and ',"pre":true' or '') .. (grp and ',"grp":"' .. grp .. '"' or ''), now)
  redis.call('HSET', K_LOGM, user, 'i:' .. log_fmt(i) .. ':' .. u)
end

-- A page join (pending: not counted yet) at order key t (pre: in the
-- pre-queue): its log id and key, for its join leaf when it counts
-- (log_counted; a pre-queue page join may have moved into the line by
-- then, and keeps its pre-queue key).
local function log_pending(user, u, t, pre)
  if log_on() and u and u ~= '' and log_entry(user) ~= 'i' then
    redis.call('HSET', K_LOGM, user, (pre and 'q:' or 'p:') .. log_fmt(t) .. ':' .. u)
  end
end

-- A pending page join asked again: it counts now, with its original key
-- (grp: their priority group's name, or nil).
local function log_counted(user, now, grp)
  if log_on() then
    local s, t, u = log_entry(user)
    if s == 'p' or s == 'q' then
      log_join(user, u, t, s == 'q', now, grp)
    end
  end
end

-- A leaf e (admit, away, leave) about user when they are in the log's
-- line, with rest after their u; then admit marks them admitted, leave
-- takes them out, away keeps them. True when written.
local function log_member(user, e, rest, now)
  if not log_on() then
    return false
  end
  local s, i, u = log_entry(user)
  if s ~= 'i' then
    return false
  end
  log_append(e, ',"u":"' .. u .. '"' .. rest, now)
  if e == 'admit' then
    redis.call('HSET', K_LOGM, user, 'a:' .. log_fmt(i) .. ':' .. u)
  elseif e ~= 'away' then
    redis.call('HDEL', K_LOGM, user)
  end
  return true
end

local LOG_ABANDONED = ',"why":"abandoned"'

-- users (a list) leave as abandoned (awayHoldSeconds passed, or 0).
local function log_abandoned(users, now)
  if log_on() then
    for i = 1, #users do
      log_member(users[i], 'leave', LOG_ABANDONED, now)
    end
  end
end

-- users (a list) are nothing more to the log: a pass that ended
-- (consumed, expired seen, given back) or a page join that never counted.
-- Someone in the log's line keeps their entry (a caller's slip must not
-- lose a leaf).
local function log_forget(users)
  if log_on() then
    for k = 1, #users do
      if log_entry(users[k]) ~= 'i' then
        redis.call('HDEL', K_LOGM, users[k])
      end
    end
  end
end

-- An unseen pass of user expired (lib.lua unseen_expire): back in the
-- log's line with their join leaf, away from now (held), and when held
-- people leave at once (gone), out again as abandoned.
local function log_unseen(user, gone, now)
  if not log_on() then
    return
  end
  local s, i, u = log_entry(user)
  if s ~= 'a' then
    return
  end
  log_append('away', ',"u":"' .. u .. '","unseen":true', now)
  if gone then
    log_append('leave', ',"u":"' .. u .. '"' .. LOG_ABANDONED, now)
    redis.call('HDEL', K_LOGM, user)
  else
    redis.call('HSET', K_LOGM, user, 'i:' .. log_fmt(i) .. ':' .. u)
  end
end

-- The receipt of user (in the log's line): their join leaf's index, their
-- log id u (from logm), and the leaf's hash (32 bytes: logh's '0:<index>',
-- once the signer hashed it) or, while it is not hashed yet (the joins of
-- the last round), the leaf's bytes for waitroomd to hash: index, u, hash
-- or '', leaf or ''. -1, '', '', '' for someone not in the log's line. A
-- poll reads logm and one of logh or logl, and waitroomd hashes nothing
-- once the leaf is hashed (script_reply.c decode_receipt).
local function log_receipt(user)
  if log_on() then
    local s, i, u = log_entry(user)
    if s == 'i' then
      local f = log_fmt(i)
      local h = redis.call('HGET', K_LOGH, '0:' .. f)
      if h then
        return i, u, h, ''
      end
      return i, u, '', redis.call('HGET', K_LOGL, f) or ''
    end
  end
  return -1, '', '', ''
end

-- ---- The opening's commit (the draw itself: lib.lua, draw.lua) ---------
local LOG_DRAW_FIELDS = {'dseed', 'dbeacon', 'dround', 'drand', 'derr', 'dlease'}

-- True while an opening's commit awaits its draw (read once per call).
local function log_committed()
  if LOG.committed == nil then
    LOG.committed = redis.call('HEXISTS', K_LOG, 'dseed') == 1
  end
  return LOG.committed
end

-- The commit leaf before the first pre-queue join of an opening: seed and
-- its SHA-256 (hex, 64 characters each) from waitroomd's CSPRNG (Lua has
-- neither), and the config's draw (beacon and round: the beacon URL is
-- plain ASCII without quotes or backslashes, qconfig_log.c), kept for
-- the draw. The same keys in the same order as core/logleaf.c's.
local function log_commit(seed, hash, now)
  local rest, kept = ',"seedHash":"' .. hash .. '"', {'dseed', seed}
  local d = cjson.decode(redis.call('HGET', KEYS[1], 'json') or '{}').draw
  if type(d) == 'table' and type(d.beaconUrl) == 'string' and type(d.round) == 'number' then
    rest = rest .. ',"beacon":"' .. d.beaconUrl .. '","round":' .. log_fmt(d.round)
    kept[3], kept[4], kept[5], kept[6] = 'dbeacon', d.beaconUrl, 'dround', log_fmt(d.round)
  end
  log_append('commit', rest, now)
  redis.call('HDEL', K_LOG, unpack(LOG_DRAW_FIELDS))
  redis.call('HSET', K_LOG, unpack(kept))
  LOG.committed = true
end

-- The commit is over (drawn, or the queue deleted): its fields go.
local function log_uncommit()
  redis.call('HDEL', K_LOG, unpack(LOG_DRAW_FIELDS))
  LOG.committed = false
end
