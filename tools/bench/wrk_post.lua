-- wrk script of the quick benchmark: POSTs one AdmissionReview file on every
-- request and counts answers that are not HTTP 200. Prints one line
--   RESULT requests=N non200=N errors=N rps=R p50_us=U p99_us=U
-- that tests/bench/test_bench_quick.py reads. Figures only; the answers'
-- content is checked by the test itself before and after the load.
--
--   wrk -t1 -c4 -d2s -s tools/bench/wrk_post.lua https://127.0.0.1:PORT/PATH -- FIXTURE.json

local body
non200 = 0  -- global: done() reads it from each thread with t:get
local threads = {}

function setup(thread)
  table.insert(threads, thread)
end

function init(args)
  local f = assert(io.open(args[1], "rb"), "cannot open the fixture " .. tostring(args[1]))
  body = f:read("*a")
  f:close()
  wrk.method = "POST"
  wrk.body = body
  wrk.headers["Content-Type"] = "application/json"
end

function response(status, headers, resp_body)
  if status ~= 200 then
    non200 = non200 + 1
  end
end

function done(summary, latency, requests)
  local bad = 0
  for _, t in ipairs(threads) do
    bad = bad + (t:get("non200") or 0)
  end
  local e = summary.errors
  local errors = e.connect + e.read + e.write + e.timeout
  local secs = summary.duration / 1e6
  io.write(string.format("RESULT requests=%d non200=%d errors=%d rps=%.0f p50_us=%d p99_us=%d\n",
    summary.requests, bad, errors, summary.requests / secs,
    latency:percentile(50), latency:percentile(99)))
end
