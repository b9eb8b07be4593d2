-- admit.lua - one admission tick (lib.lua prepended).
-- ARGV: A_ADMIT (scripts.def): SEED, a per-call random seed (hex);
-- VERSION, the known config version; SWEEP_MAX, idle users removed per
-- call, at most; SCAN_MAX, pending or idle users passed over per call, at
-- most; VISIT_MAX, users the idle sweep looks at per call, about
-- (WR_STORE_IDLE_SWEEP_MAX, WR_STORE_ADMIT_SCAN_MAX, WR_STORE_IDLE_VISIT_MAX).
-- Reply: R_ADMIT (scripts.def): CODE, ADMITTED (users admitted by this
-- call), NOW_US, the config part (VERSION, JSON), the stats (lib.lua's
-- stats()), WAITS, OPEN_MOVED, OPEN_LEFT.
--   STOCK_LEFT: what is left of the stock (-1: no stock); SOLD_OUT_AT: us
--   the queue became sold out (-1 while it is not).
-- The end of a sale (lib.lua, "Stock"): while the config says closed, or
-- stockLeft is 0, nobody is admitted and no budget accrues; otherwise the
-- tick admits at most stockLeft and takes what it admitted from it, in
-- this same script (a crash never admits beyond the stock).
--   WAITS: for each user admitted by this call, now_us - arrival score (us).
--   OPEN_MOVED / OPEN_LEFT: the sale opening's chunk moved by this call and
--   the people still to move (> 0: the caller calls again at once).
--   PUSHES, CLOSING, CLOSING_PUSHES: Web Push, see push_claim and "The
--   closing push" below. PUSH (ARGV): '1' when the caller sends pushes.
--   DRAW: 1 when the opening waits for its draw and the draw may run now
--   (lib.lua, "The opening draw"), else 0.
-- Sale opening (lib.lua): before opensAt nobody is admitted and no budget
-- accrues; from it on each call first moves the next chunk of the
-- pre-queue into the line (also while paused, and in a tick already run),
-- and admits only people below the moved part while some are left.
--   CODE: 0 ok, -1 no queue.
-- Away, not gone (lib.lua): the first call of each tick first runs the
-- bounded clock sweep (idle pending page joins removed, away people
-- marked) and removes held people past awayHoldSeconds; admission takes
-- the held who came back first, then the first users in line order that
-- are neither pending page joins (passed over, keeping their place) nor
-- away (held: out of the line, until they ask again). All in this one
-- script: a crash of the instance at any moment loses nobody. The public
-- log (lib_log.lua): an away leaf for each person of the line held, then
-- an admit leaf for each admitted ("held" for the returns), in this
-- script, in that order. A call that finds 5 s of ticks
-- nobody ran (an outage: nobody could record a poll) starts the grace of
-- lib.lua's OUTAGE_US, in which nobody is idle.
-- Budget (queue.h, integer micro-users): tick = floor(now / tickMs); a tick
-- equal to lastTick admits nobody (another instance ran it); a tick below
-- it comes from a Redis clock that stepped back: it runs as a new tick
-- (API 1.2: a clock step never stops admission). Accrual only when
-- enabled, not paused and the line is not empty; one tick's worth whatever
-- the gap since lastTick (K24: no tick admits more than one tick's budget
-- after a late timer, a stall or an outage); carry kept only when every
-- allowed user was admitted. Nobody is admitted sooner than the admission
-- delay (250 ms, queue.h) after their arrival score.
-- Priority groups (lib_group.lua): the held returns count toward their own
-- lines, the rest of the tick is split between the lines by GRP.split
-- (take_groups), each line picked from its front by the same bounded scan
-- (pick); the admit leaves name the group; per-line counts and the last
-- minute's rate in gstat; LINES the stats per line.
-- The rate in use (store.h wr_store_rate_in_use): without autotune the
-- config's rate; with it (config field autotune = "min:max:targetMs") the
-- rate autotune.lua keeps (state autoRate), or the config's rate (where it
-- starts) while none is kept, clamped into [min, max]. The budget below
-- computes with it exactly as with a configured rate.
local function rate_in_use(rate)
  local at = redis.call('HGET', K_CONFIG, 'autotune')
  local lo, hi = string.match(at or '', '^([^:]+):([^:]+):')
  if not lo then
    return rate
  end
  lo, hi = tonumber(lo), tonumber(hi)
  local kept = tonumber(redis.call('HGET', K_STATE, 'autoRate') or '0') or 0
  local r = kept > 0 and kept or rate
  return math.min(math.max(r, lo), hi)
