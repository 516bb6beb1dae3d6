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
