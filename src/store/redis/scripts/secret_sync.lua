-- secret_sync.lua - an instance's periodic check that Redis still holds what
-- it had (store.h secret_sync; K31: a Redis restarted empty).
-- KEYS[1] wr:epoch, KEYS[2] wr:secret, KEYS[3] wr:secret:previous.
-- ARGV[1] the caller's epoch marker, stored if none is; ARGV[2] the token
-- secret the caller signs with (binary), or '' (a configured secret: the
-- secrets are not touched). A missing secret is written back
-- (set-if-absent); when another is stored, the caller's becomes the
-- previous secret every instance accepts, and the caller adopts the stored
-- one.
-- Reply: {epoch, secret or nil, previous or nil, restored (1: written back)}.
redis.call('SET', KEYS[1], ARGV[1], 'NX')
local epoch = redis.call('GET', KEYS[1])
local secret, restored = false, 0
if ARGV[2] ~= '' then
  if redis.call('SET', KEYS[2], ARGV[2], 'NX') then
    restored = 1
  end
  secret = redis.call('GET', KEYS[2])
  if secret ~= ARGV[2] then
    redis.call('SET', KEYS[3], ARGV[2])
  end
end
return {epoch, secret, redis.call('GET', KEYS[3]), restored}
