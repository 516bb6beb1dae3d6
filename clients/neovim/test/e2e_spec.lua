-- End to end: this Neovim, the real agentd binary (built by run.sh) and the
-- fake model server speaking OpenAI's streaming wire format.
local h = require("helpers")
local cases = require("harness").cases()

-- A project with a.txt on disk, opened in a buffer and changed without
-- saving. Returns dir, path, bufnr.
local function project()
  local dir = h.tmpdir()
  local path = dir .. "/a.txt"
  h.write(path, "hello world\nsecond line\n")
  vim.cmd("edit " .. vim.fn.fnameescape(path))
  local b = vim.api.nvim_get_current_buf()
  vim.api.nvim_buf_set_lines(b, 0, 1, false, { "hello unsaved world" })
  vim.cmd("let &undolevels = &undolevels")
  return dir, path, b
end

local function pick_option(id)
  return function(items)
    for _, it in ipairs(items) do
      if it.option and it.option.optionId == id then
        return it
      end
    end
    return nil
  end
end

local function tool_results(req)
  local out = {}
  for _, m in ipairs(req.messages or {}) do
    if m.role == "tool" then
      local c = m.content
      if type(c) == "table" then
        local parts = {}
        for _, p in ipairs(c) do
          table.insert(parts, p.text or "")
        end
        c = table.concat(parts)
      end
      table.insert(out, tostring(c))
    end
  end
  return table.concat(out, "\n")
end

local function idle()
  local m = require("agentd").model()
  return m and m.busy == 0
end

