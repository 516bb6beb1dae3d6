-- The chat transcript, fed agent/session/update notifications by hand
-- through the plugin's real LSP handlers.
local h = require("helpers")
local cases = require("harness").cases()

local function update(sid, u)
  local handler = require("agentd").lsp_handlers()["agent/session/update"]
  handler(nil, { sessionId = sid, update = u }, { method = "agent/session/update", client_id = 1 })
end

local function fresh(sid)
  local agentd = require("agentd")
  h.truthy(agentd.setup({}))
  agentd.session_id = sid
  agentd.models[sid] = require("agentd.chat").new_model(sid)
  agentd.open_chat()
  return agentd.models[sid]
end

cases.add("streams the reply, folds thinking, shows tool status lines", function()
  local sid = "s1"
  local model = fresh(sid)
  require("agentd.chat").add_prompt(model, "fix the bug\nplease")
  update(sid, { sessionUpdate = "agent_thought_chunk", messageId = "m0", content = { type = "text", text = "Let me " } })
  update(sid, { sessionUpdate = "agent_thought_chunk", messageId = "m0", content = { type = "text", text = "think.\nStep two." } })
  update(sid, { sessionUpdate = "agent_message_chunk", messageId = "m1", content = { type = "text", text = "Hel" } })
  update(sid, { sessionUpdate = "agent_message_chunk", messageId = "m1", content = { type = "text", text = "lo wor" } })
  h.contains(h.transcript(), "Hello wor", "partial reply rendered while streaming")
  update(sid, { sessionUpdate = "agent_message_chunk", messageId = "m1", content = { type = "text", text = "ld" } })
  update(sid, { sessionUpdate = "tool_call", toolCallId = "t1", title = "Read a.txt", kind = "read", status = "pending" })
  local t = h.transcript()
  h.contains(t, "> fix the bug\n> please", "prompt shown")
  h.contains(t, "Hello world", "reply joined")
  h.contains(t, "  [pending] Read a.txt", "pending tool line")
  update(sid, { sessionUpdate = "tool_call_update", toolCallId = "t1", status = "in_progress" })
  h.contains(h.transcript(), "  [running] Read a.txt", "running")
  update(sid, { sessionUpdate = "tool_call_update", toolCallId = "t1", status = "completed", title = "Read a.txt (3 lines)" })
  h.contains(h.transcript(), "  [done] Read a.txt (3 lines)", "done with new title")
  update(sid, { sessionUpdate = "tool_call", toolCallId = "t2", title = "Edit b.txt", kind = "edit", status = "pending" })
  update(sid, { sessionUpdate = "tool_call_update", toolCallId = "t2", status = "failed", rawOutput = "denied by the user" })
  t = h.transcript()
  h.contains(t, "  [failed] Edit b.txt: denied by the user", "failed with reason")
  -- Exactly one status line per tool call.
  local n = 0
  for _, l in ipairs(t) do
    if l:find("Read a.txt", 1, true) then
      n = n + 1
    end
  end
  h.eq(1, n, "one line for the read call")

  -- The thinking is folded (closed) in the transcript window.
  local chat = require("agentd.chat")
  local lnum
  for i, l in ipairs(t) do
    if l == "▸ Thinking" then
      lnum = i
    end
  end
  h.truthy(lnum, "thinking header")
  h.eq("  │ Let me think.", t[lnum + 1], "thought text")
  h.eq("agentd", vim.bo[chat.ui.transcript].syntax, "transcript highlighted")
  vim.api.nvim_win_call(chat.ui.twin, function()
    h.eq(lnum, vim.fn.foldclosed(lnum + 1), "thinking fold is closed")
    h.eq(-1, vim.fn.foldclosed(lnum + 3), "reply is not folded")
    -- The user opens it; more streaming keeps it open.
    vim.cmd(lnum .. "foldopen")
  end)
  update(sid, { sessionUpdate = "agent_message_chunk", messageId = "m9", content = { type = "text", text = " more" } })
  h.transcript()
  vim.api.nvim_win_call(chat.ui.twin, function()
    h.eq(-1, vim.fn.foldclosed(lnum + 1), "opened thinking stays open after a re-render")
  end)
end)

