-- lib_entry.lua - the rules of one join or status, prepended after lib.lua
-- to entry.lua and entry_batch.lua alone (store_redis.c's script table):
-- entry_config(), entry() and their helpers. The other scripts do not
-- read them, so they do not pay for making them on every call.
--
-- Join and status (entry.lua for one request, entry_batch.lua for the
-- requests of one queue coalesced into one call): the config part, read
-- once per call, then entry() once per request. entry() is the ONE copy of
-- the per-request rules, so one request and a batch of them cannot answer
-- differently; it writes nothing the config part reads.

-- The queue's config as entry() needs it, or nil when there is no queue:
-- {version (number), json ('' when known, the caller's cached version, is
-- current), enabled, max (maxQueueSize, 0 = none), idle (T in us)}, and
-- what entry() keeps for the rest of the call: waiting (the line's length),
-- head (the arrival score of the first of the line) and last (state's
-- lastScore), each read at most once and kept up to date with entry()'s own
-- writes; dirty (last is newer than state's lastScore: entry_flush() writes
-- it once, at the end of the call); now (Redis TIME, read at most once: the
-- requests of one call are one instant, as the script is atomic), swept (the
-- token sweep ran at now) and I (idle_lib(), made at most once).
local function entry_config(known)
  local cfg = redis.call('HMGET', K_CONFIG, 'version', 'enabled', 'maxQueueSize', 'idleSec',
    'opensAt', 'shuffle', 'preq', 'tickMs', 'holdSec', 'holdq', 'closed', 'rate', 'log', 'grp')
  if not cfg[1] then
    return nil
  end
  LOG.on = cfg[13] == '1' -- (lib_log.lua: read here, with the rest)
  local G = group_lib(cfg[14]) -- (lib_group.lua; WRGROUPS without the group keys)
  -- The JSON is read only when the caller's cached version is stale.
  local json = ''
  if known ~= cfg[1] then
    json = redis.call('HGET', K_CONFIG, 'json') or ''
  end
  local c = {version = tonumber(cfg[1]), json = json, enabled = cfg[2] ~= '0',
    max = tonumber(cfg[3] or '0'), idle_sec = cfg[4], opens_at = opens_at_of(cfg[5]),
    shuffle = cfg[6] ~= '0', preq = cfg[7] == '1', tick_ms = tonumber(cfg[8] or '100'),
    hold_sec = cfg[9], holdq = cfg[10] == '1', closed = cfg[11] == '1', stock = stock_left(),
    rate = tonumber(cfg[12] or '0') or 0, grp = G.on, gsum = 0}
  if c.grp then
    -- priority groups (lib_group.lua G.entry_*): G, and the length of
    -- each group's line by slot (c.gl) and their sum (c.gsum), kept up to
    -- date with entry()'s own writes: an answer's waiting is the whole line
    c.G = G
    c.gl, c.gsum = G.lens()
  end
  return c
end

-- Writes the last score joins gave (see entry_config) to state, once per
-- call instead of once per join. entry.lua and entry_batch.lua call it
-- last; entry() calls it before anything that reads lastScore from state.
local function entry_flush(c)
  if c.dirty then
    redis.call('HSET', K_STATE, 'lastScore', fmt(c.last))
    c.dirty = false
  end
end

-- The line's length (see entry_config).
local function entry_waiting(c)
  if not c.waiting then
    c.waiting = redis.call('ZCARD', K_WAITING)
  end
  return c.waiting
end

-- Web Push: 1 when an answer of kind (entry()'s) to user carries
-- `subscribed` (WAITING or HELD, with a live subscription: store.h
-- wr_entry_t.subscribed), else 0. Whether the queue holds any subscription
-- is read once per call (entry() never changes the push hash).
local function entry_subscribed(c, user, kind)
  if kind ~= K_ENTRY.WAITING and kind ~= K_ENTRY.HELD then
    return 0
  end
  if c.push_any == nil then
    c.push_any = redis.call('EXISTS', K_PUSH) == 1
  end
  if c.push_any and redis.call('HEXISTS', K_PUSH, user) == 1 then
    return 1
  end
  return 0
end

-- One request of user on a queue whose config c (entry_config) exists.
-- mode (an M_ENTRY, scripts.def): JOIN (add when absent), JOIN_PAGE (a
-- newcomer is pending: admission passes over them until they ask again),
-- STATUS, STATUS_QUIET (records nothing for a waiting user; see "Cost per
-- poll" in lib.lua). Else a pending page join idle past idleSec is removed
-- first (abandonedTotal) and answered as one not in line; any other
-- waiting user's last-seen time becomes now and their pending and away
-- marks are cleared (away people keep their place). The same holds for a
-- person in the pre-queue (sale opening). A held user returns (held ->
-- back; one held holdSec or longer is removed first and answered as one
-- not in line): HELD. key: a join's pre-queue key (A_ENTRY.PREQ_KEY).
-- Returns kind (a K_ENTRY), position, waiting, jti, iat_us, exp_us, and
-- after a join that added the user to the line head_due_us, own_due_us
-- (entry.lua), then for WAITING of someone already in line the people
-- ahead admission will pass over (entry_passed; nil when not counted):
--   WAITING (position, waiting), ADMITTED (jti, iat_us, exp_us),
--   PASSTHROUGH (queue disabled), PREQUEUE, PREQUEUE_NEW (PREQUEUE of a
--   join that added the user: the pre-queue, or before opensAt a group's
--   line; the callers take it for PREQUEUE and send it as it is), HELD
--   (position 1, waiting the line's count), CLOSED (why in position), FULL
--   (waiting), NOT_IN_QUEUE. A join that added the user is PREQUEUE_NEW or
--   WAITING with the two dues (the store's entry->added).
-- These return values stay inside the script: entry.lua and
-- entry_batch.lua put them into their replies by row name.
-- Reads the clock (see entry_config) when this call has not yet.
local function entry_clock(c)
  if not c.now then
    c.now, c.I = now_us(), idle_lib()
    c.idle = c.I.idle_us(c.idle_sec)
    if c.idle > 0 then
      -- a request may be the first to reach Redis after an outage, before
      -- any tick: it sees the gap too
      local st = redis.call('HMGET', K_STATE, 'lastTick', 'idleGrace')
      c.idle = c.I.in_force(c.idle, c.now, st[2], c.I.gap_us(c.now, st[1], c.tick_ms))
    end
  end
end

-- The people ahead of a waiting user of 0-based rank in the standard line
-- (slot nil) or the line of group slot, counted for the retry plan (store.h passed_ahead): those admission will pass over, by
-- queue.h's wr_queue_passed_over (the same rule, kept here: pending page
-- joins; the idle, silent idle + slack; the overdue, silent idle / 2 +
-- slack + 250 ms, whom admission reaches, at the configured rate, once
-- they are idle; a subscribed person is neither). Only for rank <=
-- AHEAD_SCAN (a ZRANGE and an HMGET of that many: the first of the line,
-- where a retry plan is made); nil
-- beyond it. Reads only. The counts are kept for the rest of the call as
-- prefix sums per line (c.pp0, c.ppg[slot]: p passed, t taken among the
-- first i, valid for i <= n), so the polls of one batch share one scan;
-- entry() cuts them back where it records someone of the first n (their
-- silence changed) and drops them when it removes someone from a line.
local AHEAD_SCAN, OVERDUE_US = 256, 250000
local function entry_passed(c, rank, slot)
  if rank == 0 then
    return 0
  end
  if rank > AHEAD_SCAN then
    return nil
  end
  local pp = c.pp0 -- (the standard line's; a group's in c.ppg)
  if slot then
    c.ppg = c.ppg or {}
    pp = c.ppg[slot]
  end
  if not pp then
    pp = {p = {[0] = 0}, t = {[0] = 0}, n = 0}
    if slot then
      c.ppg[slot] = pp
    else
      c.pp0 = pp
    end
  end
  local P, T, n = pp.p, pp.t, pp.n
  if rank > n then
    entry_clock(c)
    local I, now, idle = c.I, c.now, c.idle
    local users = redis.call('ZRANGE', slot and c.G.key(slot) or K_WAITING, n, rank - 1)
    local seen = #users > 0 and redis.call('HMGET', K_SEEN, unpack(users)) or {}
    local stale = idle > 0 and I.slack(idle) or 0
    local per = c.rate > 0 and 1000000 / c.rate or 0
    local passed, taken = P[n], T[n]
    for i = 1, #users do
      local t, over = I.seen_of(seen[i])
      if not over and idle > 0 and t then
        local silent = now - t
        over = silent >= idle + stale or
          (silent >= math.floor(idle / 2) + stale + OVERDUE_US and silent + taken * per >= idle + stale)
        -- subscribed (Web Push): never idle, so never overdue either
        over = over and redis.call('HEXISTS', K_PUSH, users[i]) == 0
      end
      if over then
        passed = passed + 1
      else
        taken = taken + 1
      end
      P[n + i], T[n + i] = passed, taken
    end
    n = n + #users
    pp.n = n
  end
  return P[math.min(rank, n)]
end


-- The last arrival score given (state's lastScore; see entry_config), or
-- nil when state holds something that is not a number.
local function entry_last(c)
  if not c.last then
    c.last = tonumber(redis.call('HGET', K_STATE, 'lastScore') or '0')
  end
  return c.last
end

-- The arrival score a join at c.now gets: now, or just above the last one
-- given, so scores only grow. Raises an error when lastScore is not a
-- number (entry_last).
local function entry_score(c)
  local last = entry_last(c)
  if not last then
    error('state lastScore is not a number')
  end
  if c.now <= c.last then
    return c.last + 1
  end
  return c.now
end

-- The token sweep (lib.lua expire_tokens) at c.now, once per call (at the
-- same now, a second sweep finds nothing). An unseen pass that expires
-- holds its holder (lib.lua unseen_expire): c.holdq is true after it.
local function entry_sweep(c)
  if not c.swept then
    if expire_tokens(c.now) > 0 then
      c.holdq = true
    end
    c.swept = true
  end
end

-- The user's live token (jti, iat_us, exp_us), or nil, after the token
-- sweep. Every ADMITTED answer of entry() comes from here: the answer
-- carries the pass to its holder, so an unseen one (lib.lua, "An unseen
-- pass") is seen from now on.
local function entry_token(c, user)
  entry_sweep(c)
  local jti, iat, exp, unseen = parse_token(redis.call('HGET', K_TOKENS, user))
  if jti and exp > c.now then
    if unseen then
      redis.call('HSET', K_TOKENS, user, jti .. ':' .. fmt(iat) .. ':' .. fmt(exp))
    end
    return jti, iat, exp
  end
  return nil
end

-- After user (log id u) was added to the line at score (waiting: the
-- line's length before; left: people of a running opening still to move):
-- keeps c up to date, records the last-seen time and the join leaf (a page
-- join's when it counts), and returns entry()'s WAITING answer with the
-- two admission dues.
local function entry_added(c, user, mode, score, waiting, left, u)
  c.waiting, c.last, c.dirty = waiting + 1, score, true
  c.I.seen_set(user, c.now, mode == M_ENTRY.JOIN_PAGE)
  if mode == M_ENTRY.JOIN_PAGE then
    log_pending(user, u, score, false)
  else
    log_join(user, u, score, false, c.now)
  end
  -- The newcomer is the last of the line: every score in it is at most
  -- lastScore (joins and the opening's moves both keep that), and score is
  -- above it. So the rank is the old length, and the head only changes
  -- when the line was empty (no ZRANK, no ZRANGE per join).
  if waiting == 0 then
    c.head = score
  elseif not c.head then
    c.head = tonumber(redis.call('ZRANGE', K_WAITING, 0, 0, 'WITHSCORES')[2])
  end
  return K_ENTRY.WAITING, waiting + 1 + left, waiting + 1 + left + c.gsum, '', 0, 0,
    admit_due(c.head, c.now), admit_due(score, c.now)
end

-- The end of a sale: why the queue answers "closed" now - 1 closed, 2
-- sold out (stock 0 and no token live, after the token sweep: an expired
-- one returns its unit first) - or false; computed once per call (no
-- request of a call changes it).
local function entry_halt(c)
  if c.halt == nil then
    c.halt = false
    if c.closed then
      c.halt = 1
    elseif c.stock == 0 then
      entry_clock(c)
      entry_sweep(c)
      c.stock = stock_left()
      if c.stock == 0 and redis.call('ZCARD', K_ACTIVE) == 0 then
        c.halt = 2
      end
    end
  end
  return c.halt
end

-- entry() while the queue is closed or sold out (why: entry_halt): a live
-- pass still answers ADMITTED; a person in line, the pre-queue, held or
-- back keeps their place (their asking is recorded, held people stay
-- held) and gets CLOSED (why in the position slot), as does a
-- newcomer's join (not added); a status of anyone else is -3.
local function entry_closed(c, user, mode, why)
  entry_clock(c)
  local jti, iat, exp = entry_token(c, user)
  if jti then
    return K_ENTRY.ADMITTED, 0, 0, jti, iat, exp
  end
  local gslot = c.grp and c.G.in_line(user)
  if gslot or redis.call('ZSCORE', K_WAITING, user) or redis.call('ZSCORE', K_PRE, user) or
      redis.call('ZSCORE', K_BACK, user) then
    c.I.seen_set(user, c.now, false)
    log_counted(user, c.now, gslot and c.G.name_of(gslot)) -- (a pending page join)
  elseif not redis.call('ZSCORE', K_HELD, user) and mode ~= M_ENTRY.JOIN and mode ~= M_ENTRY.JOIN_PAGE then
    return K_ENTRY.NOT_IN_QUEUE, 0, 0, '', 0, 0
  end
  return K_ENTRY.CLOSED, why, 0, '', 0, 0
end

-- u: the user's log id (joins of a queue with publicLog; '' otherwise).
-- g: a join into a priority group (entry_group.lua: lib_group.lua's
-- G.entry_target), or nil. Answers K_ENTRY.CODE with why (in the
-- position) for a presale code that buys nothing: nothing changed. On a
-- queue with groups c.gline is the slot of the group the answer concerns
-- (nil: the standard line), for G.entry_part.
local function entry(c, user, mode, key, u, g)
  c.gline = nil
  if c.grp and not c.H then
    -- what lib_group.lua's G.entry_* need of this file and lib_log.lua
    c.H = {passed = entry_passed, score = entry_score, waiting = entry_waiting,
      counted = log_counted, join = log_join, pending = log_pending}
  end
  if not c.enabled then
    return K_ENTRY.PASSTHROUGH, 0, 0, '', 0, 0
  end
  if LOG.on and u == '' and (mode == M_ENTRY.JOIN or mode == M_ENTRY.JOIN_PAGE) then
    -- the caller's config predates publicLog: it sent no log id, and a
    -- join must not go unlogged (store_redis.c answers WR_EUNAVAILABLE)
    error({err = 'WRLOGID the queue keeps a public log: join again with a log id'})
  end
  if c.closed or c.stock == 0 then
    local why = entry_halt(c)
    if why then
      return entry_closed(c, user, mode, why)
    end
  end
  -- The hot path (a waiting user's poll) needs no token sweep: answer it
  -- first. A quiet status needs not even the clock; others read and write
  -- the last-seen time. A pre-queue or its opening (preq) takes the slow
  -- path, with the clock.
  local rank
  if not c.preq then
    if mode == M_ENTRY.JOIN or mode == M_ENTRY.JOIN_PAGE then
      -- A join, most often of a newcomer: ZADD NX first (one call where
      -- ZRANK, then ZADD, were two); it adds nobody already in line (0:
      -- the general path below answers them). A line that is full, a
      -- queue whose pre-queue has not opened yet, or a lastScore that is
      -- not a number (only a newcomer's join fails then) takes the
      -- general path.
      entry_clock(c)
      local waiting = entry_waiting(c)
      -- (not a join into a group; on a queue with groups, not a member)
      local fast = (c.max == 0 or waiting + c.gsum < c.max) and
        not (c.opens_at and c.now < c.opens_at * 1000) and not c.holdq and entry_last(c) and
        not g and (not c.grp or not c.G.of(user))
      if fast then
        -- the token sweep first: an unseen pass expiring now holds its
        -- holder, whose join this may be (the general path answers them)
        entry_sweep(c)
      end
      if fast and not c.holdq then
        local score = entry_score(c)
        if redis.call('ZADD', K_WAITING, 'NX', fmt(score), user) == 1 then
          local jti, iat, exp = entry_token(c, user)
          if jti then
            redis.call('ZREM', K_WAITING, user) -- admitted: not lined up again
            return K_ENTRY.ADMITTED, 0, 0, jti, iat, exp
          end
          return entry_added(c, user, mode, score, waiting, 0, u)
        end
      end
    end
    rank = redis.call('ZRANK', K_WAITING, user)
    if rank and mode == M_ENTRY.STATUS_QUIET then
      return K_ENTRY.WAITING, rank + 1, entry_waiting(c) + c.gsum, '', 0, 0, nil, nil,
        entry_passed(c, rank)
    end
  end
  entry_clock(c)
  local now, I = c.now, c.I
  local opening, base, total, moved, left, drawing = false, 0, 0, 0, 0, false
  if c.preq then
    -- the opening may begin here (it reads and moves lastScore): write
    -- ours first, read it afresh after
    entry_flush(c)
    opening, base, total, moved, drawing = open_begin(c.opens_at, now)
    left = opening and redis.call('ZCARD', K_PRE) or 0
    c.last = nil
    rank = redis.call('ZRANK', K_WAITING, user)
  end
  if not rank and c.grp then -- in a group's line
    local kind, position, waiting, passed = c.G.entry_member(c, user, mode, left)
    if kind then
      return kind, position, waiting, '', 0, 0, nil, nil, passed
    end
  end
  if rank then
    local t, pending = I.seen_of(redis.call('HGET', K_SEEN, user))
    if pending and I.away(user, t, now, c.idle) then
      -- a page join that never asked again: checked on read, asking late
      -- does not revive (away people keep their place)
      I.abandon({user})
      c.waiting, c.head, c.pp0, c.ppg = nil, nil, nil, nil
    else
      I.seen_set(user, now, false)
      if pending then
        log_counted(user, now) -- a page join that asked again counts now
      end
      local pp = c.pp0
      if pp and rank < pp.n then
        pp.n = rank -- (their silence changed: the counts behind them)
      end
      local passed = nil
      if opening then
        if tonumber(redis.call('ZSCORE', K_WAITING, user)) >= base + total then
          rank = rank + left -- behind the people still to move
        end
      elseif not c.preq then
        passed = entry_passed(c, rank)
      end
      return K_ENTRY.WAITING, rank + 1, entry_waiting(c) + c.gsum + left, '', 0, 0, nil, nil, passed
    end
  end
  entry_sweep(c) -- (an unseen pass expiring now holds its holder: they are held below)
  if c.holdq then
    -- held: this request is their return (admitted first at the next
    -- tick); held awayHoldSeconds or longer: gone, as if swept
    local h = redis.call('ZSCORE', K_HELD, user)
    if h and tonumber(h) + I.hold_us(c.hold_sec) <= now then
      redis.call('ZREM', K_HELD, user)
      log_abandoned({user}, now)
      if c.grp then
        c.G.forget({user})
      end
      redis.call('HINCRBY', K_STATE, 'abandonedTotal', 1)
    elseif h or redis.call('ZSCORE', K_BACK, user) then
      if h then
        redis.call('ZREM', K_HELD, user)
        redis.call('ZADD', K_BACK, fmt(now), user)
      end
      I.seen_set(user, now, false)
      c.gline = c.grp and c.G.of(user) or nil -- (held in their group)
      return K_ENTRY.HELD, 1, entry_waiting(c) + c.gsum + left, '', 0, 0
    end
  end
  if c.preq then
    local prank = redis.call('ZRANK', K_PRE, user)
    if prank then
      local t, pending = I.seen_of(redis.call('HGET', K_SEEN, user))
      if pending and I.away(user, t, now, c.idle) then
        I.abandon({user}) -- a scanner in the pre-queue
        opening, base, total, moved = open_state()
        left = opening and redis.call('ZCARD', K_PRE) or 0
      else
        I.seen_set(user, now, false)
        if pending then
          log_counted(user, now)
        end
        if not opening then
          return K_ENTRY.PREQUEUE, 0, 0, '', 0, 0
        end
        -- not moved yet: the place the move gives
        local below = redis.call('ZCOUNT', K_WAITING, '-inf', '(' .. fmt(base + moved))
        return K_ENTRY.WAITING, below + prank + 1, entry_waiting(c) + c.gsum + left, '', 0, 0
      end
    end
  end
  local jti, iat, exp = entry_token(c, user)
  if jti then
    c.gline = c.grp and c.G.of(user) or nil -- (the pass carries the group)
    return K_ENTRY.ADMITTED, 0, 0, jti, iat, exp
  end
  -- a newcomer's group (entry_group.lua): no code is good on a queue
  -- without groups; a check (status mode) gives the code's verdict alone
  local gslot, gcode, why
  if g and c.grp then
    gslot, why, gcode = c.G.entry_target(c, g)
  elseif g and g.code ~= '' then
    why = 1 -- (unknown)
  end
  if why then
    return K_ENTRY.CODE, why, 0, '', 0, 0
  end
  if mode ~= M_ENTRY.JOIN and mode ~= M_ENTRY.JOIN_PAGE then
    return K_ENTRY.NOT_IN_QUEUE, 0, 0, '', 0, 0
  end
  local waiting = entry_waiting(c)
  if c.max > 0 then
    local full = waiting + c.gsum
    if c.preq then
      full = full + redis.call('ZCARD', K_PRE) -- maxQueueSize counts every line
    end
    if full >= c.max then
      redis.call('HINCRBY', K_STATE, 'rejectedFullTotal', 1)
      return K_ENTRY.FULL, 0, entry_waiting(c) + c.gsum + left, '', 0, 0
    end
  end
  if gslot then
    return c.G.entry_join(c, user, mode, gslot, gcode, u, left)
  end
  local score = entry_score(c)
  if drawing or (not opening and c.opens_at and now < c.opens_at * 1000) then
    -- before the opening: the pre-queue; while the opening waits for its
    -- draw (lib.lua, "The opening draw"): late, behind the drawn, in
    -- arrival order, not drawn (a line join to the log)
    if not drawing and c.shuffle and LOG.on and not log_committed() then
      -- the commit first; a join sent without its seed (the caller's
      -- config predates the opening) must not go in uncommitted
      if (c.seed or '') == '' then
        error({err = 'WRLOGID the opening needs its commit: join again with a seed'})
      end
      log_commit(c.seed, c.seed_hash, now)
    end
    if drawing then
      redis.call('ZADD', K_PRE, 'NX', fmt(DRAW_LATE + score), user)
      c.last, c.dirty = score, true
    elseif c.shuffle and not LOG.on then
      redis.call('ZADD', K_PRE, 'NX', key, user)
    else
      -- arrival order (a logged shuffled pre-queue too: its draw re-keys it)
      redis.call('ZADD', K_PRE, 'NX', fmt(score), user)
      c.last, c.dirty = score, true
    end
    I.seen_set(user, now, mode == M_ENTRY.JOIN_PAGE)
    if mode == M_ENTRY.JOIN_PAGE then
      log_pending(user, u, score, not drawing)
    else
      log_join(user, u, score, not drawing, now)
    end
    redis.call('HSET', K_CONFIG, 'preq', '1')
    c.preq = true
    return K_ENTRY.PREQUEUE_NEW, 0, 0, '', 0, 0 -- (added: the sale's report counts it)
  end
  redis.call('ZADD', K_WAITING, 'NX', fmt(score), user)
  return entry_added(c, user, mode, score, waiting, left, u)
end

-- A join into a priority group: entry_group.lua, prepended to entry.lua,
-- sets it ({group, code}: entry()'s g); nil for entry.lua alone.
local ENTRY_G
