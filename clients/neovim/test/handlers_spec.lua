-- Reverse requests answered from real buffers, through the plugin's real
-- LSP handler table (as Neovim's LSP client would call them).
local h = require("helpers")
local cases = require("harness").cases()

local function call(method, params)
  local fn = require("agentd").lsp_handlers()[method]
  h.truthy(fn, "handler for " .. method)
  return fn(nil, params, { method = method, client_id = 0 })
end

local function setup_file(text)
  local dir = h.tmpdir()
  local path = dir .. "/a.txt"
  h.write(path, text)
  return dir, path
end

cases.add("read_text_file returns the unsaved buffer with changedtick as version", function()
  local _, path = setup_file("one\ntwo\nthree\n")
  vim.cmd("edit " .. vim.fn.fnameescape(path))
  local b = vim.api.nvim_get_current_buf()
  vim.api.nvim_buf_set_lines(b, 1, 2, false, { "TWO (unsaved)" })
  local res, err = call("agent/fs/read_text_file", { sessionId = "s", path = path })
  h.eq(nil, err, "no error")
  h.eq("one\nTWO (unsaved)\nthree\n", res.content, "buffer text, unsaved change included")
  h.eq(vim.api.nvim_buf_get_changedtick(b), res._meta["agentd/version"], "version is changedtick")
  h.eq(true, res._meta["agentd/dirty"], "dirty")
  -- A line range.
  res = call("agent/fs/read_text_file", { sessionId = "s", path = path, line = 2, limit = 1 })
  h.eq("TWO (unsaved)\n", res.content, "line 2, limit 1")
  -- The disk was not touched.
  h.eq("one\ntwo\nthree\n", h.read(path), "disk unchanged")
  -- Paths reaching the same file another way find the same buffer.
  res = call("agent/fs/read_text_file", { sessionId = "s", path = vim.fn.fnamemodify(path, ":h") .. "/./a.txt" })
  h.eq("one\nTWO (unsaved)\nthree\n", res.content, "normalized path")
end)

cases.add("read_text_file falls back to disk, and a missing file is -32002", function()
  local dir, path = setup_file("on disk\n")
  local res = call("agent/fs/read_text_file", { sessionId = "s", path = path })
  h.eq("on disk\n", res.content, "disk text")
  h.eq(nil, res._meta, "no version for a disk read")
  local _, err = call("agent/fs/read_text_file", { sessionId = "s", path = dir .. "/nope.txt" })
  h.eq(-32002, err and err.code, "not found code")
  h.contains(err.message, "nope.txt", "message names the file")
  local _, perr = call("agent/fs/read_text_file", { sessionId = "s" })
  h.eq(-32602, perr and perr.code, "invalid params")
  -- A wiped buffer: the disk, never a Lua error.
  vim.cmd("edit " .. vim.fn.fnameescape(path))
  local b = vim.api.nvim_get_current_buf()
  vim.api.nvim_buf_set_lines(b, 0, -1, false, { "in buffer" })
  h.eq("in buffer\n", call("agent/fs/read_text_file", { sessionId = "s", path = path }).content, "loaded")
  vim.cmd("enew")
  vim.cmd("bwipeout! " .. b)
  h.eq("on disk\n", call("agent/fs/read_text_file", { sessionId = "s", path = path }).content, "after wipe: disk")
  os.remove(path)
  local _, gone = call("agent/fs/read_text_file", { sessionId = "s", path = path })
  h.eq(-32002, gone and gone.code, "wiped and deleted: not found")
end)

cases.add("dirty_buffers lists modified buffers with versions", function()
  local dir, path = setup_file("x\n")
  local other = dir .. "/b.txt"
  h.write(other, "y\n")
  vim.cmd("edit " .. vim.fn.fnameescape(path))
  local a = vim.api.nvim_get_current_buf()
  vim.cmd("edit " .. vim.fn.fnameescape(other))
  vim.api.nvim_buf_set_lines(a, 0, -1, false, { "x changed" })
  local res = call("agent/x/dirty_buffers", { sessionId = "s" })
  h.eq({ { path = path, version = vim.api.nvim_buf_get_changedtick(a) } }, res.buffers, "only the modified one")
end)

cases.add("diagnostics come from vim.diagnostic in UTF-16 columns", function()
  local _, path = setup_file("héllo wörld\nsecond\n")
  vim.cmd("edit " .. vim.fn.fnameescape(path))
  local b = vim.api.nvim_get_current_buf()
  local ns = vim.api.nvim_create_namespace("test")
  -- "wörld" starts at byte 7 (é is two bytes): UTF-16 column 6.
  vim.diagnostic.set(ns, b, {
    { lnum = 0, col = 7, end_lnum = 0, end_col = 13, severity = vim.diagnostic.severity.ERROR, message = "bad word", source = "spell" },
    { lnum = 1, col = 0, severity = vim.diagnostic.severity.WARN, message = "meh" },
  })
  local res = call("agent/x/diagnostics", { sessionId = "s", paths = { path } })
  h.eq(1, #res.items, "one item")
  h.eq(path, res.items[1].path, "path")
  local d = res.items[1].diagnostics
  h.eq(2, #d, "two diagnostics")
  table.sort(d, function(x, y)
    return x.range.start.line < y.range.start.line
  end)
  h.eq({ start = { line = 0, character = 6 }, ["end"] = { line = 0, character = 11 } }, d[1].range, "UTF-16 range")
  h.eq(1, d[1].severity, "error severity")
  h.eq("bad word", d[1].message, "message")
  h.eq("spell", d[1].source, "source")
  local all = call("agent/x/diagnostics", { sessionId = "s" })
  h.eq(1, #all.items, "all buffers with diagnostics")
end)

cases.add("applyEdit is version-checked, lands unsaved and undoes with u", function()
  local _, path = setup_file("alpha\nbeta\n")
  vim.cmd("edit " .. vim.fn.fnameescape(path))
  local b = vim.api.nvim_get_current_buf()
  vim.api.nvim_buf_set_lines(b, 0, 1, false, { "ALPHA" })
  vim.cmd("let &undolevels = &undolevels") -- close the undo block of the setup change
  local read = call("agent/fs/read_text_file", { sessionId = "s", path = path })
  local version = read._meta["agentd/version"]
  local uri = vim.uri_from_fname(path)
  local edit = {
    label = "edit a.txt",
    edit = { documentChanges = { {
      textDocument = { uri = uri, version = version },
      edits = { { range = { start = { line = 1, character = 0 }, ["end"] = { line = 1, character = 4 } }, newText = "GAMMA" } },
    } } },
  }
  -- Stale version: refused, buffer untouched.
  vim.api.nvim_buf_set_lines(b, 1, 1, false, { "" })
  local stale_version = version
  local res = call("workspace/applyEdit", vim.tbl_deep_extend("force", edit, {}))
  h.eq(false, res.applied, "stale edit refused")
  h.contains(res.failureReason, "changed since it was read", "reason")
  h.eq({ "ALPHA", "", "beta" }, h.lines(b), "buffer untouched by the refused edit")
  vim.cmd("silent undo")
  h.eq({ "ALPHA", "beta" }, h.lines(b), "test's own change undone")
  h.truthy(vim.api.nvim_buf_get_changedtick(b) ~= stale_version, "undo moved the version on")

  -- Fresh version: applied through Neovim's LSP utilities.
  read = call("agent/fs/read_text_file", { sessionId = "s", path = path })
  edit.edit.documentChanges[1].textDocument.version = read._meta["agentd/version"]
  res = call("workspace/applyEdit", edit)
  h.eq(true, res.applied, "fresh edit applied: " .. vim.inspect(res))
  h.eq({ "ALPHA", "GAMMA" }, h.lines(b), "edited")
  h.eq(true, vim.bo[b].modified, "left unsaved")
  h.eq("alpha\nbeta\n", h.read(path), "disk untouched")
  vim.cmd("normal! u")
  h.eq({ "ALPHA", "beta" }, h.lines(b), "one u undoes the edit")

  -- An unversioned edit (file read from disk) to a closed file.
  local other = vim.fn.fnamemodify(path, ":h") .. "/closed.txt"
  h.write(other, "one\n")
  res = call("workspace/applyEdit", { edit = { documentChanges = { {
    textDocument = { uri = vim.uri_from_fname(other), version = vim.NIL },
    edits = { { range = { start = { line = 0, character = 0 }, ["end"] = { line = 0, character = 3 } }, newText = "two" } },
  } } } })
  h.eq(true, res.applied, "unversioned edit applied")
  local ob = vim.fn.bufnr(other)
  h.eq({ "two" }, h.lines(ob), "closed file loaded and edited in a buffer")
  h.eq("one\n", h.read(other), "still unsaved")
  -- A versioned edit to a file no longer open is refused.
  res = call("workspace/applyEdit", { edit = { documentChanges = { {
    textDocument = { uri = vim.uri_from_fname(vim.fn.fnamemodify(path, ":h") .. "/never.txt"), version = 7 },
    edits = {},
  } } } })
  h.eq(false, res.applied, "versioned edit of a closed file refused")
end)

cases.add("applyEdit creates files in buffers and rejects garbage without a Lua error", function()
  local dir = h.tmpdir()
  local newf = dir .. "/new.txt"
  local res = call("workspace/applyEdit", { edit = { documentChanges = {
    { kind = "create", uri = vim.uri_from_fname(newf) },
    { textDocument = { uri = vim.uri_from_fname(newf), version = vim.NIL },
      edits = { { range = { start = { line = 0, character = 0 }, ["end"] = { line = 0, character = 0 } }, newText = "hello\n" } } },
  } } })
  h.eq(true, res.applied, "create + edit applied: " .. vim.inspect(res))
  h.eq({ "hello", "" }, vim.tbl_map(function(l) return l end, h.lines(vim.fn.bufnr(newf))), "new buffer content")
  local _, err = call("workspace/applyEdit", { nope = 1 })
  h.eq(-32602, err and err.code, "no edit: invalid params")
  res = call("workspace/applyEdit", { edit = { documentChanges = { { kind = "explode", uri = "file:///x" } } } })
  h.eq(false, res.applied, "unsupported change refused, not raised")
end)

cases.add("save_buffers writes the named buffers", function()
  local dir, path = setup_file("old\n")
  vim.cmd("edit " .. vim.fn.fnameescape(path))
  vim.api.nvim_buf_set_lines(0, 0, -1, false, { "new" })
  local res = call("agent/x/save_buffers", { sessionId = "s", paths = { path, dir .. "/missing.txt" } })
  h.eq({ path }, res.saved, "saved")
  h.eq(1, #res.failed, "one failed")
  h.eq(dir .. "/missing.txt", res.failed[1].path, "failed path")
  h.eq("new\n", h.read(path), "written to disk")
  h.eq(false, vim.bo.modified, "buffer clean")
end)

cases.add("workspace_symbols asks the other language servers", function()
  local sym = { name = "Frobnicate", kind = 12, location = { uri = "file:///w/x.go", range = {
    start = { line = 3, character = 5 }, ["end"] = { line = 3, character = 15 } } } }
  local asked = {}
  -- A client as Neovim 0.11+ makes it: an object whose methods take self.
  local Client = {}
  Client.__index = Client
  function Client:request_sync(method, params)
    assert(getmetatable(self) == Client, "request_sync called without self")
    table.insert(asked, { name = self.name, method = method, query = params.query })
    return { result = { sym } }
  end
  local function object(id, name, provider)
    return setmetatable({ id = id, name = name, server_capabilities = { workspaceSymbolProvider = provider } }, Client)
  end
  -- One as 0.7-0.10 make it: closures over the client.
  local function closures(id, name, provider)
    local c = { id = id, name = name, server_capabilities = { workspaceSymbolProvider = provider } }
    c.request_sync = function(method, params)
      assert(type(method) == "string", "request_sync called with self")
      table.insert(asked, { name = name, method = method, query = params.query })
      return { result = { sym } }
    end
    return c
  end
  local clients = { object(7, "gopls", true), object(8, "agentd", true), object(9, "plain", false), closures(10, "clangd", true) }
  local function list()
    return clients
  end
  if vim.lsp.get_clients then
    vim.lsp.get_clients = list
  else
    vim.lsp.get_active_clients = list
  end
  local res = call("agent/x/workspace_symbols", { sessionId = "s", query = "Frob" })
  h.eq({ sym, sym }, res.symbols, "symbols from gopls and clangd")
  h.eq({ { name = "gopls", method = "workspace/symbol", query = "Frob" }, { name = "clangd", method = "workspace/symbol", query = "Frob" } },
    asked, "only servers with the capability, not agentd, in either client style")
end)

cases.add("permission asks through vim.ui.select with the diff viewable first", function()
  local agentd = require("agentd")
  h.truthy(agentd.setup({}))
  agentd.session_id = "p1"
  agentd.models.p1 = require("agentd.chat").new_model("p1")
  agentd.open_chat()
  local diff_seen, preview_seen
  local calls = h.stub_select(function(items, labels)
    if not preview_seen then
      -- The change is on screen before the question: a float with the diff.
      local w = require("agentd.permission").preview_win
      h.truthy(w and vim.api.nvim_win_is_valid(w), "a preview window is open while asking")
      h.truthy(vim.api.nvim_win_get_config(w).relative ~= "", "the preview floats")
      preview_seen = table.concat(h.lines(vim.api.nvim_win_get_buf(w)), "\n")
    end
    if #vim.api.nvim_list_tabpages() > 1 and not diff_seen then
      -- Second call: the diff tab is open; look at it, then allow once.
      local wins = vim.api.nvim_tabpage_list_wins(0)
      local texts = {}
      for _, w in ipairs(wins) do
        table.insert(texts, table.concat(h.lines(vim.api.nvim_win_get_buf(w)), "\n"))
        h.eq(1, vim.wo[w].diff and 1 or 0, "diff mode on")
      end
      diff_seen = texts
    end
    local want = diff_seen and "allow once" or "show diff"
    for i, l in ipairs(labels) do
      if l:lower():find(want, 1, true) then
        return items[i]
      end
    end
  end)
  local params = {
    sessionId = "p1",
    toolCall = {
      toolCallId = "t1", title = "Edit a.txt", kind = "edit", status = "pending",
      content = { { type = "diff", path = "/w/a.txt", oldText = "a\nb\n", newText = "a\nB\n" } },
    },
    options = {
      { optionId = "allow_once", name = "Allow once", kind = "allow_once" },
      { optionId = "allow_session", name = "Allow for this session", kind = "allow_always" },
      { optionId = "reject_once", name = "Reject", kind = "reject_once" },
    },
  }
  local res = call("agent/session/request_permission", params)
  h.eq({ outcome = { outcome = "selected", optionId = "allow_once" } }, res, "outcome")
  h.eq(2, #calls, "asked twice (diff, then decision)")
  h.eq({ "Show diff", "Allow once", "Allow for this session", "Reject", "Reject with a reason…" }, calls[1].labels, "choices")
  h.contains(preview_seen, "diff /w/a.txt\n", "the preview names the file")
  h.contains(preview_seen, "-b\n+B", "the preview shows the diff")
  h.eq(nil, require("agentd.permission").preview_win, "the preview is closed after the decision")
  h.contains(calls[1].prompt, "Edit a.txt", "prompt names the tool call")
  h.eq({ "a\nb", "a\nB" }, diff_seen, "old and new text side by side")
  h.eq(1, #vim.api.nvim_list_tabpages(), "diff tab closed after the decision")
  local t = h.transcript_text()
  h.contains(t, "? permission: Edit a.txt → Allow once", "decision in the transcript")

  -- Dismissing the prompt answers cancelled.
  h.stub_select(function()
    return nil
  end)
  params.toolCall.content = nil
  res = call("agent/session/request_permission", params)
  h.eq({ outcome = { outcome = "cancelled" } }, res, "dismissed → cancelled")
end)

cases.add("every diff tab a permission question opened is closed after the decision", function()
  local agentd = require("agentd")
  h.truthy(agentd.setup({}))
  agentd.session_id = "p4"
  agentd.models.p4 = require("agentd.chat").new_model("p4")
  local calls = h.stub_select(h.pick("show diff", "show diff", "allow once"))
  local res = call("agent/session/request_permission", {
    sessionId = "p4",
    toolCall = {
      toolCallId = "t", title = "Edit two files",
      content = {
        { type = "diff", path = "/w/a.txt", oldText = "a\n", newText = "A\n" },
        { type = "diff", path = "/w/b.txt", oldText = "b\n", newText = "B\n" },
      },
    },
    options = { { optionId = "allow_once", name = "Allow once" }, { optionId = "reject_once", name = "Reject" } },
  })
  h.eq({ outcome = { outcome = "selected", optionId = "allow_once" } }, res, "outcome")
  h.eq(3, #calls, "asked three times (diff, diff again, decision)")
  h.eq(1, #vim.api.nvim_list_tabpages(), "all four diff tabs closed after the decision")
end)

cases.add("an asynchronous vim.ui.select is awaited (coroutine and plain)", function()
  local agentd = require("agentd")
  h.truthy(agentd.setup({}))
  agentd.session_id = "p3"
  agentd.models.p3 = require("agentd.chat").new_model("p3")
  -- A picker that answers later, like dressing.nvim or telescope.
  vim.ui.select = function(items, _, on_choice)
    vim.defer_fn(function()
      on_choice(items[1])
    end, 50)
  end
  local params = {
    sessionId = "p3",
    toolCall = { toolCallId = "t", title = "Run make" },
    options = { { optionId = "allow_once", name = "Allow once" }, { optionId = "reject_once", name = "Reject" } },
  }
  -- Neovim 0.10+ runs server requests in a coroutine: the handler yields.
  local result
  local co = coroutine.create(function()
    result = call("agent/session/request_permission", params)
  end)
  assert(coroutine.resume(co))
  h.eq(nil, result, "handler yielded while the picker is open")
  h.eq("suspended", coroutine.status(co), "coroutine suspended")
  h.wait_for(function()
    return result
  end, "the coroutine to be resumed with the choice")
  h.eq({ outcome = { outcome = "selected", optionId = "allow_once" } }, result, "coroutine path outcome")
  -- Neovim 0.7-0.9 run them on the main thread: the handler waits.
  h.eq({ outcome = { outcome = "selected", optionId = "allow_once" } }, call("agent/session/request_permission", params),
    "main-thread path outcome")
  -- Cancelling the turn answers a pending question "cancelled".
  vim.ui.select = function() end
  local cresult
  co = coroutine.create(function()
    cresult = call("agent/session/request_permission", params)
  end)
  assert(coroutine.resume(co))
  agentd.cancel()
  h.wait_for(function()
    return cresult
  end, "the cancelled question to be answered")
  h.eq({ outcome = { outcome = "cancelled" } }, cresult, "cancel answers cancelled")
end)

cases.add("the diff is in the transcript while the question is open", function()
  local agentd = require("agentd")
  h.truthy(agentd.setup({}))
  agentd.session_id = "p2"
  agentd.models.p2 = require("agentd.chat").new_model("p2")
  agentd.open_chat()
  local during
  h.stub_select(function(items)
    during = h.transcript_text()
    return items[#items - 1]
  end)
  call("agent/session/request_permission", {
    sessionId = "p2",
    toolCall = { toolCallId = "t", title = "Edit x.go", content = { { type = "diff", path = "/w/x.go", oldText = "x := 1\n", newText = "x := 2\n" } } },
    options = { { optionId = "allow_once", name = "Allow once" }, { optionId = "reject_once", name = "Reject" } },
  })
  h.contains(during, "? permission: Edit x.go", "question shown")
  h.contains(during, "    -x := 1\n    +x := 2", "diff lines shown")
end)

cases.add("reject with a reason asks with vim.ui.input and answers reject_once with the instruction", function()
  local agentd = require("agentd")
  h.truthy(agentd.setup({}))
  agentd.session_id = "p5"
  agentd.models.p5 = require("agentd.chat").new_model("p5")
  agentd.open_chat()
  h.stub_select(h.pick("reject with a reason"))
  local inputs = {}
  vim.ui.input = function(opts, on_confirm)
    inputs[#inputs + 1] = opts.prompt
    on_confirm("use strings.Builder instead")
  end
  local params = {
    sessionId = "p5",
    toolCall = { toolCallId = "t", title = "Edit x.go", content = { { type = "diff", path = "/w/x.go", oldText = "a\n", newText = "b\n" } } },
    options = { { optionId = "allow_once", name = "Allow once" }, { optionId = "reject_once", name = "Reject" } },
  }
  local res = call("agent/session/request_permission", params)
  h.eq({ outcome = { outcome = "selected", optionId = "reject_once", _meta = { ["agentd/instruction"] = "use strings.Builder instead" } } }, res, "reject_once with the reason")
  h.eq(1, #inputs, "asked for the reason once")
  h.contains(h.transcript_text(), "→ rejected: use strings.Builder instead", "the decision and reason in the chat")
  -- Dismissing the reason asks the question again.
  local n = 0
  h.stub_select(function(items, labels)
    n = n + 1
    return n == 1 and items[#labels] or items[2]
  end)
  vim.ui.input = function(_, on_confirm)
    on_confirm(nil)
  end
  res = call("agent/session/request_permission", params)
  h.eq({ outcome = { outcome = "selected", optionId = "allow_once" } }, res, "asked again after the reason was dismissed")
  -- Without a reject_once option there is no reason choice.
  local calls = h.stub_select(h.pick("allow"))
  params.options = { { optionId = "allow_once", name = "Allow once" } }
  call("agent/session/request_permission", params)
  h.eq({ "Show diff", "Allow once" }, calls[1].labels, "no reason choice without reject_once")
end)

cases.add("with the built-in vim.ui.select the question waits in the command line while the diff scrolls", function()
  local agentd = require("agentd")
  local permission = require("agentd.permission")
  h.truthy(agentd.setup({}))
  agentd.session_id = "p6"
  agentd.models.p6 = require("agentd.chat").new_model("p6")
  agentd.open_chat()
  vim.ui.select = h.builtin_select
  -- Each key comes a deliberate second after the one before.
  local clock = 0
  permission.now = function()
    return clock
  end
  local old = {}
  for i = 1, 120 do
    old[#old + 1] = "line " .. i
  end
  local new = vim.deepcopy(old)
  for i = 1, 120, 3 do
    new[i] = "LINE " .. i
  end
  -- The keys the user types, and the preview's top line before each.
  local keys = { "j", "j", "\4", "x", "4" }
  local tops, n, heights = {}, 0, {}
  vim.fn.getcharstr = function()
    clock = clock + 1000
    n = n + 1
    heights[n] = vim.o.cmdheight
    local w = permission.preview_win
    tops[n] = w and vim.api.nvim_win_is_valid(w) and vim.api.nvim_win_call(w, function()
      return vim.fn.line("w0")
    end) or -1
    return keys[n] or "\27"
  end
  local res
  res = call("agent/session/request_permission", {
    sessionId = "p6",
    toolCall = { toolCallId = "t", title = "Edit big.txt", content = { { type = "diff", path = "/w/big.txt",
      oldText = table.concat(old, "\n") .. "\n", newText = table.concat(new, "\n") .. "\n" } } },
    options = { { optionId = "allow_once", name = "Allow once" }, { optionId = "reject_once", name = "Reject" } },
  })
  -- The same keys on every card: 1 Allow once, 4 Reject, d Show diff, r Reject with a reason…
  h.eq({ outcome = { outcome = "selected", optionId = "reject_once" } }, res, "the digit chose Reject")
  h.eq(5, n, "one key at a time until a choice")
  h.eq(1, tops[1], "the preview starts at its top")
  h.eq(2, tops[2], "j scrolled it one line")
  h.eq(3, tops[3], "j again")
  h.truthy(tops[4] > 3, "<C-d> scrolled half a page: " .. vim.inspect(tops))
  h.eq(tops[4], tops[5], "an unknown key does nothing")
  h.truthy(heights[1] >= 3, "the command line holds the whole question (no Press ENTER): " .. heights[1])
  h.eq(1, vim.o.cmdheight, "and shrinks back after")
  -- After "Show diff" the same keys scroll the side-by-side diff.
  keys = { "d", "j", "j", "1" }
  n, tops = 0, {}
  vim.fn.getcharstr = function()
    clock = clock + 1000
    n = n + 1
    tops[n] = vim.wo.diff and vim.fn.line("w0") or -1
    return keys[n] or "\27"
  end
  res = call("agent/session/request_permission", {
    sessionId = "p6",
    toolCall = { toolCallId = "t2", title = "Edit big.txt", content = { { type = "diff", path = "/w/big.txt",
      oldText = table.concat(old, "\n") .. "\n", newText = table.concat(new, "\n") .. "\n" } } },
    options = { { optionId = "allow_once", name = "Allow once" }, { optionId = "reject_once", name = "Reject" } },
  })
  h.eq({ outcome = { outcome = "selected", optionId = "allow_once" } }, res, "allowed after looking")
  h.eq(-1, tops[1], "asked first without the diff tab")
  h.truthy(tops[2] >= 1 and tops[3] == tops[2] + 1 and tops[4] == tops[3] + 1, "j scrolled the diff tab: " .. vim.inspect(tops))
  h.eq(1, #vim.api.nvim_list_tabpages(), "the diff tab closed after")
end)

-- Types keys one at a time, as a person does (every 40 ms by default),
-- into Neovim's real input while the question waits in getcharstr.
local function type_keys(keys, every_ms, after_ms)
  local i = 0
  local t = vim.loop.new_timer()
  t:start(after_ms or 0, every_ms or 40, vim.schedule_wrap(function()
    i = i + 1
    if i > #keys then
      t:stop()
      t:close()
      return
    end
    vim.api.nvim_input(keys[i])
  end))
end

local function permission_params(sid)
  return {
    sessionId = sid,
    toolCall = { toolCallId = "t", title = "Run go test", rawInput = { command = { "go", "test" } } },
    options = {
      { optionId = "allow_once", name = "Allow once" },
      { optionId = "allow_session", name = "Allow for this session" },
      { optionId = "allow_always", name = "Always allow in this project" },
      { optionId = "reject_once", name = "Reject" },
      { optionId = "reject_always", name = "Always reject in this project" },
    },
  }
end

cases.add("typing while a question arrives answers nothing, and the typed text reaches the buffer", function()
  local agentd = require("agentd")
  h.truthy(agentd.setup({}))
  agentd.session_id = "ty"
  agentd.models.ty = require("agentd.chat").new_model("ty")
  vim.ui.select = h.builtin_select
  local buf = vim.api.nvim_create_buf(true, false)
  vim.api.nvim_set_current_buf(buf)
  -- "i" was typed before the question came; "line 42" goes on being typed
  -- after it appeared; then, after a pause, <Esc>, the typist's own key.
  vim.api.nvim_input("i")
  local keys = vim.split("line 42", "")
  type_keys(keys, 40, 30)
  type_keys({ "<Esc>" }, 0, 30 + 40 * #keys + 900)
  local res = call("agent/session/request_permission", permission_params("ty"))
  h.eq({ outcome = { outcome = "cancelled" } }, res, "no answer came from the typing; the paused <Esc> cancelled")
  -- The keys the question held back are given back: "iline 42" types the line.
  vim.api.nvim_feedkeys(vim.api.nvim_replace_termcodes("<Esc>", true, false, true), "x", false)
  h.eq({ "line 42" }, vim.api.nvim_buf_get_lines(buf, 0, -1, false), "the typed text is in the buffer")
end)

cases.add("a key pressed after a pause answers; the same digit means the same answer on every card", function()
  local agentd = require("agentd")
  local permission = require("agentd.permission")
  h.truthy(agentd.setup({}))
  agentd.session_id = "dk"
  agentd.models.dk = require("agentd.chat").new_model("dk")
  vim.ui.select = h.builtin_select
  -- A burst ending in "3" (always allow) does not answer; a lone "4" after a pause rejects.
  type_keys({ "x", "y", "3" }, 30, 700)
  type_keys({ "4" }, 0, 700 + 90 + 700)
  local res = call("agent/session/request_permission", permission_params("dk"))
  h.eq({ outcome = { outcome = "selected", optionId = "reject_once" } }, res, "the deliberate 4 rejected")
  -- A key pressed too soon after the question appeared counts for nothing.
  type_keys({ "1" }, 0, 50)
  type_keys({ "\27" }, 0, 50 + 1000)
  res = call("agent/session/request_permission", permission_params("dk"))
  h.eq({ outcome = { outcome = "cancelled" } }, res, "a 1 in the first moments did not allow")
  -- The keys of the answers, on an edit card (with Show diff) and a program card.
  local edit = permission_params("dk")
  edit.toolCall.content = { { type = "diff", path = "/w/a.txt", oldText = "a\n", newText = "b\n" } }
  for _, p in ipairs({ edit, permission_params("dk") }) do
    local items = {}
    for _, o in ipairs(p.options) do
      items[#items + 1] = { option = o }
    end
    h.eq({ "1", "2", "3", "4", "5" }, vim.tbl_map(function(it)
      return permission.key_of(it, items)
    end, items), "allow once … always reject keep their keys")
  end
end)

cases.add("a picker installed before the plugin loaded is used, Neovim's own is told by what it is", function()
  local permission = require("agentd.permission")
  h.truthy(permission.is_builtin(h.builtin_select), "Neovim's own vim.ui.select")
  local asked = 0
  local picker = function(items, _, on_choice)
    asked = asked + 1
    for _, it in ipairs(items) do
      if it.option and it.option.optionId == "allow_once" then
        return on_choice(it)
      end
    end
  end
  h.truthy(not permission.is_builtin(picker), "a plugin's picker")
  -- The picker was set up first; the plugin is (re)loaded after it.
  vim.ui.select = picker
  package.loaded["agentd.permission"] = nil
  package.loaded["agentd"] = nil
  local agentd = require("agentd")
  h.truthy(agentd.setup({}))
  agentd.session_id = "pk"
  agentd.models.pk = require("agentd.chat").new_model("pk")
  local res = call("agent/session/request_permission", permission_params("pk"))
  h.eq(1, asked, "the user's picker asked")
  h.eq({ outcome = { outcome = "selected", optionId = "allow_once" } }, res, "its answer was sent")
end)

cases.add("a program's environment, standard input and a server's headers are on the card", function()
  local agentd = require("agentd")
  local permission = require("agentd.permission")
  h.truthy(agentd.setup({}))
  agentd.session_id = "ev"
  agentd.models.ev = require("agentd.chat").new_model("ev")
  local p = permission_params("ev")
  p.toolCall.rawInput.env = { LD_PRELOAD = "/tmp/evil.so", GIT_CONFIG_COUNT = "1" }
  p.toolCall.rawInput.stdin = "import os\nos.system('id')\n"
  p.toolCall.rawInput.headers = { ["X-Api-Key"] = "[redacted]" }
  local seen
  h.stub_select(function(items, labels, opts)
    seen = { prompt = opts.prompt, preview = vim.api.nvim_buf_get_lines(vim.api.nvim_win_get_buf(permission.preview_win), 0, -1, false) }
    return nil
  end)
  call("agent/session/request_permission", p)
  h.contains(seen.prompt, "with environment: GIT_CONFIG_COUNT=1 LD_PRELOAD=/tmp/evil.so", "env in the question")
  h.contains(seen.prompt, "with 26 bytes of standard input", "stdin in the question")
  h.contains(seen.prompt, "with headers: X-Api-Key=[redacted]", "headers in the question")
  local text = table.concat(seen.preview, "\n")
  h.contains(text, "  LD_PRELOAD=/tmp/evil.so", "env in the preview")
  h.contains(text, "standard input (26 bytes):\n  import os\n  os.system('id')", "stdin in the preview")
end)

cases.add("an MCP tool's permission question names its server", function()
  local agentd = require("agentd")
  h.truthy(agentd.setup({}))
  agentd.session_id = "p7"
  agentd.models.p7 = require("agentd.chat").new_model("p7")
  agentd.open_chat()
  local during
  local calls = h.stub_select(function(items)
    during = h.transcript_text()
    return items[1]
  end)
  call("agent/session/request_permission", {
    sessionId = "p7",
    toolCall = { toolCallId = "t", title = "create_issue", kind = "other", rawInput = { title = "x" },
      _meta = { ["agentd/mcpServer"] = "github" } },
    options = { { optionId = "allow_once", name = "Allow once" }, { optionId = "reject_once", name = "Reject" } },
  })
  h.contains(calls[1].prompt, "agentd wants to: create_issue (MCP server github)", "the question names the server")
  h.contains(during, "? permission: create_issue (MCP server github)", "so does the chat")
end)

cases.add("secrets/get serves by origin only, from the function or the origin's variable", function()
  local handlers = require("agentd.handlers")
  local asked = {}
  h.truthy(require("agentd").setup({ secrets = function(origin)
    asked[#asked + 1] = origin
    return origin == "https://openrouter.ai" and "sk-or" or nil
  end }))
  h.eq({ value = "sk-or" }, handlers.secrets_get({ key = "agentd.apiKey.https://openrouter.ai" }), "the function's key")
  h.eq({}, handlers.secrets_get({ key = "agentd.apiKey.http://127.0.0.1:9" }), "another origin gets nothing")
  -- Old provider-id keys, URLs with paths and unnormalized origins name no one server.
  for _, k in ipairs({ "agentd.apiKey.openrouter", "openrouter", "OPENROUTER_API_KEY", "agentd.apiKey.https://openrouter.ai/api/v1",
    "agentd.apiKey.https://OpenRouter.ai", "agentd.apiKey.https://openrouter.ai:443", "agentd.apiKey.https://x@openrouter.ai" }) do
    h.eq({}, handlers.secrets_get({ key = k }), k)
  end
  h.eq({ "https://openrouter.ai", "http://127.0.0.1:9" }, asked, "only origins reach the function")
  local _, err = handlers.secrets_get({})
  h.eq(-32602, err and err.code, "a missing key is invalid params")

  vim.env.AGENTD_TEST_OR_KEY = "sk-env"
  h.truthy(require("agentd").setup({ secrets = { ["https://openrouter.ai"] = "AGENTD_TEST_OR_KEY" } }))
  h.eq({ value = "sk-env" }, handlers.secrets_get({ key = "agentd.apiKey.https://openrouter.ai" }), "from the mapped variable")
  h.eq({}, handlers.secrets_get({ key = "agentd.apiKey.https://api.openai.com" }), "an unmapped origin gets nothing")
  h.eq(true, require("agentd.client").init_options().agent.clientCapabilities.secrets, "the capability is advertised")
  h.truthy(require("agentd").setup({}))
  h.eq(false, require("agentd.client").init_options().agent.clientCapabilities.secrets, "none without the option")
  h.eq({}, handlers.secrets_get({ key = "agentd.apiKey.https://openrouter.ai" }), "nothing without the option")
end)

cases.add("a conventional variable cannot be mapped to another origin", function()
  local validate = require("agentd.config").validate
  local ok, err = validate({ secrets = { ["https://openrouter.ai"] = "OPENAI_API_KEY" } })
  h.eq(false, ok, "refused")
  h.contains(err, "secrets[\"https://openrouter.ai\"]", "names the entry")
  h.contains(err, "https://api.openai.com", "names the variable's own origin")
  h.truthy(require("agentd").setup({ secrets = { ["https://api.openai.com"] = "OPENAI_API_KEY" } }), "its own origin is fine")
  ok = validate({ secrets = { ["https://openrouter.ai/api/v1"] = "X" } })
  h.eq(false, ok, "a URL with a path is not an origin")
  ok = validate({ secrets = "sk-literal" })
  h.eq(false, ok, "a string is refused")
end)

return cases
