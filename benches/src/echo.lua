-- wrk script of the HTTP rows (see load_wrk.rs): POSTs `tools/call` of `echo` and checks
-- every answer. Arguments after `--`: optionally `nocheck` (below), then
-- `modern`, or `legacy SESSION-ID...` (one id per client
-- the harness initialized; requests take them in turn); right after the wire, `bearer=TOKEN`
-- sends `Authorization: Bearer TOKEN` with every request (the auth rows).
--
-- Requests are built once in init(): wrk calls request() per request, and building a string
-- there would cost the generator more than some servers spend answering it.

local TEXT = "hello from wrk"
local TABLE_SIZE = 1024

local requests = {}
local next_request = 0

-- Read by done() through thread:get; only numbers and strings cross threads.
bad = 0
bad_sample = ""

function init(args)
   -- `nocheck` first: no response() at all, so wrk neither hands headers and bodies to Lua
   -- nor calls it (the generator probe of load_wrk.rs; the measured runs check every answer).
   if args[1] == "nocheck" then
      response = nil
      table.remove(args, 1)
   end
   local wire = args[1]
   local first_session = 2
   local authorization = nil
   if args[2] and string.sub(args[2], 1, 7) == "bearer=" then
      authorization = "Bearer " .. string.sub(args[2], 8)
      first_session = 3
   end
   local sessions = {}
   for k = first_session, #args do
      sessions[#sessions + 1] = args[k]
   end
   if wire == "legacy" and #sessions == 0 then
      error("legacy needs at least one session id")
   end
   -- Distinct ids: a session may see two of these requests at once.
   for j = 1, TABLE_SIZE do
      local headers = {
         ["Content-Type"] = "application/json",
         ["Accept"] = "application/json, text/event-stream",
         ["Authorization"] = authorization,
      }
      local body
      if wire == "modern" then
         headers["MCP-Protocol-Version"] = "2026-07-28"
         headers["Mcp-Method"] = "tools/call"
         headers["Mcp-Name"] = "echo"
         body = string.format(
            '{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"echo",'
               .. '"arguments":{"text":"%s"},"_meta":{'
               .. '"io.modelcontextprotocol/protocolVersion":"2026-07-28",'
               .. '"io.modelcontextprotocol/clientCapabilities":{},'
               .. '"io.modelcontextprotocol/clientInfo":{"name":"bench","version":"0"}}}}',
            j, TEXT)
      elseif wire == "legacy" then
         headers["MCP-Protocol-Version"] = "2025-11-25"
         headers["Mcp-Session-Id"] = sessions[(j - 1) % #sessions + 1]
         body = string.format(
            '{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"echo",'
               .. '"arguments":{"text":"%s"}}}',
            j, TEXT)
      else
         error("unknown wire " .. tostring(wire))
      end
      requests[j] = wrk.format("POST", nil, headers, body)
   end
end

function request()
   next_request = next_request % TABLE_SIZE + 1
   return requests[next_request]
end

-- A success is a 200 whose body (JSON or one SSE event) holds a result with the echoed text
-- and no error.
function response(status, headers, body)
   if status ~= 200
      or not string.find(body, '"result"', 1, true)
      or not string.find(body, TEXT, 1, true)
      or string.find(body, '"error"', 1, true) then
      bad = bad + 1
      if bad_sample == "" then
         bad_sample = status .. " " .. string.sub(body, 1, 300)
      end
   end
end

local threads = {}

function setup(thread)
   threads[#threads + 1] = thread
end

-- One machine-readable line for the harness (microseconds throughout).
function done(summary, latency, requests)
   local bad_total, sample = 0, ""
   for _, t in ipairs(threads) do
      bad_total = bad_total + t:get("bad")
      if sample == "" then
         sample = t:get("bad_sample")
      end
   end
   local e = summary.errors
   io.write(string.format(
      "SWITCHYARD-WRK requests=%d duration_us=%d p50_us=%d p99_us=%d max_us=%d bad=%d"
         .. " connect=%d read=%d write=%d status=%d timeout=%d sample=%s\n",
      summary.requests, summary.duration, latency:percentile(50), latency:percentile(99),
      latency.max, bad_total, e.connect, e.read, e.write, e.status, e.timeout,
      (string.gsub(sample, "[\r\n]", " "))))
end
