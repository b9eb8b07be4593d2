-- token.lua - consume and verify (lib.lua prepended).
-- ARGV[1] user, ARGV[2] jti, ARGV[3] '1' = consume (delete), '0' = verify.
-- Reply: 0 live (consumed when consuming), 1 passthrough (queue disabled),
--        -1 no queue, -2 not live (consumed, revoked, unknown), -3 expired.
-- The user's own token is checked before any expiry sweep, so an expired
-- token still answers -3 (and is cleaned up by consume, counted expired;
-- no unseen expiry: whoever presents it had it, lib.lua).
-- Sessions (config sessionSec > 0): a consume also opens the user's
-- session (sessions: end = now + sessionSec s, sessjti: the jti; a session
-- already open is replaced); verify answers 0 for the jti of the user's
-- session while it is open (end > now), past the token's expiry too.
-- A consumed or expired pass of a group member ends their membership (gm,
-- lib_group.lua): consume comes with the group keys, verify without.
local user, jti, consume = ARGV[1], ARGV[2], ARGV[3] == '1'
local cfg = redis.call('HMGET', K_CONFIG, 'enabled', 'sessionSec', 'grp')
local gate = token_gate(cfg[1])
if gate then
  return gate
end
if consume then
  group_lib(cfg[3])
end
local tjti, _, exp = parse_token(redis.call('HGET', K_TOKENS, user))
if not tjti or tjti ~= jti then
  if not consume then
    local send, sjti = session_of(user)
    if send and sjti == jti and send > now_us() then
      return 0
    end
  end
  return -2
end
local now = now_us()
if exp <= now then
  if consume then
    redis.call('HDEL', K_TOKENS, user)
    redis.call('ZREM', K_ACTIVE, user)
    log_forget({user})
    if GRP.on then
      GRP.forget({user})
    end
    redis.call('HINCRBY', K_STATE, 'expiredTotal', 1)
    stock_return(1) -- expired unconsumed: its unit, as the sweep would
    stock_note(now)
  end
  return -3
end
if consume then
  redis.call('HDEL', K_TOKENS, user)
  redis.call('ZREM', K_ACTIVE, user)
  log_forget({user}) -- (the pass did its work: nothing more to the public log)
  if GRP.on then
    GRP.forget({user})
  end
  redis.call('HINCRBY', K_STATE, 'consumedTotal', 1)
  stock_note(now) -- a consumed pass keeps its unit: the last one may sell out
  local ss = tonumber(cfg[2] or '0')
  if ss > 0 then
    redis.call('ZADD', K_SESSIONS, fmt(now + ss * 1000000), user)
    redis.call('HSET', K_SESSJTI, user, jti)
  end
end
return 0