end

local R = R_ADMIT
local out = R._NEW
local seed, known = ARGV[A_ADMIT.SEED], ARGV[A_ADMIT.VERSION]
local sweep_max = tonumber(ARGV[A_ADMIT.SWEEP_MAX])
local scan_max, visit_max = tonumber(ARGV[A_ADMIT.SCAN_MAX]), tonumber(ARGV[A_ADMIT.VISIT_MAX])
local cfg = redis.call('HMGET', K_CONFIG, 'version', 'enabled', 'paused', 'rate', 'tickMs',
  'maxActive', 'ttlSec', 'json', 'idleSec', 'opensAt', 'preq', 'holdSec', 'holdq', 'closed', 'grp',
  'shareMicro')
if not cfg[1] then
  out[R.CODE], out[R.STOCK_LEFT], out[R.SOLD_OUT_AT] = -1, -1, -1
  return out
end
out[R.VERSION], out[R.JSON] = version_json(cfg[1], known, cfg[8])
group_lib(cfg[15]) -- (lib_group.lua: a queue with groups never takes the quiet path)
local now = now_us()
out[R.NOW_US] = now
-- A quiet queue (K29; store.h wr_store_admit_quiet): no line, pre-queue,
-- token, session, seen entry, held or returned person, no pre-queue or
-- held flag (away people are in the line). The full path below
-- would change only lastTick, carryMicro (0: nothing accrues on an empty
-- line), the sweep's cursor (to 0: it finds seen empty) and, after a gap,
-- idleGrace; this does the same in 5 commands instead of about 17.
-- SUBSCRIBED stays R._NEW's 0: a subscription's person is in the line, the
-- pre-queue or held (push.lua), none of which a quiet queue has.
if cfg[11] ~= '1' and cfg[13] ~= '1' and not GRP.on and
    redis.call('EXISTS', K_WAITING, K_ACTIVE, K_SESSIONS, K_PRE, K_SEEN, K_HELD, K_BACK) == 0 then
  local q = redis.call('HMGET', K_STATE, 'lastTick', 'idleGrace', 'admittedTotal',
    'consumedTotal', 'expiredTotal', 'leftTotal', 'rejectedFullTotal', 'releasedTotal',
    'sessionsExpiredTotal', 'abandonedTotal', 'returnedTotal', 'stockLeft', 'soldOutAt',
    'unseenExpiredTotal', 'bypassTotal', 'pushClosed', 'removedAdmitted')
  -- (nobody to push to here; a sale open again clears the closing pushed)
  if q[16] and cfg[14] ~= '1' and q[12] ~= '0' then
    redis.call('HDEL', K_STATE, 'pushClosed')
  end
  local qtick_ms = tonumber(cfg[5])
  local QI = idle_lib()
  local qidle = QI.in_force(QI.idle_us(cfg[9]), now, q[2], QI.gap_us(now, q[1], qtick_ms))
  if idiv(now, qtick_ms * 1000) > tonumber(q[1] or '-1') then
    local t = fmt(idiv(now, qtick_ms * 1000))
    if qidle > 0 then
      redis.call('HSET', K_STATE, 'lastTick', t, 'carryMicro', '0', 'idleCursor', '0')
    else
      redis.call('HSET', K_STATE, 'lastTick', t, 'carryMicro', '0')
    end
  end
  local function n(v)
    return tonumber(v or 0)
  end
  -- (no token: stockLeft 0 is sold out, soldOutAt set by whoever made it so)
  local sold_at = -1
  if q[12] == '0' and q[13] then
    sold_at = tonumber(q[13])
  end
  out[R.ADMITTED_TOTAL], out[R.CONSUMED_TOTAL] = n(q[3]), n(q[4])
  out[R.EXPIRED_TOTAL], out[R.LEFT_TOTAL], out[R.REJECTED_FULL_TOTAL] = n(q[5]), n(q[6]), n(q[7])
  out[R.RELEASED_TOTAL], out[R.SESSIONS_EXPIRED_TOTAL] = n(q[8]), n(q[9])
  out[R.ABANDONED_TOTAL], out[R.RETURNED_TOTAL] = n(q[10]), n(q[11])
  out[R.STOCK_LEFT], out[R.SOLD_OUT_AT] = tonumber(q[12] or '-1'), sold_at
  out[R.UNSEEN_EXPIRED_TOTAL] = n(q[14])
  out[R.BYPASS_TOTAL] = n(q[15])
  if n(q[17]) > 0 then -- (removed groups' admissions: not the standard line's)
    out[R.LINES] = {0, math.max(0, n(q[3]) - n(q[17]))}
  end
  return out
