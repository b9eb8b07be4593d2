-- release.lua - end the user's open session (lib.lua prepended).
-- ARGV[1] user, ARGV[2] jti (of the consumed token that opened it).
-- Reply: {0, us} ended (releasedTotal; us: how long the session lasted,
-- now minus its end less sessionSec, autotune's session signal), 1 passthrough (queue disabled), -1 no
-- queue, -4 no open session with that jti (never opened, released, lapsed;
-- a lapsed one not yet swept is removed here, counted in
-- sessionsExpiredTotal). Looks only at this user's session: a live token
-- that was never consumed is not touched.
local user, jti = ARGV[1], ARGV[2]
local gate = token_gate(redis.call('HGET', K_CONFIG, 'enabled'))
if gate then
  return gate
end
local send, sjti = session_of(user)
if not send or sjti ~= jti then
  return -4
end
local now = now_us()
session_drop(user)
if send > now then
  redis.call('HINCRBY', K_STATE, 'releasedTotal', 1)
  local sec = tonumber(redis.call('HGET', K_CONFIG, 'sessionSec') or '0') or 0
  return {0, math.max(0, now - (send - sec * 1000000))}
end
redis.call('HINCRBY', K_STATE, 'sessionsExpiredTotal', 1)
return -4
