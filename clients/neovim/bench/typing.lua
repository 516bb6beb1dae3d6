-- Typing in the chat's input while a reply streams into a 4,000-line
-- transcript, measured headless: `bash clients/neovim/bench/typing.sh`.
--
-- A keystroke waits behind whatever the event loop is doing, so its
-- latency here is one streamed chunk's work (chat.apply, then the render
-- that the chunk schedules) plus the key itself (typed in insert mode in
-- the input window, with a redraw; entering and leaving insert mode around it
-- is counted too, so it is an upper bound). Each sample streams a chunk and types
-- a key; the report gives the median, p99 and worst of the sum, and the
-- same with the transcript rewritten whole on every chunk (how the plugin
-- rendered before it wrote only the lines that changed).
local here = debug.getinfo(1, "S").source:sub(2):match("(.*)/")
vim.opt.runtimepath:prepend(vim.fn.fnamemodify(here, ":h"))
vim.opt.swapfile = false
vim.o.columns, vim.o.lines = 200, 60

local agentd = require("agentd")
local chat = require("agentd.chat")
local uv = vim.loop
assert(agentd.setup({}))

local LINES = tonumber(vim.env.AGENTD_BENCH_LINES) or 4000
local KEYS = tonumber(vim.env.AGENTD_BENCH_KEYS) or 400

local function ms(t0)
  return (uv.hrtime() - t0) / 1e6
end

-- CPU time of this process (user + system) in ms: unlike the wall clock it
-- does not count the time a loaded machine keeps Neovim waiting for a core.
local function cpu()
  local r = uv.getrusage()
  return (r.utime.sec + r.stime.sec) * 1e3 + (r.utime.usec + r.stime.usec) / 1e3
end

local function build()
  local sid = "bench"
  agentd.session_id = sid
  local m = chat.new_model(sid)
  agentd.models[sid] = m
  local n, i = 0, 0
  while n < LINES - 40 do
    i = i + 1
    chat.add_prompt(m, "question " .. i)
    chat.apply(m, { sessionUpdate = "agent_thought_chunk", messageId = "t" .. i, content = { type = "text", text = "thinking\nabout it" } })
    local text = {}
    for l = 1, 12 do
      text[l] = string.format("Line %d of answer %d: some `code` and **bold** words, a [link](http://x) and more text.", l, i)
    end
    chat.apply(m, { sessionUpdate = "agent_message_chunk", messageId = "a" .. i, content = { type = "text", text = table.concat(text, "\n") .. "\n" } })
    chat.apply(m, { sessionUpdate = "tool_call", toolCallId = "c" .. i, title = "Read file" .. i .. ".go", status = "completed" })
    chat.prompt_done(m, nil, { stopReason = "end_turn" })
    n = n + 21
  end
  chat.add_prompt(m, "the streaming question")
  agentd.open_chat()
  chat.render_now()
  return m
end

local function percentile(xs, p)
  local s = vim.deepcopy(xs)
  table.sort(s)
  return s[math.max(1, math.ceil(#s * p))]
end

local function run(m, full)
  local chunk, key, total, cputotal = {}, {}, {}, {}
  vim.api.nvim_set_current_win(chat.ui.iwin)
  vim.api.nvim_buf_set_lines(chat.ui.input, 0, -1, false, { "" })
  for k = 1, KEYS do
    local c0 = cpu()
    local t0 = uv.hrtime()
    chat.apply(m, { sessionUpdate = "agent_message_chunk", messageId = "stream", content = { type = "text", text = (k % 12 == 0) and "word\n" or "word " } })
    if full then
      chat.ui.lines = nil
    end
    chat.render_now()
    chunk[k] = ms(t0)
    local t1 = uv.hrtime()
    -- A key typed in insert mode; entering and leaving insert mode around
    -- it (feedkeys cannot stay in insert mode headless) makes this an
    -- upper bound.
    vim.api.nvim_feedkeys("A" .. string.char(97 + k % 26) .. "\27", "xt", false)
    vim.cmd("redraw")
    key[k] = ms(t1)
    total[k] = chunk[k] + key[k]
    cputotal[k] = cpu() - c0
  end
  return chunk, key, total, cputotal
end

local m = build()
local lines = vim.api.nvim_buf_line_count(chat.ui.transcript)
local out = {}
local function report(name, xs)
  out[#out + 1] = string.format("%-34s median %6.3f ms   p99 %6.3f ms   max %6.3f ms", name, percentile(xs, 0.5), percentile(xs, 0.99), percentile(xs, 1))
end
local chunk, key, total, cputotal = run(m, false)
local typed = vim.api.nvim_buf_get_lines(chat.ui.input, 0, -1, false)[1]
out[#out + 1] = string.format("nvim %s, transcript %d lines, %d keystrokes (%d typed)", tostring(vim.version().major .. "." .. vim.version().minor .. "." .. vim.version().patch), lines, KEYS, #typed)
report("chunk render (changed lines)", chunk)
report("keystroke", key)
report("keystroke latency (sum)", total)
report("keystroke latency, CPU time", cputotal)
local fchunk, _, ftotal, fcpu = run(m, true)
report("chunk render (whole rewrite)", fchunk)
report("keystroke latency (whole rewrite)", ftotal)
report("  same, CPU time", fcpu)
io.stdout:write(table.concat(out, "\n") .. "\n")
if #typed ~= KEYS then
  io.stdout:write("error: the input holds " .. #typed .. " characters, not " .. KEYS .. "\n")
  vim.cmd("cquit 1")
end
vim.cmd("qall!")
