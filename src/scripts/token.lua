-- token.lua - consume and verify (lib.lua prepended).
-- ARGV[1] user, ARGV[2] jti, ARGV[3] '1' = consume (delete), '0' = verify.
-- Reply: 0 live (consumed when consuming), 1 passthrough (queue disabled),
--        -1 no queue, -2 not live (consumed, revoked, unknown), -3 expired.
-- The user's own token is checked before any expiry sweep, so an expired
-- token still answers -3 (and is cleaned up by consume, counted expired).
local user, jti, consume = ARGV[1], ARGV[2], ARGV[3] == '1'
local enabled = redis.call('HGET', K_CONFIG, 'enabled')
if not enabled then
  return -1
end
if enabled == '0' then
  return 1
end
local tjti, _, exp = parse_token(redis.call('HGET', K_TOKENS, user))
if not tjti or tjti ~= jti then
  return -2
end
local now = now_us()
if exp <= now then
  if consume then
    redis.call('HDEL', K_TOKENS, user)
    redis.call('ZREM', K_ACTIVE, user)
    redis.call('HINCRBY', K_STATE, 'expiredTotal', 1)
  end
  return -3
end
if consume then
  redis.call('HDEL', K_TOKENS, user)
  redis.call('ZREM', K_ACTIVE, user)
  redis.call('HINCRBY', K_STATE, 'consumedTotal', 1)
end
return 0
