-- The chat: a per-session model fed by `agent/session/update` notifications
-- and the plugin's own events, rendered into a transcript buffer, plus an
-- input buffer where the next message is typed. Rendering is a pure function
-- of the model (`M.render`), so it can be tested without a daemon.
local config = require("agentd.config")

local M = {}

local STATUS = {
  pending = "pending",
  in_progress = "running",
  completed = "done",
  failed = "failed",
}

--- A fresh model for one session.
function M.new_model(session_id)
  return {
    session_id = session_id,
    entries = {},
    tools = {},
    queued = {},
    usage = nil,
    mode = nil,
    title = nil,
    busy = 0,
    commands = {}, -- from available_commands_update: {name, description, input?}
    steering = {}, -- steer texts sent and not yet shown, text -> count
    baseline = {}, -- path -> the file's text before the current turn changed it
    last_changes = nil, -- the last finished turn's {changes, baseline}
    config_options = {},
    rev = 0, -- bumped whenever the model changes (render cache)
  }
end

--- Starts a turn's bookkeeping: what the turn changes is compared against
--- the text each file had before the turn first touched it.
local function start_turn(model)
  model.baseline = {}
end

local function last(model)
  return model.entries[#model.entries]
end

local function text_of(content)
  if type(content) ~= "table" then
    return ""
  end
  if content.type == "text" and type(content.text) == "string" then
    return content.text
  end
  if content.type == "resource_link" then
    return "[" .. tostring(content.name or content.uri) .. "]"
  end
  if content.type == "resource" and type(content.resource) == "table" then
    return "[" .. tostring(content.resource.uri) .. "]"
  end
  if content.type == "image" then
    return "[image]"
  end
  return ""
end

local function append_stream(model, kind, update)
  local id = update.messageId
  local e = last(model)
  local delta = text_of(update.content)
  if e and e.kind == kind and (id == nil or id == vim.NIL or e.id == id) then
    e.text = e.text .. delta
  else
    table.insert(model.entries, { kind = kind, id = id, text = delta })
  end
end

--- Adds the user's prompt: shown at once when the session is idle, else
--- listed as queued until agentd starts it.
function M.add_prompt(model, text)
  if model.busy > 0 then
    table.insert(model.queued, text)
  else
    start_turn(model)
    table.insert(model.entries, { kind = "user", text = text })
  end
  model.busy = model.busy + 1
end

--- Records the end of a prompt request.
function M.prompt_done(model, err, result)
  model.busy = math.max(0, model.busy - 1)
  if err then
    table.insert(model.entries, { kind = "notice", severity = "error", title = "prompt failed", description = err.message or tostring(err) })
    return
  end
  result = type(result) == "table" and result or {}
  local meta = type(result._meta) == "table" and result._meta or {}
  local aerr = meta["agentd/error"]
  if type(aerr) == "table" then
    table.insert(model.entries, { kind = "notice", severity = "error", title = tostring(aerr.kind or "error"), description = aerr.message })
  end
  local changes = meta["agentd/changes"]
  if type(changes) == "table" and #changes > 0 then
    local list = {}
    for _, c in ipairs(changes) do
      if type(c) == "table" and type(c.path) == "string" then
        list[#list + 1] = c
      end
    end
    if #list > 0 then
      model.last_changes = { changes = list, baseline = model.baseline }
      table.insert(model.entries, { kind = "changes", changes = list })
    end
  end
  local stop = result.stopReason
  if stop and stop ~= "end_turn" then
    table.insert(model.entries, { kind = "stop", reason = stop })
  end
  if stop == "cancelled" then
    -- Prompts queued behind a cancelled turn are answered cancelled too.
    model.queued = {}
  end
end

-- The agent call a subagent's tool call runs under (_meta["agentd/parentToolCallId"]).
local function parent_of(update)
  local meta = type(update._meta) == "table" and update._meta or nil
  local p = meta and meta["agentd/parentToolCallId"]
  return type(p) == "string" and p ~= "" and p or nil
end

local function tool_entry(model, update)
  local id = update.toolCallId
  local e = id and model.tools[id]
  if not e then
    e = { kind = "tool", id = id, status = "pending", title = "tool call", parent = parent_of(update) }
    if id then
      model.tools[id] = e
    end
    local p = e.parent and model.tools[e.parent]
    local at
    if p then
      -- Nested: after the agent call and the children it already has.
      for i, x in ipairs(model.entries) do
        if x == p then
          at = i + 1
        end
      end
      while at and model.entries[at] and model.entries[at].parent == e.parent do
        at = at + 1
      end
    end
    table.insert(model.entries, at or (#model.entries + 1), e)
  end
  return e
end

local function tool_update(e, update, model)
  if type(update.title) == "string" and update.title ~= "" then
    e.title = update.title
  end
  if type(update.status) == "string" then
    e.status = update.status
  end
  if type(update.kind) == "string" then
    e.tool_kind = update.kind
  end
  if type(update.content) == "table" then
    local out = {}
    for _, c in ipairs(update.content) do
      if type(c) == "table" and c.type == "diff" then
        e.diff = c
        if model and type(c.path) == "string" and model.baseline[c.path] == nil then
          local old = c.oldText
          model.baseline[c.path] = (type(old) == "string") and old or ""
        end
      elseif type(c) == "table" and c.type == "content" and type(c.content) == "table" and type(c.content.text) == "string" then
        out[#out + 1] = c.content.text
      end
    end
    if #out > 0 then
      e.output = table.concat(out, "\n")
    end
  end
  local meta = type(update._meta) == "table" and update._meta or nil
  if meta and type(meta["agentd/mcpServer"]) == "string" and meta["agentd/mcpServer"] ~= "" then
    e.mcp_server = meta["agentd/mcpServer"]
  end
  if meta and type(meta["agentd/sandbox"]) == "table" then
    e.sandboxed = meta["agentd/sandbox"].applied == true
  end
  if update.rawOutput ~= nil and update.rawOutput ~= vim.NIL then
    e.raw_output = update.rawOutput
    -- A background program (run_program {background: true}) runs on after its call.
    if type(update.rawOutput) == "table" and type(update.rawOutput.programId) == "string" and not e.program then
      e.program = { id = update.rawOutput.programId, state = "running" }
    end
  end
  -- agentd says on the starting call when a background program ends.
  local prog = meta and meta["agentd/program"]
  if type(prog) == "table" and type(prog.programId) == "string" then
    e.program = { id = prog.programId, state = tostring(prog.state), exit = tonumber(prog.exitCode) }
  end
  if type(update.locations) == "table" then
    for _, l in ipairs(update.locations) do
      if type(l) == "table" and type(l.path) == "string" then
        e.location = { path = l.path, line = tonumber(l.line) }
        break
      end
    end
  end
  if not e.location and type(e.diff) == "table" and type(e.diff.path) == "string" then
    e.location = { path = e.diff.path }
  end
end

--- Applies one `agent/session/update` payload to the model. Returns true
--- when the model changed.
function M.apply(model, update)
  if type(update) ~= "table" then
    return false
  end
  local kind = update.sessionUpdate
  if kind == "agent_message_chunk" then
    append_stream(model, "agent", update)
  elseif kind == "agent_thought_chunk" then
    append_stream(model, "thought", update)
  elseif kind == "user_message_chunk" then
    local text = text_of(update.content)
    local e = last(model)
    if (model.steering[text] or 0) > 0 then
      -- A steer the user sent reached the running turn.
      model.steering[text] = model.steering[text] - 1
      table.insert(model.entries, { kind = "user", id = update.messageId, text = text, steer = true })
    elseif e and e.kind == "user" and e.id ~= nil and e.id == update.messageId then
      e.text = e.text .. text
    elseif #model.queued > 0 then
      -- A queued prompt has started.
      table.remove(model.queued, 1)
      start_turn(model)
      table.insert(model.entries, { kind = "user", id = update.messageId, text = text })
    else
      local e = last(model)
      if e and e.kind == "user" and (e.id == update.messageId and e.id ~= nil) then
        e.text = e.text .. text
      elseif not (e and e.kind == "user" and e.id == nil and e.text == text) then
        table.insert(model.entries, { kind = "user", id = update.messageId, text = text })
      else
        e.id = update.messageId
      end
    end
  elseif kind == "tool_call" or kind == "tool_call_update" then
    tool_update(tool_entry(model, update), update, model)
  elseif kind == "plan" then
    local e = model.plan_entry
    if not e then
      e = { kind = "plan" }
      model.plan_entry = e
      table.insert(model.entries, e)
    end
    e.items = type(update.entries) == "table" and update.entries or {}
  elseif kind == "usage_update" then
    -- A cancelled or failed call reports no context; keep the last known.
    if not (update.used == 0 and model.usage and (model.usage.used or 0) > 0) then
      model.usage = { used = update.used, size = update.size, cost = update.cost }
    end
  elseif kind == "current_mode_update" then
    model.mode = update.modeId or update.currentModeId
  elseif kind == "config_option_update" then
    M.set_config_options(model, update.configOptions)
  elseif kind == "session_info_update" then
    if type(update.title) == "string" then
      model.title = update.title
    end
  elseif kind == "notice" then
    table.insert(model.entries, {
      kind = "notice",
      severity = update.severity or "info",
      title = update.title or "",
      description = update.description,
    })
  elseif kind == "available_commands_update" then
    model.commands = {}
    for _, c in ipairs(type(update.availableCommands) == "table" and update.availableCommands or {}) do
      if type(c) == "table" and type(c.name) == "string" then
        model.commands[#model.commands + 1] = c
      end
    end
    return true
  elseif kind == "compaction_update" then
    if update.status == "completed" or update.status == "done" then
      table.insert(model.entries, { kind = "notice", severity = "info", title = "conversation compacted" })
    end
  else
    return false
  end
  return true
end

--- Reads the current mode out of a configOptions list.
function M.set_config_options(model, options)
  if type(options) ~= "table" or not model then
    return
  end
  model.config_options = options
  model.rev = (model.rev or 0) + 1
  for _, o in ipairs(options) do
    if type(o) == "table" and (o.id == "mode" or o.category == "mode") and o.currentValue ~= nil then
      model.mode = o.currentValue
    end
  end
end

--- Adds a permission request to the transcript so its diff is visible
--- while the user decides; returns the entry to record the decision on.
function M.add_permission(model, tool_call)
  local e = { kind = "permission", title = (tool_call and tool_call.title) or "tool call", diffs = {}, saves = {} }
  if tool_call and type(tool_call.content) == "table" then
    for _, c in ipairs(tool_call.content) do
      if type(c) == "table" and c.type == "diff" then
        table.insert(e.diffs, c)
      end
    end
  end
  local raw = tool_call and type(tool_call.rawInput) == "table" and tool_call.rawInput or {}
  -- agentd sends a program's command as an argv list.
  if type(raw.command) == "table" then
    e.command = M.quote_argv(raw.command)
  elseif type(raw.command) == "string" then
    e.command = M.visible(raw.command)
  end
  if e.command and type(raw.cwd) == "string" then
    e.cwd = raw.cwd
  end
  -- The environment, standard input and headers a program or server gets are
  -- part of what is approved: a hidden LD_PRELOAD or a script on stdin must
  -- be seen. Shown sorted, one per line, escaped like the command.
  local function pairs_of(t)
    local out = {}
    if type(t) == "table" then
      for k, v in pairs(t) do
        if type(k) == "string" then
          out[#out + 1] = M.visible(k) .. "=" .. M.visible(type(v) == "string" and v or vim.inspect(v))
        end
      end
    end
    table.sort(out)
    return out
  end
  e.env = pairs_of(raw.env)
  e.headers = pairs_of(raw.headers)
  if type(raw.stdin) == "string" and raw.stdin ~= "" then
    e.stdin = raw.stdin
  end
  local meta = tool_call and type(tool_call._meta) == "table" and tool_call._meta or {}
  if type(meta["agentd/mcpServer"]) == "string" and meta["agentd/mcpServer"] ~= "" then
    e.mcp_server = meta["agentd/mcpServer"]
  end
  if type(meta["agentd/sandbox"]) == "table" then
    e.sandbox = meta["agentd/sandbox"]
  end
  -- run_program {sandbox: false, justification}: the escalation question.
  if raw.sandbox == false then
    e.escape = M.visible(type(raw.justification) == "string" and raw.justification or "(none given)")
  end
  if type(meta["agentd/saves"]) == "table" then
    for _, f in ipairs(meta["agentd/saves"]) do
      if type(f) == "table" and type(f.path) == "string" then
        table.insert(e.saves, { path = f.path, user_changes = f.userChanges == true })
      end
    end
  end
  table.insert(model.entries, e)
  return e
end

--- A background program's state: "prog_1 running (:AgentdPrograms to stop)",
--- "prog_1 exited 0", "prog_1 stopped".
function M.program_state(p)
  local s = M.visible(p.id) .. " " .. M.visible(p.state)
  if p.state == "running" then
    return s .. " (:AgentdPrograms to stop)"
  end
  if p.state == "exited" and p.exit then
    s = s .. " " .. tostring(p.exit)
  end
  return s
end

--- What the sandbox means for a program's question, or nil: sandboxed (what
--- it may write, whether it has the network), or outside the sandbox with the
--- model's reason.
function M.sandbox_line(e)
  if e.escape then
    return "OUTSIDE the sandbox, with your full rights. The model's reason: " .. e.escape
  end
  if e.sandbox == nil then
    return nil
  end
  if e.sandbox.applied ~= true then
    return "not sandboxed: it runs with your full rights"
  end
  local w = {}
  for _, p in ipairs(type(e.sandbox.writable) == "table" and e.sandbox.writable or {}) do
    w[#w + 1] = M.display_path(tostring(p))
  end
  return "sandboxed: writes only " .. M.visible(table.concat(w, ", ")) .. (e.sandbox.network == true and "; network on" or "; no network")
end

--- One line for a file saved before a program: its path, and a mark when the
--- buffer also holds the user's own unsaved changes.
function M.save_line(f)
  return M.visible(f.path) .. (f.user_changes and " (also holds your unsaved changes)" or "")
end

local function split(text)
  return vim.split(text or "", "\n", true)
end

-- A diff side's text; a new file's oldText is JSON null.
local function side(text)
  if text == vim.NIL or text == nil then
    return ""
  end
  return text
end

--- Unified diff lines of one ACP diff block.
function M.diff_lines(d)
  local out = {}
  local ok, diff = pcall(vim.diff, side(d.oldText), side(d.newText), { result_type = "unified", ctxlen = 2 })
  if ok and type(diff) == "string" then
    for _, l in ipairs(split(diff)) do
      if l ~= "" then
        out[#out + 1] = l
      end
    end
  end
  return out
end

--- A model- or server-derived string (a title, a command, a path) made safe
--- for one transcript line: C0/C1 controls, DEL, newlines and the bidi
--- marks, embeddings, overrides and isolates are written as visible escapes
--- (\n, \x1b, \u202e), so a model cannot hide or reorder text.
function M.visible(s)
  s = tostring(s == nil and "" or s)
  s = s:gsub("[%z\1-\31\127]", function(c)
    if c == "\n" then
      return "\\n"
    elseif c == "\t" then
      return "\\t"
    end
    return string.format("\\x%02x", c:byte())
  end)
  -- C1 controls U+0080..U+009F are \xC2\x80..\xC2\x9F in UTF-8.
  s = s:gsub("\194([\128-\159])", function(c)
    return string.format("\\x%02x", c:byte())
  end)
  -- U+200E/F, U+202A..U+202E, U+2066..U+2069.
  s = s:gsub("\226\128([\142\143\170-\174])", function(c)
    return string.format("\\u%04x", 0x2000 + c:byte() - 128)
  end)
  s = s:gsub("\226\129([\166-\169])", function(c)
    return string.format("\\u%04x", 0x2040 + c:byte() - 128)
  end)
  return s
end

--- An argv list as a shell would need it typed: plain words bare, others in
--- single quotes, words with hiding characters as $'...' with escapes.
function M.quote_argv(argv)
  local out = {}
  for _, a in ipairs(argv) do
    a = tostring(a)
    if a ~= "" and not a:find("[^%w_@%%+=:,./%-]") then
      out[#out + 1] = a
    elseif M.visible(a) ~= a then
      out[#out + 1] = "$'" .. M.visible((a:gsub("[\\']", "\\%0"))) .. "'"
    else
      out[#out + 1] = "'" .. a:gsub("'", "'\\''") .. "'"
    end
  end
  return table.concat(out, " ")
end

--- s cut to at most n characters (not bytes: a multibyte character is never
--- split), with "…" where it was cut.
function M.clip(s, n)
  if vim.fn.strchars(s) <= n then
    return s
  end
  return vim.fn.strcharpart(s, 0, n - 1) .. "…"
end

local function short(s, n)
  s = M.visible(s)
  if #s > n then
    return s:sub(1, n - 1) .. "…"
  end
  return s
end

--- Why a finished tool call failed or how it ended, in a few words, from its
--- rawOutput (a program's exit, a timeout, a denial, an error).
function M.status_reason(e)
  local raw = e.raw_output
  if type(raw) == "string" and raw ~= "" then
    return raw
  end
  if type(raw) == "table" then
    if raw.denied == true then
      return "denied" .. ((type(raw.reason) == "string" and raw.reason ~= "") and (": " .. raw.reason) or "")
    end
    if raw.timedOut == true then
      local ms = tonumber(raw.durationMs)
      return ms and string.format("timed out after %d s", math.floor(ms / 1000 + 0.5)) or "timed out"
    end
    if raw.cancelled == true then
      return "cancelled"
    end
    if type(raw.error) == "string" and raw.error ~= "" then
      return raw.error
    end
    if tonumber(raw.exitCode) and tonumber(raw.exitCode) ~= 0 then
      return "exit code " .. raw.exitCode
    end
  end
  if e.status == "failed" and type(e.output) == "string" then
    -- The last bracketed note of the output says how it ended.
    local note
    for l in e.output:gmatch("[^\n]+") do
      if l:match("^%[.*%]$") then
        note = l:sub(2, -2)
      end
    end
    return note
  end
  return nil
end

-- Lines of a diff block, computed once per block.
local function cached_diff_lines(d)
  if not d._lines then
    d._lines = M.diff_lines(d)
  end
  return d._lines
end

--- A path as the user thinks of it: relative to the session's directory
--- when inside it.
function M.display_path(path)
  local root = config.cwd()
  if path:sub(1, #root + 1) == root .. "/" then
    return path:sub(#root + 2)
  end
  return vim.fn.fnamemodify(path, ":~")
end

--- A change's one-line summary: "modified a.txt +3 -1".
function M.change_line(c)
  local l = tostring(c.change or "changed") .. " " .. M.visible(M.display_path(c.path))
  if type(c.from) == "string" then
    l = l .. " (from " .. M.visible(M.display_path(c.from)) .. ")"
  end
  if tonumber(c.added) or tonumber(c.removed) then
    l = l .. string.format(" +%d -%d", tonumber(c.added) or 0, tonumber(c.removed) or 0)
  end
  return l
end

local cached_entry_lines

-- The lines of one entry. fold is true when it should fold (a finished
-- thought); target is the {path, line} its first line opens.
local function entry_lines(model, e, prev, is_last)
  local out = {}
  local function add(l)
    out[#out + 1] = l
  end
  local fold, target = false, nil
  if e.kind == "user" then
    add("")
    for i, l in ipairs(split(e.text)) do
      add((i == 1 and e.steer) and ("> (steer) " .. l) or ("> " .. l))
    end
    add("")
  elseif e.kind == "agent" then
    if prev and prev ~= "user" and prev ~= "agent" then
      add("")
    end
    for _, l in ipairs(split(e.text)) do
      add(l)
    end
  elseif e.kind == "thought" then
    add("▸ Thinking")
    for _, l in ipairs(split(e.text)) do
      add("  │ " .. l)
    end
    -- Thinking still streaming stays open; it folds once the reply goes on.
    fold = not (is_last and model.busy > 0)
  elseif e.kind == "tool" then
    -- A subagent's call sits under its agent call.
    local indent = e.parent and "      ↳ " or "  "
    local line = string.format("%s[%s] %s", indent, STATUS[e.status] or M.visible(e.status), M.visible(e.title))
    if e.mcp_server then
      line = line .. " (MCP " .. M.visible(e.mcp_server) .. ")"
    end
    if e.sandboxed ~= nil then
      line = line .. (e.sandboxed and " (sandboxed)" or " (not sandboxed)")
    end
    if e.program then
      line = line .. " · " .. M.program_state(e.program)
    end
    if e.status == "failed" or e.status == "completed" then
      local why = M.status_reason(e)
      if why and (e.status == "failed" or why:find("exit code", 1, true)) then
        line = line .. ": " .. short(why, 80)
      end
    end
    if type(e.output) == "string" and e.output ~= "" and not e.expanded then
      line = line .. "  ⏎ output"
    end
    add(line)
    if e.expanded and type(e.output) == "string" then
      for _, l in ipairs(split(e.output)) do
        add((e.parent and "          │ " or "    │ ") .. M.visible(l))
      end
    end
    target = e.location
  elseif e.kind == "permission" then
    local title = M.visible(e.title)
    if e.mcp_server then
      title = title .. " (MCP server " .. M.visible(e.mcp_server) .. ")"
    end
    add("  ? permission: " .. title .. (e.decision and (" → " .. M.visible(e.decision)) or ""))
    if not e.decision then
      local sb = M.sandbox_line(e)
      if sb then
        add("    " .. sb)
      end
      if e.command then
        add("    $ " .. e.command)
        if e.cwd then
          add("    in " .. M.visible(e.cwd))
        end
      end
      if e.saves and #e.saves > 0 then
        add("    saves first:")
        for _, f in ipairs(e.saves) do
          add("      " .. M.save_line(f))
        end
      end
      for _, d in ipairs(e.diffs) do
        add("    diff " .. M.visible(type(d.path) == "string" and M.display_path(d.path) or d.path))
        for _, l in ipairs(cached_diff_lines(d)) do
          add("    " .. l)
        end
      end
    end
  elseif e.kind == "changes" then
    local n = #e.changes
    add(string.format("Changed %d file%s (unsaved in buffers; :AgentdChanges to review, :wall to save):", n, n == 1 and "" or "s"))
    for _, c in ipairs(e.changes) do
      add("  " .. M.change_line(c))
    end
  elseif e.kind == "plan" then
    add("Plan:")
    for _, item in ipairs(e.items or {}) do
      local mark = item.status == "completed" and "[x]" or item.status == "in_progress" and "[~]" or "[ ]"
      add("  " .. mark .. " " .. short(item.content, 200))
    end
  elseif e.kind == "notice" then
    local sev = e.severity == "error" and "error" or e.severity == "warning" and "warning" or "info"
    local l = "! " .. sev .. ": " .. M.visible(e.title)
    if e.description and e.description ~= vim.NIL and e.description ~= "" then
      -- Whole: a notice may say how to fix something (a path, a setting).
      l = l .. " — " .. M.visible(e.description)
    end
    add(l)
  elseif e.kind == "stop" then
    add("(turn ended: " .. tostring(e.reason) .. ")")
  end
  return out, fold, target
end

-- What an entry's lines depend on, as one value that changes when they may:
-- text entries by their text (Lua strings compare by identity), a tool line
-- by its fields. nil: not cached.
local function cache_key(e, prev, is_last, model)
  local k = e.kind
  if k == "agent" then
    return e.text, prev
  elseif k == "user" then
    return e.text, e.steer
  elseif k == "thought" then
    return e.text, not (is_last and model.busy > 0)
  elseif k == "tool" then
    return table.concat({ tostring(e.status), tostring(e.title), tostring(e.raw_output), tostring(e.expanded),
      tostring(e.output and #e.output), tostring(e.mcp_server), tostring(e.location), tostring(e.parent), tostring(e.sandboxed),
      e.program and (e.program.state .. tostring(e.program.exit)) or "" }, "\0"), nil
  end
  return nil
end

-- entry_lines, remembered on the entry while its key stays the same, so a
-- streamed chunk re-renders one entry, not the whole transcript.
cached_entry_lines = function(model, e, prev, is_last)
  local k1, k2 = cache_key(e, prev, is_last, model)
  local c = e._render
  if k1 ~= nil and c and c.k1 == k1 and c.k2 == k2 then
    return c.lines, c.fold, c.target
  end
  local lines, fold, target = entry_lines(model, e, prev, is_last)
  if k1 ~= nil then
    e._render = { k1 = k1, k2 = k2, lines = lines, fold = fold, target = target }
  end
  return lines, fold, target
end

--- Renders the model into lines. Returns lines, a list of {first, last}
--- 1-based line ranges to fold (finished thinking), a map from line number
--- to the {path, line} a tool call touched, and a map from line number to
--- the entry it shows.
function M.render(model)
  local lines, folds, targets, owners = {}, {}, {}, {}
  local n = 0
  local function add(l)
    n = n + 1
    lines[n] = l
  end
  local header = "agentd"
  if model.title then
    header = header .. " · " .. M.visible(model.title)
  end
  if model.mode then
    header = header .. " · mode: " .. model.mode
  end
  add(header)
  local prev
  local count = #model.entries
  for i, e in ipairs(model.entries) do
    local first = n + 1
    local ls, fold, target = cached_entry_lines(model, e, prev, i == count)
    for _, l in ipairs(ls) do
      add(l)
      owners[n] = e
    end
    if fold and n >= first then
      folds[#folds + 1] = { first, n, entry = e }
    end
    if target and n >= first then
      -- The tool line itself (a user entry starts with a blank line).
      targets[first] = target
    end
    prev = e.kind
  end
  if #model.queued > 0 then
    add("")
    add("Queued:")
    for i, q in ipairs(model.queued) do
      add(string.format("  %d. %s", i, short(q, 200)))
    end
  end
  local status = {}
  if model.busy > 0 then
    status[#status + 1] = "working…"
  end
  local u = M.usage_text(model)
  if u then
    status[#status + 1] = u
  end
  if #status > 0 then
    add("")
    add("── " .. table.concat(status, " · "))
  end
  return lines, folds, targets, owners
end

--- A usage_update's cost {amount, currency} as "0.0123 USD" (to a millionth, no
--- trailing zeros), or nil when agentd sent none (the model's price is unknown).
function M.cost_text(cost)
  if type(cost) ~= "table" or type(cost.amount) ~= "number" or cost.amount ~= cost.amount then
    return nil
  end
  local s = string.format("%.6f", cost.amount):gsub("0+$", ""):gsub("%.$", "")
  local cur = type(cost.currency) == "string" and cost.currency:gsub("[%c]", "") or "USD"
  return s .. " " .. cur
end

--- "usage: 1200/200000 tokens · 0.01 USD", or nil before the first call.
function M.usage_text(model)
  if not (model.usage and type(model.usage.used) == "number") then
    return nil
  end
  local u = "usage: " .. model.usage.used
  if type(model.usage.size) == "number" then
    u = u .. "/" .. model.usage.size
  end
  u = u .. " tokens"
  local cost = M.cost_text(model.usage.cost)
  if cost then
    u = u .. " · " .. cost
  end
  return u
end

-- Windows and buffers ---------------------------------------------------------

M.ui = { transcript = nil, input = nil, twin = nil, iwin = nil, model = nil, on_send = nil, on_stop = nil, on_steer = nil, on_edit = nil }

local function valid_buf(b)
  return b ~= nil and vim.api.nvim_buf_is_valid(b)
end

local function valid_win(w)
  return w ~= nil and vim.api.nvim_win_is_valid(w)
end

local function scratch(name, modifiable)
  local b = vim.api.nvim_create_buf(false, true)
  vim.bo[b].buftype = "nofile"
  vim.bo[b].bufhidden = "hide"
  vim.bo[b].swapfile = false
  vim.bo[b].modifiable = modifiable
  pcall(vim.api.nvim_buf_set_name, b, name)
  return b
end

local function map(b, mode, lhs, fn, desc)
  if lhs then
    vim.keymap.set(mode, lhs, fn, { buffer = b, nowait = true, silent = true, desc = desc })
  end
end

--- The window the user last edited in: the first window of the tab that is
--- not the chat's (nor a float), or nil.
function M.editing_window()
  local ui = M.ui
  local prev = vim.fn.win_getid(vim.fn.winnr("#"))
  local function ok(w)
    return valid_win(w) and w ~= ui.twin and w ~= ui.iwin and vim.api.nvim_win_get_config(w).relative == ""
      and vim.bo[vim.api.nvim_win_get_buf(w)].buftype == ""
  end
  if ui.last_edit_win and ok(ui.last_edit_win) then
    return ui.last_edit_win
  end
  if ok(prev) then
    return prev
  end
  for _, w in ipairs(vim.api.nvim_tabpage_list_wins(0)) do
    if ok(w) then
      return w
    end
  end
  return nil
end

--- Shows buffer b in a window outside the chat: the one already showing it,
--- else the editing window, else a new split. A window holding unsaved
--- changes that cannot be hidden ('nohidden') is left alone: the buffer
--- opens in a split beside it. Returns the window.
function M.show_buffer(b)
  local ui = M.ui
  for _, w in ipairs(vim.api.nvim_tabpage_list_wins(0)) do
    if w ~= ui.twin and w ~= ui.iwin and vim.api.nvim_win_get_buf(w) == b then
      vim.api.nvim_set_current_win(w)
      return w
    end
  end
  local target = M.editing_window()
  if target then
    vim.api.nvim_set_current_win(target)
    if pcall(vim.api.nvim_win_set_buf, target, b) then
      return target
    end
    vim.cmd("split")
  else
    if valid_win(ui.twin) then
      vim.api.nvim_set_current_win(ui.twin)
    end
    vim.cmd("topleft vsplit")
  end
  local w = vim.api.nvim_get_current_win()
  vim.api.nvim_win_set_buf(w, b)
  return w
end

--- The buffer of path, loaded (created from the disk when not open).
function M.file_buffer(path)
  local b = require("agentd.buffers").find(path)
  if b then
    return b
  end
  b = vim.fn.bufadd(path)
  vim.fn.bufload(b)
  vim.bo[b].buflisted = true
  return b
end

--- Opens the file a tool call on transcript line lnum touched, in a window
--- outside the chat, or, on a tool line with output, shows or hides that
--- output. Returns true when there was something to do.
function M.open_target(lnum)
  local ui = M.ui
  local t = ui.targets and ui.targets[lnum]
  if not t then
    return M.toggle_output(lnum)
  end
  local ok, err = pcall(function()
    M.show_buffer(M.file_buffer(t.path))
    if t.line then
      pcall(vim.api.nvim_win_set_cursor, 0, { math.max(1, t.line), 0 })
    end
  end)
  if not ok then
    vim.notify("agentd: could not open " .. tostring(t.path) .. ": " .. tostring(err), vim.log.levels.ERROR)
  end
  return true
end

--- Edits the prompt on transcript line lnum: back to before its turn (the
--- files too, if the user says so) with its text in the input to send again.
function M.edit_prompt(lnum)
  local ui = M.ui
  local e = ui.owners and ui.owners[lnum]
  if not (e and e.kind == "user" and type(e.text) == "string") then
    vim.notify("agentd: put the cursor on a prompt (a line starting with >) to edit it", vim.log.levels.INFO, { title = "agentd" })
    return
  end
  if ui.on_edit then
    ui.on_edit(e.text)
  end
end

--- Shows or hides the output of the tool call on transcript line lnum.
function M.toggle_output(lnum)
  local ui = M.ui
  local e = ui.owners and ui.owners[lnum]
  if not (e and e.kind == "tool" and type(e.output) == "string" and e.output ~= "") then
    return false
  end
  e.expanded = not e.expanded
  M.render_now()
  return true
end

-- Completion in the input window --------------------------------------------

-- Files and directories completing base, relative to the session's
-- directory (as #file: and @ paths are read) unless base is absolute.
local function complete_paths(base)
  if base:sub(1, 1) == "/" or base:sub(1, 1) == "~" then
    return vim.fn.getcompletion(base, "file")
  end
  local root = config.cwd() .. "/"
  local out = {}
  for _, f in ipairs(vim.fn.getcompletion(root .. base, "file")) do
    out[#out + 1] = f:sub(1, #root) == root and f:sub(#root + 1) or f
  end
  return out
end

--- Completion items for base at the start of the input: `/` commands from
--- the session's available_commands_update, `#buffer` `#selection`
--- `#file:`, and `@` paths.
function M.complete_items(base)
  local items = {}
  local model = M.ui.model
  if base:sub(1, 1) == "/" then
    for _, c in ipairs(model and model.commands or {}) do
      local word = "/" .. c.name
      if word:sub(1, #base) == base then
        local hint = type(c.input) == "table" and type(c.input.hint) == "string" and (" " .. c.input.hint) or ""
        -- A skill's or a server's description is the repository's text: escaped,
        -- and clipped so that a long one cannot push the menu off the screen.
        items[#items + 1] = { word = word .. " ", abbr = M.clip(M.visible(word .. hint), 60), menu = M.clip(M.visible(c.description or ""), 80), kind = "cmd" }
      end
    end
  elseif base:sub(1, 1) == "#" then
    for _, w in ipairs({ "#buffer", "#selection", "#file:" }) do
      if w:sub(1, #base) == base then
        items[#items + 1] = { word = w, menu = "agentd context", kind = "ctx" }
      end
    end
    if base:sub(1, 6) == "#file:" then
      for _, f in ipairs(complete_paths(base:sub(7))) do
        items[#items + 1] = { word = "#file:" .. f, kind = "file" }
      end
    end
  elseif base:sub(1, 1) == "@" then
    for _, it in ipairs(require("agentd.mcp").complete(require("agentd").session_id, base)) do
      items[#items + 1] = it
    end
    for _, f in ipairs(complete_paths(base:sub(2))) do
      items[#items + 1] = { word = "@" .. f, kind = "file" }
    end
  end
  return items
end

-- The word before the cursor that completion replaces: from the last space
-- (or the line's start) up to the cursor. Returns its 0-based start column.
local function word_start(line, col)
  local s = col
  while s > 0 and not line:sub(s, s):match("%s") do
    s = s - 1
  end
  return s
end

--- 'omnifunc' of the input buffer (<C-x><C-o>).
function M.omnifunc(findstart, base)
  local line = vim.api.nvim_get_current_line()
  local col = vim.api.nvim_win_get_cursor(0)[2]
  if findstart == 1 then
    return word_start(line, col)
  end
  return M.complete_items(base)
end

_G.agentd_omnifunc = function(findstart, base)
  return M.omnifunc(findstart, base)
end

-- Opens the completion menu as soon as a `/` starts the input, or a `#`/`@`
-- starts a word (called right after the character is inserted).
function M.auto_complete()
  if vim.fn.mode() ~= "i" or vim.fn.pumvisible() == 1 then
    return
  end
  local line = vim.api.nvim_get_current_line()
  local col = vim.api.nvim_win_get_cursor(0)[2]
  local s = word_start(line, col)
  local word = line:sub(s + 1, col)
  local c = word:sub(1, 1)
  local first_line = vim.api.nvim_win_get_cursor(0)[1] == 1
  if c == "@" and #word == 1 then
    pcall(require("agentd").refresh_mcp) -- its resources are offered from the next @
  end
  if (c == "/" and s == 0 and first_line) or ((c == "#" or c == "@") and #word == 1) then
    local items = M.complete_items(word)
    if #items > 0 then
      M.complete_offering(s + 1, items)
    end
  end
end

--- Opens the menu for items at col as an offer: nothing is inserted or
--- selected until the user picks an entry, whatever the user's 'completeopt'
--- says (its default inserts the first entry, so typing "/undo" would end up
--- "/compact undo"). The user's 'completeopt' is put back when the menu
--- closes.
function M.complete_offering(col, items)
  local user = vim.o.completeopt
  local flags = {}
  for _, f in ipairs(vim.split(user, ",", true)) do
    if f ~= "" and f ~= "noinsert" and f ~= "noselect" and f ~= "menu" and f ~= "menuone" then
      flags[#flags + 1] = f
    end
  end
  vim.list_extend(flags, { "menuone", "noselect" })
  vim.o.completeopt = table.concat(flags, ",")
  local group = vim.api.nvim_create_augroup("agentd_complete_offering", { clear = true })
  vim.api.nvim_create_autocmd({ "CompleteDone", "InsertLeave" }, {
    group = group,
    once = true,
    callback = function()
      vim.o.completeopt = user
      pcall(vim.api.nvim_del_augroup_by_id, group)
    end,
  })
  vim.fn.complete(col, items)
end

local function ensure_buffers()
  local ui = M.ui
  local km = config.options.keymaps or {}
  local function stop()
    if ui.on_stop then
      ui.on_stop()
    end
  end
  if not valid_buf(ui.transcript) then
    ui.transcript = scratch("agentd://chat", false)
    vim.bo[ui.transcript].filetype = "agentd"
    map(ui.transcript, "n", km.close, function()
      M.close()
    end, "agentd: close chat")
    map(ui.transcript, "n", km.open, function()
      M.open_target(vim.api.nvim_win_get_cursor(0)[1])
    end, "agentd: open the file of this tool call, or show its output")
    map(ui.transcript, "n", km.expand, function()
      M.toggle_output(vim.api.nvim_win_get_cursor(0)[1])
    end, "agentd: show or hide this tool call's output")
    map(ui.transcript, "n", km.stop, stop, "agentd: cancel turn")
    map(ui.transcript, "n", km.edit, function()
      M.edit_prompt(vim.api.nvim_win_get_cursor(0)[1])
    end, "agentd: edit and resend the prompt under the cursor (back to before its turn)")
  end
  if not valid_buf(ui.input) then
    ui.input = scratch("agentd://input", true)
    vim.bo[ui.input].filetype = "agentd_input"
    vim.bo[ui.input].omnifunc = "v:lua.agentd_omnifunc"
    local function send()
      M.submit()
    end
    local function steer()
      M.submit(true)
    end
    map(ui.input, "n", km.send, send, "agentd: send message")
    map(ui.input, "i", km.send_insert, function()
      vim.cmd("stopinsert")
      send()
    end, "agentd: send message")
    map(ui.input, "n", km.steer, steer, "agentd: steer the running turn with this message")
    map(ui.input, "i", km.steer, function()
      vim.cmd("stopinsert")
      steer()
    end, "agentd: steer the running turn with this message")
    map(ui.input, "n", km.stop, stop, "agentd: cancel turn")
    for _, c in ipairs({ "/", "#", "@" }) do
      vim.keymap.set("i", c, c .. "<Cmd>lua require('agentd.chat').auto_complete()<CR>",
        { buffer = ui.input, silent = true, desc = "agentd: complete / commands, #context and @paths" })
    end
  end
end

--- Sends the input buffer's text as the next prompt (or, with steer, as a
--- steer of the running turn) and clears it.
function M.submit(steer)
  local ui = M.ui
  if not valid_buf(ui.input) then
    return
  end
  local text = table.concat(vim.api.nvim_buf_get_lines(ui.input, 0, -1, false), "\n")
  text = vim.trim(text)
  if text == "" then
    return
  end
  vim.api.nvim_buf_set_lines(ui.input, 0, -1, false, {})
  local fn = steer and ui.on_steer or ui.on_send
  if fn then
    fn(text)
  end
end

--- Puts text back into an empty input buffer (a prompt that could not be
--- sent), so nothing the user typed is lost.
function M.restore_input(text)
  local ui = M.ui
  if not valid_buf(ui.input) then
    return
  end
  local lines = vim.api.nvim_buf_get_lines(ui.input, 0, -1, false)
  if #lines > 1 or (lines[1] or "") ~= "" then
    return
  end
  vim.api.nvim_buf_set_lines(ui.input, 0, -1, false, vim.split(text, "\n", true))
end

function M.is_open()
  return valid_win(M.ui.twin)
end

-- Notes which thinking folds the user opened, so a re-render keeps them
-- open.
local function remember_open_folds()
  local ui = M.ui
  if not (valid_win(ui.twin) and ui.folds) then
    return
  end
  vim.api.nvim_win_call(ui.twin, function()
    for _, f in ipairs(ui.folds) do
      if f.entry and f[1] <= vim.fn.line("$") and vim.fn.foldclosed(f[1]) == -1 then
        f.entry.open = true
      end
    end
  end)
end

local function fold_key(folds)
  local parts = {}
  for i, f in ipairs(folds or {}) do
    parts[i] = f[1] .. "-" .. f[2] .. (f.entry and f.entry.open and "o" or "")
  end
  return table.concat(parts, ",")
end

local function apply_folds()
  local ui = M.ui
  if not (valid_win(ui.twin) and ui.folds) then
    return
  end
  -- Refolding is the costly part of a render: only when the folds moved.
  local key = fold_key(ui.folds)
  if ui.applied_folds == key and ui.folds_win == ui.twin then
    return
  end
  ui.applied_folds, ui.folds_win = key, ui.twin
  vim.api.nvim_win_call(ui.twin, function()
    vim.wo.foldmethod = "manual"
    vim.wo.foldenable = true
    pcall(vim.cmd, "silent! normal! zE")
    for _, f in ipairs(ui.folds) do
      pcall(vim.cmd, string.format("silent! %d,%dfold", f[1], f[2]))
      if f.entry and f.entry.open then
        pcall(vim.cmd, string.format("silent! %dfoldopen", f[1]))
      end
    end
  end)
end

-- The transcript window's width as configured, in columns.
local function chat_width()
  local opts = config.options.chat or config.defaults.chat
  local width = opts.width or 0.4
  if width < 1 then
    width = math.floor(vim.o.columns * width)
  end
  return math.max(20, width)
end

local resize_group

--- Keeps the chat at its configured width when Neovim is resized.
local function keep_width()
  if resize_group then
    return
  end
  resize_group = vim.api.nvim_create_augroup("agentd_chat_resize", { clear = true })
  vim.api.nvim_create_autocmd("VimResized", {
    group = resize_group,
    callback = function()
      M.fit()
    end,
  })
  vim.api.nvim_create_autocmd("WinEnter", {
    group = resize_group,
    callback = function()
      local w = vim.api.nvim_get_current_win()
      local ui = M.ui
      if w ~= ui.twin and w ~= ui.iwin and vim.api.nvim_win_get_config(w).relative == ""
        and vim.bo[vim.api.nvim_win_get_buf(w)].buftype == "" then
        ui.last_edit_win = w
      end
    end,
  })
end

--- Sets the chat windows back to their configured size.
function M.fit()
  local ui = M.ui
  local opts = config.options.chat or config.defaults.chat
  local pos = opts.position or "right"
  if valid_win(ui.twin) and (pos == "right" or pos == "left") then
    pcall(vim.api.nvim_win_set_width, ui.twin, chat_width())
  end
  if valid_win(ui.iwin) then
    pcall(vim.api.nvim_win_set_height, ui.iwin, opts.input_height or 5)
  end
end

--- Opens the chat windows (transcript above, input below). Focus goes to
--- the input window when focus is true.
function M.open(focus)
  ensure_buffers()
  keep_width()
  local ui = M.ui
  local opts = config.options.chat or config.defaults.chat
  local prev = vim.api.nvim_get_current_win()
  if not valid_win(ui.twin) then
    local pos = opts.position or "right"
    if pos == "tab" then
      vim.cmd("tabnew")
      vim.api.nvim_win_set_buf(0, ui.transcript)
    else
      if pos == "bottom" then
        vim.cmd("botright split")
      elseif pos == "left" then
        vim.cmd("topleft " .. chat_width() .. "vsplit")
      else
        vim.cmd("botright " .. chat_width() .. "vsplit")
      end
      vim.api.nvim_win_set_buf(0, ui.transcript)
    end
    ui.twin = vim.api.nvim_get_current_win()
    ui.applied_folds = nil
    vim.wo[ui.twin].wrap = true
    vim.wo[ui.twin].linebreak = true
    vim.wo[ui.twin].number = false
    vim.wo[ui.twin].relativenumber = false
    vim.wo[ui.twin].foldcolumn = "0"
    vim.wo[ui.twin].winfixwidth = true
  end
  if not valid_win(ui.iwin) then
    vim.api.nvim_set_current_win(ui.twin)
    vim.cmd("belowright " .. (opts.input_height or 5) .. "split")
    ui.iwin = vim.api.nvim_get_current_win()
    vim.api.nvim_win_set_buf(ui.iwin, ui.input)
    vim.wo[ui.iwin].winfixheight = true
    vim.wo[ui.iwin].number = false
    vim.wo[ui.iwin].relativenumber = false
  end
  M.render_now()
  if focus then
    vim.api.nvim_set_current_win(ui.iwin)
  elseif valid_win(prev) then
    vim.api.nvim_set_current_win(prev)
  end
end

function M.close()
  local ui = M.ui
  for _, w in ipairs({ ui.iwin, ui.twin }) do
    if valid_win(w) and #vim.api.nvim_list_wins() > 1 then
      pcall(vim.api.nvim_win_close, w, true)
    end
  end
  ui.iwin, ui.twin = nil, nil
end

function M.toggle()
  if M.is_open() then
    M.close()
  else
    M.open(true)
  end
end

--- Renders the shown model into the transcript buffer now. Only the lines
--- from the first one that changed are written, so a streamed chunk at the
--- end of a long transcript costs a few lines, not the whole buffer.
function M.render_now()
  local ui = M.ui
  ui.scheduled = false
  if not ui.model then
    return
  end
  ensure_buffers()
  if ui.rendered_model == ui.model then
    remember_open_folds()
  else
    ui.lines = nil
  end
  ui.rendered_model = ui.model
  local ok, lines, folds, targets, owners = pcall(M.render, ui.model)
  if not ok then
    lines, folds, targets, owners = { "agentd: could not render the chat: " .. tostring(lines) }, {}, {}, {}
  end
  ui.targets = targets
  ui.folds = folds
  ui.owners = owners
  local b = ui.transcript
  local old = ui.lines
  if old and vim.api.nvim_buf_line_count(b) ~= #old then
    old = nil -- someone else wrote to the buffer
  end
  local first = 1
  if old then
    local n = math.min(#old, #lines)
    while first <= n and old[first] == lines[first] do
      first = first + 1
    end
  end
  if not old or first <= #lines or #old ~= #lines then
    local tail = {}
    for i = first, #lines do
      tail[#tail + 1] = lines[i]
    end
    vim.bo[b].modifiable = true
    vim.api.nvim_buf_set_lines(b, first - 1, -1, false, tail)
    vim.bo[b].modifiable = false
    vim.bo[b].modified = false
  end
  ui.lines = lines
  if valid_win(ui.twin) then
    apply_folds()
    if vim.api.nvim_get_current_win() ~= ui.twin then
      pcall(vim.api.nvim_win_set_cursor, ui.twin, { #lines, 0 })
    end
  end
end

--- Renders on the next tick, coalescing bursts of streamed chunks.
function M.render_soon()
  local ui = M.ui
  if ui.scheduled then
    return
  end
  ui.scheduled = true
  vim.schedule(M.render_now)
end

--- Shows model in the chat buffer.
function M.show(model)
  M.ui.model = model
  M.render_soon()
end

--- Opens a tab comparing a diff's old and new text with Neovim's diff mode.
function M.show_diff(d)
  vim.cmd("tabnew")
  local tab = vim.api.nvim_get_current_tabpage()
  local ft = ""
  if vim.filetype and vim.filetype.match and type(d.path) == "string" then
    local ok, m = pcall(vim.filetype.match, { filename = d.path })
    if not (ok and type(m) == "string") then
      ok, m = pcall(vim.filetype.match, d.path)
    end
    ft = (ok and type(m) == "string") and m or ""
  end
  local function pane(text, label)
    local b = vim.api.nvim_create_buf(false, true)
    vim.bo[b].buftype = "nofile"
    vim.bo[b].bufhidden = "wipe"
    local ls = split(text)
    if ls[#ls] == "" then
      table.remove(ls)
    end
    vim.api.nvim_buf_set_lines(b, 0, -1, false, ls)
    vim.bo[b].modifiable = false
    pcall(vim.api.nvim_buf_set_name, b, "agentd://" .. label .. "/" .. tostring(d.path))
    if type(ft) == "string" and ft ~= "" then
      vim.bo[b].filetype = ft
    end
    vim.api.nvim_win_set_buf(0, b)
    vim.cmd("diffthis")
    return b
  end
  pane(side(d.oldText), "before")
  vim.cmd("rightbelow vsplit")
  pane(side(d.newText), "after")
  vim.cmd("redraw")
  return tab
end

return M