cases.add("plans, usage, notices, mode and queued prompts", function()
  local sid = "s2"
  local model = fresh(sid)
  local chat = require("agentd.chat")
  chat.add_prompt(model, "first")
  chat.add_prompt(model, "second")
  chat.add_prompt(model, "third")
  local t = h.transcript()
  h.contains(t, "> first", "running prompt shown")
  h.contains(t, "Queued:\n  1. second\n  2. third", "queued prompts listed")
  h.contains(t, "working…", "busy status")
  update(sid, { sessionUpdate = "plan", entries = {
    { content = "read code", priority = "high", status = "completed" },
    { content = "write fix", priority = "high", status = "in_progress" },
    { content = "run tests", priority = "low", status = "pending" },
  } })
  update(sid, { sessionUpdate = "plan", entries = {
    { content = "read code", priority = "high", status = "completed" },
    { content = "write fix", priority = "high", status = "completed" },
    { content = "run tests", priority = "low", status = "pending" },
  } })
  update(sid, { sessionUpdate = "usage_update", used = 1234, size = 200000 })
  update(sid, { sessionUpdate = "notice", severity = "warning", title = "rate limited", description = "retrying in 8 s" })
  update(sid, { sessionUpdate = "current_mode_update", modeId = "plan" })
  update(sid, { sessionUpdate = "session_info_update", title = "Fix the bug" })
  t = h.transcript()
  h.contains(t, "Plan:\n  [x] read code\n  [x] write fix\n  [ ] run tests", "plan replaced in place")
  local plans = select(2, h.transcript_text():gsub("Plan:", ""))
  h.eq(1, plans, "one plan block")
  h.contains(t, "usage: 1234/200000 tokens", "usage")
  h.contains(t, "! warning: rate limited — retrying in 8 s", "notice")
  h.eq("agentd · Fix the bug · mode: plan", t[1], "header with title and mode")

  -- The first turn ends; the queued "second" starts (agentd echoes it).
  chat.prompt_done(model, nil, { stopReason = "end_turn" })
  update(sid, { sessionUpdate = "user_message_chunk", messageId = "u2", content = { type = "text", text = "second" } })
  t = h.transcript()
  h.contains(t, "> second", "queued prompt moved into the transcript")
  h.contains(t, "Queued:\n  1. third", "one left queued")
  chat.prompt_done(model, nil, { stopReason = "cancelled" })
  chat.prompt_done(model, nil, { stopReason = "cancelled" })
  t = h.transcript()
  h.contains(t, "(turn ended: cancelled)", "cancelled turn marked")
  h.eq(nil, h.transcript_text():find("Queued:", 1, true), "queue cleared after cancel")
  h.eq(nil, h.transcript_text():find("working", 1, true), "idle")
end)

cases.add("the next message is typed in the chat's input window", function()
  local sid = "s3"
  fresh(sid)
  local chat = require("agentd.chat")
  local sent = {}
  chat.ui.on_send = function(text)
    table.insert(sent, text)
  end
  h.truthy(chat.is_open(), "chat open")
  h.eq(chat.ui.iwin, vim.api.nvim_get_current_win(), "focus in the input window")
  vim.api.nvim_buf_set_lines(chat.ui.input, 0, -1, false, { "explain", "this" })
  vim.api.nvim_feedkeys(vim.api.nvim_replace_termcodes("<CR>", true, false, true), "x", false)
  h.eq({ "explain\nthis" }, sent, "sent text")
  h.eq({ "" }, h.lines(chat.ui.input), "input cleared")
  -- :AgentdChat toggles the windows.
  vim.cmd("AgentdChat")
  h.eq(false, chat.is_open(), "closed by :AgentdChat")
  vim.cmd("AgentdChat")
  h.eq(true, chat.is_open(), "reopened by :AgentdChat")
end)

