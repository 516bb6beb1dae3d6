-- Inline completions in the real Neovim against the real agentd and the fake
-- model's /v1/completions (fill-in-the-middle) endpoint.
local h = require("helpers")
local cases = require("harness").cases()

local function termcodes(s)
  return vim.api.nvim_replace_termcodes(s, true, false, true)
end

-- Starts agentd with completions pointed at the fake model, opens a Go file
-- with the cursor at the end of its empty function body line, and waits until
-- the daemon is up and advertises inline completions. The plugin renders the
-- suggestions itself (inline.native = false) unless extra says otherwise, so
-- these cases test its renderer on every Neovim, 0.12's included.
local function start(fim, extra)
  local fm = h.fakemodel({ turns = {}, fim = fim })
  local dir = h.tmpdir()
  local settings = h.fake_settings(fm.url)
  settings.completion = { provider = "fake", model = "fake-fim", endpoint = "completions" }
  local opts = { settings = settings, inline = { native = false } }
  h.setup_agentd(fm.url, dir, vim.tbl_deep_extend("force", opts, extra or {}))
  local started
  require("agentd").with_client(function(err)
    started = err or true
  end)
  h.wait_for(function()
    return started
  end, "agentd to start", 20000)
  h.eq(true, started, "agentd started")
  local inline = require("agentd.inline")
  h.truthy(inline.client(), "agentd advertises inlineCompletionProvider")
  local path = dir .. "/add.go"
  h.write(path, "package p\n\nfunc add(a, b int) int {\n\t\n}\n")
  vim.cmd("edit " .. vim.fn.fnameescape(path))
  vim.api.nvim_win_set_cursor(0, { 4, 1 })
  return inline, fm
end

-- Typing in insert mode in a headless Neovim: nvim_feedkeys with "x!" stays
-- in insert mode and waits for more keys, processing timers and the LSP's
-- answers meanwhile. So enter(keys, fn) feeds keys that enter insert mode
-- and runs fn in a coroutine from a timer: fn's k(keys) types more (resumed
-- once Neovim has read them) and its wait(cond, what) polls; fn ends with
-- <Esc> typed for it unless it left insert mode itself. An error in fn fails
-- the case after insert mode ends.
local function enter(keys, fn)
  local failure
  local co = coroutine.create(function()
    local t = {}
    function t.k(more)
      vim.api.nvim_feedkeys(termcodes(more), "t", false)
      coroutine.yield()
    end
    function t.wait(cond, what, timeout_ms)
      local deadline = vim.loop.now() + (timeout_ms or 10000)
      while not cond() do
        if vim.loop.now() > deadline then
          error("timed out waiting for " .. what .. "\n" .. h.report(), 0)
        end
        coroutine.yield()
      end
    end
    function t.sleep(ms)
      local until_ = vim.loop.now() + ms
      while vim.loop.now() < until_ do
        coroutine.yield()
      end
    end
    fn(t)
  end)
  local function tick()
    local ok, e = coroutine.resume(co)
    if not ok then
      failure = debug.traceback(co, tostring(e))
    end
    if coroutine.status(co) == "dead" then
      if vim.fn.mode() == "i" then
        vim.api.nvim_feedkeys(termcodes("<Esc>"), "t", false)
      end
    else
      vim.defer_fn(tick, 10)
    end
  end
  vim.defer_fn(tick, 10)
  vim.api.nvim_feedkeys(termcodes(keys), "xt!", false)
  if failure then
    error(failure, 0)
  end
end

local function shown_text(inline)
  local marks = vim.api.nvim_buf_get_extmarks(0, inline.ns, 0, -1, { details = true })
  local out = {}
  for _, m in ipairs(marks) do
    for _, chunk in ipairs(m[4].virt_text or {}) do
      table.insert(out, chunk[1])
    end
  end
  return table.concat(out)
end

local FIM = { rules = { { after = "int {\n\tret", text = "urn a + b" } }, default = "" }

