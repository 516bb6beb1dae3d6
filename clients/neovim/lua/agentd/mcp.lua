-- The session's MCP servers (agent/x/mcp/servers): the :AgentdMcp list of
-- each server's state and tools, and the resources the `@server:uri`
-- completion offers. The list is built by M.lines, one table per line with
-- what a line is about (server, tool), so that actions on a server (a "Sign
-- in") can be added beside it.
local chat = require("agentd.chat")
local methods = require("agentd.methods")

local M = {}

--- The last listing, per session id.
M.cache = {}

--- Lines of the list for servers: {text = ..., server = name, tool = name?}.
function M.lines(servers)
  local out = {}
  if type(servers) ~= "table" or #servers == 0 then
    return { { text = "No MCP servers in this session (mcpServers in the settings adds them)." } }
  end
  for _, s in ipairs(servers) do
    local name = chat.visible(tostring(s.name or "?"))
    local head = string.format("%s (%s %s): %s", name, chat.visible(tostring(s.type or "")), chat.visible(tostring(s.target or "")), chat.visible(tostring(s.state or "")))
    if type(s.error) == "string" and s.error ~= "" then
      head = head .. " — " .. chat.visible(s.error)
    end
    out[#out + 1] = { text = head, server = s.name }
    for _, t in ipairs(type(s.tools) == "table" and s.tools or {}) do
      local line = "  " .. (t.offered and "● " or "○ ") .. chat.visible(tostring(t.name or "?"))
      if type(t.description) == "string" and t.description ~= "" then
        line = line .. ": " .. chat.visible(t.description)
      end
      out[#out + 1] = { text = line, server = s.name, tool = t.name }
    end
    local n = type(s.resources) == "table" and #s.resources or 0
    if n > 0 then
      out[#out + 1] = { text = string.format("  %d resources (mention one as @%s:URI)", n, name), server = s.name }
    end
  end
  return out
end

--- Asks agentd for the session's servers through request(method, params,
--- cb); cb(err, servers).
function M.fetch(request, session_id, cb)
  if not session_id then
    return cb("no session")
  end
  request(methods.mcp_servers, { sessionId = session_id }, function(err, result)
    if err or type(result) ~= "table" then
      return cb(err and (err.message or tostring(err)) or "no answer")
    end
    M.cache[session_id] = result.servers or {}
    cb(nil, M.cache[session_id])
  end)
end

--- `@server:uri` completion items for base (which starts with "@"), from
--- the last listing of session_id.
function M.complete(session_id, base)
  local items = {}
  for _, s in ipairs(M.cache[session_id] or {}) do
    for _, r in ipairs(type(s.resources) == "table" and s.resources or {}) do
      local word = "@" .. tostring(s.name) .. ":" .. tostring(r.uri)
      if word:sub(1, #base) == base and not word:find("%s") then
        items[#items + 1] = { word = word, menu = chat.visible(tostring(r.title or r.name or "")), kind = "mcp" }
      end
    end
  end
  return items
end

--- The resource a prompt's word `@server:uri` names in session_id's last
--- listing: {server, uri, name}, or nil.
function M.resource(session_id, word)
  for _, s in ipairs(M.cache[session_id] or {}) do
    local prefix = "@" .. tostring(s.name) .. ":"
    if word:sub(1, #prefix) == prefix then
      local uri = word:sub(#prefix + 1)
      for _, r in ipairs(type(s.resources) == "table" and s.resources or {}) do
        if r.uri == uri then
          return { server = s.name, uri = uri, name = r.name or uri }
        end
      end
    end
  end
  return nil
end

--- Shows the list in a scratch buffer (q closes it).
function M.show(servers)
  local lines = {}
  for _, l in ipairs(M.lines(servers)) do
    lines[#lines + 1] = l.text
  end
  vim.cmd("botright new")
  local b = vim.api.nvim_get_current_buf()
  vim.bo[b].buftype, vim.bo[b].bufhidden, vim.bo[b].swapfile = "nofile", "wipe", false
  pcall(vim.api.nvim_buf_set_name, b, "agentd://mcp")
  vim.api.nvim_buf_set_lines(b, 0, -1, false, lines)
  vim.bo[b].modifiable = false
  vim.keymap.set("n", "q", "<cmd>close<cr>", { buffer = b, nowait = true })
  return b
end

return M
