-- wrk script: joins of unique users u1, u2, ... (header identity).
-- Stops the thread after WR_FILL joins when WR_FILL is set.
local n = 0
local fill = tonumber(os.getenv("WR_FILL") or "0")
local queue = os.getenv("WR_QUEUE") or "bench"
local prefix = os.getenv("WR_PREFIX") or "u"
request = function()
  n = n + 1
  return wrk.format("POST", "/v1/queues/" .. queue .. "/entries", {["X-User-Id"] = prefix .. n})
end
response = function(status, headers, body)
  if status ~= 200 then
    io.stderr:write("join: status " .. status .. " " .. body .. "\n")
  end
  if fill > 0 and n >= fill then
    wrk.thread:stop()
  end
end