cases.add("<CR> on a tool line opens the file it touched", function()
  local dir = h.tmpdir()
  local path = dir .. "/x.txt"
  h.write(path, "1\n2\n3\n4\n")
  vim.cmd("edit " .. vim.fn.fnameescape(dir .. "/other.txt"))
  local file_win = vim.api.nvim_get_current_win()
  fresh("loc")
  update("loc", { sessionUpdate = "tool_call", toolCallId = "t", title = "Read x.txt", status = "pending",
    locations = { { path = path, line = 3 } } })
  local t = h.transcript()
  local lnum
  for i, l in ipairs(t) do
    if l:find("Read x.txt", 1, true) then
      lnum = i
    end
  end
  local chat = require("agentd.chat")
  vim.api.nvim_set_current_win(chat.ui.twin)
  vim.api.nvim_win_set_cursor(0, { lnum, 0 })
  vim.api.nvim_feedkeys(vim.api.nvim_replace_termcodes("<CR>", true, false, true), "x", false)
  h.eq(file_win, vim.api.nvim_get_current_win(), "opened in the editing window, not the chat")
  h.eq(path, vim.api.nvim_buf_get_name(0), "the tool's file")
  h.eq(3, vim.api.nvim_win_get_cursor(0)[1], "at its line")
  h.eq(false, chat.open_target(1), "the header line has no target")
end)

cases.add("tool output: the status reason on the line, <CR> or <Tab> expands the output", function()
  local sid = "out"
  local model = fresh(sid)
  require("agentd.chat").add_prompt(model, "run the tests")
  update(sid, { sessionUpdate = "tool_call", toolCallId = "t1", title = "Run go test ./...", kind = "execute", status = "pending" })
  update(sid, { sessionUpdate = "tool_call_update", toolCallId = "t1", status = "failed",
    content = { { type = "content", content = { type = "text", text = "$ go test ./...\nok  pkg/a\n[timed out after 1m0s: the program and everything it started were killed]\n" } } },
    rawOutput = { exitCode = -1, timedOut = true, durationMs = 60012, output = "ok  pkg/a\n" } })
  update(sid, { sessionUpdate = "tool_call", toolCallId = "t2", title = "Run false", kind = "execute", status = "pending" })
  update(sid, { sessionUpdate = "tool_call_update", toolCallId = "t2", status = "completed",
    content = { { type = "content", content = { type = "text", text = "$ false\n[exit code 1 after 2ms]\n" } } },
    rawOutput = { exitCode = 1, timedOut = false, durationMs = 2 } })
  local t = h.transcript_text()
  h.contains(t, "  [failed] Run go test ./...: timed out after 60 s  ⏎ output", "the timeout is on the failed line")
  h.contains(t, "  [done] Run false: exit code 1  ⏎ output", "a non-zero exit is on the done line")
  h.eq(nil, t:find("ok  pkg/a", 1, true), "output hidden until expanded")
  local chat = require("agentd.chat")
  local lnum
  for i, l in ipairs(h.transcript()) do
    if l:find("Run go test", 1, true) then
      lnum = i
    end
  end
  vim.api.nvim_set_current_win(chat.ui.twin)
  vim.api.nvim_win_set_cursor(0, { lnum, 0 })
  vim.api.nvim_feedkeys(vim.api.nvim_replace_termcodes("<CR>", true, false, true), "x", false)
  t = h.transcript_text()
  h.contains(t, "  [failed] Run go test ./...: timed out after 60 s\n    │ $ go test ./...\n    │ ok  pkg/a\n    │ [timed out after 1m0s", "output shown under its line")
  vim.api.nvim_win_set_cursor(0, { lnum, 0 })
  vim.api.nvim_feedkeys(vim.api.nvim_replace_termcodes("<Tab>", true, false, true), "x", false)
  h.eq(nil, h.transcript_text():find("    │ ok  pkg/a", 1, true), "<Tab> hides it again")
  h.eq({}, h.errors(), "no errors")
end)

