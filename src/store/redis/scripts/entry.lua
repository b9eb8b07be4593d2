-- entry.lua - one join or status (lib.lua prepended; the rules are lib.lua's
-- entry(), shared with entry_batch.lua).
-- ARGV[1] user, ARGV[2] known config version ('0' = none),
-- ARGV[3] mode: '1' join (add when absent), '2' join by the queue page,
-- '0' status, '3' quiet status (lib.lua's entry() says what each does,
-- people who stop asking and the sale opening's pre-queue included).
-- ARGV[4] (joins) the pre-queue key of a shuffled pre-queue: a random
-- integer below 2^52 from waitroomd's CSPRNG (Lua's math.random is not
-- cryptographic, and a script must not draw randomness); '0' for a status.
-- Reply, always 12 elements:
--   {kind, version, json, position, waiting, jti, iat_us, exp_us,
--    head_due_us, own_due_us, stock_left, passed}
--   stock_left: what is left of the stock after the call, -1 without one.
--   passed: kind 1 of someone already in line within the first 257 of it:
--   how many of the people ahead admission will pass over (lib.lua
--   entry_passed, store.h passed_ahead); -1 otherwise.
--   head_due_us, own_due_us: after a join that added the user, us from now
--   until the first of the line and this user may be admitted (the
--   admission delay, queue.h wr_queue_admit_due_us, as admit.lua applies
--   it); -1 otherwise.
--   kind: 1 WAITING, 2 ADMITTED, 3 PASSTHROUGH, 4 PREQUEUE, 5 HELD (position 1),
--         6 CLOSED (position: 1 closed, 2 sold out),
--         -1 no queue, -2 line full (waiting set), -3 not in queue.
local c = entry_config(ARGV[2])
if not c then
  return {-1, 0, '', 0, 0, '', 0, 0, -1, -1, -1, -1}
end
local kind, position, waiting, jti, iat, exp, head_due, own_due, passed = entry(c, ARGV[1], ARGV[3],
  ARGV[4])
entry_flush(c)
return {kind, c.version, c.json, position, waiting, jti, iat, exp, head_due or -1, own_due or -1,
  stock_left() or -1, passed or -1}
