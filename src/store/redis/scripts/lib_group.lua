-- lib_group.lua - priority groups and presale codes on Redis (docs/API.md
-- 1.3, "Priority groups and presale codes", "Groups, precisely";
-- docs/DESIGN.md "Priority groups"), as the embedded store's memq_group.c
-- keeps them. store_redis.c prepends it to every queue script, right
-- after lib.lua, but to the polls of a queue cached without groups, which
-- get lib_nogroup.lua instead. Its functions are made on demand:
-- group_lib(v), called where a script reads the config hash's grp, makes
-- them (once per call) only for a queue with groups, so a queue without
-- groups pays one closure a call and no command.
--
-- The keys (lib.lua's KEYS[19..29], under the queue's hash tag):
--   wr:{q}:g1 .. g8  ZSET user -> arrival score: the line of the group in
--                    that slot. Scores come from the one lastScore of
--                    every line (lib_entry.lua entry_score): they never
--                    collide, and a position is the rank in the own line,
--                    so it never goes up however many others join groups.
--   wr:{q}:gm        HASH user -> slot, for every group member with a place
--                    (their line, held, back) or a pass: held people keep
--                    their group (their return counts toward its line), a
--                    pass carries it (an unseen expiry holds them in it;
--                    the admit leaf names it). Standard people have none.
--                    Whoever leaves for good leaves gm (GRP.forget).
--   wr:{q}:codes     HASH SHA-256 hex of a presale code (the code itself is
--                    never kept) -> "gid:uses:spent:expiresMs:revoked"
--                    (expiresMs -1: never; revoked 0 or 1)
--   wr:{q}:gstat     HASH, per slot s: a<s> admitted from the line, i<s>
--                    codes issued, u<s> uses spent, r<s> codes revoked; per
--                    line l (0 the standard line, else a slot): b<l>:<k> =
--                    "sec:n", n admitted in second sec (k = sec % 60), and
--                    w<l> the admissions of the last 60 s as the last admit
--                    call counted them (the ETA rate: polls read one field);
--                    gseq, the last gid given.
-- The config hash's grp (config_put.lua) lists the groups in priority
-- order as "name:slot:gid,..."; absent without groups. A slot is kept
-- while its name stays in the config, so a reordered config moves nobody;
-- gid is new each time a group is added, and a code names the gid it was
-- made for: a removed group's codes (or those of the group before it in
-- that slot) are unknown from then on. state shareCarry: the standard
-- line's carried share (GRP.split), in millionths.