cases.add("a subagent's tool calls are nested under its agent call", function()
  local sid = "sub"
  fresh(sid)
  local child = { ["agentd/parentToolCallId"] = "a1" }
  update(sid, { sessionUpdate = "tool_call", toolCallId = "a1", title = "Agent explore: find the parser", kind = "think", status = "pending" })
  update(sid, { sessionUpdate = "tool_call_update", toolCallId = "a1", status = "in_progress" })
  update(sid, { sessionUpdate = "tool_call", toolCallId = "a1/c1", title = "Search parse", kind = "search", status = "pending", _meta = child })
  -- A call of the parent's after the agent call started, then the child's second call.
  update(sid, { sessionUpdate = "tool_call", toolCallId = "t9", title = "Read main.go", kind = "read", status = "pending" })
  update(sid, { sessionUpdate = "tool_call", toolCallId = "a1/c2", title = "Read parser.go", kind = "read", status = "pending", _meta = child })
  update(sid, { sessionUpdate = "tool_call_update", toolCallId = "a1/c2", status = "completed", _meta = child })
  update(sid, { sessionUpdate = "tool_call_update", toolCallId = "a1", status = "completed" })
  local t = h.transcript()
  local function at(s)
    for i, l in ipairs(t) do
      if l == s then
        return i
      end
    end
    error("no line " .. s .. " in:\n" .. table.concat(t, "\n"))
  end
  local a, c1, c2, other = at("  [done] Agent explore: find the parser"), at("      ↳ [pending] Search parse"),
    at("      ↳ [done] Read parser.go"), at("  [pending] Read main.go")
  h.truthy(a < c1 and c1 < c2 and c2 < other, "the children follow their agent call, in order, before the parent's next call")
end)

cases.add("an MCP tool's server is named on its line", function()
  local sid = "mcp"
  fresh(sid)
  update(sid, { sessionUpdate = "tool_call", toolCallId = "m1", title = "search_issues", kind = "other", status = "pending",
    _meta = { ["agentd/mcpServer"] = "github" } })
  update(sid, { sessionUpdate = "tool_call_update", toolCallId = "m1", status = "completed" })
  h.contains(h.transcript_text(), "  [done] search_issues (MCP github)", "server on the tool line")
  update(sid, { sessionUpdate = "tool_call", toolCallId = "m2", title = "evil", status = "pending",
    _meta = { ["agentd/mcpServer"] = "x\27[2Jy" } })
  h.contains(h.transcript_text(), "  [pending] evil (MCP x\\x1b[2Jy)", "a server name cannot hide text")
end)

cases.add("thinking stays open while it streams, folds once the reply goes on; usage survives a cancel", function()
  local sid = "think"
  local model = fresh(sid)
  local chat = require("agentd.chat")
  chat.add_prompt(model, "go")
  update(sid, { sessionUpdate = "agent_thought_chunk", messageId = "m0", content = { type = "text", text = "pondering\nmore" } })
  local t = h.transcript()
  local lnum
  for i, l in ipairs(t) do
    if l == "▸ Thinking" then
      lnum = i
    end
  end
  vim.api.nvim_win_call(chat.ui.twin, function()
    h.eq(-1, vim.fn.foldclosed(lnum + 1), "streaming thought not folded")
  end)
  update(sid, { sessionUpdate = "agent_message_chunk", messageId = "m1", content = { type = "text", text = "Answer" } })
  h.transcript()
  vim.api.nvim_win_call(chat.ui.twin, function()
    h.eq(lnum, vim.fn.foldclosed(lnum + 1), "folded once the reply streams")
  end)
  update(sid, { sessionUpdate = "usage_update", used = 1200, size = 200000 })
  update(sid, { sessionUpdate = "usage_update", used = 0, size = 200000 })
  h.contains(h.transcript_text(), "usage: 1200/200000 tokens", "usage kept after a zero report")
  h.eq("agentd · 1200/200000 · working…", require("agentd").status(), "statusline component")
  chat.prompt_done(model, nil, { stopReason = "cancelled" })
  h.eq("agentd · 1200/200000", require("agentd").status(), "idle status")
end)

cases.add("the session's cost shows beside the context meter and in status(), never a made-up one", function()
  local sid = "cost"
  local model = fresh(sid)
  local chat = require("agentd.chat")
  chat.add_prompt(model, "go")
  update(sid, { sessionUpdate = "usage_update", used = 1200, size = 200000 })
  h.contains(h.transcript_text(), "usage: 1200/200000 tokens", "meter")
  h.truthy(not h.transcript_text():find("USD", 1, true), "no cost without a price")
  h.eq("agentd · 1200/200000 · working…", require("agentd").status(), "no cost in the status without a price")
  update(sid, { sessionUpdate = "usage_update", used = 1500, size = 200000, cost = { amount = 0.000725, currency = "USD" } })
  h.contains(h.transcript_text(), "usage: 1500/200000 tokens · 0.000725 USD", "cost beside the meter")
  update(sid, { sessionUpdate = "usage_update", used = 1800, size = 200000, cost = { amount = 1.5, currency = "EUR\27[2J" } })
  h.contains(h.transcript_text(), "usage: 1800/200000 tokens · 1.5 EUR[2J", "cumulative cost; a currency cannot carry controls")
  chat.prompt_done(model, nil, { stopReason = "end_turn" })
  h.eq("agentd · 1800/200000 · 1.5 EUR[2J", require("agentd").status(), "status() shows the cost")
  update(sid, { sessionUpdate = "usage_update", used = 1900, size = 200000, cost = vim.NIL })
  h.eq("agentd · 1900/200000", require("agentd").status(), "a null cost shows none")
end)

