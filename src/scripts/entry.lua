-- entry.lua - join and status (lib.lua prepended).
-- ARGV[1] user, ARGV[2] known config version ('0' = none),
-- ARGV[3] '1' = join (add when absent), '2' = join by the queue page (a
-- newcomer is pending: admission passes over them until they ask again),
-- '0' = status, '3' = quiet status (records nothing for a waiting user;
-- lib.lua).
-- ARGV[4] (joins) the pre-queue key of a shuffled pre-queue: a random
-- integer below 2^52 from waitroomd's CSPRNG (Lua's math.random is not
-- cryptographic, and a script must not draw randomness).
-- Else a waiting user idle past idleSec is removed first (abandonedTotal)
-- and answered as one not in line; any other waiting user's last-seen time
-- becomes now and their pending mark is cleared. The same holds for a
-- person in the pre-queue (sale opening, lib.lua).
-- Reply, always 8 elements:
--   {kind, version, json, position, waiting, jti, iat_us, exp_us}
--   kind: 1 WAITING, 2 ADMITTED, 3 PASSTHROUGH, 4 PREQUEUE,
--         -1 no queue, -2 line full (waiting set), -3 not in queue.
local mode = ARGV[3]
local user, known, is_join, is_page = ARGV[1], ARGV[2], mode == '1' or mode == '2', mode == '2'
local cfg = redis.call('HMGET', K_CONFIG, 'version', 'enabled', 'maxQueueSize', 'idleSec',
  'opensAt', 'shuffle', 'preq')
if not cfg[1] then
  return {-1, 0, '', 0, 0, '', 0, 0}
end
-- The JSON is read only when the caller's cached version is stale.
local version, json = tonumber(cfg[1]), ''
if known ~= cfg[1] then
  json = redis.call('HGET', K_CONFIG, 'json') or ''
end
if cfg[2] == '0' then
  return {3, version, json, 0, 0, '', 0, 0}
end
-- A pre-queue or its opening (preq): the slow path below, with the clock.
local preq = cfg[7] == '1'
-- The hot path (a waiting user's poll) needs no token sweep: answer it
-- first. A quiet status needs not even the clock; others read and write
-- the last-seen time.
local rank
if not preq then
  rank = redis.call('ZRANK', K_WAITING, user)
  if rank and mode == '3' then
    return {1, version, json, rank + 1, redis.call('ZCARD', K_WAITING), '', 0, 0}
  end
end
local now = now_us()
local I = idle_lib()
local idle = I.idle_us(cfg[4])
local opens_at = opens_at_of(cfg[5])
local opening, base, total, moved, left = false, 0, 0, 0, 0
-- (re)reads the opening in progress and the people it has left to move
local function opening_now()
  opening, base, total, moved = open_state()
  left = opening and redis.call('ZCARD', K_PRE) or 0
end
if preq then
  opening, base, total, moved = open_begin(opens_at, now)
  left = opening and redis.call('ZCARD', K_PRE) or 0
  rank = redis.call('ZRANK', K_WAITING, user)
end
if rank then
  if I.is_idle(I.seen_of(redis.call('HGET', K_SEEN, user)), now, idle) then
    I.abandon({user}) -- checked on read: asking late does not revive
  else
    I.seen_set(user, now, false)
    if opening and tonumber(redis.call('ZSCORE', K_WAITING, user)) >= base + total then
      rank = rank + left -- behind the people still to move
    end
    return {1, version, json, rank + 1, redis.call('ZCARD', K_WAITING) + left, '', 0, 0}
  end
end
if preq then
  local prank = redis.call('ZRANK', K_PRE, user)
  if prank then
    if I.is_idle(I.seen_of(redis.call('HGET', K_SEEN, user)), now, idle) then
      I.abandon({user}) -- idleTimeoutSeconds applies in the pre-queue too
      opening_now()
    else
      I.seen_set(user, now, false)
      if not opening then
        return {4, version, json, 0, 0, '', 0, 0}
      end
      -- not moved yet: the place the move gives
      local below = redis.call('ZCOUNT', K_WAITING, '-inf', '(' .. fmt(base + moved))
      return {1, version, json, below + prank + 1, redis.call('ZCARD', K_WAITING) + left, '', 0,
        0}
    end
  end
end
expire_tokens(now)
local jti, iat, exp = parse_token(redis.call('HGET', K_TOKENS, user))
if jti and exp > now then
  return {2, version, json, 0, 0, jti, iat, exp}
end
if not is_join then
  return {-3, version, json, 0, 0, '', 0, 0}
end
local inline = redis.call('ZCARD', K_WAITING)
local max = tonumber(cfg[3] or '0')
if max > 0 and inline + redis.call('ZCARD', K_PRE) >= max then
  redis.call('HINCRBY', K_STATE, 'rejectedFullTotal', 1)
  return {-2, version, json, 0, inline + left, '', 0, 0}
end
local last = tonumber(redis.call('HGET', K_STATE, 'lastScore') or '0')
local score = now
if score <= last then
  score = last + 1
end
if not opening and opens_at and now < opens_at * 1000 then
  -- before the opening: the pre-queue
  if cfg[6] == '0' then
    redis.call('ZADD', K_PRE, 'NX', fmt(score), user)
    redis.call('HSET', K_STATE, 'lastScore', fmt(score))
  else
    redis.call('ZADD', K_PRE, 'NX', ARGV[4], user)
  end
  I.seen_set(user, now, is_page)
  redis.call('HSET', K_CONFIG, 'preq', '1')
  return {4, version, json, 0, 0, '', 0, 0}
end
redis.call('ZADD', K_WAITING, 'NX', fmt(score), user)
I.seen_set(user, now, is_page)
redis.call('HSET', K_STATE, 'lastScore', fmt(score))
rank = redis.call('ZRANK', K_WAITING, user)
return {1, version, json, rank + 1 + left, inline + 1 + left, '', 0, 0}
