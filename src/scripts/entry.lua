-- entry.lua - one join or status (lib.lua prepended; the rules are lib.lua's
-- entry(), shared with entry_batch.lua).
-- ARGV[1] user, ARGV[2] known config version ('0' = none),
-- ARGV[3] mode: '1' join (add when absent), '2' join by the queue page,
-- '0' status, '3' quiet status (lib.lua's entry() says what each does,
-- people who stop asking included).
-- Reply, always 8 elements:
--   {kind, version, json, position, waiting, jti, iat_us, exp_us}
--   kind: 1 WAITING, 2 ADMITTED, 3 PASSTHROUGH,
--         -1 no queue, -2 line full (waiting set), -3 not in queue.
local c = entry_config(ARGV[2])
if not c then
  return {-1, 0, '', 0, 0, '', 0, 0}
end
local kind, position, waiting, jti, iat, exp = entry(c, ARGV[1], ARGV[3])
return {kind, c.version, c.json, position, waiting, jti, iat, exp}