cases.add("a suggestion shows as virtual text and the accept key inserts it", function()
  local inline = start(FIM)
  enter("Aret", function(t)
    t.wait(function()
      return inline.shown
    end, "a suggestion")
    h.eq("i", vim.fn.mode(), "still in insert mode")
    h.eq("urn a + b", shown_text(inline), "the virtual text at the cursor")
    h.eq("\tret", vim.api.nvim_buf_get_lines(0, 3, 4, false)[1], "the buffer is unchanged while shown")
    t.k("<M-l>")
    h.eq("\treturn a + b", vim.api.nvim_buf_get_lines(0, 3, 4, false)[1], "accepted into the buffer")
    h.eq({ 4, #"\treturn a + b" }, vim.api.nvim_win_get_cursor(0), "the cursor is after the suggestion")
    h.eq("", shown_text(inline), "no virtual text after accepting")
    h.eq(1, inline.stats.accepted, "accepted once")
  end)
  h.eq({}, h.errors(), "no errors")
end)

cases.add("a suggestion of several lines shows as virt_lines and is accepted whole", function()
  local inline = start({ rules = { { after = "int {\n\tr", text = "eturn a +\n\t\tb" } } })
  enter("Ar", function(t)
    t.wait(function()
      return inline.shown
    end, "a suggestion")
    local marks = vim.api.nvim_buf_get_extmarks(0, inline.ns, 0, -1, { details = true })
    h.eq(1, #marks, "one extmark")
    h.eq("eturn a +", marks[1][4].virt_text[1][1], "the first line at the cursor")
    h.eq("\t\tb", marks[1][4].virt_lines[1][1][1], "the next line below")
    t.k("<M-l>")
    h.eq({ "\treturn a +", "\t\tb", "}" }, vim.api.nvim_buf_get_lines(0, 3, 6, false), "both lines inserted")
    h.eq({ 5, 3 }, vim.api.nvim_win_get_cursor(0), "the cursor after the last inserted character")
  end)
  h.eq({}, h.errors(), "no errors")
end)

cases.add("typing and leaving insert mode clear the suggestion", function()
  local inline = start(FIM)
  enter("Aret", function(t)
    t.wait(function()
      return inline.shown
    end, "a suggestion")
    t.k("x")
    h.eq(nil, inline.shown, "typing cleared it")
    h.eq("", shown_text(inline), "and its extmark")
    t.k("<BS>")
    t.wait(function()
      return inline.shown
    end, "the suggestion again")
    t.k("<Esc>")
    h.eq("n", vim.fn.mode(), "normal mode")
    h.eq(nil, inline.shown, "leaving insert mode cleared it")
    h.eq("", shown_text(inline), "and its extmark")
  end)
  -- The accept key without a suggestion is the key itself (<M-l> is Esc l).
  enter("A", function(t)
    h.eq(nil, inline.shown, "nothing shown")
    t.k("<M-l>")
  end)
  h.eq("\tret", vim.api.nvim_buf_get_lines(0, 3, 4, false)[1], "the buffer is as typed")
  h.eq({}, h.errors(), "no errors")
end)

cases.add("<Tab> as the accept key still inserts a tab when nothing is shown", function()
  local inline = start(FIM, { inline = { accept = "<Tab>" } })
  enter("A", function(t)
    t.k("<Tab>")
    h.eq("\t\t", vim.api.nvim_buf_get_lines(0, 3, 4, false)[1], "Tab typed a tab")
    t.k("<BS>ret")
    t.wait(function()
      return inline.shown
    end, "a suggestion")
    t.k("<Tab>")
    h.eq("\treturn a + b", vim.api.nvim_buf_get_lines(0, 3, 4, false)[1], "Tab accepted the suggestion")
  end)
  h.eq({}, h.errors(), "no errors")
end)

cases.add("a newer keystroke cancels the older request and its answer is never shown", function()
  -- The model takes 400 ms: the first request is still in flight when the
  -- next keystroke comes.
  local inline = start({ rules = { { after = "\tre", text = "STALE" }, { after = "\tret", text = "urn a + b" } }, delayMs = 400 },
    { inline = { debounce_ms = 20 } })
  enter("Are", function(t)
    t.wait(function()
      return inline.stats.requests >= 1
    end, "the first request")
    t.k("t")
    t.wait(function()
      return inline.shown
    end, "a suggestion")
    h.eq("urn a + b", shown_text(inline), "the newest document's suggestion")
    h.truthy(inline.stats.cancelled >= 1, "the older request was cancelled: " .. vim.inspect(inline.stats))
    t.sleep(600)
    h.eq("urn a + b", shown_text(inline), "the older answer never replaced it")
  end)
  h.eq({}, h.errors(), "no errors")
end)

cases.add("wiping a buffer tells agentd it closed: its suggestion is forgotten", function()
  local inline, fm = start(FIM, { inline = { debounce_ms = 20 } })
  local function fim_calls()
    local n = 0
    for _, r in ipairs(fm.requests()) do
      if r.suffix ~= nil then
        n = n + 1
      end
    end
    return n
  end
  enter("Aret", function(t)
    t.wait(function()
      return inline.shown
    end, "a suggestion")
  end)
  h.eq(1, fim_calls(), "one model call for the suggestion")
  vim.cmd("silent write")
  local path = vim.api.nvim_buf_get_name(0)
  local uri = vim.uri_from_bufnr(0)
  local sent = {}
  local raw_notify = require("agentd.client").raw_notify
  require("agentd.client").raw_notify = function(c, method, params)
    table.insert(sent, { method = method, params = params })
    return raw_notify(c, method, params)
  end
  vim.cmd("bwipeout!")
  require("agentd.client").raw_notify = raw_notify
  h.eq({ { method = "textDocument/didClose", params = { textDocument = { uri = uri } } } }, sent, "didClose sent for the wiped buffer")
  vim.cmd("edit " .. vim.fn.fnameescape(path))
  vim.api.nvim_win_set_cursor(0, { 4, 3 })
  enter("au", function(t)
    t.wait(function()
      return fim_calls() == 2
    end, "a model call for the reopened document (typing through what agentd forgot)")
  end)
  h.eq({}, h.errors(), "no errors")
end)

cases.add("no suggestion is asked for when agentd does not advertise them", function()
  local fm = h.fakemodel({ turns = {} })
  local dir = h.tmpdir()
  h.setup_agentd(fm.url, dir)
  local started
  require("agentd").with_client(function(err)
    started = err or true
  end)
  h.wait_for(function()
    return started
  end, "agentd to start", 20000)
  local inline = require("agentd.inline")
  h.eq(nil, inline.client(), "not advertised without completion settings")
  local path = dir .. "/a.txt"
  h.write(path, "hello\n")
  vim.cmd("edit " .. vim.fn.fnameescape(path))
  enter("A wor", function(t)
    t.sleep(300)
  end)
  h.eq(0, inline.stats.requests, "no request")
  h.eq("hello wor", vim.api.nvim_buf_get_lines(0, 0, 1, false)[1], "typing works")
  h.eq({}, h.errors(), "no errors")
end)

cases.add("setup names bad inline options", function()
  local agentd = require("agentd")
  for _, c in ipairs({
    { { inline = 1 }, "`inline`" },
    { { inline = { debounce_ms = -1 } }, "`inline.debounce_ms`" },
    { { inline = { accept = "" } }, "`inline.accept`" },
    { { inline = { enabled = "yes" } }, "`inline.enabled`" },
    { { inline = { nope = true } }, "`inline.nope`" },
  }) do
    h.notes = {}
    h.eq(false, agentd.setup(c[1]), "setup(" .. vim.inspect(c[1]) .. ")")
    h.contains(h.notes[1].msg, c[2], "message names the option")
  end
  h.eq(true, agentd.setup({ inline = { accept = false, debounce_ms = 0 } }), "good inline options")
end)

-- Neovim 0.12's own vim.lsp.inline_completion (inline.native, the default):
-- the plugin only attaches agentd to the buffer as insert mode starts, and
-- Neovim asks, shows and accepts. Neovim older than 0.12 skips this case;
-- nvim-sid.sh unpacks a 0.12 to run it with (AGENTD_NVIM).
cases.add("on Neovim 0.12+, vim.lsp.inline_completion shows agentd's suggestion and accepts it", function()
  if type(vim.lsp.inline_completion) ~= "table" then
    local v = vim.version()
    require("harness").skip(string.format("needs Neovim 0.12+ (vim.lsp.inline_completion); this is %d.%d.%d", v.major, v.minor, v.patch))
  end
  local inline = start(FIM, { inline = { native = true } })
  h.truthy(inline.native(), "the plugin leaves rendering to Neovim")
  local ns = vim.api.nvim_create_namespace("nvim.lsp.inline_completion")
  local function native_text()
    local out = {}
    for _, m in ipairs(vim.api.nvim_buf_get_extmarks(0, ns, 0, -1, { details = true })) do
      for _, chunk in ipairs(m[4].virt_text or {}) do
        table.insert(out, chunk[1])
      end
    end
    return table.concat(out)
  end
  enter("Aret", function(t)
    t.wait(function()
      return native_text() ~= ""
    end, "Neovim's inline completion to show agentd's suggestion")
    h.eq("urn a + b", native_text(), "Neovim shows the suggestion at the cursor")
    h.eq("", shown_text(inline), "the plugin's own renderer stays out")
    h.eq(0, inline.stats.requests, "the plugin sent no request of its own")
    h.truthy(vim.lsp.inline_completion.is_enabled({ bufnr = 0 }), "enabled for the buffer")
    h.truthy(vim.lsp.inline_completion.get(), "a suggestion to accept")
    t.wait(function()
      return vim.api.nvim_buf_get_lines(0, 3, 4, false)[1] == "\treturn a + b"
    end, "the suggestion accepted into the buffer")
    h.eq("", native_text(), "nothing shown after accepting")
  end)
  h.eq({}, h.errors(), "no errors")
end)

return cases
