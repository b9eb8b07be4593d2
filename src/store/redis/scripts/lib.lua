-- lib.lua - shared prologue of the queue scripts. store_redis.c prepends
-- this file to each queue script (join and status alone or in batches,
-- leave, admit, consume, verify, queue_get), after the script's rows as
-- comments (scripts.def) and lib_log.lua (the public log's leaves), and
-- before lib_group.lua (priority groups; lib_nogroup.lua, its stand-in,
-- for the polls of a queue without them) and lib_entry.lua (join and
-- status only), so every script is one self-contained EVAL text.
--
-- KEYS (all with the hash tag {queue}; never built here):
--   KEYS[1] wr:{q}:config  HASH json, enabled, paused, rate, tickMs,
--                                maxActive, maxQueueSize, ttlSec, version
--   KEYS[2] wr:{q}:waiting ZSET user -> arrival us
--   KEYS[3] wr:{q}:active  ZSET user -> token expiry us
--   KEYS[4] wr:{q}:tokens  HASH user -> "jti:iat_us:exp_us", with ":u" at
--                                the end while unseen (no answer carried
--                                the pass yet; see expire_tokens)
--   KEYS[5] wr:{q}:state   HASH lastScore, lastTick, carryMicro, counters
--   KEYS[6] wr:{q}:sessions ZSET user -> session end us (sessionSeconds)
--   KEYS[7] wr:{q}:sessjti  HASH user -> jti of the consumed token
--   KEYS[8] wr:{q}:seen     HASH user -> 2 * last join or poll us + pending
--                                (people who stop asking; see below)
--   KEYS[9] wr:{q}:pre      ZSET user -> pre-queue key (sale opening): a
--                                random 52-bit integer from waitroomd's
--                                CSPRNG (preQueueShuffle) or the arrival us
--                                (and with publicLog the draw's keys, below)
--   KEYS[10] wr:{q}:held    ZSET user -> us they were held (away, not gone:
--                                their turn came while away; not back yet)
--   KEYS[11] wr:{q}:back    ZSET user -> us they came back (held people who
--                                asked again: admitted first)
--   KEYS[12] wr:{q}:away    SET  users of the line the away sweep found away
--   KEYS[13..16] the public log (lib_log.lua)
--   KEYS[17] wr:{q}:push    HASH user -> their Web Push subscription, packed
--                                by waitroomd (wr_pushsub_pack; never read
--                                here): people in line, pre-queue or held
--                                (push.lua)
--   KEYS[18] wr:{q}:pushdue HASH user -> "<pass expiry us> <subscription>":
--                                admissions claimed by an admit call of an
--                                instance that sends no push, for the next
--                                call of one that does (admit.lua)
-- The end of a sale (docs/API.md 1.2): the config hash's closed ('1' =
-- the sale is over); state's stockLeft (what is left of the stock; absent
-- = no stock: config_put.lua writes it when a config sets it) and
-- soldOutAt (us the queue became sold out; absent while it is not). See
-- "Stock" below.
-- The config hash also holds sessionSec (absent = 0), idleSec (absent =
-- 120, the default of idleTimeoutSeconds) and holdSec (absent = 1800, the
-- default of awayHoldSeconds). active = ZCARD active
-- + ZCARD sessions: both sets hold each member once, so the count is exact.
--
-- Numbers: microsecond times are about 1.8e15, exact in a Lua double (below
-- 2^53). They are written to Redis with string.format('%d') and returned
-- as Lua numbers, which Redis turns into integer replies. Never tostring()
-- or '..' a time (14 significant digits only).
local K_CONFIG, K_WAITING, K_ACTIVE, K_TOKENS, K_STATE = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5]
local K_SESSIONS, K_SESSJTI = KEYS[6], KEYS[7]
local K_SEEN = KEYS[8]
local K_PRE = KEYS[9]
local K_HELD, K_BACK, K_AWAY = KEYS[10], KEYS[11], KEYS[12]
local K_PUSH, K_PUSHDUE = KEYS[17], KEYS[18]
-- KEYS[19..29]: priority groups (lib_group.lua): the groups' lines by
-- slot, gm (user -> slot), codes, gstat; GRP below.

local function fmt(n)
  return string.format('%d', n)
end