cases.add("reads the unsaved buffer, asks, edits through applyEdit, undo with u", function()
  local dir, path, b = project()
  local fm = h.fakemodel({ turns = {
    { text = "Let me look.", toolCalls = { { name = "read_file", arguments = { path = "a.txt" } } } },
    { reasoning = "The file says unsaved; change it.", toolCalls = { { name = "edit_file", arguments = {
      path = "a.txt", edits = { { old_text = "hello unsaved world", new_text = "hello edited world" } } } } } },
    { text = "All done." },
  } })
  h.setup_agentd(fm.url, dir)
  local asked = h.stub_select(pick_option("allow_once"))
  local file_win = vim.api.nvim_get_current_win()
  vim.cmd("AgentdPrompt Please fix a.txt")

  -- The agent read the unsaved text: the model's second request carries it.
  local reqs = h.wait_for(function()
    local r = fm.requests()
    return #r >= 2 and r
  end, "the model's second request", 30000, h.report)
  h.contains(tool_results(reqs[2]), "hello unsaved world", "the read returned the unsaved buffer")

  -- The permission was asked, with the diff, and approved.
  h.wait_for(function()
    return #asked > 0
  end, "the permission question", 30000, h.report)
  h.contains(asked[1].prompt, "a.txt", "question names the file")
  h.eq("Show diff", asked[1].labels[1], "diff viewable before choosing")

  -- The buffer was edited through applyEdit, left unsaved.
  h.wait_for(function()
    return h.lines(b)[1] == "hello edited world"
  end, "the buffer to be edited", 30000, function()
    return vim.inspect(h.lines(b)) .. "\n" .. h.report()
  end)
  h.eq({ "hello edited world", "second line" }, h.lines(b), "buffer after the edit")
  h.eq(true, vim.bo[b].modified, "edit left unsaved")
  h.eq("hello world\nsecond line\n", h.read(path), "disk untouched")

  h.wait_for(function()
    return idle() and h.transcript_text():find("All done.", 1, true)
  end, "the turn to end", 30000, h.transcript_text)
  local t = h.transcript_text()
  h.contains(t, "> Please fix a.txt", "prompt")
  h.contains(t, "Let me look.", "reply")
  h.contains(t, "▸ Thinking", "thinking")
  h.truthy(t:find("%[done%][^\n]*a%.txt"), "read and edit tool lines done:\n" .. t)
  h.eq(3, #fm.requests(), "three model calls")

  -- u in the file's window undoes the agent's edit.
  vim.api.nvim_set_current_win(file_win)
  h.eq(b, vim.api.nvim_get_current_buf(), "file window shows the file")
  vim.cmd("normal! u")
  h.eq({ "hello unsaved world", "second line" }, h.lines(b), "undone with u")
end)

cases.add("an edit computed before the user typed is refused, and the agent told", function()
  local dir, path, b = project()
  local fm = h.fakemodel({ turns = {
    { toolCalls = { { name = "edit_file", arguments = {
      path = "a.txt", edits = { { old_text = "second line", new_text = "agent line" } } } } } },
    { text = "I will re-read it." },
  } })
  h.setup_agentd(fm.url, dir)
  -- While the question is open the user edits the buffer, then approves.
  h.stub_select(function(items)
    vim.api.nvim_buf_set_lines(b, 0, 1, false, { "typed by the user" })
    return pick_option("allow_once")(items)
  end)
  vim.cmd("AgentdPrompt change the second line")
  h.wait_for(function()
    return idle() and h.transcript_text():find("I will re-read it.", 1, true)
  end, "the turn to end", 30000, h.report)
  h.eq({ "typed by the user", "second line" }, h.lines(b), "the user's text kept, the stale edit not applied")
  h.eq("hello world\nsecond line\n", h.read(path), "disk untouched")
  local result = tool_results(fm.requests()[2]):lower()
  h.contains(result, "changed since it was read", "the model is told why the edit did not land")
end)

cases.add("cancel mid-stream", function()
  local dir = project()
  local long = string.rep("streaming words ", 60)
  local fm = h.fakemodel({ turns = {
    { text = long, chunkSize = 2, chunkDelayMs = 25 },
    { text = "After the cancel." },
  } })
  h.setup_agentd(fm.url, dir)
  vim.cmd("AgentdPrompt write a lot")
  h.wait_for(function()
    return h.transcript_text():find("streaming words streaming", 1, true)
  end, "streaming to start", 30000, h.report)
  vim.cmd("AgentdCancel")
  h.wait_for(function()
    return h.transcript_text():find("(turn ended: cancelled)", 1, true) and idle()
  end, "the turn to end cancelled", 10000, h.report)
  local t = h.transcript_text()
  h.eq(nil, t:find(vim.trim(long), 1, true), "stream stopped before its end")
  -- The session takes the next prompt normally.
  vim.cmd("AgentdPrompt go on")
  h.wait_for(function()
    return h.transcript_text():find("After the cancel.", 1, true) and idle()
  end, "the next turn", 30000, h.report)
  h.eq(2, #fm.requests(), "two model calls")
end)

cases.add("cancel while the permission question is open", function()
  local dir, path, b = project()
  local fm = h.fakemodel({ turns = {
    { toolCalls = { { name = "edit_file", arguments = {
      path = "a.txt", edits = { { old_text = "second line", new_text = "2nd line" } } } } } },
    { text = "Fresh turn." },
  } })
  h.setup_agentd(fm.url, dir)
  -- A picker that stays open; the user cancels the turn instead of choosing.
  local opened = 0
  vim.ui.select = function()
    opened = opened + 1
    vim.defer_fn(function()
      vim.cmd("AgentdCancel")
    end, 100)
  end
  vim.cmd("AgentdPrompt change the second line")
  h.wait_for(function()
    return idle() and h.transcript_text():find("(turn ended: cancelled)", 1, true)
  end, "the turn to end cancelled", 30000, h.report)
  h.eq(1, opened, "the question was open")
  h.contains(h.transcript_text(), "? permission: Edit a.txt → cancelled", "question answered cancelled")
  h.eq({ "hello unsaved world", "second line" }, h.lines(b), "buffer unchanged")
  h.eq("hello world\nsecond line\n", h.read(path), "disk unchanged")
  vim.cmd("AgentdPrompt next")
  h.wait_for(function()
    return idle() and h.transcript_text():find("Fresh turn.", 1, true)
  end, "the next turn", 30000, h.report)
end)

cases.add("deny the permission", function()
  local dir, path, b = project()
  local fm = h.fakemodel({ turns = {
    { toolCalls = { { name = "edit_file", arguments = {
      path = "a.txt", edits = { { old_text = "second line", new_text = "2nd line" } } } } } },
    { text = "Understood, no changes." },
  } })
  h.setup_agentd(fm.url, dir)
  local asked = h.stub_select(pick_option("reject_once"))
  vim.cmd("AgentdPrompt change the second line")
  h.wait_for(function()
    return idle() and h.transcript_text():find("Understood, no changes.", 1, true)
  end, "the turn to end", 30000, h.report)
  h.eq(1, #asked, "asked once")
  h.eq({ "hello unsaved world", "second line" }, h.lines(b), "buffer unchanged")
  h.eq("hello world\nsecond line\n", h.read(path), "disk unchanged")
  h.contains(h.transcript_text(), "[failed]", "the edit's status line says failed")
  local reqs = fm.requests()
  h.eq(2, #reqs, "the model was told and answered")
  h.truthy(tool_results(reqs[2]):lower():find("denied") or tool_results(reqs[2]):lower():find("reject"),
    "tool result tells the model it was denied: " .. tool_results(reqs[2]))
end)

cases.add("auto mode edits without asking; sessions list and load", function()
  local dir, _, b = project()
  local fm = h.fakemodel({ turns = {
    { toolCalls = { { name = "edit_file", arguments = {
      path = "a.txt", edits = { { old_text = "second line", new_text = "2nd line" } } } } } },
    { text = "Edited." },
  } })
  h.setup_agentd(fm.url, dir)
  local asked = h.stub_select(pick_option("allow_once"))
  vim.cmd("AgentdMode auto")
  vim.cmd("AgentdPrompt shorten the second line")
  h.wait_for(function()
    return idle() and h.transcript_text():find("Edited.", 1, true)
  end, "the turn to end", 30000, h.report)
  h.eq(0, #asked, "auto mode did not ask")
  h.eq("2nd line", h.lines(b)[2], "edited")
  h.contains(h.transcript()[1], "mode: auto", "mode shown in the header")
  local first = require("agentd").session_id

  vim.cmd("AgentdNew")
  h.wait_for(function()
    local id = require("agentd").session_id
    return id and id ~= first
  end, "a new session", 10000, h.report)
  h.eq(nil, h.transcript_text():find("shorten the second line", 1, true), "new session starts empty")

  local listed = h.stub_select(function(items)
    for _, it in ipairs(items) do
      if it.sessionId == first then
        return it
      end
    end
  end)
  vim.cmd("AgentdSessions")
  h.wait_for(function()
    return require("agentd").session_id == first and h.transcript_text():find("Edited.", 1, true)
  end, "the old session replayed", 10000, h.report)
  h.truthy(#listed == 1 and #listed[1].items >= 1, "sessions offered through vim.ui.select")
  h.contains(h.transcript_text(), "shorten the second line", "replayed prompt")
end)

cases.add("a priced turn shows the session's cost beside the meter and in status()", function()
  local dir = project()
  -- The fake model reports 1000 input, 3000 cache-read and 200 output tokens; the
  -- user's price makes that 0.00025 + 0.000075 + 0.0004 EUR.
  local fm = h.fakemodel({ turns = {
    { text = "Priced.", usage = { input = 1000, output = 200, cacheRead = 3000 } },
  } })
  h.setup_agentd(fm.url, dir, { settings = { models = { ["fake-model"] = { price = {
    input = 0.25, output = 2, cacheRead = 0.025, currency = "EUR" } } } } })
  vim.cmd("AgentdPrompt say something")
  h.wait_for(function()
    return idle() and h.transcript_text():find("Priced.", 1, true)
  end, "the turn to end", 30000, h.report)
  -- The turn costs 0.000725 EUR; the chat's title, asked of the same model after the turn, may
  -- add its own small cost to the session's total.
  local function shown_cost(text)
    return tonumber(text:match("· ([%d%.]+) EUR"))
  end
  h.wait_for(function()
    local c = shown_cost(h.transcript_text())
    return c and c >= 0.000725 and c < 0.001 and shown_cost(require("agentd").status()) == c
  end, "the cost beside the meter and in status()", 10000, h.transcript_text)
end)

cases.add("a prompt sent during a turn is queued", function()
  local dir = project()
  local fm = h.fakemodel({ turns = {
    { text = string.rep("one ", 40), chunkSize = 4, chunkDelayMs = 20 },
    { text = "Second answer." },
  } })
  h.setup_agentd(fm.url, dir)
  vim.cmd("AgentdPrompt first")
  h.wait_for(function()
    return h.transcript_text():find("one one", 1, true)
  end, "the first reply to stream", 30000, h.report)
  vim.cmd("AgentdPrompt second")
  h.contains(h.transcript_text(), "Queued:\n  1. second", "second prompt queued")
  h.wait_for(function()
    return idle() and h.transcript_text():find("Second answer.", 1, true)
  end, "both turns", 30000, h.report)
  h.eq(nil, h.transcript_text():find("Queued:", 1, true), "queue empty")
  h.contains(h.transcript_text(), "> second", "queued prompt moved into the transcript")
end)

cases.add("daemon crashing mid-turn: one message, then the same session resumes with its history", function()
  local dir = project()
  local fm = h.fakemodel({ turns = {
    { text = string.rep("slow ", 200), chunkSize = 2, chunkDelayMs = 25 },
    { text = "Back again." },
  } })
  h.setup_agentd(fm.url, dir)
  vim.cmd("AgentdPrompt stream slowly")
  h.wait_for(function()
    return h.transcript_text():find("slow slow", 1, true)
  end, "streaming to start", 30000, h.report)
  local sid = require("agentd").session_id
  local pid = h.daemon_pid()
  vim.loop.kill(pid, "sigkill")
  h.wait_for(function()
    return idle() and h.transcript_text():find("agentd stopped", 1, true)
  end, "the chat to say the daemon stopped", 10000, h.report)
  local ours = {}
  for _, m in ipairs(h.errors()) do
    if m:find("agentd", 1, true) then
      table.insert(ours, m)
    end
  end
  h.eq(1, #ours, "one agentd error: " .. vim.inspect(ours))
  h.contains(ours[1], "exited unexpectedly", "message")
  -- The editor works and the next prompt restarts the daemon and resumes
  -- the same session: the model sees the earlier prompt.
  vim.cmd("AgentdPrompt again")
  h.wait_for(function()
    return idle() and h.transcript_text():find("Back again.", 1, true)
  end, "a turn on a restarted daemon", 30000, h.report)
  h.eq(sid, require("agentd").session_id, "same session")
  h.truthy(h.daemon_pid() ~= pid, "a new daemon")
  local t = h.transcript_text()
  h.contains(t, "> stream slowly", "the old transcript is still shown")
  h.contains(t, "! info: agentd restarted — this conversation continues in the same session, with its history", "the chat says so")
  local reqs = fm.requests()
  h.contains(vim.json.encode(reqs[#reqs].messages), "stream slowly", "the model got the history")
end)

cases.add("a program runs after agentd has Neovim save the agent's edits", function()
  local dir, path, b = project()
  local clean = dir .. "/c.txt"
  h.write(clean, "clean\n")
  vim.cmd("edit " .. vim.fn.fnameescape(clean))
  local cb = vim.api.nvim_get_current_buf()
  local fm = h.fakemodel({ turns = {
    { toolCalls = {
      { name = "edit_file", arguments = { path = "a.txt", edits = { { old_text = "second line", new_text = "saved line" } } } },
      { name = "edit_file", arguments = { path = "c.txt", edits = { { old_text = "clean", new_text = "cleaned" } } } },
    } },
    { toolCalls = { { name = "run_program", arguments = { command = { "cat", "a.txt", "c.txt" } } } } },
    { text = "Ran it." },
  } })
  -- "all": a.txt, which also holds the user's own unsaved line, is saved too.
  h.setup_agentd(fm.url, dir, { settings = { saveBeforeRun = "all" } })
  local asked = h.stub_select(pick_option("allow_once"))
  vim.cmd("AgentdPrompt edit then run")
  h.wait_for(function()
    return #asked >= 3
  end, "the program's question", 30000, h.report)
  -- The program's question shows the argv, where it runs, and what is saved
  -- first, marking the file that also holds the user's own changes.
  local q = asked[3].prompt
  h.contains(q, "$ cat a.txt c.txt (in " .. dir .. ")", "the program's question shows the command and directory")
  h.contains(q, "saves first: ", "the program's question lists the saves")
  h.contains(q, path .. " (also holds your unsaved changes)", "a.txt is marked")
  h.eq(#q - #clean + 1, q:find(clean, 1, true), "c.txt is listed last, unmarked")
  h.wait_for(function()
    return idle() and h.transcript_text():find("Ran it.", 1, true)
  end, "the turn to end", 30000, h.report)
  h.eq("hello unsaved world\nsaved line\n", h.read(path), "saved to disk")
  h.eq("cleaned\n", h.read(clean), "saved to disk")
  h.eq(false, vim.bo[b].modified, "buffer written")
  h.eq(false, vim.bo[cb].modified, "buffer written")
  h.contains(tool_results(fm.requests()[3]), "saved line", "the program read the saved file")
end)

cases.add("a project file cannot switch to auto", function()
  local dir, path = project()
  vim.fn.mkdir(dir .. "/.agentd", "p")
  h.write(dir .. "/.agentd/config.json", '{"mode":"auto","allowShell":true}')
  local fm = h.fakemodel({ turns = {
    { toolCalls = { { name = "edit_file", arguments = { path = "a.txt", edits = { { old_text = "second line", new_text = "auto line" } } } } } },
    { toolCalls = { { name = "run_program", arguments = { command = { "touch", "ran" } } } } },
    { text = "Finished." },
  } })
  -- The user sets no mode: only the project file asks for auto.
  local settings = h.fake_settings(fm.url)
  settings.mode = nil
  h.setup_agentd(fm.url, dir, { settings = settings })
  require("agentd.config").options.settings.mode = nil
  local asked = h.stub_select(pick_option("reject_once"))
  vim.cmd("AgentdPrompt edit and run")
  h.wait_for(function()
    return idle() and h.transcript_text():find("Finished.", 1, true)
  end, "the turn to end", 30000, h.report)
  h.eq(2, #asked, "both the edit and the program asked")
  h.contains(asked[1].prompt, "a.txt", "the edit asked")
  h.contains(asked[2].prompt, "$ touch ran", "the program asked")
  h.eq(0, vim.fn.filereadable(dir .. "/ran"), "the program did not run")
  h.eq(nil, h.read(path):find("auto line", 1, true), "the edit did not land")
  local t = h.transcript_text()
  h.contains(t, "Project settings ignored", "the notice is shown")
  h.contains(t, "allowShell", "the notice names allowShell")
  h.contains(t, "trustedProjects", "the notice says how to allow it")
end)

cases.add("a key saved for one origin is not sent to another", function()
  local dir = project()
  local a = h.fakemodel({ turns = { { text = "From A." } } })
  local b = h.fakemodel({ turns = { { text = "From B." } } })
  local origin_a = a.url:gsub("/v1$", "")
  local origin_b = b.url:gsub("/v1$", "")
  local asked = {}
  -- The user's secrets function knows a key for A only.
  local function secrets(origin)
    asked[#asked + 1] = origin
    if origin == origin_a then
      return "sk-only-for-a"
    end
  end
  h.setup_agentd(a.url, dir, { secrets = secrets })
  vim.cmd("AgentdPrompt one")
  h.wait_for(function()
    return idle() and h.transcript_text():find("From A.", 1, true)
  end, "a turn on A", 30000, h.report)
  h.contains(vim.json.encode(a.headers()), "Bearer sk-only-for-a", "A got its key from the secrets function")
  -- The same provider now points at B.
  h.truthy(require("agentd").setup({ settings = h.fake_settings(b.url), secrets = secrets, cmd = { vim.env.AGENTD_BIN, "--stdio" }, cwd = dir }))
  vim.cmd("AgentdPrompt two")
  h.wait_for(function()
    return idle() and h.transcript_text():find("From B.", 1, true)
  end, "a turn on B", 30000, h.report)
  h.truthy(vim.tbl_contains(asked, origin_b), "agentd asked for B's origin: " .. vim.inspect(asked))
  local hb = b.headers()
  h.truthy(#hb > 0, "B got requests")
  for _, r in ipairs(hb) do
    h.eq("", r.authorization, "B got no key (" .. r.path .. ")")
  end
  h.eq(nil, vim.json.encode(hb):find("sk-only-for-a", 1, true), "A's key never reached B")
end)

cases.add("the secrets option serves a key from vim.env by origin", function()
  local dir = project()
  local fm = h.fakemodel({ turns = { { text = "Keyed." } } })
  local origin = fm.url:gsub("/v1$", "")
  vim.env.AGENTD_TEST_LOCAL_KEY = "sk-from-env"
  h.setup_agentd(fm.url, dir, { secrets = { [origin] = "AGENTD_TEST_LOCAL_KEY" } })
  vim.cmd("AgentdPrompt hi")
  h.wait_for(function()
    return idle() and h.transcript_text():find("Keyed.", 1, true)
  end, "the turn", 30000, h.report)
  h.contains(vim.json.encode(fm.headers()), "Bearer sk-from-env", "the key from the mapped variable")
end)

cases.add("setup() again sends the new settings to the running daemon", function()
  local dir = project()
  local a = h.fakemodel({ turns = { { text = "From A." } } })
  local b = h.fakemodel({ turns = { { text = "From B." } } })
  h.setup_agentd(a.url, dir)
  vim.cmd("AgentdPrompt one")
  h.wait_for(function()
    return idle() and h.transcript_text():find("From A.", 1, true)
  end, "a turn on A", 30000, h.report)
  local pid = h.daemon_pid()
  h.truthy(require("agentd").setup({ settings = h.fake_settings(b.url), cmd = { vim.env.AGENTD_BIN, "--stdio" }, cwd = dir }))
  vim.cmd("AgentdPrompt two")
  h.wait_for(function()
    return idle() and h.transcript_text():find("From B.", 1, true)
  end, "a turn on B", 30000, h.report)
  h.eq(pid, h.daemon_pid(), "same daemon process")
  h.eq(1, #a.requests(), "A got the first turn only")
  h.eq(1, #b.requests(), "B got the second")
end)

cases.add(":AgentdPrompt with a range sends those lines as context", function()
  local dir, _, b = project()
  local fm = h.fakemodel({ turns = { { text = "Seen." } } })
  h.setup_agentd(fm.url, dir)
  vim.api.nvim_buf_set_lines(b, -1, -1, false, { "third line" })
  vim.cmd("2,3AgentdPrompt explain these")
  h.wait_for(function()
    return idle() and h.transcript_text():find("Seen.", 1, true)
  end, "the turn to end", 30000, h.report)
  local body = vim.json.encode(fm.requests()[1].messages)
  h.contains(body, "explain these", "prompt text")
  h.contains(body, "second line\\nthird line", "the range's lines reach the model")
  h.eq(nil, body:find("hello unsaved world", 1, true), "only the range")
  h.contains(h.transcript_text(), "> [a.txt:2-3]", "the chat names the range")
end)

cases.add("checkhealth reports the binary, version, provider and key status", function()
  local dir = h.tmpdir()
  h.setup_agentd("http://127.0.0.1:9/v1", dir)
  vim.cmd("checkhealth agentd")
  local text = table.concat(h.lines(0), "\n")
  h.contains(text, "binary: " .. vim.env.AGENTD_BIN, "binary")
  h.contains(text, "starts and initializes: agentd", "initializes")
  h.contains(text, "provider fake (openai", "provider listed")
  h.truthy(text:find("key not_needed") or text:find("key set"), "key status:\n" .. text)
end)

cases.add("changed files not open are listed; :AgentdChanges, ]h [h, undo and keep per hunk", function()
  local dir, _, ab = project()
  local bpath = dir .. "/b.txt"
  h.write(bpath, "one\ntwo\nthree\nfour\nfive\nsix\n")
  local fm = h.fakemodel({ turns = {
    { toolCalls = {
      { name = "edit_file", arguments = { path = "b.txt", edits = { { old_text = "two", new_text = "TWO" } } } },
      { name = "edit_file", arguments = { path = "b.txt", edits = { { old_text = "five\nsix", new_text = "FIVE\nsix\nseven" } } } },
      { name = "edit_file", arguments = { path = "a.txt", edits = { { old_text = "second line", new_text = "2nd line" } } } },
    } },
    { text = "Edited." },
  } })
  h.setup_agentd(fm.url, dir, { mode = "auto" })
  local file_win = vim.api.nvim_get_current_win()
  vim.cmd("AgentdPrompt edit both")
  h.wait_for(function()
    return idle() and h.transcript_text():find("Edited.", 1, true)
  end, "the turn to end", 30000, h.report)
  local t = h.transcript_text()
  h.contains(t, "Changed 2 files (unsaved in buffers; :AgentdChanges to review, :wall to save):", "the chat says files changed")
  h.contains(t, "  modified b.txt", "b.txt listed")
  h.contains(t, "  modified a.txt +1 -1", "a.txt listed")
  h.eq("one\ntwo\nthree\nfour\nfive\nsix\n", h.read(bpath), "b.txt not saved")

  vim.api.nvim_set_current_win(file_win)
  vim.cmd("AgentdChanges")
  local qf = vim.fn.getqflist({ title = 1, items = 1 })
  h.eq("agentd: changes of the last turn", qf.title, "quickfix title")
  local got = {}
  for _, it in ipairs(qf.items) do
    got[#got + 1] = vim.fn.fnamemodify(vim.api.nvim_buf_get_name(it.bufnr), ":t") .. ":" .. it.lnum .. ":" .. it.text
  end
  h.eq({ "b.txt:2:+1 -1: TWO", "b.txt:5:+1 -1: FIVE", "b.txt:7:+1: seven", "a.txt:2:+1 -1: 2nd line" }, got,
    "one entry per hunk, in the turn's order")
  local bb = vim.fn.bufnr(bpath)
  local marks = vim.api.nvim_buf_get_extmarks(bb, require("agentd.review").ns, 0, -1, {})
  h.truthy(#marks >= 3, "hunks highlighted with extmarks: " .. #marks)

  -- In b.txt: ]h and [h move between hunks.
  vim.cmd("cfirst")
  h.eq(bb, vim.api.nvim_get_current_buf(), "quickfix opened b.txt")
  vim.api.nvim_win_set_cursor(0, { 1, 0 })
  local function key(k)
    vim.api.nvim_feedkeys(vim.api.nvim_replace_termcodes(k, true, false, true), "x", false)
  end
  key("]h")
  h.eq(2, vim.api.nvim_win_get_cursor(0)[1], "]h to the first hunk")
  key("]h")
  h.eq(5, vim.api.nvim_win_get_cursor(0)[1], "]h to the second")
  key("[h")
  h.eq(2, vim.api.nvim_win_get_cursor(0)[1], "[h back")
  -- Undo the first hunk: the old line is back, unsaved, one undo step.
  require("agentd.review").undo()
  h.eq({ "one", "two", "three", "four", "FIVE", "six", "seven" }, h.lines(bb), "first hunk undone")
  h.eq(true, vim.bo[bb].modified, "left unsaved")
  -- Keep the second: it leaves the review, the text stays.
  key("]h")
  h.eq(5, vim.api.nvim_win_get_cursor(0)[1], "]h to the next hunk left")
  require("agentd.review").keep()
  h.eq({ "one", "two", "three", "four", "FIVE", "six", "seven" }, h.lines(bb), "kept text unchanged")
  h.eq(2, #vim.fn.getqflist(), "the kept hunk left the list")
  -- Undo the added line through its keymap.
  key("]h")
  h.eq(7, vim.api.nvim_win_get_cursor(0)[1], "]h to the added line")
  key("\\hu") -- <leader>hu, the default leader
  h.eq({ "one", "two", "three", "four", "FIVE", "six" }, h.lines(bb), "added line removed")
  qf = vim.fn.getqflist({ items = 1 })
  h.eq(1, #qf.items, "only a.txt's hunk left")
  h.eq(ab, qf.items[1].bufnr, "a.txt's")
  vim.api.nvim_win_set_cursor(0, { 1, 0 })
  key("]h")
  h.eq(1, vim.api.nvim_win_get_cursor(0)[1], "no hunk left in b.txt")
  h.eq({}, h.errors(), "no errors")
end)

cases.add("reject with a reason reaches the model", function()
  local dir, _, b = project()
  local fm = h.fakemodel({ turns = {
    { toolCalls = { { name = "edit_file", arguments = {
      path = "a.txt", edits = { { old_text = "second line", new_text = "2nd line" } } } } } },
    { text = "OK, I will." },
  } })
  h.setup_agentd(fm.url, dir)
  h.stub_select(h.pick("reject with a reason"))
  vim.ui.input = function(_, on_confirm)
    on_confirm("keep the long form, rename the file instead")
  end
  vim.cmd("AgentdPrompt shorten it")
  h.wait_for(function()
    return idle() and h.transcript_text():find("OK, I will.", 1, true)
  end, "the turn to end", 30000, h.report)
  h.eq("second line", h.lines(b)[2], "not edited")
  h.contains(tool_results(fm.requests()[2]), "keep the long form, rename the file instead", "the model read the reason")
  h.contains(h.transcript_text(), "→ rejected: keep the long form", "the chat shows it")
end)

cases.add(":AgentdSteer adds to the running turn; with no turn it is a prompt", function()
  local dir = project()
  local fm = h.fakemodel({ turns = {
    { text = string.rep("working ", 80), chunkSize = 4, chunkDelayMs = 25 },
    { text = "Steered answer." },
    { text = "Plain answer." },
  } })
  h.setup_agentd(fm.url, dir)
  vim.cmd("AgentdPrompt long job")
  h.wait_for(function()
    return h.transcript_text():find("working working", 1, true)
  end, "streaming to start", 30000, h.report)
  vim.cmd("AgentdSteer also mention the tests")
  h.wait_for(function()
    return idle() and h.transcript_text():find("Steered answer.", 1, true)
  end, "the steered turn to end", 30000, h.report)
  local t = h.transcript_text()
  h.contains(t, "> (steer) also mention the tests", "steer shown in place")
  h.eq(nil, t:find("Queued:", 1, true), "not queued")
  local reqs = fm.requests()
  h.eq(2, #reqs, "one more model call in the same turn")
  h.contains(vim.json.encode(reqs[2].messages), "also mention the tests", "the model read it")
  -- No turn running: the steer is a prompt (from the input window's key).
  local chat = require("agentd.chat")
  vim.api.nvim_buf_set_lines(chat.ui.input, 0, -1, false, { "now this" })
  vim.api.nvim_set_current_win(chat.ui.iwin)
  vim.api.nvim_feedkeys(vim.api.nvim_replace_termcodes("<M-CR>", true, false, true), "x", false)
  h.wait_for(function()
    return idle() and h.transcript_text():find("Plain answer.", 1, true)
  end, "the plain turn", 30000, h.report)
  h.contains(h.transcript_text(), "> now this", "sent as a prompt")
end)

cases.add(":AgentdFork continues a copy; the commands list completes /", function()
  local dir = project()
  local fm = h.fakemodel({ turns = { { text = "First." }, { text = "In the fork." } } })
  h.setup_agentd(fm.url, dir)
  vim.cmd("AgentdPrompt remember 42")
  h.wait_for(function()
    return idle() and h.transcript_text():find("First.", 1, true)
  end, "the first turn", 30000, h.report)
  local items = require("agentd.chat").complete_items("/")
  h.truthy(vim.tbl_contains(vim.tbl_map(function(i)
    return i.word
  end, items), "/compact "), "agentd's commands offered: " .. vim.inspect(items))
  local first = require("agentd").session_id
  vim.cmd("AgentdFork")
  h.wait_for(function()
    local id = require("agentd").session_id
    return id and id ~= first
  end, "the fork", 10000, h.report)
  h.contains(h.transcript_text(), "> remember 42", "history still shown")
  h.contains(h.transcript_text(), "! info: forked", "the chat says so")
  vim.cmd("AgentdPrompt what number?")
  h.wait_for(function()
    return idle() and h.transcript_text():find("In the fork.", 1, true)
  end, "a turn in the fork", 30000, h.report)
  h.contains(vim.json.encode(fm.requests()[2].messages), "remember 42", "the fork holds the history")
  -- :AgentdMode and :AgentdModel say what they did.
  local function said(text)
    for _, n in ipairs(h.notes) do
      if n.msg:find(text, 1, true) then
        return true
      end
    end
  end
  vim.cmd("AgentdMode plan")
  h.wait_for(function()
    return said("agentd: mode is now plan")
  end, "the mode feedback", 10000, h.report)
  local asked = h.stub_select(h.pick("fake-model"))
  vim.cmd("AgentdModel")
  h.wait_for(function()
    return said("agentd: model is now fake")
  end, "the model feedback", 10000, h.report)
  h.contains(table.concat(asked[1].labels, "\n"), "fake-model (fake)  (current)", "the session's models offered, the current one marked")
  h.truthy(vim.tbl_contains(require("agentd").model_names(), "fake"), "and completed")
end)

cases.add(":AgentdRestore puts a turn's files back, then the conversation", function()
  local dir, path, b = project()
  local fm = h.fakemodel({ turns = {
    { toolCalls = { { name = "edit_file", arguments = { path = "a.txt", edits = { { old_text = "second line", new_text = "2nd line" } } } } } },
    { text = "Shortened." },
    { text = "Nothing to do." },
  } })
  h.setup_agentd(fm.url, dir, { mode = "auto" })
  vim.cmd("AgentdPrompt shorten it")
  h.wait_for(function()
    return idle() and h.transcript_text():find("Shortened.", 1, true)
  end, "the editing turn", 30000, h.report)
  vim.cmd("AgentdPrompt anything else?")
  h.wait_for(function()
    return idle() and h.transcript_text():find("Nothing to do.", 1, true)
  end, "a second turn", 30000, h.report)
  h.eq("2nd line", h.lines(b)[2], "edited")
  local asked = h.stub_select(h.pick("shorten it", "files only"))
  vim.cmd("AgentdRestore")
  h.wait_for(function()
    return h.transcript_text():find("checkpoint restored", 1, true)
  end, "the restore", 30000, h.report)
  h.contains(asked[1].labels[1], "shorten it", "checkpoints listed by prompt")
  h.contains(asked[1].labels[1], "a.txt", "with their files")
  h.eq({ "Files only", "Files and conversation", "Conversation only" }, asked[2].labels, "what to restore")
  h.eq({ "hello unsaved world", "second line" }, h.lines(b), "the buffer is back to before the turn")
  h.eq("hello world\nsecond line\n", h.read(path), "nothing saved")
  h.contains(h.transcript_text(), "! info: checkpoint restored — restored a.txt", "the chat says what came back")
  -- The conversation: the turn and the later one leave the chat.
  h.stub_select(h.pick("shorten it", "conversation only"))
  vim.cmd("AgentdRestore")
  h.wait_for(function()
    return h.transcript_text():find("the conversation is back to before that turn", 1, true)
  end, "the conversation restore", 30000, h.report)
  local t = h.transcript_text()
  h.eq(nil, t:find("Shortened.", 1, true), "the turn is gone from the chat")
  h.eq(nil, t:find("anything else?", 1, true), "and the later one")
end)

cases.add("e on a past prompt goes back to before its turn and puts the prompt in the input", function()
  local dir, _, b = project()
  local fm = h.fakemodel({ turns = {
    { toolCalls = { { name = "edit_file", arguments = { path = "a.txt", edits = { { old_text = "second line", new_text = "2nd line" } } } } } },
    { text = "Shortened." },
    { text = "Nothing else." },
  } })
  h.setup_agentd(fm.url, dir, { mode = "auto" })
  vim.cmd("AgentdPrompt shorten the second line")
  h.wait_for(function()
    return idle() and h.transcript_text():find("Shortened.", 1, true)
  end, "the editing turn", 30000, h.report)
  vim.cmd("AgentdPrompt a later question")
  h.wait_for(function()
    return idle() and h.transcript_text():find("Nothing else.", 1, true)
  end, "a later turn", 30000, h.report)
  local chat = require("agentd.chat")
  local lnum
  for i, l in ipairs(vim.api.nvim_buf_get_lines(chat.ui.transcript, 0, -1, false)) do
    if l:find("shorten the second line", 1, true) then
      lnum = i
    end
  end
  h.truthy(lnum, "the prompt is in the transcript")
  local asked = h.stub_select(h.pick("files and conversation"))
  vim.api.nvim_set_current_win(chat.ui.twin)
  vim.api.nvim_win_set_cursor(chat.ui.twin, { lnum, 0 })
  vim.api.nvim_feedkeys("e", "x", false)
  h.wait_for(function()
    return h.transcript_text():find("the conversation is back to before that turn", 1, true)
  end, "the restore", 30000, h.report)
  h.eq(1, #asked, "only what to restore is asked: the turn is the one under the cursor")
  h.eq({ "shorten the second line" }, vim.api.nvim_buf_get_lines(chat.ui.input, 0, -1, false), "the prompt is back in the input")
  h.eq("second line", h.lines(b)[2], "and the file is back to before the turn")
  h.eq(nil, h.transcript_text():find("a later question", 1, true), "the later turn left the chat")
end)

cases.add(":AgentdGrants lists a remembered answer by scope and revokes it", function()
  local dir, _, b = project()
  local fm = h.fakemodel({ turns = {
    { toolCalls = { { name = "edit_file", arguments = { path = "a.txt", edits = { { old_text = "second line", new_text = "2nd line" } } } } } },
    { text = "Edited." },
    { toolCalls = { { name = "edit_file", arguments = { path = "a.txt", edits = { { old_text = "2nd line", new_text = "line two" } } } } } },
    { text = "Asked again." },
  } })
  h.setup_agentd(fm.url, dir)
  local asked = h.stub_select(pick_option("allow_session"))
  vim.cmd("AgentdPrompt edit it")
  h.wait_for(function()
    return idle() and h.transcript_text():find("Edited.", 1, true)
  end, "the first turn", 30000, h.report)
  h.eq(1, #asked, "asked once")
  local listed = h.stub_select(h.pick("edit_file"))
  vim.cmd("AgentdGrants")
  h.wait_for(function()
    for _, n in ipairs(h.notes) do
      if n.msg:find("agentd: revoked: Allow edit_file for this session", 1, true) then
        return true
      end
    end
  end, "the revoke", 10000, h.report)
  h.eq({ "Revoke (this session): Allow edit_file for this session" }, listed[1].labels, "the grant listed with its scope")
  -- The next edit is asked about again.
  asked = h.stub_select(pick_option("reject_once"))
  vim.cmd("AgentdPrompt again")
  h.wait_for(function()
    return idle() and h.transcript_text():find("Asked again.", 1, true)
  end, "the second turn", 30000, h.report)
  h.eq(1, #asked, "the revoked answer no longer decides: asked again")
  h.eq("2nd line", h.lines(b)[2], "the rejected edit did not land")
end)

cases.add("several live chats: a new one leaves the old one streaming, :AgentdChats goes back", function()
  local dir = project()
  local slow = string.rep("The first chat keeps talking. ", 40)
  local fm = h.fakemodel({ turns = {
    { text = slow .. "First done.", chunkDelayMs = 20, chunkSize = 30 },
    { text = "Second answer." },
    { text = "First again." },
  } })
  h.setup_agentd(fm.url, dir, { mode = "auto" })
  local agentd = require("agentd")
  vim.cmd("AgentdPrompt first chat question")
  h.wait_for(function()
    return h.transcript_text():find("The first chat keeps talking.", 1, true)
  end, "the first chat streaming", 30000, h.report)
  local first = agentd.session_id
  vim.cmd("AgentdNew")
  vim.cmd("AgentdPrompt second chat question")
  h.wait_for(function()
    return idle() and h.transcript_text():find("Second answer.", 1, true)
  end, "the second chat's answer", 30000, h.report)
  h.truthy(agentd.session_id ~= first, "a second session")
  h.eq(nil, h.transcript_text():find("first chat question", 1, true), "the chat shows the second session only")
  local asked = h.stub_select(h.pick("first chat question"))
  vim.cmd("AgentdChats")
  h.eq(2, #asked[1].labels, "both chats listed")
  h.contains(asked[1].labels[1], "second chat question", "newest first")
  h.contains(asked[1].labels[1], "(shown)", "the shown one marked")
  h.eq(first, agentd.session_id, "back on the first chat")
  h.wait_for(function()
    return idle() and h.transcript_text():find("First done.", 1, true)
  end, "the first chat's reply, streamed while it was hidden", 30000, h.report)
  vim.cmd("AgentdPrompt and again")
  h.wait_for(function()
    return idle() and h.transcript_text():find("First again.", 1, true)
  end, "a turn in the first chat", 30000, h.report)
  local reqs = fm.requests()
  h.contains(vim.json.encode(reqs[#reqs].messages), "first chat question", "the same session, history kept")
  -- Closing the shown chat shows the other one.
  vim.cmd("AgentdCloseChat")
  h.truthy(agentd.session_id and agentd.session_id ~= first, "the other live chat is shown")
  h.contains(h.transcript_text(), "Second answer.", "its transcript")
end)

cases.add("agentd asks Neovim what the user is looking at", function()
  local dir, path = project()
  local other = dir .. "/other.txt"
  h.write(other, "x\n")
  vim.cmd("edit " .. vim.fn.fnameescape(other))
  vim.cmd("edit " .. vim.fn.fnameescape(path))
  vim.api.nvim_win_set_cursor(0, { 2, 0 })
  vim.api.nvim_feedkeys("V\27", "x", false)
  local fm = h.fakemodel({ turns = { { text = "I see it." } } })
  h.setup_agentd(fm.url, dir)
  vim.cmd("AgentdChat")
  vim.cmd("AgentdPrompt what am I looking at?")
  h.wait_for(function()
    return idle() and h.transcript_text():find("I see it.", 1, true)
  end, "the turn", 30000, h.report)
  local body = vim.json.encode(fm.requests()[1].messages)
  h.contains(body, "a.txt", "the active file reached the model")
  h.contains(body, "other.txt", "the other open file too")
end)

cases.add("an MCP tool's server is named in its question and its tool line", function()
  local dir = project()
  local mcp = h.need_bin("MCPSERVER_BIN", "the MCP test server")
  local fm = h.fakemodel({ turns = {
    { toolCalls = { { name = "echo", arguments = { word = "hi" } } } },
    { text = "Echoed." },
  } })
  local settings = h.fake_settings(fm.url)
  settings.mcpServers = { { name = "hostile", command = mcp, args = {}, env = {} } }
  h.setup_agentd(fm.url, dir, { settings = settings })
  local asked = h.stub_select(pick_option("allow_once"))
  vim.cmd("AgentdPrompt echo something")
  h.wait_for(function()
    return idle() and h.transcript_text():find("Echoed.", 1, true)
  end, "the turn to end", 30000, h.report)
  h.eq(1, #asked, "the MCP call asked")
  h.contains(asked[1].prompt, "(MCP server hostile)", "the question names the server")
  h.truthy(h.transcript_text():find("%[done%] [^\n]*echo[^\n]*%(MCP hostile%)"), "the tool line names it:\n" .. h.transcript_text())
  h.contains(tool_results(fm.requests()[2]), "echo", "the result reached the model")
end)

cases.add("an MCP server's form question is answered through vim.ui and reaches the tool result", function()
  local dir = project()
  local mcp = h.need_bin("MCPSERVER_BIN", "the MCP test server")
  local fm = h.fakemodel({ turns = {
    { toolCalls = { { name = "ask", arguments = vim.empty_dict() } } },
    { text = "Deployed." },
  } })
  local settings = h.fake_settings(fm.url)
  settings.mcpServers = { { name = "deploy", command = mcp, args = { "-many", "0" }, env = {} } }
  h.setup_agentd(fm.url, dir, { settings = settings })
  -- The permission for the call, then the question: answer it, pick prod.
  local permission = pick_option("allow_once")
  local picks = { "Answer", "prod" }
  local asked = h.stub_select(function(items, labels, opts)
    if opts and opts.kind ~= "agentd.elicit" and items[1] and items[1].option then
      return permission(items)
    end
    local want = table.remove(picks, 1)
    for i, l in ipairs(labels) do
      if l == want then
        return items[i]
      end
    end
  end)
  local inputs = {}
  local inp = vim.ui.input
  h.on_cleanup(function()
    vim.ui.input = inp
  end)
  vim.ui.input = function(opts, cb)
    inputs[#inputs + 1] = opts.prompt
    cb("from nvim\27[2J")
  end
  vim.cmd("AgentdPrompt deploy it")
  h.wait_for(function()
    return idle() and h.transcript_text():find("Deployed.", 1, true)
  end, "the turn to end", 30000, h.report)
  local prompts = {}
  for _, c in ipairs(asked) do
    prompts[#prompts + 1] = tostring(c.prompt)
  end
  local all = table.concat(prompts, "\n") .. "\n" .. table.concat(inputs, "\n")
  h.contains(all, "MCP server deploy asks: Deploy where?", "the question names its server")
  h.contains(all, "Environment", "the enum field was asked")
  h.contains(all, "Note", "the text field was asked")
  h.truthy(not all:find("\27", 1, true), "no escape sequence of the server reaches a prompt:\n" .. all)
  h.eq(0, #picks, "every elicitation step was asked")
  local res = tool_results(fm.requests()[2])
  h.contains(res, 'accept {"env":"prod","note":"from nvim', "the answer reached the tool's result")
end)

cases.add("a subagent's read shows nested under its agent call, its answer as the call's result", function()
  local dir = project()
  local fm = h.fakemodel({ turns = {
    { toolCalls = { { id = "call_agent", name = "agent", arguments = { description = "read the greeting", prompt = "Read a.txt and quote it." } } } },
    { toolCalls = { { id = "call_child", name = "read_file", arguments = { path = "a.txt" } } } },
    { text = "CHILD: a.txt greets the world." },
    { text = "The explorer read it." },
  } })
  h.setup_agentd(fm.url, dir)
  vim.cmd("AgentdPrompt explore the greeting")
  h.wait_for(function()
    return idle() and h.transcript_text():find("The explorer read it.", 1, true)
  end, "the turn to end", 30000, h.report)
  local t = h.transcript_text()
  local agent_at = t:find("  [done] Agent explore: read the greeting", 1, true)
  local child_at = t:find("      ↳ [done] Read a.txt", 1, true)
  h.truthy(agent_at and child_at and agent_at < child_at, "the child's read under the agent call:\n" .. t)
  h.truthy(not t:find("CHILD: a.txt greets", 1, true), "the child's text is not the parent's reply:\n" .. t)
  h.contains(tool_results(fm.requests()[4]), "CHILD: a.txt greets the world.", "the child's answer is the agent call's result")
end)

cases.add("#buffer, #selection, #file: and @path in a chat message send that context", function()
  local dir, _, b = project()
  h.write(dir .. "/notes.md", "remember the milk\n")
  vim.api.nvim_buf_set_lines(b, -1, -1, false, { "third line" })
  vim.api.nvim_win_set_cursor(0, { 2, 0 })
  vim.api.nvim_feedkeys("Vj\27", "x", false)
  local fm = h.fakemodel({ turns = { { text = "Got it." }, { text = "Again." } } })
  h.setup_agentd(fm.url, dir)
  vim.cmd("AgentdChat")
  local chat = require("agentd.chat")
  vim.api.nvim_buf_set_lines(chat.ui.input, 0, -1, false, { "look at #buffer and #selection and @notes.md" })
  vim.api.nvim_set_current_win(chat.ui.iwin)
  vim.api.nvim_feedkeys(vim.api.nvim_replace_termcodes("<CR>", true, false, true), "x", false)
  h.wait_for(function()
    return idle() and h.transcript_text():find("Got it.", 1, true)
  end, "the turn", 30000, h.report)
  local body = vim.json.encode(fm.requests()[1].messages)
  h.contains(body, "hello unsaved world", "#buffer sent the unsaved buffer")
  h.contains(body, "second line\\nthird line", "#selection sent the selected lines")
  h.contains(body, "remember the milk", "@notes.md was read")
  h.contains(h.transcript_text(), "[a.txt, a.txt:2-3, notes.md]", "the chat names the context")
  -- A reference to nothing is refused before anything is sent.
  h.eq(false, require("agentd").prompt("see #file:nope.txt"), "refused")
  h.contains(h.errors()[#h.errors()], "#file:nope.txt: no such file", "and said why")
  h.eq(1, #fm.requests(), "nothing sent")
  -- Completion offers the files for @ and #file:.
  local words = vim.tbl_map(function(i)
    return i.word
  end, chat.complete_items("@no"))
  h.truthy(vim.tbl_contains(words, "@notes.md"), "@ completes paths: " .. vim.inspect(words))
end)

cases.add("a provider-name typo is one clear message, the chat does not stay working, the prompt is kept", function()
  local dir = project()
  local fm = h.fakemodel({ turns = { { text = "never reached" } } })
  h.setup_agentd(fm.url, dir, { settings = { provider = "fakee" } })
  -- Typed in the chat's input and sent from there.
  require("agentd").open_chat()
  local chat = require("agentd.chat")
  vim.api.nvim_buf_set_lines(chat.ui.input, 0, -1, false, { "hello", "world" })
  chat.submit()
  h.wait_for(function()
    return #h.errors() > 0 and idle()
  end, "an error and an idle chat", 30000, h.report)
  vim.wait(300)
  local errs = h.errors()
  h.eq(1, #errs, "one error message: " .. vim.inspect(errs))
  h.contains(errs[1], "fakee", "it names the unknown provider")
  h.truthy(not errs[1]:find("stack traceback", 1, true) and not errs[1]:find("%.lua:%d+:"), "no Lua stack trace: " .. errs[1])
  h.truthy(not require("agentd").status():find("working", 1, true) and not h.transcript_text():find("working…", 1, true), "the chat is not stuck at working…")
  h.eq(0, #fm.requests(), "no model request")
  h.eq({ "hello", "world" }, vim.api.nvim_buf_get_lines(chat.ui.input, 0, -1, false), "the typed prompt is back in the input")
end)

cases.add("a sandboxed program says so, an escape asks with its reason, a background program is listed and stopped", function()
  local dir = project()
  local fm = h.fakemodel({ turns = {
    { toolCalls = { { name = "run_program", arguments = { command = { "sh", "-c", "echo boxed" } } } } },
    { toolCalls = { { name = "run_program", arguments = { command = { "true" }, sandbox = false, justification = "it must reach the docker socket" } } } },
    { toolCalls = { { name = "run_program", arguments = { command = { "sleep", "300" }, background = true } } } },
    { text = "Started the server." },
  } })
  h.setup_agentd(fm.url, dir)
  local asked = h.stub_select(pick_option("allow_once"))
  vim.cmd("AgentdPrompt run things")
  h.wait_for(function()
    return idle() and h.transcript_text():find("Started the server.", 1, true)
  end, "the turn to end", 60000, h.report)
  h.eq(3, #asked, "each program asked once (ask mode)")
  h.contains(asked[1].prompt, "(sandboxed)", "the question says the program runs sandboxed")
  h.contains(asked[1].prompt, "sandboxed: writes only", "the question says what a sandboxed program may write")
  h.contains(table.concat(asked[1].labels, "\n"), "Allow sandboxed programs for this session", "the sandboxed session grant is offered")
  h.contains(asked[2].prompt, "OUTSIDE the sandbox, with your full rights", "the escalation says so")
  h.contains(asked[2].prompt, "it must reach the docker socket", "the escalation shows the model's reason")
  h.eq(nil, table.concat(asked[2].labels, "\n"):find("session", 1, true), "an escalation offers no session grant")
  local t = h.transcript_text()
  h.contains(t, "Run sh -c 'echo boxed' (sandboxed)", "the tool line says sandboxed")
  h.contains(t, "Run true (not sandboxed)", "the escaped program's line says not sandboxed")
  h.contains(t, "prog_1 running (:AgentdPrograms to stop)", "the background program is shown running")
  -- :AgentdPrograms lists it; picking it stops it, and the chat says so.
  local listed = h.stub_select(function(items)
    return items[1]
  end)
  vim.cmd("AgentdPrograms")
  h.wait_for(function()
    return #listed >= 1
  end, "the program list", 20000, h.report)
  h.contains(listed[1].labels[1], "prog_1 running  $ sleep 300  (sandboxed)", "the list shows the program, its command and its sandbox")
  h.wait_for(function()
    return h.transcript_text():find("prog_1 stopped", 1, true)
  end, "the stop to reach the chat", 20000, h.report)
end)

-- A project skill is the repository's text: its description may hold markup,
-- terminal escapes and a very long text. The / menu shows it escaped and
-- clipped, still completes, and /NAME sends it: the model loads the skill.
cases.add("a project skill is in the / menu as plain clipped text, and /NAME uses it", function()
  local dir = project()
  local long = string.rep("very long text ", 60)
  vim.fn.mkdir(dir .. "/.agents/skills/notes", "p")
  h.write(dir .. "/.agents/skills/notes/SKILL.md", '---\nname: notes\ndescription: "<img src=x onerror=alert(1)> Hide\\e[8m this \\u202e' .. long .. '"\n---\nGroup the commits by package.\n')
  local fm = h.fakemodel({ turns = {
    { text = "Hello." },
    { toolCalls = { { id = "call_skill", name = "skill", arguments = { name = "notes" } } } },
    { text = "Notes written." },
  }, title = "Skill chat" })
  h.setup_agentd(fm.url, dir)
  -- The session, and with it the commands, exists once a first prompt made it.
  vim.cmd("AgentdPrompt hi")
  h.wait_for(function()
    return idle() and h.transcript_text():find("Hello.", 1, true)
  end, "the first turn", 30000, h.report)
  require("agentd").open_chat()
  local chat = require("agentd.chat")
  local item = h.wait_for(function()
    for _, i in ipairs(chat.complete_items("/no")) do
      if i.word == "/notes " then
        return i
      end
    end
  end, "the skill in the / menu", 30000, h.report)
  -- agentd drops the escape and the bidi override (the gate every project and server string
  -- passes); the client's own escaping of what is left is render_spec's.
  h.contains(item.menu, "<img src=x onerror=alert(1)> Hide this very long", "the description as plain text, escapes gone")
  h.eq(nil, item.menu:find("[%z\1-\31\127]"), "no control character in the menu: " .. vim.inspect(item.menu))
  h.eq(nil, item.menu:find("\226\128\174", 1, true), "no bidi override in the menu")
  h.truthy(vim.fn.strchars(item.menu) <= 80 and item.menu:sub(-3) == "…", "the description clipped: " .. vim.inspect(item.menu))
  h.eq("/notes what to use it for", item.abbr, "the skill's name and hint")
  -- The menu stays usable: typed in the input window it completes to /notes.
  vim.api.nvim_set_current_win(chat.ui.iwin)
  vim.api.nvim_buf_set_lines(chat.ui.input, 0, -1, false, { "" })
  vim.api.nvim_feedkeys("i/not\14\25for v1.2\27", "xt", false)
  h.eq({ "/notes for v1.2" }, vim.api.nvim_buf_get_lines(chat.ui.input, 0, -1, false), "the menu completed the skill")
  chat.submit()
  h.wait_for(function()
    return idle() and h.transcript_text():find("Notes written.", 1, true)
  end, "the turn to end", 30000, h.report)
  local reqs = vim.tbl_filter(function(r)
    return vim.json.encode(r.messages):find("Use the skill notes", 1, true) ~= nil
  end, fm.requests())
  h.truthy(#reqs >= 2, "the skill's turn reached the model")
  local user = vim.json.encode(reqs[1].messages)
  h.contains(user, "Use the skill notes", "/notes was sent as the skill's prompt")
  h.contains(user, "for v1.2", "with its arguments")
  h.contains(h.transcript_text(), "[done] Load skill notes", "the skill tool shown as a tool call")
  h.contains(tool_results(reqs[#reqs]), "Group the commits by package.", "the model got the skill's body")
end)

return cases
