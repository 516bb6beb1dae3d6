-- agentd for Neovim: a thin client over Neovim's LSP client. `setup(opts)`
-- takes the options; the commands in plugin/agentd.lua call the functions
-- below. The daemon starts on first use.
local config = require("agentd.config")
local client = require("agentd.client")
local chat = require("agentd.chat")
local handlers = require("agentd.handlers")
local permission = require("agentd.permission")
local methods = require("agentd.methods")

local M = {}

-- Session state: the current session and one chat model per session seen.
M.session_id = nil
M.models = {}
-- The live chats' session ids in the order they were opened (:AgentdChats),
-- and those a crashed daemon was running (resumed when next used).
M.order = {}
M.stale = {}
M.pending = {} -- prompts typed before the session exists

local function err_notify(msg)
  vim.notify(msg, vim.log.levels.ERROR, { title = "agentd" })
end

local function model_for(id)
  if not id then
    return nil
  end
  local m = M.models[id]
  if not m then
    m = chat.new_model(id)
    M.models[id] = m
  end
  if not vim.tbl_contains(M.order, id) then
    table.insert(M.order, id)
  end
  return m
end

--- The model of the current session, or a placeholder before one exists.
function M.model()
  if M.session_id then
    return model_for(M.session_id)
  end
  M._placeholder = M._placeholder or chat.new_model(nil)
  return M._placeholder
end

local function show_current()
  chat.show(M.model())
end

-- Wraps a reverse-request handler so that a Lua error becomes a JSON-RPC
-- error, never a stack trace in the user's editor.
local function safe(fn)
  return function(_, params, ctx)
    local ok, result, rerr = pcall(fn, params, ctx)
    if not ok then
      return nil, vim.lsp.rpc.rpc_response_error(-32603, "agentd.nvim: " .. tostring(result))
    end
    return result, rerr
  end
end

--- Handlers for everything agentd sends to the editor.
function M.lsp_handlers()
  return {
    [methods.session_update] = function(_, params)
      if type(params) ~= "table" then
        return
      end
      pcall(require("agentd.mcp_auth").on_update, params)
      local ok, err = pcall(function()
        local m = model_for(params.sessionId)
        if m and chat.apply(m, params.update) and params.sessionId == M.session_id then
          chat.render_soon()
        end
      end)
      if not ok and not M._reported_update_error then
        -- A malformed update must not take the editor down; say it once.
        M._reported_update_error = true
        err_notify("agentd: could not show an update: " .. tostring(err))
      end
    end,
    [methods.infer_chunk] = function(_, params)
      pcall(require("agentd.explain").on_chunk, params)
    end,
    [methods.read_text_file] = safe(handlers.read_text_file),
    [methods.dirty_buffers] = safe(handlers.dirty_buffers),
    [methods.diagnostics] = safe(handlers.diagnostics),
    [methods.save_buffers] = safe(handlers.save_buffers),
    [methods.secrets_get] = safe(handlers.secrets_get),
    [methods.workspace_symbols] = safe(function(p, ctx)
      return handlers.workspace_symbols(p, ctx and ctx.client_id)
    end),
    [methods.editor_state] = safe(function()
      return handlers.editor_state(chat.editing_window())
    end),
    [methods.apply_edit] = safe(function(p, ctx)
      local c = ctx and vim.lsp.get_client_by_id(ctx.client_id)
      return handlers.apply_edit(p, c)
    end),
    [methods.show_document] = safe(function(p)
      return require("agentd.mcp_auth").show_document(p)
    end),
    [methods.request_permission] = safe(function(p)
      local m = type(p) == "table" and M.models[p.sessionId] or nil
      return permission.ask(p, m)
    end),
    [methods.elicitation_create] = safe(function(p)
      return require("agentd.elicit").ask(p)
    end),
  }
end

local function on_exit()
  -- A turn in flight cannot finish; mark the sessions idle.
  for _, m in pairs(M.models) do
    if m.busy > 0 then
      m.busy = 0
      m.queued = {}
      m.steering = {}
      table.insert(m.entries, { kind = "notice", severity = "error", title = "agentd stopped", description = "the daemon exited during the turn" })
    end
  end
  -- Keep the transcript on screen and the session: the next prompt
  -- restarts the daemon and resumes this session, history included; the
  -- other live chats are resumed when the user goes back to them.
  for id in pairs(M.models) do
    M.stale[id] = true
  end
  if M.session_id then
    M.resume_id = M.session_id
  end
  permission.cancel_all()
  show_current()
end

--- Calls cb(err, client) once agentd has initialized (starting it if
--- needed); err is a message when it could not start.
function M.with_client(cb)
  client.start(M.lsp_handlers(), on_exit, function(err, c)
    if err or not c then
      return cb(err or "agentd is not running")
    end
    cb(nil, c)
  end)
