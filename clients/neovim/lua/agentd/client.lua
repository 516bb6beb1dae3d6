-- The connection to agentd, through Neovim's own LSP client: it frames
-- messages, negotiates position encodings, cancels requests and applies
-- workspace edits the way every other language server's are applied. This
-- module starts the daemon, waits for `initialize`, and reports a missing,
-- crashing or garbled daemon with one clear message while the editor keeps
-- working.
local compat = require("agentd.compat")
local config = require("agentd.config")

local M = {}

M.state = {
  client_id = nil,
  client = nil, -- the initialized client, until Neovim lists it (0.7)
  ready = false,
  starting = false,
  waiters = {},
  stopping = false,
  reported_garbage = false, -- a bad message after initialize is reported once
}

local function notify(msg, level)
  vim.notify(msg, level or vim.log.levels.ERROR, { title = "agentd" })
end

--- Version-independent request on a client (0.11 made them methods).
function M.raw_request(client, method, params, cb, bufnr)
  return compat.call(client, "request", method, params, cb, bufnr)
end

function M.raw_notify(client, method, params)
  return compat.call(client, "notify", method, params)
end

local function stop_client(client, force)
  return compat.call(client, "stop", force)
end

function M.get()
  local id = M.state.client_id
  if not id then
    return nil
  end
  -- Neovim forgets a client once it has exited; during on_init (0.7) it
  -- does not know it yet.
  return vim.lsp.get_client_by_id(id) or (M.state.ready and M.state.client) or nil
end

--- The client capabilities agentd reads: the standard LSP ones plus the
--- workspace-edit support Neovim's apply_workspace_edit implements.
function M.capabilities()
  local caps = vim.lsp.protocol.make_client_capabilities()
  caps.workspace = caps.workspace or {}
  caps.workspace.applyEdit = true
  caps.workspace.workspaceEdit = vim.tbl_extend("force", caps.workspace.workspaceEdit or {}, {
    documentChanges = true,
    resourceOperations = { "create", "rename", "delete" },
    failureHandling = "abort",
  })
  -- window/showDocument: agentd opens an MCP server's sign-in page (mcp_auth).
  caps.window = caps.window or {}
  caps.window.showDocument = { support = true }
  return caps
end

--- initializationOptions.agent as PROTOCOL.md describes it.
function M.init_options()
  local v = vim.version and vim.version() or {}
  return {
    agent = {
      protocolVersion = 1,
      clientInfo = {
        name = "agentd.nvim",
        title = "agentd for Neovim",
        version = string.format("nvim-%s.%s.%s", v.major or 0, v.minor or 0, v.patch or 0),
      },
      clientCapabilities = {
        fs = { readTextFile = true },
        dirtyBuffers = true,
        diagnostics = vim.diagnostic ~= nil,
        permissions = { ui = true },
        secrets = config.options.secrets ~= nil,
        saveBuffers = true,
        workspaceSymbols = true,
        editorState = true,
        notices = true, -- the chat shows notice updates: no window/showMessage copy
        elicitation = { form = vim.empty_dict(), url = vim.empty_dict() },
      },
      settings = config.settings(),
    },
  }
end

local function finish_waiters(err)
  local ws = M.state.waiters
  M.state.waiters = {}
  for _, cb in ipairs(ws) do
    local ok, e = pcall(cb, err, err == nil and M.get() or nil)
    if not ok then
      notify("agentd: " .. tostring(e))
    end
  end
end

local function fail(msg)
  notify(msg)
  finish_waiters(msg)
end

local function how_it_ended(code, signal)
  local how = "code " .. tostring(code)
  if signal and signal ~= 0 then
    how = how .. ", signal " .. tostring(signal)
  end
  return how
end

