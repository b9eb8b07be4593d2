-- wrk script: position polls (GET entries/me) of random users u1..uN.
local users = tonumber(os.getenv("WR_USERS") or "1000000")
local queue = os.getenv("WR_QUEUE") or "bench"
local path = "/v1/queues/" .. queue .. "/entries/me"
local bad = 0
math.randomseed(os.time())
request = function()
  return wrk.format("GET", path, {["X-User-Id"] = "u" .. math.random(1, users)})
end
response = function(status, headers, body)
  if status ~= 200 and bad < 5 then
    bad = bad + 1
    io.stderr:write("poll: status " .. status .. " " .. body .. "\n")
  end
end