end

local function request(method, params, cb)
  M.with_client(function(err, c)
    if err then
      return cb({ message = err })
    end
    client.raw_request(c, method, params, function(e, result)
      cb(e, result, c)
    end)
  end)
end

local function session_params(extra)
  local p = { cwd = config.cwd(), mcpServers = {} }
  for k, v in pairs(extra or {}) do
    p[k] = v
  end
  return p
end

local function apply_mode_option(id)
  local mode = config.options.mode
  if not mode then
    return
  end
  local m = model_for(id)
  if m and m.mode == mode then
    return
  end
  request(methods.session_set_config_option, { sessionId = id, configId = "mode", value = mode }, function(err, result)
    if err then
      err_notify("agentd: could not set mode: " .. tostring(err.message or err))
      return
    end
    chat.set_config_options(model_for(id), result and result.configOptions)
    vim.notify("agentd: mode is now " .. tostring(model_for(id).mode or mode), vim.log.levels.INFO, { title = "agentd" })
    chat.render_soon()
  end)
end

--- Calls cb(session_id) once there is a session, creating one if needed,
--- or cb(nil, err) when there cannot be one.
-- Resumes the session a crashed daemon was running (M.resume_id) in a
-- fresh daemon; then(ok) says whether it could.
local function resume(then_)
  local id = M.resume_id
  request(methods.session_resume, session_params({ sessionId = id }), function(err, result)
    M.resume_id = nil
    local m = model_for(id)
    if err or type(result) ~= "table" then
      table.insert(m.entries, { kind = "notice", severity = "error", title = "could not resume the session after the restart",
        description = tostring(err and err.message or vim.inspect(result)) .. "; a new session starts without the conversation above" })
      M._placeholder = m
      M.session_id = nil
      return then_(false)
    end
    M.stale[id] = nil
    chat.set_config_options(m, result.configOptions)
    table.insert(m.entries, { kind = "notice", severity = "info", title = "agentd restarted",
      description = "this conversation continues in the same session, with its history" })
    show_current()
    then_(true)
  end)
end

function M.with_session(cb)
  if M.session_id and client.get() and not M.resume_id then
    return cb(M.session_id)
  end
  table.insert(M.pending, cb)
  if M.creating then
    return
  end
  M.creating = true
  if M.resume_id and M.resume_id == M.session_id then
    resume(function(ok)
      M.creating = false
      if ok then
        local waiting = M.pending
        M.pending = {}
        for _, w in ipairs(waiting) do
          w(M.session_id)
        end
        return
      end
      local waiting = M.pending
      M.pending = {}
      for _, w in ipairs(waiting) do
        M.with_session(w)
      end
    end)
    return
  end
  M.resume_id = nil
  request(methods.session_new, session_params(), function(err, result)
    M.creating = false
    local waiting = M.pending
    M.pending = {}
    if err or type(result) ~= "table" or type(result.sessionId) ~= "string" then
      local msg = tostring(err and err.message or vim.inspect(result))
      if client.get() then
        err_notify("agentd: could not start a session: " .. msg)
      end
      for _, w in ipairs(waiting) do
        w(nil, msg)
      end
      return
    end
    local placeholder = M._placeholder
    M._placeholder = nil
    M.session_id = result.sessionId
    local m = model_for(result.sessionId)
    if placeholder then
      m.busy = m.busy + placeholder.busy
      for _, e in ipairs(placeholder.entries) do
        table.insert(m.entries, e)
      end
    end
    chat.set_config_options(m, result.configOptions)
    if type(result.modes) == "table" and result.modes.currentModeId then
      m.mode = m.mode or result.modes.currentModeId
    end
    apply_mode_option(result.sessionId)
    show_current()
    for _, w in ipairs(waiting) do
      w(result.sessionId)
    end
  end)
end

--- A path as the user thinks of it: relative to the session's directory
--- when inside it.
function M.display_path(path)
  return chat.display_path(path)
end

-- The lines of a range of the current buffer as an ACP resource block, so
-- the agent sees the selection (unsaved text included) with its file.
local function range_block(range, b)
  b = b or vim.api.nvim_get_current_buf()
  local name = vim.api.nvim_buf_get_name(b)
  local first, last = math.min(range[1], range[2]), math.max(range[1], range[2])
  local lines = vim.api.nvim_buf_get_lines(b, first - 1, last, false)
  local uri = name ~= "" and vim.uri_from_fname(name) or ("untitled:" .. b)
  return {
    type = "resource",
    resource = {
      uri = uri .. "#L" .. first .. "-" .. last,
      text = table.concat(lines, "\n") .. "\n",
      mimeType = "text/plain",
    },
  }, string.format("%s:%d-%d", name ~= "" and M.display_path(name) or "[No Name]", first, last)
