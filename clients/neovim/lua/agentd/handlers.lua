-- Answers to agentd's requests to the editor, taken from Neovim's real
-- state: buffers (unsaved text and changedtick as version), vim.diagnostic,
-- other language servers, and `workspace/applyEdit` through Neovim's own LSP
-- utilities. Every handler is total: bad input or a buffer that vanished
-- gives a JSON-RPC error or a disk read, never a Lua error.
local compat = require("agentd.compat")
local buffers = require("agentd.buffers")
local config = require("agentd.config")
local methods = require("agentd.methods")

local M = {}

local NOT_FOUND = -32002
local INVALID_PARAMS = -32602

local function rpc_error(code, message)
  return nil, vim.lsp.rpc.rpc_response_error(code, message)
end

local function is_nil(v)
  return v == nil or v == vim.NIL
end

-- agent/fs/read_text_file {sessionId, path, line?, limit?}
function M.read_text_file(params)
  if type(params) ~= "table" or type(params.path) ~= "string" or params.path == "" then
    return rpc_error(INVALID_PARAMS, "read_text_file: path is required")
  end
  local line = (not is_nil(params.line)) and tonumber(params.line) or nil
  local limit = (not is_nil(params.limit)) and tonumber(params.limit) or nil
  local b = buffers.find(params.path)
  if b then
    return {
      content = buffers.text(b, line, limit),
      _meta = {
        ["agentd/version"] = buffers.version(b),
        ["agentd/dirty"] = vim.bo[b].modified,
      },
    }
  end
  local text, why = buffers.read_disk(params.path)
  if not text then
    if why == "not_found" then
      return rpc_error(NOT_FOUND, "file not found: " .. params.path)
    end
    return rpc_error(NOT_FOUND, params.path .. ": " .. tostring(why))
  end
  return { content = buffers.slice(text, line, limit) }
end

