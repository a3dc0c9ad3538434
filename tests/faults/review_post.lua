-- wrk script of the fault suite: POSTs one AdmissionReview (read from the file
-- given as the first argument after "--") to the webhook and checks every answer:
-- status 200, the review's uid (second argument) and "allowed":true in the body.
-- Third argument: answers per thread after which the thread stops (0 = run for -d);
-- a stopped thread appends a line to the file named by the fourth argument, so the
-- caller knows when to end wrk (wrk's main thread otherwise sleeps for all of -d).
-- done() prints "wasd-check good=N bad=N" summed over the threads.
local threads = {}

function setup(thread)
  table.insert(threads, thread)
end

function init(args)
  local f = assert(io.open(args[1], "rb"))
  local body = f:read("*a")
  f:close()
  wrk.method = "POST"
  wrk.body = body
  wrk.headers["Content-Type"] = "application/json"
  uid_needle = '"uid":"' .. args[2] .. '"'
  limit = tonumber(args[3]) or 0
  done_file = args[4]
  good = 0
  bad = 0
end

function response(status, headers, body)
  if status == 200 and body:find(uid_needle, 1, true) and body:find('"allowed":true', 1, true) then
    good = good + 1
  else
    bad = bad + 1
  end
  if limit > 0 and good + bad == limit then
    local f = io.open(done_file, "a")
    if f then
      f:write("done\n")
      f:close()
    end
    wrk.thread:stop()
  end
end

function done(summary, latency, requests)
  local g, b = 0, 0
  for _, t in ipairs(threads) do
    g = g + t:get("good")
    b = b + t:get("bad")
  end
  io.write(string.format("wasd-check good=%d bad=%d\n", g, b))
end