-- Makes the group functions (into GRP) the first time, and with v (the
-- config hash's grp: false or '' none) reads the queue's groups: GRP.on,
-- GRP.n, and by priority i (1-based) name[i], slot[i], gid[i]; line[slot]
-- = i, by_gid[gid] = i. Raises WRGROUPS when the script came without the
-- group keys (a poll sent by an instance whose cached config had no
-- groups: nothing written yet; store_redis_batch.c sends it again).
local function group_lib(v)
  GRP.loaded = true
  if not v or v == '' then
    return GRP
  end
  if not KEYS[27] then
    error({err = 'WRGROUPS the queue has priority groups: send their keys'})
  end
  local G = GRP
  G.on, G.n, G.name, G.slot, G.gid, G.line, G.by_gid = true, 0, {}, {}, {}, {}, {}
  for name, slot, gid in string.gmatch(v, '([%w-]+):(%d+):(%d+)') do
    local i = G.n + 1
    G.n, G.name[i], G.slot[i], G.gid[i] = i, name, tonumber(slot), gid
    G.line[G.slot[i]], G.by_gid[gid] = i, i
  end
  local K_GM, K_CODES, K_GSTAT = KEYS[27], KEYS[28], KEYS[29]

  -- The line key of a slot (1..8).
  function G.key(slot)
    return KEYS[18 + slot]
  end

  -- user's slot (a number), or nil: the standard line, or nobody.
  function G.of(user)
    return tonumber(redis.call('HGET', K_GM, user))
  end

  -- The slot of the group named name, or nil.
  function G.slot_of(name)
    for i = 1, G.n do
      if G.name[i] == name then
        return G.slot[i]
      end
    end
    return nil
  end

  -- The name of the group in slot.
  function G.name_of(slot)
    return G.name[G.line[slot]]
  end

  -- users (a list) are no group's members any more (no place, no pass).
  function G.forget(users)
    chunked('HDEL', K_GM, users)
  end

  -- Takes users (a list) out of their groups' lines; they stay in gm (the
  -- caller forgets those who leave for good). How many were in one.
  function G.unline(users)
    local n, i = 0, 1
    while i <= #users do
      local j = math.min(i + 999, #users)
      local slots = redis.call('HMGET', K_GM, unpack(users, i, j))
      for k = 1, #slots do
        if slots[k] then
          n = n + redis.call('ZREM', G.key(tonumber(slots[k])), users[i + k - 1])
        end
      end
      i = j + 1
    end
    return n
  end

  -- user's slot and 0-based rank when they are in their group's line.
  function G.in_line(user)
    local slot = G.of(user)
    if slot then
      local rank = redis.call('ZRANK', G.key(slot), user)
      if rank then
        return slot, rank
      end
    end
    return nil
  end

  -- The length of each group's line, by slot, and their sum.
  function G.lens()
    local lens, sum = {}, 0
    for i = 1, G.n do
      local n = redis.call('ZCARD', G.key(G.slot[i]))
      lens[G.slot[i]], sum = n, sum + n
    end
    return lens, sum
  end

  -- The 1-based line of the first group with people waiting (lens: G.lens),
  -- 0 none: the ETA rule of a group that got no admission yet.
  function G.first_waiting(lens)
    for i = 1, G.n do
      if lens[G.slot[i]] > 0 then
        return i
      end
    end
    return 0
  end

  -- The admissions of line l (0 the standard line, else a slot) in the
  -- last 60 s, as the last admit call counted them.
  function G.admitted_60s(l)
    return tonumber(redis.call('HGET', K_GSTAT, 'w' .. l) or '0') or 0
  end

  -- Counts an admit call's admissions per line (n[l], l 0 the standard
  -- line or a slot) at now (us) in their seconds' buckets, and counts
  -- again the last 60 s (w<l>) of the lines that admitted, and of every
  -- line once a second (the window moves on).
  function G.rate_add(n, now)
    local sec = idiv(now, 1000000)
    local roll = redis.call('HGET', K_GSTAT, 'wsec') ~= fmt(sec)
    if roll then
      redis.call('HSET', K_GSTAT, 'wsec', fmt(sec))
    end
    local lines = {0}
    for i = 1, G.n do
      lines[i + 1] = G.slot[i]
    end
    for _, l in ipairs(lines) do
      local k = n[l] or 0
      if k > 0 then
        local f = 'b' .. l .. ':' .. fmt(sec % 60)
        local s, c = string.match(redis.call('HGET', K_GSTAT, f) or '', '^(%d+):(%d+)$')
        if s == fmt(sec) then
          k = k + tonumber(c)
        end
        redis.call('HSET', K_GSTAT, f, fmt(sec) .. ':' .. fmt(k))
      end
      if k > 0 or roll then
        local fs = {}
        for b = 0, 59 do
          fs[b + 1] = 'b' .. l .. ':' .. b
        end
        local sum = 0
        for _, v in ipairs(redis.call('HMGET', K_GSTAT, unpack(fs))) do
          local s, c = string.match(v or '', '^(%d+):(%d+)$')
          if s and tonumber(s) > sec - 60 then
            sum = sum + tonumber(c)
          end
        end
        redis.call('HSET', K_GSTAT, 'w' .. l, fmt(sum))
      end
    end
  end

  -- One tick's split (core/groups.c wr_groups_split, the same integer
  -- arithmetic in millionths): allowed, what the tick may admit in all,
  -- held returns included; share, standardShare in millionths; carry, the
  -- standard line's carried fraction; held[i] and avail[i] (i 1 the
  -- standard line, then the groups in priority order) the held returns of
  -- each line and its admissible people (capped). Returns the new (not
  -- held) admissions of each line, and the new carry.
  function G.split(allowed, share, carry, held, avail)
    local MICRO, nl = 1000000, G.n + 1
    share = math.min(share, MICRO)
    local hsum, agroups = 0, 0
    for i = 1, nl do
      hsum = hsum + held[i]
      if i > 1 then
        agroups = agroups + avail[i]
      end
    end
    local room = allowed > hsum and allowed - hsum or 0
    local fresh = math.min(room, avail[1] + agroups)
    local total = hsum + fresh
    local here = held[1] + avail[1] > 0
    if not here or not (carry > 0 and carry < MICRO) then
      carry = 0
    end
    local owe = share * total + carry
    local owed = idiv(owe, MICRO)
    local floor_total = math.min(held[1] + avail[1], math.max(owed, held[1]))
    local floor_fresh = math.min(floor_total - held[1], fresh)
    local to_groups = math.min(agroups, fresh - floor_fresh)
    local out = {fresh - to_groups}
    for i = 2, nl do
      out[i] = math.min(avail[i], to_groups)
      to_groups = to_groups - out[i]
    end
    local got = (held[1] + out[1]) * MICRO
    local left = 0
    if here and got < owe then
      left = math.min(owe - got, MICRO - 1)
    end
    return out, left
  end

  -- A code's record: gid, uses, spent, expires (ms, -1 never), revoked.
  function G.code_get(hash)
    local gid, uses, spent, exp, rev = string.match(redis.call('HGET', K_CODES, hash) or '',
      '^(%d+):(%d+):(%d+):(%-?%d+):([01])$')
    if not gid then
      return nil
    end
    return gid, tonumber(uses), tonumber(spent), tonumber(exp), rev == '1'
  end

  -- The verdict on the code of hash at now (us) (core/groups.h
  -- wr_code_reason_t: 0 ok, 1 unknown, 2 used up, 3 revoked, 4 expired:
  -- wr_groups_code_verdict's order) and, when it is good, its group's slot.
  function G.code_check(hash, now)
    local gid, uses, spent, exp, rev = G.code_get(hash)
    local i = gid and G.by_gid[gid]
    if not i then
      return 1
    elseif rev then
      return 3
    elseif exp >= 0 and exp <= idiv(now, 1000) then
      return 4
    elseif spent >= uses then
      return 2
    end
    return 0, G.slot[i]
  end

  -- Spends one use of the code of hash (checked good in this call).
  function G.code_spend(hash)
    local gid, uses, spent, exp = G.code_get(hash)
    redis.call('HSET', K_CODES, hash, table.concat({gid, fmt(uses), fmt(spent + 1), fmt(exp), '0'},
      ':'))
    redis.call('HINCRBY', K_GSTAT, 'u' .. G.slot[G.by_gid[gid]], 1)
  end

  -- Per group in priority order: name, codes issued, uses spent, codes
  -- revoked (flat; R_CODES.COUNTS).
  function G.code_counts()
    local out = {}
    for i = 1, G.n do
      local s = G.slot[i]
      local c = redis.call('HMGET', K_GSTAT, 'i' .. s, 'u' .. s, 'r' .. s)
      out[#out + 1] = G.name[i]
      for k = 1, 3 do
        out[#out + 1] = tonumber(c[k] or '0')
      end
    end
    return out
  end

  -- The stats of each line (R_ADMIT.LINES, R_QUEUE_GET.LINES): waiting,
  -- admitted total of the standard line (every line's, stats()' waiting
  -- and admitted, less the groups'), then of each group in priority order.
  function G.stats_lines(waiting, admitted)
    local lens, sum = G.lens()
    local out, groups = {math.max(0, waiting - sum), 0}, 0
    for i = 1, G.n do
      local s = G.slot[i]
      local a = tonumber(redis.call('HGET', K_GSTAT, 'a' .. s) or '0')
      out[#out + 1], out[#out + 2], groups = lens[s], a, groups + a
    end
    out[2] = math.max(0, admitted - groups)
    return out
  end

  -- ---- lib_entry.lua entry()'s part: c is its call's state (entry_config),
  -- c.H the helpers entry() hands over (passed, score, waiting, counted,
  -- join, pending), c.gl / c.gsum the groups' lines' lengths, kept up to
  -- date here; c.gline the slot an answer concerns (G.entry_part).

  -- Before opensAt a group member waits in their line (never in the
  -- pre-queue) and is answered PREQUEUE: nobody is admitted yet.
  local function gate_closed(c)
    return c.opens_at and c.now < c.opens_at * 1000
  end

  -- user in their group's line (mode and left as entry()'s): entry()'s
  -- answer kind, position, waiting, passed, as for the standard line's
  -- people; nil when they are not in one (or, a page join idle past the
  -- timeout, just left it).
  function G.entry_member(c, user, mode, left)
    local slot, rank = G.in_line(user)
    if not slot then
      return nil
    end
    if mode ~= M_ENTRY.STATUS_QUIET then
      local I = c.I
      local t, pending = I.seen_of(redis.call('HGET', KEYS[8], user))
      if pending and I.away(user, t, c.now, c.idle) then
        I.abandon({user}) -- (as entry()'s standard line)
        c.gl[slot], c.gsum, c.pp0, c.ppg = c.gl[slot] - 1, c.gsum - 1, nil, nil
        return nil
      end
      I.seen_set(user, c.now, false)
      if pending then
        c.H.counted(user, c.now, G.name_of(slot))
      end
      local pp = c.ppg and c.ppg[slot]
      if pp and rank < pp.n then
        pp.n = rank -- (their silence changed: the counts behind them)
      end
    end
    c.gline = slot
    if gate_closed(c) then
      return K_ENTRY.PREQUEUE, 0, 0, nil
    end
    return K_ENTRY.WAITING, rank + 1, c.H.waiting(c) + c.gsum + left, c.H.passed(c, rank, slot)
  end

  -- The group a newcomer's join g ({group = an invite's group name or '',
  -- code = a presale code's hash or ''}) puts them in: the invite's group
  -- (one of the config), else the good code's group and the code to spend
  -- (slot, nil, code); nil, why (1..4: G.code_check) for a refused code;
  -- nil for the standard line.
  function G.entry_target(c, g)
    local slot = g.group ~= '' and G.slot_of(g.group) or nil
    if slot or g.code == '' then
      return slot
    end
    local why, cslot = G.code_check(g.code, c.now)
    if why ~= 0 then
      return nil, why
    end
    return cslot, nil, g.code
  end

  -- A newcomer's place in the line of group slot (bought with code: one
  -- use spent in this same call), as lib_entry.lua's entry_added: WAITING
  -- with the two admission dues, or PREQUEUE_NEW before opensAt.
  function G.entry_join(c, user, mode, slot, code, u, left)
    local key, score = G.key(slot), c.H.score(c)
    local len = c.gl[slot]
    redis.call('ZADD', key, 'NX', fmt(score), user)
    redis.call('HSET', K_GM, user, fmt(slot))
    c.last, c.dirty = score, true
    c.gl[slot], c.gsum = len + 1, c.gsum + 1
    if code then
      G.code_spend(code)
    end
    c.I.seen_set(user, c.now, mode == M_ENTRY.JOIN_PAGE)
    if mode == M_ENTRY.JOIN_PAGE then
      c.H.pending(user, u, score, false)
    else
      c.H.join(user, u, score, false, c.now, G.name_of(slot))
    end
    c.gline = slot
    if gate_closed(c) then
      return K_ENTRY.PREQUEUE_NEW, 0, 0, '', 0, 0 -- (added: lib_entry.lua entry())
    end
    local head = score
    if len > 0 then
      head = tonumber(redis.call('ZRANGE', key, 0, 0, 'WITHSCORES')[2])
    end
    return K_ENTRY.WAITING, len + 1, c.H.waiting(c) + c.gsum + left, '', 0, 0,
      admit_due(head, c.now), admit_due(score, c.now)
  end

  -- The group part of an answer of kind (B_GROUP: the line, 1-based in
  -- priority order, 0 the standard line; its admissions of the last 60 s;
  -- the first group with people waiting), or nil for a kind that carries
  -- none.
  function G.entry_part(c, kind)
    if kind ~= K_ENTRY.WAITING and kind ~= K_ENTRY.PREQUEUE and kind ~= K_ENTRY.HELD and
        kind ~= K_ENTRY.ADMITTED then
      return nil
    end
    local slot = c.gline
    return slot and G.line[slot] or 0, G.admitted_60s(slot or 0), G.first_waiting(c.gl)
  end

  return G
end
GRP.lib = group_lib -- (lib.lua's functions, above, call it through GRP)