end

-- The buffer the user edits (not the chat's), for #buffer and #selection.
local function editing_buffer()
  local w = chat.editing_window()
  return w and vim.api.nvim_win_get_buf(w) or nil
end

--- The context a chat message names: `#buffer` (the buffer being edited,
--- unsaved text included), `#selection` (its last visual selection),
--- `#file:PATH` and `@PATH` (a file the agent reads through the editor).
--- Returns the extra content blocks and the names shown in the chat, or
--- nil and a message for a reference that names nothing.
function M.context_blocks(text)
  local blocks, names = {}, {}
  local seen = {}
  local function once(key)
    if seen[key] then
      return false
    end
    seen[key] = true
    return true
  end
  for word in text:gmatch("%S+") do
    if word == "#buffer" and once(word) then
      local b = editing_buffer()
      if not b then
        return nil, "#buffer: no file is being edited"
      end
      local block, where = range_block({ 1, vim.api.nvim_buf_line_count(b) }, b)
      block.resource.uri = block.resource.uri:gsub("#L.*$", "")
      blocks[#blocks + 1] = block
      names[#names + 1] = (where:gsub(":%d+%-%d+$", ""))
    elseif word == "#selection" and once(word) then
      local b = editing_buffer()
      local s = b and vim.api.nvim_buf_get_mark(b, "<")
      local e = b and vim.api.nvim_buf_get_mark(b, ">")
      if not (s and e and s[1] > 0 and e[1] > 0) then
        return nil, "#selection: select lines in a file first (v or V, then <Esc>)"
      end
      local block, where = range_block({ s[1], e[1] }, b)
      blocks[#blocks + 1] = block
      names[#names + 1] = where
    else
      local res = word:sub(1, 1) == "@" and require("agentd.mcp").resource(M.session_id, word) or nil
      local path = not res and (word:match("^#file:(.+)$") or word:match("^@([^%s]+)$")) or nil
      if res and once("r:" .. word) then
        blocks[#blocks + 1] = { type = "resource_link", uri = res.uri, name = res.name, _meta = { ["agentd/mcpServer"] = res.server } }
        names[#names + 1] = res.server .. ":" .. res.uri
      elseif path and once("f:" .. path) then
        local abs = vim.fn.fnamemodify(path, ":p")
        if path:sub(1, 1) ~= "/" and path:sub(1, 1) ~= "~" then
          abs = config.cwd() .. "/" .. path
        end
        if vim.fn.filereadable(abs) ~= 1 and not require("agentd.buffers").find(abs) then
          return nil, word .. ": no such file"
        end
        blocks[#blocks + 1] = { type = "resource_link", uri = vim.uri_from_fname(abs), name = M.display_path(abs) }
        names[#names + 1] = M.display_path(abs)
      end
    end
  end
  return blocks, names
end

--- Sends a prompt to the current session (creating it if needed). opts.range
--- = {first, last} adds those lines of the current buffer as context; the
--- text's #buffer, #selection, #file:PATH and @PATH add theirs.
function M.prompt(text, opts)
  opts = opts or {}
  if type(text) ~= "string" or vim.trim(text) == "" then
    err_notify("agentd: the prompt is empty")
    return
  end
  local typed = text
  local blocks = { { type = "text", text = text } }
  if opts.range then
    local block, where = range_block(opts.range)
    table.insert(blocks, block)
    text = text .. "\n[" .. where .. "]"
  end
  local extra, names = M.context_blocks(text)
  if not extra then
    err_notify("agentd: " .. names)
    return false
  end
  for _, bl in ipairs(extra) do
    table.insert(blocks, bl)
  end
  if #names > 0 then
    text = text .. "\n[" .. table.concat(names, ", ") .. "]"
  end
  chat.add_prompt(M.model(), text)
  show_current()
  if not chat.is_open() then
    chat.open(false)
  end
  M.with_session(function(id, err)
    if not id then
      local m = M.model()
      m.busy = 0
      m.queued = {}
      table.insert(m.entries, { kind = "notice", severity = "error", title = "agentd is not available", description = err })
      -- The prompt was never sent: it goes back into the input to send again.
      chat.restore_input(typed)
      show_current()
      return
    end
    local m = model_for(id)
    client.raw_request(client.get(), methods.session_prompt, {
      sessionId = id,
      prompt = blocks,
    }, function(perr, result)
      chat.prompt_done(m, perr, result)
      if id == M.session_id then
        chat.render_soon()
      end
    end)
  end)
  return true
end

--- Steers the running turn with text (agentd adds it at the turn's next
--- step); with no turn running, or when agentd says no turn takes it, text
--- goes as a normal prompt.
function M.steer(text)
  if type(text) ~= "string" or vim.trim(text) == "" then
    err_notify("agentd: the steer message is empty")
    return
  end
  local m = M.session_id and M.models[M.session_id]
  local c = client.get()
  if not (m and m.busy > 0 and c and not M.resume_id) then
    return M.prompt(text)
  end
  m.steering[text] = (m.steering[text] or 0) + 1
  client.raw_request(c, methods.session_steer, { sessionId = M.session_id, prompt = { { type = "text", text = text } } }, function(err, result)
    if not err and type(result) == "table" and result.accepted == true then
      return
    end
    m.steering[text] = math.max(0, (m.steering[text] or 1) - 1)
    if err then
      err_notify("agentd: could not steer: " .. tostring(err.message or err) .. "; sent as a prompt")
    end
    M.prompt(text)
  end)
  return true
end

--- Ends the current turn (and any prompts queued behind it).
function M.cancel()
  local c = client.get()
  if c and M.session_id then
    client.raw_notify(c, methods.session_cancel, { sessionId = M.session_id })
  end
  -- Then answer the turn's questions still open, as PROTOCOL.md asks (the
  -- other live chats' questions stay).
  permission.cancel_all(M.session_id)
end

--- Sets the permission mode of the current session (and of new ones).
function M.set_mode(mode)
  if not config.modes[mode] then
    err_notify(string.format("agentd: unknown mode %s (use ask, auto or plan)", vim.inspect(mode)))
    return
  end
  config.options.mode = mode
  if M.session_id and client.get() then
    apply_mode_option(M.session_id)
  end
  if not M.session_id then
    M.model().mode = mode
    vim.notify("agentd: mode is now " .. mode .. " (for the next session)", vim.log.levels.INFO, { title = "agentd" })
  end
  show_current()
end

--- Starts a fresh session and shows it.
--- Starts a new chat. The one shown until now stays live (a turn it runs
--- goes on); :AgentdChats goes back to it, :AgentdCloseChat ends it.
function M.new_session()
  M.session_id = nil
  M.resume_id = nil
  show_current()
  M.with_session(function() end)
end

--- The label of a live chat in :AgentdChats: its first prompt, whether a
--- turn runs in it, and which one is shown.
function M.fmt_chat(id)
  local m = M.models[id]
  local first
  for _, e in ipairs(m and m.entries or {}) do
    if e.kind == "user" then
      first = e.text
      break
    end
  end
  first = first and first:gsub("%s+", " ") or "(no prompt yet)"
  if #first > 60 then
    first = first:sub(1, 59) .. "…"
  end
  local tags = {}
  if m and m.busy > 0 then
    tags[#tags + 1] = "working"
  end
  if id == M.session_id then
    tags[#tags + 1] = "shown"
  end
  return chat.visible(first) .. (#tags > 0 and ("  (" .. table.concat(tags, ", ") .. ")") or "")
end

--- Shows the live chat id (one of :AgentdChats) in the chat window, as it
--- is: no reload, a running turn keeps streaming into it.
function M.switch_chat(id)
  if not M.models[id] then
    return
  end
  M.session_id = id
  -- A chat the crashed daemon was running is resumed at its next prompt.
  M.resume_id = M.stale[id] and id or nil
  if not chat.is_open() then
    chat.open(false)
  end
  show_current()
end

--- Lists the live chats (newest first) and shows the one picked.
function M.chats()
  local ids = {}
  for i = #M.order, 1, -1 do
    if M.models[M.order[i]] then
      ids[#ids + 1] = M.order[i]
    end
  end
  if #ids == 0 then
    vim.notify("agentd: no chats yet; :AgentdChat opens one", vim.log.levels.INFO, { title = "agentd" })
    return
  end
  vim.ui.select(ids, { prompt = "agentd: which chat?", kind = "agentd.chat", format_item = M.fmt_chat }, function(id)
    if id then
      M.switch_chat(id)
    end
  end)
end

--- Ends the chat shown (its session is closed; :AgentdSessions can load
--- it again) and shows the newest other live chat, if any.
function M.close_chat()
  local id = M.session_id
  if not id then
    return
  end
  local m = M.models[id]
  if m and m.busy > 0 then
    M.cancel()
  end
  if client.get() then
    client.raw_request(client.get(), methods.session_close, { sessionId = id }, function() end)
  end
  M.models[id] = nil
  M.stale[id] = nil
  M.session_id = nil
  M.resume_id = nil
  for i = #M.order, 1, -1 do
    if M.order[i] == id then
      table.remove(M.order, i)
    elseif not M.session_id and M.models[M.order[i]] then
      M.session_id = M.order[i]
      M.resume_id = M.stale[M.order[i]] and M.order[i] or nil
    end
  end
  show_current()
end

-- Seconds since the epoch of an RFC 3339 time (UTC or with an offset).
local function parse_time(t)
  local y, mo, d, h, mi, sec, rest = t:match("^(%d+)-(%d+)-(%d+)T(%d+):(%d+):(%d+)(.*)$")
  if not y then
    return nil
  end
  local days = function(yy, mm, dd)
    -- days from the civil date (Howard Hinnant's algorithm)
    yy = mm <= 2 and yy - 1 or yy
    local era = math.floor(yy / 400)
    local yoe = yy - era * 400
    local doy = math.floor((153 * (mm + (mm > 2 and -3 or 9)) + 2) / 5) + dd - 1
    local doe = yoe * 365 + math.floor(yoe / 4) - math.floor(yoe / 100) + doy
    return era * 146097 + doe - 719468
  end
  local secs = days(tonumber(y), tonumber(mo), tonumber(d)) * 86400 + tonumber(h) * 3600 + tonumber(mi) * 60 + tonumber(sec)
  local sign, oh, om = rest:match("([+-])(%d%d):?(%d%d)$")
  if sign then
    local off = tonumber(oh) * 3600 + tonumber(om) * 60
    secs = sign == "+" and secs - off or secs + off
  end
  return secs
end

--- "just now", "5 min ago", "3 h ago", "2 days ago", or the date.
function M.relative_time(t, now)
  local secs = type(t) == "string" and parse_time(t)
  if not secs then
    return nil
  end
  local ago = (now or os.time()) - secs
  if ago < 60 then
    return "just now"
  elseif ago < 3600 then
    return math.floor(ago / 60) .. " min ago"
  elseif ago < 86400 then
    return math.floor(ago / 3600) .. " h ago"
  elseif ago < 86400 * 30 then
    local n = math.floor(ago / 86400)
    return n .. (n == 1 and " day ago" or " days ago")
  end
  return t:sub(1, 10)
end

function M.fmt_session(s)
  local t = s.title
  if type(t) ~= "string" or t == "" then
    t = "untitled (" .. tostring(s.sessionId):sub(1, 8) .. ")"
  end
  t = chat.visible(t)
  local when = M.relative_time(s.updatedAt)
  if when then
    t = t .. "  · " .. when
  end
  if s.sessionId == M.session_id then
    t = t .. "  (current)"
  end
  return t
end

--- Lists this project's sessions through vim.ui.select and loads the one
--- chosen (agentd replays its history into the chat).
function M.sessions()
  request(methods.session_list, { cwd = config.cwd() }, function(err, result)
    if err then
      err_notify("agentd: could not list sessions: " .. tostring(err.message or err))
      return
    end
    local list = (type(result) == "table" and type(result.sessions) == "table") and result.sessions or {}
    if #list == 0 then
      vim.notify("agentd: no sessions yet for " .. config.cwd(), vim.log.levels.INFO)
      return
    end
    vim.ui.select(list, { prompt = "agentd sessions", format_item = M.fmt_session, kind = "agentd.session" }, function(choice)
      if choice then
        M.load(choice.sessionId)
      end
    end)
  end)
end

--- Loads a stored session by id (then adds the entry after, when given, to
--- its chat).
function M.load(id, after)
  M.resume_id = nil -- a load replaces any resume pending after a crash
  M.models[id] = chat.new_model(id)
  M.stale[id] = nil
  if not vim.tbl_contains(M.order, id) then
    table.insert(M.order, id)
  end
  local prev = M.session_id
  M.session_id = id
  show_current()
  if not chat.is_open() then
    chat.open(false)
  end
  request(methods.session_load, session_params({ sessionId = id }), function(err, result)
    if err then
      err_notify("agentd: could not load session: " .. tostring(err.message or err))
      M.session_id = prev
      show_current()
      return
    end
    chat.set_config_options(model_for(id), result and result.configOptions)
    if after then
      table.insert(model_for(id).entries, after)
    end
    show_current()
  end)
end

-- The current session's id, or nil after telling the user there is none.
local function current_session(what)
  if M.session_id and not M.resume_id then
    return M.session_id
  end
  err_notify("agentd: no session to " .. what .. " yet; send a prompt first")
  return nil
end

--- The label of a remembered answer in :AgentdGrants: what revoking it does,
--- naming its scope ("Revoke (this project): Always allow `make` in this project").
function M.fmt_grant(g)
  local scope = g.scope == "project" and "this project" or "this session"
  return "Revoke (" .. scope .. "): " .. tostring(g.label or g.tool)
end

--- Lists the remembered permission answers (this session's and its
--- project's) and revokes the one picked: the next such call asks again.
function M.grants()
  local id = current_session("list the permissions of")
  if not id then
    return
  end
  request(methods.grants_list, { sessionId = id }, function(err, result)
    if err then
      err_notify("agentd: could not list the remembered permissions: " .. tostring(err.message or err))
      return
    end
    local list = type(result) == "table" and type(result.grants) == "table" and result.grants or {}
    if #list == 0 then
      vim.notify("agentd: no remembered permissions: every change is asked about (or decided by the mode)", vim.log.levels.INFO, { title = "agentd" })
      return
    end
    vim.ui.select(list, { prompt = "agentd: revoke which remembered answer?", kind = "agentd.grant", format_item = M.fmt_grant }, function(g)
      if not g then
        return
      end
      request(methods.grants_revoke, { sessionId = id, grantId = g.grantId }, function(rerr, res)
        if rerr then
          err_notify("agentd: could not revoke: " .. tostring(rerr.message or rerr))
        elseif type(res) == "table" and res.revoked then
          vim.notify("agentd: revoked: " .. tostring(g.label) .. "; it will be asked again", vim.log.levels.INFO, { title = "agentd" })
        else
          vim.notify("agentd: already gone: " .. tostring(g.label), vim.log.levels.INFO, { title = "agentd" })
        end
      end)
    end)
  end)
end

--- Lists the session's MCP servers, their state and tools (:AgentdMcp).
function M.mcp()
  local id = current_session("list the MCP servers of")
  if not id then
    return
  end
  local mcp = require("agentd.mcp")
  mcp.fetch(request, id, function(err, servers)
    if err then
      return err_notify("agentd: listing the MCP servers failed: " .. tostring(err))
    end
    mcp.show(servers)
  end)
end

--- Refreshes, quietly, the MCP listing the @server:uri completion reads.
function M.refresh_mcp()
  if M.session_id and not M.resume_id and client.get() then
    require("agentd.mcp").fetch(request, M.session_id, function() end)
  end
end

--- Forks the current session: a new session with a copy of its history,
--- shown in the chat from then on (the source stays as it was).
function M.fork()
  local id = current_session("fork")
  if not id then
    return
  end
  request(methods.session_fork, { sessionId = id, cwd = config.cwd(), mcpServers = {} }, function(err, result)
    if err or type(result) ~= "table" or type(result.sessionId) ~= "string" then
      err_notify("agentd: could not fork the session: " .. tostring(err and err.message or vim.inspect(result)))
      return
    end
    local src = model_for(id)
    local m = model_for(result.sessionId)
    for _, e in ipairs(src.entries) do
      table.insert(m.entries, e)
    end
    m.title, m.mode, m.usage, m.commands = src.title, src.mode, src.usage, src.commands
    chat.set_config_options(m, result.configOptions or src.config_options)
    table.insert(m.entries, { kind = "notice", severity = "info", title = "forked",
      description = "this is a new session with a copy of the conversation above; :AgentdSessions goes back to the original" })
    M.session_id = result.sessionId
    show_current()
  end)
end

-- The config option with id (or category) name of the current model.
local function config_option(m, name)
  for _, o in ipairs(m and m.config_options or {}) do
    if type(o) == "table" and (o.id == name or o.category == name) then
      return o
    end
  end
  return nil
end

-- The values a select config option offers: {value, name} pairs, groups
-- flattened.
local function option_values(o)
  local out = {}
  local function walk(list)
    for _, v in ipairs(type(list) == "table" and list or {}) do
      if type(v) == "table" and v.value ~= nil then
        out[#out + 1] = v
      elseif type(v) == "table" and type(v.options) == "table" then
        walk(v.options)
      end
    end
  end
  walk(o and o.options)
  return out
end

--- The models the current session offers (its `model` config option).
function M.model_names()
  local o = config_option(M.session_id and M.models[M.session_id], "model")
  local out = {}
  for _, v in ipairs(option_values(o)) do
    out[#out + 1] = tostring(v.value)
  end
  return out
end

--- Switches the current session's model: to name, or to the one picked
--- from the session's `model` option with vim.ui.select.
function M.set_model(name)
  local id = current_session("switch the model of")
  if not id then
    return
  end
  local m = model_for(id)
  local o = config_option(m, "model")
  if not o then
    err_notify("agentd: this session offers no model choice")
    return
  end
  local function apply(value)
    request(methods.session_set_config_option, { sessionId = id, configId = o.id or "model", value = value }, function(err, result)
      if err then
        err_notify("agentd: could not switch the model: " .. tostring(err.message or err))
        return
      end
      chat.set_config_options(m, result and result.configOptions)
      vim.notify("agentd: model is now " .. tostring(value), vim.log.levels.INFO, { title = "agentd" })
      chat.render_soon()
    end)
  end
  if type(name) == "string" and name ~= "" then
    return apply(name)
  end
  local values = option_values(o)
  if #values == 0 then
    err_notify("agentd: this session lists no models")
    return
  end
  vim.ui.select(values, {
    prompt = "agentd model",
    kind = "agentd.model",
    format_item = function(v)
      local label = chat.visible(v.name or v.value)
      if v.value == o.currentValue then
        label = label .. "  (current)"
      end
      return label
    end,
  }, function(choice)
    if choice then
      apply(choice.value)
    end
  end)
end

--- Puts the changed hunks of the current session's last turn into the
--- quickfix list and opens it; see agentd.review.
function M.changes()
  local m = M.session_id and M.models[M.session_id] or M.model()
  if not (m and m.last_changes) then
    vim.notify("agentd: the last turn changed no files", vim.log.levels.INFO, { title = "agentd" })
    return nil
  end
  local items = require("agentd.review").review(m.last_changes)
  if #items == 0 then
    vim.notify("agentd: no changes left to review (kept or undone)", vim.log.levels.INFO, { title = "agentd" })
    return items
  end
  local w = vim.api.nvim_get_current_win()
  if w == chat.ui.twin or w == chat.ui.iwin then
    local ew = chat.editing_window()
    if ew then
      vim.api.nvim_set_current_win(ew)
    end
  end
  vim.cmd("botright copen")
  vim.cmd("cfirst")
  return items
end

local function fmt_checkpoint(c)
  local files = {}
  for _, f in ipairs(type(c.files) == "table" and c.files or {}) do
    files[#files + 1] = M.display_path(tostring(f.path))
  end
  local prompt = type(c.prompt) == "string" and c.prompt:gsub("%s+", " ") or ""
  if #prompt > 50 then
    prompt = prompt:sub(1, 49) .. "…"
  end
  local when = M.relative_time(c.createdAt) or ""
  return chat.visible(string.format("%s  · %s  · %s", prompt, when, table.concat(files, ", ")))
end

--- Restores a checkpoint of the current session: pick the turn with
--- vim.ui.select (or, given the text of one of its prompts, that prompt's
--- turn), then what to restore (its files, the conversation, or both); files
--- come back through workspace/applyEdit, unsaved. When the conversation goes
--- back, the turn's prompt is put in the input to edit and send again.
function M.restore(prompt_text)
  local id = current_session("restore")
  if not id then
    return
  end
  request(methods.checkpoints_list, { sessionId = id }, function(err, result)
    if err then
      err_notify("agentd: could not list checkpoints: " .. tostring(err.message or err))
      return
    end
    local list = type(result) == "table" and type(result.checkpoints) == "table" and result.checkpoints or {}
    local function chosen(cp)
      if not cp then
        return
      end
      local whats = {
        { value = "files", label = "Files only" },
        { value = "both", label = "Files and conversation" },
        { value = "conversation", label = "Conversation only" },
      }
      vim.ui.select(whats, { prompt = "agentd: restore what?", kind = "agentd.restore", format_item = function(w)
        return w.label
      end }, function(what)
        if not what then
          return
        end
        request(methods.checkpoints_restore, { sessionId = id, checkpointId = cp.checkpointId, restore = what.value }, function(rerr, res)
          local m = model_for(id)
          if rerr then
            err_notify("agentd: could not restore: " .. tostring(rerr.message or rerr))
            return
          end
          local done, failed = {}, {}
          for _, f in ipairs(type(res) == "table" and type(res.files) == "table" and res.files or {}) do
            if f.restored then
              done[#done + 1] = M.display_path(tostring(f.path))
            else
              failed[#failed + 1] = M.display_path(tostring(f.path)) .. (f.reason and (" (" .. tostring(f.reason) .. ")") or "")
            end
          end
          local desc = (#done > 0 and ("restored " .. table.concat(done, ", ")) or "no file restored")
          if #failed > 0 then
            desc = desc .. "; not restored: " .. table.concat(failed, ", ")
          end
          local entry = { kind = "notice", severity = #failed > 0 and "warning" or "info", title = "checkpoint restored", description = desc }
          if what.value ~= "files" then
            -- The history lost that turn and the later ones: show it as
            -- agentd now keeps it.
            entry.description = (what.value == "both" and (desc .. "; ") or "") .. "the conversation is back to before that turn"
            M.load(id, entry)
            if type(cp.prompt) == "string" then
              chat.restore_input(cp.prompt)
            end
            return
          end
          table.insert(m.entries, entry)
          show_current()
        end)
      end)
    end
    if prompt_text then
      -- The newest turn sent with that text (list is newest first).
      for _, cp in ipairs(list) do
        if cp.prompt == prompt_text then
          return chosen(cp)
        end
      end
      chat.restore_input(prompt_text)
      vim.notify("agentd: that turn changed no files, so there is no checkpoint to go back to: its prompt is in the input to send again", vim.log.levels.INFO, { title = "agentd" })
      return
    end
    if #list == 0 then
      vim.notify("agentd: no checkpoints yet (a turn that changes files makes one)", vim.log.levels.INFO, { title = "agentd" })
      return
    end
    vim.ui.select(list, { prompt = "agentd: restore which turn (before it ran)?", kind = "agentd.checkpoint", format_item = fmt_checkpoint }, chosen)
  end)
end

local function fmt_program(p)
  local cmd = type(p.command) == "table" and chat.quote_argv(p.command) or ""
  local state = chat.program_state({ id = tostring(p.programId), state = tostring(p.state), exit = tonumber(p.exitCode) })
  state = state:gsub(" %(:AgentdPrograms to stop%)$", "")
  return string.format("%s  $ %s%s", state, cmd, p.sandboxed == true and "  (sandboxed)" or "  (not sandboxed)")
end

--- Lists the session's background programs (agent/x/programs/list); picking a
--- running one stops it, with everything it started.
function M.programs()
  local id = current_session("list programs of")
  if not id then
    return
  end
  request(methods.programs_list, { sessionId = id }, function(err, result)
    if err then
      err_notify("agentd: could not list the background programs: " .. tostring(err.message or err))
      return
    end
    local list = type(result) == "table" and type(result.programs) == "table" and result.programs or {}
    if #list == 0 then
      vim.notify("agentd: no background programs in this session", vim.log.levels.INFO, { title = "agentd" })
      return
    end
    vim.ui.select(list, { prompt = "agentd: background programs (pick a running one to stop it)", kind = "agentd.programs", format_item = fmt_program }, function(p)
      if not p or p.state ~= "running" then
        return
      end
      request(methods.programs_stop, { sessionId = id, programId = p.programId }, function(serr, res)
        if serr then
          err_notify("agentd: could not stop " .. tostring(p.programId) .. ": " .. tostring(serr.message or serr))
          return
        end
        vim.notify("agentd: " .. fmt_program(type(res) == "table" and res or p), vim.log.levels.INFO, { title = "agentd" })
      end)
    end)
  end)
end

--- A statusline component: "agentd · ask · 1234/200000 · 0.0123 USD" (the
--- cost when agentd knows the model's price), with "working…" during a turn;
--- "" before the first session.
function M.status()
  local m = M.session_id and M.models[M.session_id] or M._placeholder
  if not m then
    return ""
  end
  local parts = { "agentd" }
  if m.mode then
    parts[#parts + 1] = m.mode
  end
  local u = m.usage
  if u and type(u.used) == "number" then
    parts[#parts + 1] = type(u.size) == "number" and string.format("%d/%d", u.used, u.size) or tostring(u.used)
  end
  local cost = u and chat.cost_text(u.cost)
  if cost then
    parts[#parts + 1] = cost
  end
  if m.busy > 0 then
    parts[#parts + 1] = "working…"
  end
  return table.concat(parts, " · ")
end

--- Opens or closes the chat window.
function M.toggle_chat()
  show_current()
  chat.toggle()
end

function M.open_chat()
  show_current()
  chat.open(true)
end

local function set_global_keymaps()
  local km = config.options.keymaps
  if not km then
    return
  end
  if km.toggle then
    vim.keymap.set("n", km.toggle, M.toggle_chat, { desc = "agentd: toggle chat", silent = true })
  end
  if km.cancel then
    vim.keymap.set("n", km.cancel, M.cancel, { desc = "agentd: cancel turn", silent = true })
  end
end

--- Configures the plugin. Returns true, or false after naming the bad
--- option in an error message.
function M.setup(opts)
  local ok, err = config.set(opts)
  if not ok then
    err_notify(err)
    return false
  end
  chat.ui.on_send = M.prompt
  chat.ui.on_stop = M.cancel
  chat.ui.on_steer = M.steer
  chat.ui.on_edit = M.restore
  set_global_keymaps()
  require("agentd.inline").setup()
  -- A running daemon takes the new settings as its client layer.
  local c = client.get()
  if c then
    client.raw_notify(c, methods.did_change_configuration, { settings = { agent = config.settings() } })
  end
  return true
end

chat.ui.on_send = M.prompt
chat.ui.on_stop = M.cancel
chat.ui.on_steer = M.steer
chat.ui.on_edit = M.restore

return M
