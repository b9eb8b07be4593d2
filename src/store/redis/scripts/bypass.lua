-- bypass.lua - bypass rules: counts the requests a rule let past the line
-- (store.h bypass), for every instance together (lib.lua prepended).
-- ARGV: A_BYPASS (scripts.def): N, how many (1..2^32).
-- Reply: 0 counted (state bypassTotal, which lib.lua's stats() reports),
-- -1 no queue. Nothing else of the queue is touched: no place, no active
-- slot, no stock.
if redis.call('EXISTS', K_CONFIG) == 0 then
  return -1
end
redis.call('HINCRBY', K_STATE, 'bypassTotal', ARGV[A_BYPASS.N])
return 0