-- Redis TIME in microseconds, exact (sec * 1e6 + usec < 2^53).
local function now_us()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000000 + tonumber(t[2])
end

-- The admission delay (queue.h wr_queue_admit_due_us): us from now until a
-- user with arrival score `score` may be admitted, 0 when they may be now.
-- A score more than the slack (1 s) ahead of now comes from a clock that
-- stepped back: due at once.
local ADMIT_DELAY_US, ADMIT_SLACK_US = 250000, 1000000
local function admit_due(score, now)
  if score - now > ADMIT_SLACK_US then
    return 0
  end
  return math.max(0, score + ADMIT_DELAY_US - now)
end

-- floor(a / b) for non-negative integers a, b (b > 0) below 2^53: the
-- double division may round up to the next integer, so correct it.
local function idiv(a, b)
  local q = math.floor(a / b)
  local r = a - q * b
  while r < 0 do
    q = q - 1
    r = r + b
  end
  while r >= b do
    q = q + 1
    r = r - b
  end
  return q, r
end

-- Calls cmd(key, items...) in chunks (unpack is bounded by the Lua stack).
local function chunked(cmd, key, items)
  local n = #items
  local i = 1
  while i <= n do
    local j = math.min(i + 999, n)
    redis.call(cmd, key, unpack(items, i, j))
    i = j + 1
  end
end

