-- MCP sign-in (docs/protocol.md "MCP sign-in"). A notice carrying
-- _meta["agentd/mcpSignIn"] = { server = NAME } says one of the session's MCP
-- servers needs the user to sign in: it is remembered here and said with
-- vim.notify. :AgentdMcpSignIn [NAME] asks agentd to run the sign-in
-- (agent/mcp/signIn); agentd then sends window/showDocument {external =
-- true}, which opens the authorization page in the browser (only http(s)
-- URLs; options.open_url replaces the opener). When the browser is on another
-- machine than agentd (Neovim over SSH, in a container), its redirect to
-- agentd's loopback callback goes nowhere: :AgentdMcpSignIn NAME ADDRESS hands
-- the address it ended on to that sign-in (agent/x/mcp/completeSignIn), which
-- agentd checks as its listener would (docs/protocol.md "Signing in from a
-- remote editor").
local client = require("agentd.client")
local config = require("agentd.config")
local methods = require("agentd.methods")

local M = {}

-- Servers waiting for a sign-in: name -> session id.
M.pending = {}
-- Sign-ins under way: name -> session id.
M.running = {}

local META = "agentd/mcpSignIn"

local function notify(msg, level)
  vim.schedule(function()
    vim.notify(msg, level or vim.log.levels.INFO)
  end)
end

--- Hears every session update; remembers the servers that need sign-in.
function M.on_update(params)
  local u = type(params) == "table" and params.update or nil
  if type(u) ~= "table" or u.sessionUpdate ~= "notice" or type(u._meta) ~= "table" then
    return
  end
  local m = u._meta[META]
  if type(m) ~= "table" or type(m.server) ~= "string" or m.server == "" then
    return
  end
  local first = M.pending[m.server] == nil
  M.pending[m.server] = params.sessionId
  if first then
    notify(string.format("agentd: MCP server %s needs you to sign in: :AgentdMcpSignIn %s", m.server, m.server), vim.log.levels.WARN)
  end
end

--- Names of the servers waiting for sign-in, sorted (for completion).
function M.names()
  local out = vim.tbl_keys(M.pending)
  table.sort(out)
  return out
end

local function open_external(uri)
  local custom = config.options.open_url
  if type(custom) == "function" then
    return custom(uri) ~= false
  end
  if vim.ui and vim.ui.open then
    local ok = pcall(vim.ui.open, uri)
    return ok
  end
  local cmd = vim.fn.has("mac") == 1 and "open" or "xdg-open"
  if vim.fn.executable(cmd) ~= 1 then
    notify("agentd: open this link to sign in: " .. uri, vim.log.levels.WARN)
    return true
  end
  return vim.fn.jobstart({ cmd, uri }, { detach = true }) > 0
end

--- window/showDocument {uri, external?}: the sign-in page in the browser.
function M.show_document(params)
  if type(params) ~= "table" or type(params.uri) ~= "string" then
    return nil, vim.lsp.rpc.rpc_response_error(-32602, "showDocument: uri is required")
  end
  local uri = params.uri
  if not params.external then
    return { success = false }
  end
  if not uri:match("^https?://") then
    -- Only web pages: a file:, javascript: or custom scheme is never handed to the OS.
    return { success = false }
  end
  return { success = open_external(uri) }
end

--- Runs the sign-in of server name (a pending one when nil: asks which
--- when there are several).
function M.sign_in(name)
  local agentd = require("agentd")
  if name == nil or name == "" then
    local names = M.names()
    if #names == 0 then
      return notify("agentd: no MCP server is waiting for a sign-in", vim.log.levels.INFO)
    elseif #names == 1 then
      return M.sign_in(names[1])
    end
    return vim.ui.select(names, { prompt = "Sign in to MCP server:" }, function(choice)
      if choice then
        M.sign_in(choice)
      end
    end)
  end
  local sid = M.pending[name] or agentd.session_id
  if not sid then
    return notify("agentd: no session; open the chat first", vim.log.levels.ERROR)
  end
  agentd.with_client(function(err, c)
    if err then
      return notify("agentd: " .. tostring(err), vim.log.levels.ERROR)
    end
    if M.running[name] then
      return notify(string.format("agentd: a sign-in to %s is already under way; finish it in your browser, or :AgentdMcpSignIn %s ADDRESS", name, name))
    end
    M.running[name] = sid
    notify(string.format(
      "agentd: signing in to %s: finish in your browser. If it is not on this machine, its last page does not load: :AgentdMcpSignIn %s ADDRESS, with that page's address",
      name, name))
    client.raw_request(c, methods.mcp_sign_in, { sessionId = sid, server = name }, function(e)
      M.running[name] = nil
      if e then
        return notify(string.format("agentd: sign-in to %s failed: %s", name, tostring(e.message or e)), vim.log.levels.ERROR)
      end
      M.pending[name] = nil
      notify(string.format("agentd: signed in to %s; its tools join the next turn", name))
    end)
  end)
end

--- Hands address (where the browser ended after the user approved) to the
--- sign-in of server name under way.
function M.complete(name, address)
  local sid = M.running[name]
  if not sid then
    return notify(string.format("agentd: no sign-in to %s is under way: :AgentdMcpSignIn %s starts one", name, name), vim.log.levels.ERROR)
  end
  address = vim.trim(address or "")
  if not address:match("^https?://") then
    return notify("agentd: paste the whole address from the browser's address bar (it starts with http://)", vim.log.levels.ERROR)
  end
  require("agentd").with_client(function(err, c)
    if err then
      return notify("agentd: " .. tostring(err), vim.log.levels.ERROR)
    end
    client.raw_request(c, methods.mcp_complete_sign_in, { sessionId = sid, server = name, callbackUrl = address }, function(e)
      if e then
        notify(string.format("agentd: that address did not complete the sign-in to %s: %s", name, tostring(e.message or e)), vim.log.levels.ERROR)
      end
      -- Success is said by the sign-in's own answer.
    end)
  end)
end

--- :AgentdMcpSignIn [NAME [ADDRESS]]
function M.command(fargs)
  if fargs[2] then
    return M.complete(fargs[1], table.concat(fargs, " ", 2))
  end
  return M.sign_in(fargs[1])
end

return M