cases.add("a turn's changed files are listed with how to review them", function()
  local sid = "chg"
  local model = fresh(sid)
  local chat = require("agentd.chat")
  chat.add_prompt(model, "edit")
  update(sid, { sessionUpdate = "tool_call", toolCallId = "e1", title = "Edit /w/a.go", kind = "edit", status = "pending" })
  update(sid, { sessionUpdate = "tool_call_update", toolCallId = "e1", status = "completed",
    content = { { type = "diff", path = "/w/a.go", oldText = "a\n", newText = "b\n" } } })
  update(sid, { sessionUpdate = "tool_call_update", toolCallId = "e1", status = "completed",
    content = { { type = "diff", path = "/w/a.go", oldText = "b\n", newText = "c\n" } } })
  chat.prompt_done(model, nil, { stopReason = "end_turn", _meta = { ["agentd/changes"] = {
    { path = "/w/a.go", change = "modified", added = 1, removed = 1 },
    { path = "/w/new.go", change = "created", added = 3, removed = 0 },
  } } })
  chat.render_now()
  local t = h.transcript_text()
  h.contains(t, "Changed 2 files (unsaved in buffers; :AgentdChanges to review, :wall to save):\n  modified /w/a.go +1 -1\n  created /w/new.go +3 -0", "changes listed")
  h.eq("a\n", model.last_changes.baseline["/w/a.go"], "the text before the turn is the first diff's old text")
end)

cases.add("<CR> on the tool line of a file the agent left modified opens it without E37", function()
  vim.o.hidden = false
  local dir = h.tmpdir()
  local path, other = dir .. "/x.txt", dir .. "/y.txt"
  h.write(path, "1\n2\n3\n")
  h.write(other, "o\n")
  -- The editing window holds another file with unsaved changes.
  vim.cmd("edit " .. vim.fn.fnameescape(other))
  vim.api.nvim_buf_set_lines(0, 0, -1, false, { "unsaved" })
  local ob = vim.api.nvim_get_current_buf()
  local file_win = vim.api.nvim_get_current_win()
  fresh("e37")
  update("e37", { sessionUpdate = "tool_call", toolCallId = "t", title = "Edit x.txt", status = "completed",
    locations = { { path = path, line = 2 } } })
  update("e37", { sessionUpdate = "tool_call", toolCallId = "t2", title = "Edit y.txt", status = "completed",
    locations = { { path = other, line = 1 } } })
  local chat = require("agentd.chat")
  local function line_of(text)
    for i, l in ipairs(h.transcript()) do
      if l:find(text, 1, true) then
        return i
      end
    end
  end
  -- The file shown and modified in a window: <CR> goes there.
  vim.api.nvim_set_current_win(chat.ui.twin)
  vim.api.nvim_win_set_cursor(0, { line_of("Edit y.txt"), 0 })
  vim.api.nvim_feedkeys(vim.api.nvim_replace_termcodes("<CR>", true, false, true), "x", false)
  h.eq(file_win, vim.api.nvim_get_current_win(), "went to the window showing it")
  h.eq(ob, vim.api.nvim_get_current_buf(), "same buffer")
  -- Another file while that window holds unsaved changes and 'nohidden'.
  vim.api.nvim_set_current_win(chat.ui.twin)
  vim.api.nvim_win_set_cursor(0, { line_of("Edit x.txt"), 0 })
  vim.api.nvim_feedkeys(vim.api.nvim_replace_termcodes("<CR>", true, false, true), "x", false)
  h.eq(path, vim.api.nvim_buf_get_name(0), "the tool's file is open")
  h.eq(2, vim.api.nvim_win_get_cursor(0)[1], "at its line")
  h.eq({ "unsaved" }, h.lines(ob), "the unsaved buffer is untouched")
  h.eq(ob, vim.api.nvim_win_get_buf(file_win), "and still shown")
  h.eq("", vim.v.errmsg, "no error")
  h.eq({}, h.errors(), "no error messages")
end)