--- Starts agentd if needed and calls cb(err, client) once it has
--- initialized.
function M.start(handlers, on_exit, cb)
  local st = M.state
  if st.ready and M.get() then
    return cb(nil, M.get())
  end
  table.insert(st.waiters, cb)
  if st.starting then
    return
  end
  local opts = config.options
  local cmd = opts.cmd
  if vim.fn.executable(cmd[1]) ~= 1 then
    return fail(string.format("agentd: cannot start `%s`: not found or not executable (set `cmd` in require('agentd').setup())", cmd[1]))
  end
  st.starting, st.ready, st.stopping, st.reported_garbage = true, false, false, false
  local root = config.cwd()
  local shown_cmd = table.concat(cmd, " ")
  local timer
  local function stop_timer()
    if timer then
      timer:stop()
      timer:close()
      timer = nil
    end
  end
  -- Gives up on a daemon that has not initialized: reports msg to the
  -- waiters and kills the process, whose exit is then expected.
  local function abort_start(msg)
    stop_timer()
    st.starting = false
    st.stopping = true
    local c = st.client_id and vim.lsp.get_client_by_id(st.client_id)
    st.client_id = nil
    fail(msg)
    if c then
      pcall(stop_client, c, true)
    end
  end
  local lsp_config = {
    name = "agentd",
    cmd = cmd,
    cmd_cwd = root,
    cmd_env = opts.cmd_env,
    root_dir = root,
    workspace_folders = { { uri = vim.uri_from_fname(root), name = root } },
    capabilities = M.capabilities(),
    init_options = M.init_options(),
    handlers = handlers,
    on_init = function(client)
      stop_timer()
      if not st.starting then
        return
      end
      st.starting, st.ready = false, true
      st.client = client
      -- Neovim registers the client as active only after on_init returns.
      vim.schedule(function()
        finish_waiters(nil)
      end)
    end,
    on_error = function(code, err)
      vim.schedule(function()
        local what = vim.lsp.rpc.client_errors and vim.lsp.rpc.client_errors[code] or tostring(code)
        if st.starting then
          -- Garbage before initialize: give up now rather than at the timeout.
          abort_start(string.format("agentd: `%s` is not speaking LSP on stdio (%s: %s)", shown_cmd, tostring(what),
            vim.inspect(err):sub(1, 200)))
        elseif not st.reported_garbage then
          st.reported_garbage = true
          notify(string.format("agentd: bad message from the daemon (%s); see %s", tostring(what), compat.log_path()))
        end
      end)
    end,
    on_exit = function(code, signal, client_id)
      vim.schedule(function()
        stop_timer()
        if client_id and st.client_id and client_id ~= st.client_id then
          return
        end
        local was_ready, was_starting, stopping = st.ready, st.starting, st.stopping
        st.client_id, st.ready, st.starting, st.client = nil, false, false, nil
        if stopping then
          finish_waiters("agentd stopped")
        elseif was_starting then
          fail(string.format("agentd: `%s` exited (%s) before it initialized; see %s",
            shown_cmd, how_it_ended(code, signal), compat.log_path()))
        elseif was_ready then
          notify("agentd: the daemon exited unexpectedly (" .. how_it_ended(code, signal) .. "); the next prompt restarts it and continues this conversation; log: "
            .. compat.log_path())
        end
        if on_exit then
          on_exit(code, signal)
        end
      end)
    end,
  }
  -- Neovim's LSP client asserts on an initialize error (a Lua stack trace
  -- the user cannot act on, then the start time-out). agentd answers a bad
  -- setting (a provider-name typo) that way, with the field in its message:
  -- catch that answer on the way in and report it once, plainly.
  local rpc_mod = vim.lsp.rpc
  local rpc_start = rpc_mod.start
  rpc_mod.start = function(...)
    local r = rpc_start(...)
    if type(r) == "table" and type(r.request) == "function" then
      local request = r.request
      r.request = function(method, params, callback, ...)
        if method == "initialize" and type(callback) == "function" then
          local inner = callback
          callback = function(err, result, ...)
            if err then
              local msg = type(err) == "table" and err.message or tostring(err)
              vim.schedule(function()
                if st.starting then
                  abort_start("agentd: refused the settings: " .. tostring(msg))
                end
              end)
              return
            end
            return inner(err, result, ...)
          end
        end
        return request(method, params, callback, ...)
      end
    end
    return r
  end
  local ok, id
  if vim.fn.has("nvim-0.11") == 1 and vim.lsp.start then
    ok, id = pcall(vim.lsp.start, lsp_config, { attach = false, reuse_client = function()
      return false
    end })
  else
    ok, id = pcall(vim.lsp.start_client, lsp_config)
  end
  rpc_mod.start = rpc_start
  if not ok or not id then
    st.starting = false
    return fail("agentd: could not start `" .. shown_cmd .. "`: " .. tostring(ok and "spawn failed" or id))
  end
  st.client_id = id
  local timeout = (opts.init_timeout or 15) * 1000
  timer = compat.uv.new_timer()
  timer:start(timeout, 0, vim.schedule_wrap(function()
    if not st.starting then
      stop_timer()
      return
    end
    abort_start(string.format("agentd: `%s` did not answer initialize within %d s (is it agentd, speaking LSP on stdio?)",
      shown_cmd, opts.init_timeout or 15))
  end))
end

--- Stops the daemon politely (shutdown + exit).
function M.stop()
  local c = M.get()
  M.state.stopping = true
  M.state.ready = false
  if c then
    stop_client(c)
  end
end

return M
