-- Helpers for the plugin's tests: assertions, waiting on expectations with
-- a deadline, a captured vim.notify, a scripted vim.ui.select, and the
-- fake model server and agentd binaries built by run.sh.
local M = {}

M.notes = {}
M.log = {}
local cleanups = {}

-- Capture notifications so tests can count them and failures can show them.
vim.notify = function(msg, level)
  table.insert(M.notes, { msg = tostring(msg), level = level or vim.log.levels.INFO })
end

function M.logf(fmt, ...)
  table.insert(M.log, string.format(fmt, ...))
end

function M.on_cleanup(fn)
  table.insert(cleanups, fn)
end

function M.cleanup()
  for i = #cleanups, 1, -1 do
    pcall(cleanups[i])
  end
  cleanups = {}
end

function M.eq(want, got, what)
  if not vim.deep_equal(want, got) then
    error(string.format("%s:\n  want %s\n  got  %s", what or "values differ", vim.inspect(want), vim.inspect(got)), 2)
  end
end

function M.truthy(v, what)
  if not v then
    error((what or "expected a true value") .. ", got " .. vim.inspect(v), 2)
  end
  return v
end

function M.contains(hay, needle, what)
  if type(hay) == "table" then
    hay = table.concat(hay, "\n")
  end
  if not tostring(hay):find(needle, 1, true) then
    error(string.format("%s: %q not found in:\n%s", what or "missing text", needle, tostring(hay)), 2)
  end
end

--- Waits (processing events) until cond() is truthy; fails after timeout
--- with what, and the value of describe() when given.
function M.wait_for(cond, what, timeout_ms, describe)
  local last
  local ok = vim.wait(timeout_ms or 10000, function()
    local okc, v = pcall(cond)
    last = okc and v or last
    return okc and v
  end, 10)
  if not ok then
    local extra = describe and ("\n" .. tostring(describe())) or ""
    error("timed out waiting for " .. what .. extra, 2)
  end
  return last
end