cases.add("a steer shows in place; / completes the session's commands in the input", function()
  local sid = "st"
  local model = fresh(sid)
  local chat = require("agentd.chat")
  chat.add_prompt(model, "long task")
  model.steering["also add tests"] = 1
  update(sid, { sessionUpdate = "user_message_chunk", messageId = "u2", content = { type = "text", text = "also add tests" } })
  h.contains(h.transcript_text(), "> (steer) also add tests", "steer shown as such")
  h.eq(0, #model.queued, "nothing dequeued")
  update(sid, { sessionUpdate = "available_commands_update", availableCommands = {
    { name = "compact", description = "Summarize the conversation" },
    { name = "init", description = "Write AGENTS.md" },
    { name = "review", description = "Review the diff", input = { hint = "what to focus on" } },
  } })
  local items = chat.complete_items("/")
  h.eq({ "/compact ", "/init ", "/review " }, vim.tbl_map(function(i)
    return i.word
  end, items), "all commands")
  h.eq("Summarize the conversation", items[1].menu, "description in the menu")
  h.eq("/review what to focus on", items[3].abbr, "input hint shown")
  h.eq({ "/init " }, vim.tbl_map(function(i)
    return i.word
  end, chat.complete_items("/in")), "filtered by prefix")
  -- omnifunc and the automatic menu in the input window.
  h.eq("v:lua.agentd_omnifunc", vim.bo[chat.ui.input].omnifunc, "omnifunc set")
  vim.api.nvim_set_current_win(chat.ui.iwin)
  local shown
  local real = vim.fn.complete
  vim.fn.complete = function(col, list)
    shown = { col = col, words = vim.tbl_map(function(i)
      return i.word
    end, list) }
    return real(col, list)
  end
  vim.api.nvim_feedkeys("i/co", "xt", false)
  h.truthy(shown, "completion menu opened when typing /")
  h.eq(1, shown.col, "from the start of the line")
  h.eq("/compact ", shown.words[1], "commands offered")
  vim.fn.complete = real
  h.eq(0, #chat.complete_items("x"), "nothing for plain words")
  h.eq({ "#buffer", "#selection", "#file:" }, vim.tbl_map(function(i)
    return i.word
  end, chat.complete_items("#")), "context words")
end)

cases.add("typing a whole command through the / menu keeps what was typed, whatever completeopt says", function()
  local sid = "co"
  fresh(sid)
  local chat = require("agentd.chat")
  update(sid, { sessionUpdate = "available_commands_update", availableCommands = {
    { name = "compact", description = "Summarize the conversation" },
    { name = "undo", description = "Restore the files the newest turn changed" },
  } })
  local user_opt = vim.o.completeopt
  for _, opt in ipairs({ user_opt, "menu,preview", "menuone", "menu,menuone,noinsert" }) do
    vim.o.completeopt = opt
    vim.api.nvim_set_current_win(chat.ui.iwin)
    vim.api.nvim_buf_set_lines(chat.ui.input, 0, -1, false, { "" })
    vim.api.nvim_feedkeys("i/undo\27", "xt", false)
    h.eq({ "/undo" }, vim.api.nvim_buf_get_lines(chat.ui.input, 0, -1, false), "typed with completeopt=" .. opt)
    h.eq(opt, vim.o.completeopt, "the user's completeopt is back")
    vim.api.nvim_buf_set_lines(chat.ui.input, 0, -1, false, { "" })
    vim.api.nvim_feedkeys("i@no\27", "xt", false)
    h.eq({ "@no" }, vim.api.nvim_buf_get_lines(chat.ui.input, 0, -1, false), "@ typed with completeopt=" .. opt)
  end
end)

cases.add("replies are highlighted as Markdown; the chat keeps its width on resize", function()
  local sid = "md"
  local model = fresh(sid)
  require("agentd.chat").add_prompt(model, "q")
  update(sid, { sessionUpdate = "agent_message_chunk", messageId = "m", content = { type = "text", text = "Some **bold** words\n\n# A heading" } })
  local chat = require("agentd.chat")
  local t = h.transcript()
  local lnum
  for i, l in ipairs(t) do
    if l:find("**bold**", 1, true) then
      lnum = i
    end
  end
  vim.api.nvim_win_call(chat.ui.twin, function()
    vim.cmd("syntax sync fromstart")
    local col = t[lnum]:find("bold", 1, true)
    local names = {}
    for _, id in ipairs(vim.fn.synstack(lnum, col)) do
      names[#names + 1] = vim.fn.synIDattr(id, "name")
    end
    h.truthy(vim.tbl_contains(names, "markdownBold"), "bold text is markdownBold: " .. vim.inspect(names))
  end)
  -- Resizing Neovim keeps the configured 0.4 of the columns.
  vim.o.columns = 120
  vim.cmd("doautocmd VimResized")
  h.eq(48, vim.api.nvim_win_get_width(chat.ui.twin), "width after growing")
  vim.api.nvim_win_set_width(chat.ui.twin, 20)
  vim.o.columns = 100
  vim.cmd("doautocmd VimResized")
  h.eq(40, vim.api.nvim_win_get_width(chat.ui.twin), "width after shrinking")
end)

cases.add("updates for another session do not disturb the shown one", function()
  fresh("mine")
  update("other", { sessionUpdate = "agent_message_chunk", messageId = "x", content = { type = "text", text = "not mine" } })
  update("mine", { sessionUpdate = "agent_message_chunk", messageId = "y", content = { type = "text", text = "mine" } })
  local text = h.transcript_text()
  h.contains(text, "mine", "own session rendered")
  h.eq(nil, text:find("not mine", 1, true), "other session not rendered")
  -- Garbage updates are ignored without a Lua error.
  update("mine", { sessionUpdate = "no_such_kind" })
  update("mine", nil)
  update("mine", { sessionUpdate = "agent_message_chunk", content = "not a table" })
  update("mine", { sessionUpdate = "tool_call_update", toolCallId = { "odd" }, status = 3, title = false })
  update("mine", { sessionUpdate = "plan", entries = { "x", { content = 5 } } })
  update("mine", { sessionUpdate = "usage_update", used = "lots" })
  h.transcript()
  h.eq({}, h.errors(), "no error messages for odd updates")
  require("agentd").lsp_handlers()["agent/session/update"](nil, nil, {})
end)

cases.add("titles, commands and paths cannot hide text with controls, bidi or newlines", function()
  local sid = "s9"
  local model = fresh(sid)
  local chat = require("agentd.chat")
  -- ESC[8m conceals the rest in a terminal; U+202E reverses it; a newline
  -- would fake a transcript line.
  update(sid, { sessionUpdate = "session_info_update", title = "Fix\n> user: approve all" })
  update(sid, { sessionUpdate = "tool_call", toolCallId = "t1", title = "Read a\27[8m.txt\226\128\174", kind = "read", status = "pending" })
  chat.add_permission(model, {
    title = "run\226\129\166 it",
    rawInput = { command = { "make", "test\27[8m; touch pwned", "it's" }, cwd = "/w\nx" },
    _meta = { ["agentd/saves"] = { { path = "/w/a\194\155.go", userChanges = true }, { path = "/w/b.go", userChanges = false } } },
  })
  local t = h.transcript()
  local text = table.concat(t, "\n")
  h.eq("agentd · Fix\\n> user: approve all", t[1], "title on one line")
  h.contains(text, "[pending] Read a\\x1b[8m.txt\\u202e", "tool title escaped")
  h.contains(text, "? permission: run\\u2066 it", "permission title escaped")
  h.contains(text, "$ make $'test\\x1b[8m; touch pwned' 'it'\\''s'", "argv quoted and escaped")
  h.contains(text, "in /w\\nx", "cwd escaped")
  h.contains(text, "saves first:\n      /w/a\\x9b.go (also holds your unsaved changes)\n      /w/b.go", "saves listed and marked")
  for _, l in ipairs(t) do
    h.eq(nil, l:find("[%z\1-\31\127]"), "no control character on a line: " .. vim.inspect(l))
    h.eq(nil, l:find("\226\128\174", 1, true), "no bidi override: " .. vim.inspect(l))
  end
end)

return cases
