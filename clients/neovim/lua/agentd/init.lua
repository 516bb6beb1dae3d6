-- agentd for Neovim: a thin client over Neovim's LSP client. `setup(opts)`
-- takes the options; the commands in plugin/agentd.lua call the functions
-- below. The daemon starts on first use.
local config = require("agentd.config")
local client = require("agentd.client")
local chat = require("agentd.chat")
local handlers = require("agentd.handlers")
local permission = require("agentd.permission")

local M = {}

-- Session state: the current session and one chat model per session seen.
M.session_id = nil
M.models = {}
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
    ["agent/session/update"] = function(_, params)
      if type(params) ~= "table" then
        return
      end
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
    ["agent/fs/read_text_file"] = safe(handlers.read_text_file),
    ["agent/x/dirty_buffers"] = safe(handlers.dirty_buffers),
    ["agent/x/diagnostics"] = safe(handlers.diagnostics),
    ["agent/x/save_buffers"] = safe(handlers.save_buffers),
    ["agent/x/secrets/get"] = safe(handlers.secrets_get),
    ["agent/x/workspace_symbols"] = safe(function(p, ctx)
      return handlers.workspace_symbols(p, ctx and ctx.client_id)
    end),
    ["workspace/applyEdit"] = safe(function(p, ctx)
      local c = ctx and vim.lsp.get_client_by_id(ctx.client_id)
      return handlers.apply_edit(p, c)
    end),
    ["agent/session/request_permission"] = safe(function(p)
      local m = type(p) == "table" and M.models[p.sessionId] or nil
      return permission.ask(p, m)
    end),
  }
end

local function on_exit()
  -- A turn in flight cannot finish; mark the sessions idle.
  for _, m in pairs(M.models) do
    if m.busy > 0 then
      m.busy = 0
      m.queued = {}
      table.insert(m.entries, { kind = "notice", severity = "error", title = "agentd stopped", description = "the daemon exited during the turn" })
    end
  end
  -- Keep the transcript on screen; the next prompt continues it in a new
  -- session of a fresh daemon.
  if M.session_id then
    M._placeholder = M.models[M.session_id]
  end
  M.session_id = nil
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
  request("agent/session/set_config_option", { sessionId = id, configId = "mode", value = mode }, function(err, result)
    if err then
      err_notify("agentd: could not set mode: " .. tostring(err.message or err))
      return
    end
    chat.set_config_options(model_for(id), result and result.configOptions)
    chat.render_soon()
  end)
end

--- Calls cb(session_id) once there is a session, creating one if needed,
--- or cb(nil, err) when there cannot be one.
function M.with_session(cb)
  if M.session_id and client.get() then
    return cb(M.session_id)
  end
  table.insert(M.pending, cb)
  if M.creating then
    return
  end
  M.creating = true
  request("agent/session/new", session_params(), function(err, result)
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
  local root = config.cwd()
  if path:sub(1, #root + 1) == root .. "/" then
    return path:sub(#root + 2)
  end
  return vim.fn.fnamemodify(path, ":~")
end

-- The lines of a range of the current buffer as an ACP resource block, so
-- the agent sees the selection (unsaved text included) with its file.
local function range_block(range)
  local b = vim.api.nvim_get_current_buf()
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

--- Sends a prompt to the current session (creating it if needed). opts.range
--- = {first, last} adds those lines of the current buffer as context.
function M.prompt(text, opts)
  opts = opts or {}
  if type(text) ~= "string" or vim.trim(text) == "" then
    err_notify("agentd: the prompt is empty")
    return
  end
  local blocks = { { type = "text", text = text } }
  if opts.range then
    local block, where = range_block(opts.range)
    table.insert(blocks, block)
    text = text .. "\n[" .. where .. "]"
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
      show_current()
      return
    end
    local m = model_for(id)
    client.raw_request(client.get(), "agent/session/prompt", {
      sessionId = id,
      prompt = blocks,
    }, function(perr, result)
      chat.prompt_done(m, perr, result)
      if id == M.session_id then
        chat.render_soon()
      end
    end)
  end)
end

--- Ends the current turn (and any prompts queued behind it).
function M.cancel()
  local c = client.get()
  if c and M.session_id then
    client.raw_notify(c, "agent/session/cancel", { sessionId = M.session_id })
  end
  -- Then answer the questions still open, as PROTOCOL.md asks.
  permission.cancel_all()
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
  end
  show_current()
end

--- Starts a fresh session and shows it.
function M.new_session()
  local old = M.session_id
  M.session_id = nil
  if old and client.get() then
    client.raw_request(client.get(), "agent/session/close", { sessionId = old }, function() end)
  end
  show_current()
  M.with_session(function() end)
end

local function fmt_session(s)
  local t = s.title
  if type(t) ~= "string" or t == "" then
    t = s.sessionId
  end
  if type(s.updatedAt) == "string" then
    t = t .. "  (" .. s.updatedAt .. ")"
  end
  return t
end

--- Lists this project's sessions through vim.ui.select and loads the one
--- chosen (agentd replays its history into the chat).
function M.sessions()
  request("agent/session/list", { cwd = config.cwd() }, function(err, result)
    if err then
      err_notify("agentd: could not list sessions: " .. tostring(err.message or err))
      return
    end
    local list = (type(result) == "table" and type(result.sessions) == "table") and result.sessions or {}
    if #list == 0 then
      vim.notify("agentd: no sessions yet for " .. config.cwd(), vim.log.levels.INFO)
      return
    end
    vim.ui.select(list, { prompt = "agentd sessions", format_item = fmt_session, kind = "agentd.session" }, function(choice)
      if choice then
        M.load(choice.sessionId)
      end
    end)
  end)
end

--- Loads a stored session by id.
function M.load(id)
  M.models[id] = chat.new_model(id)
  local prev = M.session_id
  M.session_id = id
  show_current()
  if not chat.is_open() then
    chat.open(false)
  end
  request("agent/session/load", session_params({ sessionId = id }), function(err, result)
    if err then
      err_notify("agentd: could not load session: " .. tostring(err.message or err))
      M.session_id = prev
      show_current()
      return
    end
    chat.set_config_options(model_for(id), result and result.configOptions)
    show_current()
  end)
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
  set_global_keymaps()
  -- A running daemon takes the new settings as its client layer.
  local c = client.get()
  if c then
    client.raw_notify(c, "workspace/didChangeConfiguration", { settings = { agent = config.settings() } })
  end
  return true
end

chat.ui.on_send = M.prompt
chat.ui.on_stop = M.cancel

return M