--- The pid of the running agentd: the one child process of this Neovim by
--- that name (Neovim 0.12's LSP client no longer exposes client.rpc.pid).
function M.daemon_pid()
  local found = {}
  for _, pid in ipairs(vim.api.nvim_get_proc_children(vim.fn.getpid())) do
    local p = vim.api.nvim_get_proc(pid)
    if p and p.name == "agentd" then
      table.insert(found, pid)
    end
  end
  if #found ~= 1 then
    error("want one agentd child process, found " .. vim.inspect(found), 2)
  end
  return found[1]
end

function M.errors()
  local out = {}
  for _, n in ipairs(M.notes) do
    if n.level >= vim.log.levels.ERROR then
      table.insert(out, n.msg)
    end
  end
  return out
end

function M.tmpdir()
  local d = vim.fn.tempname()
  vim.fn.mkdir(d, "p")
  d = vim.loop.fs_realpath(d)
  M.on_cleanup(function()
    vim.fn.delete(d, "rf")
  end)
  return d
end

function M.write(path, text)
  local f = assert(io.open(path, "wb"))
  f:write(text)
  f:close()
end

function M.read(path)
  local f = io.open(path, "rb")
  if not f then
    return nil
  end
  local s = f:read("*a")
  f:close()
  return s
end

function M.lines(b)
  return vim.api.nvim_buf_get_lines(b or 0, 0, -1, false)
end

--- The transcript's lines.
function M.transcript()
  local chat = require("agentd.chat")
  chat.render_now()
  if not chat.ui.transcript or not vim.api.nvim_buf_is_valid(chat.ui.transcript) then
    return {}
  end
  return M.lines(chat.ui.transcript)
end

function M.transcript_text()
  return table.concat(M.transcript(), "\n")
end

--- Replaces vim.ui.select with a scripted chooser: choose(items, opts,
--- format) returns the item to pick (or nil). Calls are recorded.
-- Neovim's own vim.ui.select, before any case replaces it.
M.builtin_select = vim.ui.select

function M.stub_select(choose)
  local calls = {}
  vim.ui.select = function(items, opts, on_choice)
    local labels = {}
    for i, it in ipairs(items) do
      labels[i] = opts and opts.format_item and opts.format_item(it) or tostring(it)
    end
    table.insert(calls, { items = items, labels = labels, prompt = opts and opts.prompt })
    on_choice(choose(items, labels, opts))
  end
  return calls
end

--- Picks the item whose label matches one of the given labels in turn.
function M.pick(...)
  local wanted = { ... }
  local n = 0
  return function(items, labels)
    n = n + 1
    local want = wanted[math.min(n, #wanted)]
    for i, l in ipairs(labels) do
      if l:lower():find(want:lower(), 1, true) then
        return items[i]
      end
    end
    return nil
  end
end

-- Binaries ---------------------------------------------------------------------

function M.need_bin(var, what)
  local p = vim.env[var]
  if not p or p == "" or vim.fn.executable(p) ~= 1 then
    local why = vim.env[var .. "_ERROR"]
    error(string.format("%s is not available ($%s unset or not executable)%s", what, var, why and (": " .. why) or ""), 2)
  end
  return p
end

M.TITLE_MATCH = "You name coding conversations"

--- Starts the fake model server with script (a table). Returns {url, log,
--- requests(), headers()}; headers() lists every request's method, path
--- and credential headers.
function M.fakemodel(script)
  local bin = M.need_bin("FAKEMODEL_BIN", "the fake model server")
  local dir = M.tmpdir()
  local script_path, log_path = dir .. "/script.json", dir .. "/requests.jsonl"
  local headers_path = dir .. "/headers.jsonl"
  -- agentd names a session in the background after its first turn; answer
  -- that request aside so it never takes one of the scripted turns.
  script.routes = script.routes or { { match = M.TITLE_MATCH, turn = { text = "Test session" } } }
  M.write(script_path, vim.json.encode(script))
  local url
  local job = vim.fn.jobstart({ bin, "--script", script_path, "--log", log_path, "--headers", headers_path }, {
    on_stdout = function(_, data)
      for _, l in ipairs(data) do
        if not url and l:match("^http://") then
          url = l
        end
      end
    end,
    on_stderr = function(_, data)
      for _, l in ipairs(data) do
        if l ~= "" then
          M.logf("fakemodel: %s", l)
        end
      end
    end,
  })
  M.truthy(job > 0, "fakemodel started")
  M.on_cleanup(function()
    vim.fn.jobstop(job)
  end)
  M.wait_for(function()
    return url
  end, "the fake model's URL", 10000)
  local fm = { url = url, log = log_path }
  -- The agent loop's requests, in order (side requests left out).
  function fm.requests()
    local out = {}
    local s = M.read(log_path) or ""
    for line in s:gmatch("[^\n]+") do
      if not line:find(M.TITLE_MATCH, 1, true) then
        table.insert(out, vim.json.decode(line))
      end
    end
    return out
  end
  function fm.headers()
    local out = {}
    for line in (M.read(headers_path) or ""):gmatch("[^\n]+") do
      table.insert(out, vim.json.decode(line))
    end
    return out
  end
  return fm
end

--- Settings that point agentd at the fake model.
function M.fake_settings(url, mode)
  return {
    provider = "fake",
    providers = { fake = { apiType = "openai", baseUrl = url, model = "fake-model" } },
    mode = mode or "ask",
  }
end

--- Sets the plugin up against the real agentd binary and the fake model.
function M.setup_agentd(url, cwd, extra)
  local bin = M.need_bin("AGENTD_BIN", "the agentd binary")
  local opts = vim.tbl_deep_extend("force", {
    cmd = { bin, "--stdio" },
    settings = M.fake_settings(url),
    cwd = cwd,
    init_timeout = 20,
  }, extra or {})
  M.truthy(require("agentd").setup(opts), "setup accepted the options")
  M.on_cleanup(function()
    require("agentd.client").stop()
    vim.wait(2000, function()
      return require("agentd.client").get() == nil
    end, 20)
  end)
end

--- Everything that helps understand a failure.
function M.report()
  local out = {}
  local function add(s)
    table.insert(out, s)
  end
  add("--- notifications:")
  for _, n in ipairs(M.notes) do
    add(string.format("  [%s] %s", n.level, n.msg))
  end
  if #M.log > 0 then
    add("--- log:")
    for _, l in ipairs(M.log) do
      add("  " .. l)
    end
  end
  local ok, t = pcall(M.transcript)
  if ok and #t > 0 then
    add("--- transcript:")
    for _, l in ipairs(t) do
      add("  | " .. l)
    end
  end
  if vim.v.errmsg ~= "" then
    add("--- v:errmsg: " .. vim.v.errmsg)
  end
  return table.concat(out, "\n") .. "\n"
end

return M