-- agent/x/dirty_buffers {sessionId}
function M.dirty_buffers()
  local out = {}
  for _, d in ipairs(buffers.dirty()) do
    out[#out + 1] = { path = d.path, version = buffers.version(d.bufnr) }
  end
  return { buffers = out }
end

-- Converts a vim.diagnostic item (0-based rows, byte columns) to an LSP
-- Diagnostic in UTF-16 columns.
local function to_lsp(b, d)
  local function col16(row, col)
    local line = vim.api.nvim_buf_get_lines(b, row, row + 1, false)[1]
    if not line then
      return col
    end
    col = math.min(col or 0, #line)
    local ok, idx = pcall(compat.utf_col, line, col, "utf-16")
    return ok and idx or col
  end
  local end_row = d.end_lnum or d.lnum
  local end_col = d.end_col or d.col
  local out = {
    range = {
      start = { line = d.lnum, character = col16(d.lnum, d.col) },
      ["end"] = { line = end_row, character = col16(end_row, end_col) },
    },
    severity = d.severity,
    message = d.message,
  }
  if d.source then
    out.source = d.source
  end
  if d.code then
    out.code = d.code
  end
  return out
end

-- agent/x/diagnostics {sessionId, paths?}
function M.diagnostics(params)
  local items = {}
  local paths = type(params) == "table" and not is_nil(params.paths) and params.paths or nil
  if not vim.diagnostic then
    return { items = items }
  end
  if paths then
    for _, p in ipairs(paths) do
      local b = buffers.find(p)
      local diags = {}
      if b then
        for _, d in ipairs(vim.diagnostic.get(b)) do
          diags[#diags + 1] = to_lsp(b, d)
        end
      end
      items[#items + 1] = { path = buffers.normalize(p) or p, diagnostics = diags }
    end
  else
    local by_buf = {}
    for _, d in ipairs(vim.diagnostic.get()) do
      if vim.api.nvim_buf_is_valid(d.bufnr) and vim.api.nvim_buf_get_name(d.bufnr) ~= "" then
        by_buf[d.bufnr] = by_buf[d.bufnr] or {}
        table.insert(by_buf[d.bufnr], to_lsp(d.bufnr, d))
      end
    end
    for b, diags in pairs(by_buf) do
      items[#items + 1] = { path = buffers.normalize(vim.api.nvim_buf_get_name(b)), diagnostics = diags }
    end
  end
  return { items = items }
end

-- agent/x/save_buffers {sessionId, paths}
function M.save_buffers(params)
  if type(params) ~= "table" or type(params.paths) ~= "table" then
    return rpc_error(INVALID_PARAMS, "save_buffers: paths is required")
  end
  local saved, failed = {}, {}
  for _, p in ipairs(params.paths) do
    local b = buffers.find(p)
    if not b then
      if compat.uv.fs_stat(p) then
        saved[#saved + 1] = p -- nothing unsaved: the disk is current
      else
        failed[#failed + 1] = { path = p, reason = "no buffer and no file" }
      end
    elseif not vim.bo[b].modified then
      saved[#saved + 1] = p
    else
      local ok, err = pcall(vim.api.nvim_buf_call, b, function()
        vim.cmd("silent write")
      end)
      if ok and not vim.bo[b].modified then
        saved[#saved + 1] = p
      else
        failed[#failed + 1] = { path = p, reason = ok and "buffer still modified after :write" or tostring(err) }
      end
    end
  end
  return { saved = saved, failed = failed }
end

-- agent/x/workspace_symbols {sessionId, query}: asks the other language
-- servers attached in this Neovim.
--- The origin agent/x/secrets/get asks for: only "agentd.apiKey.<origin>"
--- with the origin written as agentd writes it (scheme://host[:port],
--- lowercase, no default port, no path). Anything else names no one server.
function M.origin_of_secret_key(key)
  if type(key) ~= "string" then
    return nil
  end
  local origin = key:match("^agentd%.apiKey%.(.+)$")
  if not origin or origin ~= origin:lower() then
    return nil
  end
  local scheme, host, port = origin:match("^(https?)://([%w%.%-]+)(:?%d*)$")
  if not scheme then
    scheme, host, port = origin:match("^(https?)://(%[[%x:%.]+%])(:?%d*)$")
  end
  if not scheme or host:sub(-1) == "." or port == ":" then
    return nil
  end
  if (scheme == "https" and port == ":443") or (scheme == "http" and port == ":80") then
    return nil
  end
  return origin
end

--- agent/x/secrets/get: the key for the origin named, from the `secrets`
--- option (a function of the origin, or a map from origin to an environment
--- variable), else nothing. A key is looked up by origin only, so it is
--- never sent to a server it was not meant for.
function M.secrets_get(params)
  local key = type(params) == "table" and params.key or nil
  if type(key) ~= "string" or key == "" then
    return rpc_error(INVALID_PARAMS, "key is required")
  end
  local origin = M.origin_of_secret_key(key)
  local source = config.options.secrets
  if not origin or source == nil then
    return {}
  end
  local value
  if type(source) == "function" then
    local ok, v = pcall(source, origin)
    if not ok then
      return rpc_error(-32603, "the secrets function failed: " .. tostring(v))
    end
    value = v
  elseif type(source) == "table" and type(source[origin]) == "string" then
    value = vim.env[source[origin]]
  end
  if type(value) == "string" and value ~= "" then
    return { value = value }
  end
  return {}
end

function M.workspace_symbols(params, self_id)
  local query = type(params) == "table" and type(params.query) == "string" and params.query or ""
  local symbols = {}
  local list = compat.clients()
  for _, c in ipairs(list) do
    local caps = c.server_capabilities or {}
    if c.id ~= self_id and c.name ~= "agentd" and caps.workspaceSymbolProvider then
      local ok, resp = pcall(compat.call, c, "request_sync", methods.lsp_workspace_symbol, { query = query }, 2000, 0)
      if ok and resp and resp.result and type(resp.result) == "table" then
        for _, s in ipairs(resp.result) do
          symbols[#symbols + 1] = s
        end
      end
    end
  end
  return { symbols = symbols }
end

--- agent/x/editor_state {sessionId}: the file being edited (the buffer of
--- win, the last window outside the chat), its visual selection when the
--- window is in Visual mode or the buffer has a selection made there since
--- it was entered, and every listed file buffer. Paths are absolute, lines
--- 1-based.
function M.editor_state(win)
  local out = { openFiles = {} }
  for _, b in ipairs(vim.api.nvim_list_bufs()) do
    if vim.api.nvim_buf_is_loaded(b) and vim.bo[b].buflisted and vim.bo[b].buftype == "" then
      local name = vim.api.nvim_buf_get_name(b)
      if name ~= "" then
        out.openFiles[#out.openFiles + 1] = buffers.normalize(name)
      end
    end
  end
  if not (win and vim.api.nvim_win_is_valid(win)) then
    return out
  end
  local b = vim.api.nvim_win_get_buf(win)
  local name = vim.api.nvim_buf_get_name(b)
  if name == "" or vim.bo[b].buftype ~= "" then
    return out
  end
  local path = buffers.normalize(name)
  out.activeFile = path
  local first, last
  local mode = vim.api.nvim_get_mode().mode
  if win == vim.api.nvim_get_current_win() and (mode == "v" or mode == "V" or mode == "\22") then
    first, last = vim.fn.line("v"), vim.fn.line(".")
  else
    local s = vim.api.nvim_buf_get_mark(b, "<")
    local e = vim.api.nvim_buf_get_mark(b, ">")
    if s[1] > 0 and e[1] > 0 then
      first, last = s[1], e[1]
    end
  end
  if first then
    if first > last then
      first, last = last, first
    end
    local total = vim.api.nvim_buf_line_count(b)
    last = math.min(last, total)
    if first <= last then
      out.selection = {
        path = path,
        startLine = first,
        endLine = last,
        text = table.concat(vim.api.nvim_buf_get_lines(b, first - 1, last, false), "\n"),
      }
    end
  end
  return out
end

--- Checks every versioned TextDocumentEdit against the buffer it targets.
--- Returns nil when all match, else the reason to refuse the whole edit.
function M.stale_reason(edit)
  for _, change in ipairs(edit.documentChanges or {}) do
    if change.kind == nil and type(change.textDocument) == "table" then
      local td = change.textDocument
      local fname = vim.uri_to_fname(td.uri)
      local b = buffers.find(fname)
      if not is_nil(td.version) then
        if not b then
          return string.format("%s is no longer open in the editor (edit was computed against buffer version %d)", fname, td.version)
        end
        local now = buffers.version(b)
        if now ~= td.version then
          return string.format("%s changed since it was read (version %d, buffer is now at %d); re-read it", fname, td.version, now)
        end
      end
    end
  end
  return nil
end

-- workspace/applyEdit {label?, edit}: version-checked, then applied by
-- vim.lsp.util.apply_workspace_edit so it is one undoable change per
-- buffer, left unsaved.
function M.apply_edit(params, client)
  if type(params) ~= "table" or type(params.edit) ~= "table" then
    return rpc_error(INVALID_PARAMS, "applyEdit: edit is required")
  end
  -- JSON null arrives as nil from Neovim's decoder, but vim.NIL from other
  -- callers.
  for _, change in ipairs(params.edit.documentChanges or {}) do
    if type(change) == "table" and type(change.textDocument) == "table" and change.textDocument.version == vim.NIL then
      change.textDocument.version = nil
    end
  end
  local stale = M.stale_reason(params.edit)
  if stale then
    return { applied = false, failureReason = stale }
  end
  -- The versions are checked (strictly) above; Neovim's own, looser check
  -- cannot take a missing one: 0.7 compares vim.NIL with a number, 0.12
  -- compares nil. Version 0 is the one both skip.
  for _, change in ipairs(params.edit.documentChanges or {}) do
    if type(change) == "table" and change.kind == nil and type(change.textDocument) == "table" then
      change.textDocument = { uri = change.textDocument.uri, version = 0 }
    end
  end
  local enc = (client and client.offset_encoding) or "utf-16"
  local ok, err = pcall(vim.lsp.util.apply_workspace_edit, params.edit, enc)
  if not ok then
    return { applied = false, failureReason = tostring(err) }
  end
  return { applied = true }
end

return M