end
-- (an unseen pass that expires holds its holder: held then, lib.lua)
local unseen_held = expire_tokens(now)
local I = idle_lib()
local tick_ms = tonumber(cfg[5])
local tick = idiv(now, tick_ms * 1000)
local st = redis.call('HMGET', K_STATE, 'lastTick', 'carryMicro', 'idleGrace')
local last_tick = tonumber(st[1] or '-1')
-- no tick since OUTAGE_US or more: the grace after an outage (lib.lua)
local idle = I.in_force(I.idle_us(cfg[9]), now, st[3], I.gap_us(now, st[1], tick_ms))
-- once per tick, by the instance that runs it (every instance calls admit
-- each tick; the sweep's pace assumes one sweep per tick)
local hold = I.hold_us(cfg[12])
local holdq = cfg[13] == '1' or unseen_held > 0
if tick ~= last_tick then
  I.sweep(now, idle, sweep_max, visit_max, tick_ms)
  if holdq then
    I.held_expire(now, hold, sweep_max)
  end
end

local opens_at = opens_at_of(cfg[10])
local opening, obase, omoved_before = false, 0, 0
local omoved, oleft, drawing = 0, 0, false
if cfg[11] == '1' then
  local _
  opening, obase, _, omoved_before, drawing = open_begin(opens_at, now)
  if opening then
    omoved, oleft = open_move(obase, omoved_before, OPEN_CHUNK)
    opening = oleft > 0
  end
end
-- (an opening waiting for its draw admits nobody; DRAW asks the caller
-- to run the draw once it may: store_redis_draw.c)
local closed = drawing or (not opening and opens_at and now < opens_at * 1000)
if drawing and draw_due(opens_at, now) then
  out[R.DRAW] = 1
end
-- while people are left to move, admission stops below the moved part
local limit = opening and obase + omoved_before + omoved or nil

-- A line to pick from (pick): its key, the score no one at or above is
-- looked at (the sale opening's moved part; nil none), where the next
-- pick goes on (start, 0-based), the people passed over so far (passed),
-- whether nobody more can be picked (done: its end, the admission delay,
-- the limit or scan_max), whether a pick stopped only at its quota
-- (more), and what it picked (users, scores; line: picked from the line).
local function line_new(key, lim)
  return {key = key, limit = lim, start = 0, passed = 0, done = false, more = false, users = {},
    scores = {}}
end

-- Picks up to quota more users of line L, going on where its last pick
-- stopped, in line order, passing over pending page joins (they keep
-- their place), collecting idle pending ones met on the way into gone (to
-- abandon) and away ones into held (their turn came: held; their away leaf
-- logged now, before any admission of this call); at most scan_max passed
-- over. It stops at the first user still within the admission delay
-- (lib.lua admit_due): nobody behind them is due either, scores being in
-- order. One HGET per user looked at.
local function pick(L, quota, gone, held)
  local got = 0
  L.more = false
  while got < quota and not L.done do
    local chunk = redis.call('ZRANGE', L.key, L.start, L.start + math.min(quota - got + 63, 999),
      'WITHSCORES')
    if #chunk == 0 then
      L.done = true
      break
    end
    local i = 1
    while i <= #chunk do
      local score = tonumber(chunk[i + 1])
      if L.passed >= scan_max or admit_due(score, now) > 0 or (L.limit and score >= L.limit) then
        L.done = true -- (nobody behind the people not yet moved, nor the young)
        break
      end
      if got >= quota then
        L.more = true
        break
      end
      local u = chunk[i]
      local t, pending = I.seen_of(redis.call('HGET', K_SEEN, u))
      if I.away(u, t, now, idle) then
        if pending then
          gone[#gone + 1] = u -- a page join that never asked again
        else
          held[#held + 1] = u -- their turn came while away
          log_member(u, 'away', '', now) -- (before any admission of this call)
        end
        L.passed = L.passed + 1
      elseif pending then
        L.passed = L.passed + 1
      else
        L.users[#L.users + 1] = u
        L.scores[#L.users] = score
        got = got + 1
      end
      i = i + 2
    end
    L.start = L.start + (i - 1) / 2
    if got >= quota and i > #chunk then
      L.more = true -- (the next chunk may hold more)
    end
  end
  return got
end

-- The picks of a tick on a queue with priority groups (docs/API.md
-- "Groups, precisely"; memq_admit.c): the held returns (users[1..nback])
-- count toward their own lines (gm); GRP.split (lib_group.lua: the
-- standard line's share kept exactly, its carry in state shareCarry) says
-- how many of each line the tick takes; each line is picked from its
-- front, the standard line first, then the groups in priority order; what
-- a line could not use (people passed over, the admission delay) goes to
-- the others in a second pass: the groups in order, then the standard
-- line. Returns the lines in that order (standard first), with their picks.
local function take_groups(n, users, nback, gone, held)
  local nl = GRP.n + 1
  local lines, heldn, avail = {line_new(K_WAITING, limit)}, {0}, {}
  for i = 1, GRP.n do
    lines[i + 1] = line_new(GRP.key(GRP.slot[i]), nil)
    lines[i + 1].slot, heldn[i + 1] = GRP.slot[i], 0
  end
  if nback > 0 then
    local s = redis.call('HMGET', KEYS[27], unpack(users, 1, nback))
    for i = 1, nback do
      local l = (s[i] and GRP.line[tonumber(s[i])] or 0) + 1
      heldn[l] = heldn[l] + 1
    end
  end
  avail[1] = math.min(admissible(opening, obase, omoved_before + omoved), n)
  for l = 2, nl do
    avail[l] = math.min(redis.call('ZCARD', lines[l].key), n)
  end
  local carry = tonumber(redis.call('HGET', K_STATE, 'shareCarry') or '0') or 0
  local quota
  quota, carry = GRP.split(n, tonumber(cfg[16] or '200000'), carry, heldn, avail)
  redis.call('HSET', K_STATE, 'shareCarry', fmt(carry))
  local picked = nback
  for l = 1, nl do
    if quota[l] > 0 then
      lines[l].started = true
      picked = picked + pick(lines[l], quota[l], gone, held)
    end
  end
  for k = 2, nl + 1 do
    local L = lines[(k - 1) % nl + 1]
    if picked < n and (L.more or not L.started) then
      L.started = true
      picked = picked + pick(L, n - picked, gone, held)
    end
  end
  return lines
end

-- The n users to admit, the scores their waits count from, how many came
-- from back (the first ones), and each one's group slot (slots[i], nil
-- for the standard line): first the held who came back (back, in return
-- order; one away again is held anew), then the lines: the standard line
-- alone without groups, else take_groups' split. Removes them from their
-- lines; abandons and holds whom the picks met.
local function take(n)
  local users, scores, gone, held, slots = {}, {}, {}, {}, {}
  local nback = 0
  if holdq then
    local b = redis.call('ZRANGE', K_BACK, 0, n - 1, 'WITHSCORES')
    for i = 1, #b, 2 do
      if I.away(b[i], I.seen_of(redis.call('HGET', K_SEEN, b[i])), now, idle) then
        held[#held + 1] = b[i] -- away again: not admitted
      else
        users[#users + 1] = b[i]
        scores[#users] = tonumber(b[i + 1])
      end
    end
    nback = #users
    if nback > 0 then
      chunked('ZREM', K_BACK, users)
    end
  end
  local lines
  if GRP.on then
    lines = take_groups(n, users, nback, gone, held)
  else
    lines = {line_new(K_WAITING, limit)}
    pick(lines[1], n - nback, gone, held)
  end
  for _, L in ipairs(lines) do
    for k = 1, #L.users do
      users[#users + 1], scores[#users + 1], slots[#users + 1] = L.users[k], L.scores[k], L.slot
    end
  end
  if #gone > 0 then
    I.abandon(gone)
  end
  I.hold(held, now, hold)
  for _, L in ipairs(lines) do
    if #L.users > 0 then
      chunked('ZREM', L.key, L.users)
    end
  end
  if GRP.on and nback > 0 then -- (held returns count toward their own line)
    local s = redis.call('HMGET', KEYS[27], unpack(users, 1, nback))
    for i = 1, nback do
      slots[i] = tonumber(s[i])
    end
  end
  return users, scores, nback, slots
end

local admitted = 0
local waits = {}
local per_line = {} -- admissions per line (0 the standard line, else a group's slot)

-- Web Push (docs/API.md 1.3): the subscriptions of the people this call
-- admits are claimed - taken out of the push hash in this same script, so
-- exactly one admit call, on whichever instance, hands each admission's
-- push over (memq_push.c wr_memq__push_claim): PUSHES, user, pass expiry
-- (us), subscription triples. A_ADMIT.PUSH is '1' when the calling
-- instance sends pushes (waitroomd --push-subject); a call of one that
-- does not parks its claims in pushdue instead, and the next call of one
-- that does hands those over too (the ones whose pass is still live), so
-- an instance without push in the fleet loses no push.
local sender = ARGV[A_ADMIT.PUSH] == '1'
local pushes = {}
local function push_claim(users, exp)
  if redis.call('EXISTS', K_PUSH) == 0 then
    return
  end
  local claimed, due, sexp, i = {}, {}, fmt(exp), 1
  while i <= #users do
    local j = math.min(i + 999, #users)
    local subs = redis.call('HMGET', K_PUSH, unpack(users, i, j))
    for k = 1, #subs do
      local u = users[i + k - 1]
      if subs[k] and sender then
        claimed[#claimed + 1] = u
        pushes[#pushes + 1], pushes[#pushes + 2], pushes[#pushes + 3] = u, exp, subs[k]
      elseif subs[k] then
        claimed[#claimed + 1] = u
        due[#due + 1], due[#due + 2] = u, sexp .. ' ' .. subs[k]
      end
    end
    i = j + 1
  end
  chunked('HDEL', K_PUSH, claimed) -- (nothing when empty; pairs of due never split)
  chunked('HSET', K_PUSHDUE, due)
end

-- A sender's call takes what other instances parked (push_claim).
local function push_due(now)
  if not sender or redis.call('EXISTS', K_PUSHDUE) == 0 then
    return
  end
  local kv = redis.call('HGETALL', K_PUSHDUE)
  redis.call('DEL', K_PUSHDUE)
  for i = 1, #kv, 2 do
    local exp, sub = string.match(kv[i + 1], '^(%d+) (.*)$')
    if exp and tonumber(exp) > now then
      pushes[#pushes + 1], pushes[#pushes + 2], pushes[#pushes + 3] = kv[i], tonumber(exp), sub
    end
  end
end

local B64 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_'
local function ch(v)
  return string.sub(B64, v + 1, v + 1)
end
-- 128-bit jti, base64url (22 chars), from sha1(seed:i): deterministic given
-- the seed, so effect replication stays exact.
local function jti_for(i)
  local h = redis.sha1hex(seed .. ':' .. string.format('%d', i))
  local out = {}
  for g = 0, 4 do
    local v = tonumber(string.sub(h, g * 6 + 1, g * 6 + 6), 16)
    out[#out + 1] = ch(math.floor(v / 262144) % 64)
    out[#out + 1] = ch(math.floor(v / 4096) % 64)
    out[#out + 1] = ch(math.floor(v / 64) % 64)
    out[#out + 1] = ch(v % 64)
  end
  local b = tonumber(string.sub(h, 31, 32), 16)
  out[#out + 1] = ch(math.floor(b / 4))
  out[#out + 1] = ch((b % 4) * 16)
  return table.concat(out)
end

if tick ~= last_tick then
  -- held returns are admitted first
  local waiting = admissible(opening, obase, omoved_before + omoved)
  if GRP.on then
    local _, g = GRP.lens()
    waiting = waiting + g
  end
  if holdq then
    waiting = waiting + redis.call('ZCARD', K_BACK)
  end
  -- the end of a sale: closed, or nothing left (sold out, or passes still
  -- live that may come back): no budget
  local stock = stock_left()
  local accrue = cfg[2] ~= '0' and cfg[3] ~= '1' and not closed and waiting > 0 and
    cfg[14] ~= '1' and stock ~= 0
  local carry = 0
  if accrue then
    -- llround(rate * 1000 * tickMs), half away from zero (x >= 0)
    local x = rate_in_use(tonumber(cfg[4])) * 1000 * tick_ms
    local per_tick = math.floor(x)
    if x - per_tick >= 0.5 then
      per_tick = per_tick + 1
    end
    local budget = tonumber(st[2] or '0') + per_tick
    local allowed
    allowed, carry = idiv(budget, 1000000)
    local n = math.min(allowed, waiting)
    local max_active = tonumber(cfg[6] or '0')
    if max_active > 0 then
      local room = max_active - active_count()
      if room < 0 then
        room = 0
      end
      n = math.min(n, room)
    end
    if stock then
      n = math.min(n, stock) -- never more than is left
    end
    if n > 0 then
      local users, scores, nback, slots = take(n)
      if nback > 0 then
        redis.call('HINCRBY', K_STATE, 'returnedTotal', nback)
      end
      local exp = now + tonumber(cfg[7]) * 1000000
      local sexp, snow = fmt(exp), fmt(now)
      local hs, zs = {}, {}
      for i, user in ipairs(users) do
        -- the public log: held returns (the first nback) and the lines, in
        -- order; a group member's leaf names their group
        local grp, l = '', slots[i] or 0
        if l > 0 then
          grp = ',"grp":"' .. GRP.name[GRP.line[l]] .. '"'
        end
        per_line[l] = (per_line[l] or 0) + 1
        log_member(user, 'admit', grp .. (i <= nback and ',"held":true' or ''), now)
        hs[#hs + 1] = user
        hs[#hs + 1] = jti_for(2 * i - 1) .. ':' .. snow .. ':' .. sexp .. ':u' -- unseen (lib.lua)
        zs[#zs + 1] = sexp
        zs[#zs + 1] = user
        admitted = admitted + 1
        waits[admitted] = math.max(0, now - scores[i])
      end
      if admitted > 0 then
        push_claim(users, exp)
        chunked('HDEL', K_SEEN, users)
        chunked('SREM', K_AWAY, users)
        chunked('HSET', K_TOKENS, hs)
        chunked('ZADD', K_ACTIVE, zs)
        redis.call('HINCRBY', K_STATE, 'admittedTotal', admitted)
        for l, k in pairs(per_line) do -- (per line: the stats, the ETA's rate)
          if l > 0 then
            redis.call('HINCRBY', KEYS[29], 'a' .. l, k)
          end
        end
        if stock then
          redis.call('HINCRBY', K_STATE, 'stockLeft', -admitted)
        end
      end
    end
    if admitted < allowed then
      carry = 0
    end
  end
  redis.call('HSET', K_STATE, 'lastTick', fmt(tick), 'carryMicro', fmt(carry))
  if GRP.on then
    GRP.rate_add(per_line, now)
  end
end

-- nobody held or back any more: joins take the hot path again
if holdq and redis.call('ZCARD', K_HELD) + redis.call('ZCARD', K_BACK) == 0 then
  redis.call('HDEL', K_CONFIG, 'holdq')
end

if stock_left() then -- (a queue without a stock has no sold-out moment)
  stock_note(now)
end

-- The closing push (memq_push.c wr_memq__push_closing): the first call
-- of a sender (see push_claim) that finds the sale ended (closed, or sold
-- out) hands every subscription over once, with why (CLOSING: 1 closed, 2
-- sold out; CLOSING_PUSHES: user, subscription pairs); they stay. state
-- pushClosed: the closing pushed for, cleared by the first call that finds
-- the sale open again.
push_due(now)
local closing, closing_pushes = 0, {}
if sender then
  local why = 0
  if cfg[14] == '1' then
    why = 1
  elseif sold_out() then
    why = 2
  end
  local pushed = redis.call('HGET', K_STATE, 'pushClosed')
  if why == 0 and pushed then
    redis.call('HDEL', K_STATE, 'pushClosed')
  elseif why > 0 and not pushed then
    redis.call('HSET', K_STATE, 'pushClosed', fmt(why))
    closing, closing_pushes = why, redis.call('HGETALL', K_PUSH)
  end
end
local removed_admitted
out[R.WAITING], out[R.ACTIVE], out[R.ADMITTED_TOTAL], out[R.CONSUMED_TOTAL],
  out[R.EXPIRED_TOTAL], out[R.LEFT_TOTAL], out[R.REJECTED_FULL_TOTAL], out[R.SESSIONS],
  out[R.RELEASED_TOTAL], out[R.SESSIONS_EXPIRED_TOTAL], out[R.ABANDONED_TOTAL],
  out[R.PREQUEUE], out[R.AWAY], out[R.HELD], out[R.RETURNED_TOTAL], out[R.UNSEEN_EXPIRED_TOTAL],
  out[R.STOCK_LEFT], out[R.SOLD_OUT_AT], out[R.BYPASS_TOTAL], out[R.SUBSCRIBED],
  removed_admitted = stats()
if GRP.on then -- (lib_group.lua: per line)
  out[R.LINES] = GRP.stats_lines(out[R.WAITING], out[R.ADMITTED_TOTAL] - removed_admitted)
elseif removed_admitted > 0 then -- (every group removed: the standard line's count)
  out[R.LINES] = {out[R.WAITING], math.max(0, out[R.ADMITTED_TOTAL] - removed_admitted)}
end
out[R.ADMITTED], out[R.WAITS], out[R.OPEN_MOVED], out[R.OPEN_LEFT] = admitted, waits, omoved, oleft
out[R.PUSHES] = pushes
out[R.CLOSING], out[R.CLOSING_PUSHES] = closing, closing_pushes
return out