-- Removes every member of the ZSET kz scored <= now, and its field of the
-- HASH kh, and counts them in the state counter named counter. Returns how
-- many.
local function expire_set(kz, kh, counter, now)
  local gone = redis.call('ZRANGEBYSCORE', kz, '-inf', fmt(now))
  if #gone > 0 then
    chunked('HDEL', kh, gone)
    chunked('ZREM', kz, gone)
    redis.call('HINCRBY', K_STATE, counter, #gone)
  end
  return #gone
end

-- ---- Stock (docs/DESIGN.md, "The end of a sale") ------------------------
-- state stockLeft is what is left. admit.lua takes at most that many and
-- subtracts what it admitted, in the same script. A token leaves tokens
-- and active in exactly one script step each - expiry (expire_tokens, or
-- token.lua's consume of an expired one), leave, consume - and the first
-- two give its unit back there (stock_return), so a unit returns at most
-- once and a consumed pass keeps it. Sold out: stockLeft 0 and active
-- empty (an expired token not yet swept still counts: it returns its unit
-- at its sweep, before the queue can be sold out).

-- n units back (tokens expired or given back), when there is a stock.
local function stock_return(n)
  if n > 0 and redis.call('HEXISTS', K_STATE, 'stockLeft') == 1 then
    redis.call('HINCRBY', K_STATE, 'stockLeft', n)
  end
end

-- What is left (a number), or nil without a stock.
local function stock_left()
  local v = redis.call('HGET', K_STATE, 'stockLeft')
  return v and tonumber(v) or nil
end

-- True when the queue is sold out: stockLeft 0 and no token in active.
local function sold_out()
  return redis.call('HGET', K_STATE, 'stockLeft') == '0' and redis.call('ZCARD', K_ACTIVE) == 0
end

-- Records the sold-out moment (state soldOutAt = now) when the queue just
-- became sold out, and clears it when it no longer is (a restock). Every
-- script that can change it calls this: admit, consume, config_put.
local function stock_note(now)
  local sold = sold_out()
  local at = redis.call('HEXISTS', K_STATE, 'soldOutAt') == 1
  if sold and not at then
    redis.call('HSET', K_STATE, 'soldOutAt', fmt(now))
  elseif at and not sold then
    redis.call('HDEL', K_STATE, 'soldOutAt')
  end
end

-- GRP: the queue's priority groups once a script read them (lib_group.lua
-- group_lib); GRP.on false = no groups, and then nothing here looks at
-- the group keys. (Declared here, after the locals most functions use:
-- each function made per call looks up what it uses among the locals
-- captured after them, so a late local costs the polls less.)
local GRP = {on = false}

-- An unseen pass is not a lost place (docs/API.md 1.3). admit.lua writes
-- a new pass's tokens value with ':u' at the end (unseen); the first
-- answer that carries it (lib_entry.lua's entry_token, where every
-- ADMITTED answer of entry() comes from) writes it without. A value
-- without the suffix (a pass made before this existed) is seen.

-- The unseen expiry: of the users whose passes just expired (users; exps,
-- their expiries as ZRANGE ... WITHSCORES gave them; vals, their tokens
-- values), those no answer carried go back to held, held from the expiry
-- (awayHoldSeconds 0: they leave at once, abandonedTotal), counted in
-- unseenExpiredTotal; holdq is set for them. The one step where an unseen
-- expiry happens (memq_idle.c's wr_memq__unseen_expiry on the embedded
-- store). Returns how many were held.
local function unseen_expire(users, exps, vals, now)
  local zs, seen = {}, {}
  for i = 1, #users do
    local v = vals[i]
    if v and string.sub(v, -2) == ':u' then
      zs[#zs + 1] = exps[i]
      zs[#zs + 1] = users[i]
    else
      seen[#seen + 1] = users[i]
    end
  end
  log_forget(seen) -- (their pass did its work: nothing more to the log)
  if GRP.on then
    GRP.forget(seen) -- (a held group member keeps their group)
  end
  local n = #zs / 2
  if n == 0 then
    return 0
  end
  redis.call('HINCRBY', K_STATE, 'unseenExpiredTotal', n)
  local gone = tonumber(redis.call('HGET', K_CONFIG, 'holdSec') or '1800') <= 0
  for i = 2, #zs, 2 do
    log_unseen(zs[i], gone, now)
  end
  if gone then
    redis.call('HINCRBY', K_STATE, 'abandonedTotal', n) -- held people leave at once
    if GRP.on then
      local users = {}
      for i = 2, #zs, 2 do
        users[#users + 1] = zs[i]
      end
      GRP.forget(users)
    end
    return 0
  end
  chunked('ZADD', K_HELD, zs)
  redis.call('HSET', K_CONFIG, 'holdq', '1')
  return n
end

-- Expires every token whose expiry <= now (active and tokens, counted in
-- expiredTotal; each returns its stock unit; an unseen one's holder is
-- held: unseen_expire) and ends every session whose end <= now (sessions
-- and sessjti, counted in sessionsExpiredTotal). Exact; no counter to
-- drift. Returns how many holders it held (> 0: holdq is set now).
local function expire_tokens(now)
  local gone = redis.call('ZRANGEBYSCORE', K_ACTIVE, '-inf', fmt(now), 'WITHSCORES')
  local held = 0
  if #gone > 0 then
    local users, exps, vals = {}, {}, {}
    for i = 1, #gone, 2 do
      users[#users + 1], exps[#exps + 1] = gone[i], gone[i + 1]
    end
    local i = 1
    while i <= #users do
      local j = math.min(i + 999, #users)
      local v = redis.call('HMGET', K_TOKENS, unpack(users, i, j))
      for k = 1, #v do
        vals[i + k - 1] = v[k]
      end
      i = j + 1
    end
    chunked('HDEL', K_TOKENS, users)
    chunked('ZREM', K_ACTIVE, users)
    redis.call('HINCRBY', K_STATE, 'expiredTotal', #users)
    stock_return(#users)
    held = unseen_expire(users, exps, vals, now)
  end
  expire_set(K_SESSIONS, K_SESSJTI, 'sessionsExpiredTotal', now)
  return held
end

-- The user's session end (a number) and jti when the user has one (ended
-- or not), else nil.
local function session_of(user)
  local e = redis.call('ZSCORE', K_SESSIONS, user)
  if not e then
    return nil
  end
  return tonumber(e), redis.call('HGET', K_SESSJTI, user)
end

-- Removes the user's session (the caller counts it).
local function session_drop(user)
  redis.call('ZREM', K_SESSIONS, user)
  redis.call('HDEL', K_SESSJTI, user)
end

-- Live tokens plus open sessions: what maxActive caps.
local function active_count()
  return redis.call('ZCARD', K_ACTIVE) + redis.call('ZCARD', K_SESSIONS)
end

-- The early answer of the token scripts (token.lua, release.lua) for the
-- config's enabled field v: -1 when there is no queue (v nil), 1
-- (passthrough) when the queue is disabled, nil when it is on.
local function token_gate(v)
  if not v then
    return -1
  end
  if v == '0' then
    return 1
  end
  return nil
end

-- Parses a tokens entry "jti:iat:exp", or "jti:iat:exp:u" while unseen
-- -> jti, iat, exp (numbers), unseen (bool); or nil.
local function parse_token(v)
  if not v then
    return nil
  end
  local jti, iat, exp, rest = string.match(v, '^([^:]+):(%d+):(%d+)(.*)$')
  if not jti or (rest ~= '' and rest ~= ':u') then
    return nil
  end
  return jti, tonumber(iat), tonumber(exp), rest == ':u'
end

-- The config version and, when the caller's known version differs, the
-- config JSON ('' otherwise). version is the stored integer string.
local function version_json(version, known, json)
  if known == version then
    return tonumber(version), ''
  end
  return tonumber(version), json or ''
end

-- ---- Sale opening (docs/DESIGN.md, "The sale opening") ----------------
-- Config hash: opensAt (epoch ms, '' = none), shuffle ('1'/'0'), and preq
-- = '1' while a pre-queue or its opening may exist (set by a pre-queue
-- join, removed when an opening ends): a poll of a queue without one
-- takes the hot path. State hash, while an opening runs: opening = '1',
-- openBase (line score of the first to move), openTotal, openMoved. The
-- opening begins (open_begin) at the first join, status or admit at or
-- after opensAt (at once when opensAt is none) that finds people in pre:
-- lastScore moves past base + total - 1, so every later arrival lines up
-- behind the whole pre-queue. admit moves OPEN_CHUNK at a time, in key
-- order (ZRANGE + ZREMRANGEBYRANK), to scores base + moved, base + moved + 1, ...; each
-- chunk and its progress counter are one script: exactly once, whichever
-- instance, and a crash between chunks loses and repeats nobody.
local OPEN_CHUNK = 2000

-- The opening draw (publicLog and preQueueShuffle; docs/DESIGN.md "The
-- opening draw on Redis"). A pre-queue join writes the commit first
-- (lib_log.lua) and is keyed by its arrival score t (not a random key);
-- when the opening is due it waits (open_begin: nobody moves or is
-- admitted, everyone answers prequeue) for its beacon's round, if any, at
-- most BEACON_WAIT_US after opensAt, then for the draw, which waitroomd
-- runs in steps (draw.lua): each drawn person's key becomes DRAW_BASE +
-- their rank's key (below 0, in rank order), the others move to the late
-- band; people who join while the opening waits get DRAW_LATE + t, behind
-- every drawn one, in arrival order, logged as line joins. The draw's
-- last step writes the draw leaf and begins the opening.
local DRAW_BASE, DRAW_LATE = -9007199254740992, 4503599627370496 -- -2^53, 2^52 (exact)
local BEACON_WAIT_US = 60000000

-- True when a due opening waits for its draw: publicLog and
-- preQueueShuffle on and a commit awaiting its draw.
local function draw_waits()
  return log_on() and log_committed() and redis.call('HGET', K_CONFIG, 'shuffle') ~= '0'
end

-- Of an opening that waits for its draw (draw_waits) at now: true when the
-- draw may run (no beacon, the beacon answered, or BEACON_WAIT_US passed
-- since opensAt, ms or nil), false while it waits for its beacon.
local function draw_due(opens_at, now)
  local d = redis.call('HMGET', K_LOG, 'dbeacon', 'drand', 'derr')
  return not d[1] or d[2] ~= false or d[3] ~= false or not opens_at or
    now >= opens_at * 1000 + BEACON_WAIT_US
end

-- opensAt of the config hash field v: a number (ms), or nil for none.
local function opens_at_of(v)
  if not v or v == '' then
    return nil
  end
  return tonumber(v)
end

-- The opening in progress: opening (bool), base, total, moved.
local function open_state()
  local st = redis.call('HMGET', K_STATE, 'opening', 'openBase', 'openTotal', 'openMoved')
  return st[1] == '1', tonumber(st[2] or '0'), tonumber(st[3] or '0'), tonumber(st[4] or '0')
end

-- Begins the opening when it is due at now (pre not empty, opensAt none or
-- passed) unless it waits for its draw (then the fifth value is true);
-- returns the state after.
local function open_begin(opens_at, now)
  local opening, base, total, moved = open_state()
  if opening then
    return opening, base, total, moved
  end
  local n = redis.call('ZCARD', K_PRE)
  if n == 0 then
    redis.call('HDEL', K_CONFIG, 'preq')
    return false, 0, 0, 0
  end
  if opens_at and now < opens_at * 1000 then
    return false, 0, 0, 0
  end
  if draw_waits() then
    return false, 0, 0, 0, true
  end
  local last = tonumber(redis.call('HGET', K_STATE, 'lastScore') or '0')
  base, total = last + 1, n
  redis.call('HSET', K_STATE, 'opening', '1', 'openBase', fmt(base), 'openTotal', fmt(total),
    'openMoved', '0', 'lastScore', fmt(base + total - 1))
  return true, base, total, 0
end

-- Ends the opening when nobody is left to move; true when it did.
local function open_settle()
  if redis.call('ZCARD', K_PRE) > 0 then
    return false
  end
  redis.call('HDEL', K_STATE, 'opening', 'openBase', 'openTotal', 'openMoved')
  redis.call('HDEL', K_CONFIG, 'preq')
  return true
end

-- Moves up to k people of pre (lowest keys first) into the line. Returns
-- how many moved and how many are left.
local function open_move(base, moved, k)
  -- members only (ZPOPMIN would format every score), then one range delete
  local users = redis.call('ZRANGE', K_PRE, 0, k - 1)
  local n = #users
  if n > 0 then
    redis.call('ZREMRANGEBYRANK', K_PRE, 0, n - 1)
    local zs = {}
    for i = 1, n do
      zs[2 * i - 1] = fmt(base + moved + i - 1)
      zs[2 * i] = users[i]
    end
    chunked('ZADD', K_WAITING, zs)
  end
  if open_settle() then
    return n, 0
  end
  redis.call('HSET', K_STATE, 'openMoved', fmt(moved + n))
  return n, redis.call('ZCARD', K_PRE)
end

-- People in line below the moved part (all of them when no opening runs):
-- whom admission may take.
local function admissible(opening, base, moved)
  if not opening then
    return redis.call('ZCARD', K_WAITING)
  end
  return redis.call('ZCOUNT', K_WAITING, '-inf', '(' .. fmt(base + moved))
end

-- Stats after expiry, in this order (the names of R_ADMIT and R_QUEUE_GET,
-- scripts.def, that the caller writes them to): the 11 counts of
-- wr_queue_stats_t WAITING, ACTIVE, ADMITTED_TOTAL, CONSUMED_TOTAL,
-- EXPIRED_TOTAL, LEFT_TOTAL, REJECTED_FULL_TOTAL, SESSIONS, RELEASED_TOTAL,
-- SESSIONS_EXPIRED_TOTAL, ABANDONED_TOTAL, then PREQUEUE, AWAY, HELD,
-- RETURNED_TOTAL, UNSEEN_EXPIRED_TOTAL, STOCK_LEFT (-1: no stock),
-- SOLD_OUT_AT (us, -1 while not sold out), BYPASS_TOTAL (bypass.lua's
-- count), SUBSCRIBED (the push hash's live Web Push subscriptions), and
-- last the admissions of priority groups removed from the config (state
-- removedAdmitted, config_put.lua: not the standard line's). People
-- still to move in a running opening and the groups' lines count in
-- waiting. away: the line's away set plus the held.
local function stats()
  local c = redis.call('HMGET', K_STATE, 'admittedTotal', 'consumedTotal', 'expiredTotal',
    'leftTotal', 'rejectedFullTotal', 'releasedTotal', 'sessionsExpiredTotal', 'abandonedTotal',
    'opening', 'returnedTotal', 'stockLeft', 'soldOutAt', 'unseenExpiredTotal', 'bypassTotal',
    'removedAdmitted')
  local sold_at = -1
  if c[11] == '0' and c[12] and redis.call('ZCARD', K_ACTIVE) == 0 then
    sold_at = tonumber(c[12])
  end
  local pre = redis.call('ZCARD', K_PRE)
  if not GRP.loaded then
    GRP.lib(redis.call('HGET', K_CONFIG, 'grp'))
  end
  local waiting, prequeue = redis.call('ZCARD', K_WAITING), pre
  if GRP.on then
    local _, g = GRP.lens()
    waiting = waiting + g
  end
  if c[9] == '1' then
    waiting, prequeue = waiting + pre, 0
  end
  local held = redis.call('ZCARD', K_HELD) + redis.call('ZCARD', K_BACK)
  return waiting, active_count(), tonumber(c[1] or 0), tonumber(c[2] or 0),
    tonumber(c[3] or 0), tonumber(c[4] or 0), tonumber(c[5] or 0),
    redis.call('ZCARD', K_SESSIONS), tonumber(c[6] or 0), tonumber(c[7] or 0),
    tonumber(c[8] or 0), prequeue, redis.call('SCARD', K_AWAY) + held, held,
    tonumber(c[10] or 0), tonumber(c[13] or 0), tonumber(c[11] or '-1'), sold_at,
    tonumber(c[14] or 0), redis.call('HLEN', K_PUSH), tonumber(c[15] or 0)
end

-- Away, not gone (idleTimeoutSeconds, T; docs/API.md 1.2). seen holds each
-- waiting user's last join or poll t (store clock, us) and whether they are
-- a pending page join p (1: joined by the queue page, not asked again
-- since; admission passes over them), as one integer 2 * t + p (exact
-- below 2^53: t < 4.5e15, the year 2112). It holds users of the line, the
-- pre-queue and back (never held): whoever leaves them (admitted, left,
-- abandoned, held) leaves seen too. A waiting user without a seen entry
-- (in line before this existed) is never away until their next join or
-- poll records one. A user idle by the rule below is away: they keep
-- their place; only a pending page join that is idle leaves (abandoned).
-- The sweep (below) marks the away people of the line in the away set
-- (stats away); a recorded request unmarks them.
--
-- Held. When admission reaches an away user, their turn has come: they
-- leave the line for held (score: the time, us). Their next join or poll
-- moves them to back (score: the time); the next tick admits back first,
-- within its budget and maxActive, and one away again by then is held anew.
-- Held people not back holdSec (awayHoldSeconds) after being held leave
-- (abandonedTotal); holdSec 0: at once. The config hash's holdq = '1'
-- while held or back may hold anyone, so a newcomer's join (the hot path)
-- needs no look at them otherwise.
--
-- A HASH, not a ZSET ordered by t: a ZSET of N users beside the line made
-- every poll's ZRANK slower (its skiplist nodes interleave with the
-- line's) and a ZADD of a new score walks it (4.5 us at 200k users); HSET
-- is O(1) (0.4 us). So the sweep is a clock hand (HSCAN from a cursor kept
-- in state, bounded per tick) rather than oldest first, as in the embedded
-- store.
--
-- Cost per poll. Recording still costs TIME, an HGET and an HSET, so a
-- poll may come as a quiet status (entry.lua mode '3', store.h
-- status_quiet), which records nothing: the instance sends it only within
-- G = T/4 (30 s while T = 0) after a join or status of that user that
-- recorded t (it sends that one before measuring, and keeps it only when
-- answered WAITING; seencache.h). So a user's real last request is less
-- than G after the recorded t, and a user is idle when t is T + G old or
-- more: never early; at most G late (the embedded store's is exact).

-- An outage does not count as silence. While no instance reaches Redis
-- (Redis down or unreachable from all of them, or no instance running),
-- nobody's poll can be recorded, and after it everyone would look idle at
-- once. Redis sees such a gap itself: no admission tick ran (every
-- instance runs one per tickMs). So a call (an admission tick, or a join
-- or poll that reads the clock: it may reach Redis before any tick does)
-- that finds OUTAGE_US or more of ticks nobody ran since the last one
-- starts a grace (state idleGrace, store clock us): until T + G +
-- RECONNECT_US after that moment nobody is idle, neither on read nor in
-- the sweep, and everyone has a whole timeout to ask again; their requests
-- record as usual meanwhile. A partition of one instance while others
-- still tick is not seen, and counts (docs/API.md).
local OUTAGE_US = 5000000
-- The grace is T + G + RECONNECT_US long: an instance notices that Redis is
-- back within about 5 s (its circuit breaker's longest wait, breaker.h),
-- and its people need a whole timeout from then on.
local RECONNECT_US = 10000000

-- The helpers below are made on demand (idle_lib()): a quiet poll, the hot
-- path, needs none of them, and every function a script defines is
-- created anew on every call of the script.
local function idle_lib()
  local L, GRP = {}, GRP -- (one look-up of GRP for the functions below)

  -- The idle timeout T in us from the config's idleSec (absent: 120 s).
  function L.idle_us(v)
    return tonumber(v or '120') * 1000000
  end

  -- G: the staleness t may have (wr_store_seen_window_us in store.h).
  function L.slack(idle)
    if idle > 0 then
      return math.floor(idle / 4)
    end
    return 30000000
  end

  -- Decodes a seen value (HGET's string, or false): t, pending; nil when
  -- there is none.
  function L.seen_of(v)
    if not v then
      return nil, false
    end
    local s = tonumber(v)
    local p = s % 2
    return (s - p) / 2, p == 1
  end

  -- The idle timeout in force at now for a timeout of idle us: idle, or 0
  -- (nobody is idle) during the grace after an outage (see OUTAGE_US).
  -- grace: state's idleGrace (a string or false). gap_us: L.gap_us, the
  -- ticks nobody ran (nil when unknown); OUTAGE_US or more starts the grace
  -- now.
  function L.in_force(idle, now, grace, gap_us)
    if idle <= 0 then
      return idle
    end
    local until_us = tonumber(grace or '0') or 0
    if gap_us and gap_us >= OUTAGE_US then
      -- (written again only when it moves by a second or more: every call
      -- before the next tick sees the same gap)
      local want = now + idle + L.slack(idle) + RECONNECT_US
      if want >= until_us + 1000000 then
        redis.call('HSET', K_STATE, 'idleGrace', fmt(want))
        until_us = want
      end
    end
    if now < until_us then
      return 0
    end
    return idle
  end

  -- awayHoldSeconds in us from the config's holdSec (absent: 1800 s).
  function L.hold_us(v)
    return tonumber(v or '1800') * 1000000
  end

  -- us of the ticks (tick_ms long) that no admission call ran between the
  -- last one (state lastTick, a string or false) and now's: 0 when now is
  -- in that tick or the next; nil when no tick ran yet (a new queue, or
  -- tickMs just changed). So a long tickMs (up to 10 s) is no outage.
  function L.gap_us(now, last_tick, tick_ms)
    local last = tonumber(last_tick or '-1') or -1
    if last < 0 then
      return nil
    end
    return math.max(0, idiv(now, tick_ms * 1000) - last - 1) * tick_ms * 1000
  end

  -- True when a user last seen at t (nil: unknown) is idle at now.
  function L.is_idle(t, now, idle)
    return idle > 0 and t ~= nil and t + idle + L.slack(idle) <= now
  end

  -- L.is_idle for user, who is never idle while subscribed (Web Push: a
  -- subscribed person is present without polling; memq_idle.c's
  -- wr_memq_idle): one HEXISTS, only for a user idle by the clock.
  function L.away(user, t, now, idle)
    return L.is_idle(t, now, idle) and redis.call('HEXISTS', K_PUSH, user) == 0
  end

  -- Records t = now for user, pending or not (no longer away).
  function L.seen_set(user, now, pending)
    redis.call('HSET', K_SEEN, user, fmt(2 * now + (pending and 1 or 0)))
    redis.call('SREM', K_AWAY, user)
  end

  -- Holds users (a list, in the line or back) whose turn came while away,
  -- at now: into held (score now), out of the line, back, seen and the
  -- away set; with hold (awayHoldSeconds, us) 0 they leave at once
  -- (abandonedTotal).
  function L.hold(users, now, hold)
    if #users == 0 then
      return
    end
    chunked('ZREM', K_WAITING, users)
    chunked('ZREM', K_BACK, users)
    if GRP.on then
      GRP.unline(users) -- (held, a group member keeps their group)
    end
    chunked('HDEL', K_SEEN, users)
    chunked('SREM', K_AWAY, users)
    if hold <= 0 then
      log_abandoned(users, now)
      if GRP.on then
        GRP.forget(users)
      end
      redis.call('HINCRBY', K_STATE, 'abandonedTotal', #users)
      return
    end
    local zs, snow = {}, fmt(now)
    for i = 1, #users do
      zs[2 * i - 1] = snow
      zs[2 * i] = users[i]
    end
    chunked('ZADD', K_HELD, zs)
    redis.call('HSET', K_CONFIG, 'holdq', '1')
  end

  -- Held people held hold us or longer at now leave (abandonedTotal), at
  -- most max of them, oldest first.
  function L.held_expire(now, hold, max)
    local gone = redis.call('ZRANGEBYSCORE', K_HELD, '-inf', fmt(now - hold), 'LIMIT', 0, max)
    if #gone > 0 then
      chunked('ZREM', K_HELD, gone)
      log_abandoned(gone, now)
      if GRP.on then
        GRP.forget(gone)
      end
      redis.call('HINCRBY', K_STATE, 'abandonedTotal', #gone)
    end
  end

  -- Removes users (a list) from the line or the pre-queue (sale opening:
  -- idleTimeoutSeconds applies there too) as idle, counting those that
  -- were still in one in abandonedTotal (a scan may return a user twice).
  function L.abandon(users)
    local n, p, i = 0, 0, 1
    while i <= #users do
      local j = math.min(i + 999, #users)
      n = n + redis.call('ZREM', K_WAITING, unpack(users, i, j))
      p = p + redis.call('ZREM', K_PRE, unpack(users, i, j))
      i = j + 1
    end
    if GRP.on then -- (page joins in a group's line)
      n = n + GRP.unline(users)
      GRP.forget(users)
    end
    chunked('HDEL', K_SEEN, users)
    chunked('SREM', K_AWAY, users)
    log_forget(users) -- (pending page joins: never counted, no leaf)
    if n + p > 0 then
      redis.call('HINCRBY', K_STATE, 'abandonedTotal', n + p)
    end
    if p > 0 and redis.call('HGET', K_STATE, 'opening') == '1' then
      open_settle()
    end
  end

  -- The clock sweep: from the cursor in state, looks at enough users of
  -- seen to go round it once per G (tick_ms the time between calls), at
  -- least 256 (a hash that small whole every call) and at most visit_max:
  -- removes the idle pending page joins, at most remove_max; marks the
  -- idle others of the line in the away set and unmarks those no longer
  -- idle; the cursor stays where it stopped. Removal and marking therefore
  -- come at most about G after the idle rule holds. (Looking at 8192 users
  -- every 100 ms tick cost 1.5 us per poll in the 200k-user benchmark.)
  -- Without a timeout in force (0, or the grace after an outage) nobody
  -- is away: the away set is emptied.
  function L.sweep(now, idle, remove_max, visit_max, tick_ms)
    if idle <= 0 then
      redis.call('DEL', K_AWAY)
      return
    end
    local marked = redis.call('SCARD', K_AWAY) > 0
    local n = redis.call('HLEN', K_SEEN)
    local want = math.ceil(n * tick_ms * 1000 / L.slack(idle))
    visit_max = math.min(visit_max, math.max(256, want))
    local cursor = redis.call('HGET', K_STATE, 'idleCursor') or '0'
    local gone, away, back = {}, {}, {}
    local visited = 0
    repeat
      local r = redis.call('HSCAN', K_SEEN, cursor, 'COUNT', 256)
      cursor = r[1]
      local kv = r[2]
      for i = 1, #kv, 2 do
        local t, pending = L.seen_of(kv[i + 1])
        if L.away(kv[i], t, now, idle) then
          if pending then
            if #gone < remove_max then
              gone[#gone + 1] = kv[i]
            end
          elseif redis.call('ZSCORE', K_WAITING, kv[i]) or (GRP.on and GRP.in_line(kv[i])) then
            away[#away + 1] = kv[i] -- (people of the pre-queue and back are not marked)
          end
        elseif marked then
          back[#back + 1] = kv[i]
        end
      end
      visited = visited + #kv / 2
    until cursor == '0' or visited >= visit_max or #gone >= remove_max
    redis.call('HSET', K_STATE, 'idleCursor', cursor)
    if #gone > 0 then
      L.abandon(gone)
    end
    if #away > 0 then
      chunked('SADD', K_AWAY, away)
    end
    if #back > 0 then
      chunked('SREM', K_AWAY, back)
    end
  end

  return L
end
