-- lib.lua - shared prologue of the queue scripts. store_redis.c prepends
-- this file to each queue script (join, status, leave, admit, consume,
-- verify, queue_get), so every script is one self-contained EVAL text.
--
-- KEYS (all with the hash tag {queue}; never built here):
--   KEYS[1] wr:{q}:config  HASH json, enabled, paused, rate, tickMs,
--                                maxActive, maxQueueSize, ttlSec, version
--   KEYS[2] wr:{q}:waiting ZSET user -> arrival us
--   KEYS[3] wr:{q}:active  ZSET user -> token expiry us
--   KEYS[4] wr:{q}:tokens  HASH user -> "jti:iat_us:exp_us"
--   KEYS[5] wr:{q}:state   HASH lastScore, lastTick, carryMicro, counters
--
-- Numbers: microsecond times are about 1.8e15, exact in a Lua double (below
-- 2^53). They are written to Redis with string.format('%d') and returned
-- as Lua numbers, which Redis turns into integer replies. Never tostring()
-- or '..' a time (14 significant digits only).
local K_CONFIG, K_WAITING, K_ACTIVE, K_TOKENS, K_STATE = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5]

local function fmt(n)
  return string.format('%d', n)
end

-- Redis TIME in microseconds, exact (sec * 1e6 + usec < 2^53).
local function now_us()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000000 + tonumber(t[2])
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

-- Expires every token whose expiry <= now: removes it from active and
-- tokens and counts it in expiredTotal. Exact; no counter to drift.
local function expire_tokens(now)
  local gone = redis.call('ZRANGEBYSCORE', K_ACTIVE, '-inf', fmt(now))
  if #gone > 0 then
    chunked('HDEL', K_TOKENS, gone)
    chunked('ZREM', K_ACTIVE, gone)
    redis.call('HINCRBY', K_STATE, 'expiredTotal', #gone)
  end
end

-- Parses a tokens entry "jti:iat:exp" -> jti, iat, exp (numbers) or nil.
local function parse_token(v)
  if not v then
    return nil
  end
  local jti, iat, exp = string.match(v, '^([^:]+):(%d+):(%d+)$')
  if not jti then
    return nil
  end
  return jti, tonumber(iat), tonumber(exp)
end

-- The config version and, when the caller's known version differs, the
-- config JSON ('' otherwise). version is the stored integer string.
local function version_json(version, known, json)
  if known == version then
    return tonumber(version), ''
  end
  return tonumber(version), json or ''
end

-- Stats after expiry, in the order of wr_queue_stats_t.
local function stats()
  local c = redis.call('HMGET', K_STATE, 'admittedTotal', 'consumedTotal', 'expiredTotal',
    'leftTotal', 'rejectedFullTotal')
  return redis.call('ZCARD', K_WAITING), redis.call('ZCARD', K_ACTIVE), tonumber(c[1] or 0),
    tonumber(c[2] or 0), tonumber(c[3] or 0), tonumber(c[4] or 0), tonumber(c[5] or 0)
end
