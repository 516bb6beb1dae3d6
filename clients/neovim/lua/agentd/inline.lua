-- Inline completions: when agentd advertises inlineCompletionProvider (its
-- settings name a `completion` provider and model), a suggestion for the text
-- at the cursor shows as virtual text in insert mode after a short pause in
-- typing. The accept key inserts it; any other typing, moving or leaving
-- insert mode clears it, and a newer request cancels the older one.
--
-- Nothing here starts the daemon: suggestions come only once another command
-- has started it. Every autocmd body runs under pcall, so a failure here is
-- one log line (vim.lsp's log), never an error while typing.
--
-- Neovim 0.12+ has vim.lsp.inline_completion, which renders LSP 3.18 inline
-- completions itself; there this module leaves the buffer to it (see
-- M.native()) and only attaches agentd to the buffer.
local compat = require("agentd.compat")
local config = require("agentd.config")
local client = require("agentd.client")
local methods = require("agentd.methods")

local M = {}

M.ns = vim.api.nvim_create_namespace("agentd_inline")

-- The suggestion on screen: { buf, row, col, tick, lines, mark }.
M.shown = nil
-- The request in flight: { client, id, gen }.
local pending = nil
local gen = 0
-- The buffers agentd was asked about, by number: their URI, for didClose.
M.asked = {}
local timer = nil

--- Counters for tests: requests sent, answers shown, answers dropped because
--- the buffer changed meanwhile, and requests cancelled.
M.stats = { requests = 0, shown = 0, stale = 0, cancelled = 0, accepted = 0 }

local function opts()
  return config.options.inline or {}
end

local function log(msg)
  pcall(function()
    vim.lsp.log.warn("agentd inline: " .. msg)
  end)
end

--- The running client when it advertises inline completions, else nil.
function M.client()
  local c = client.get()
  if not c or not client.state.ready then
    return nil
  end
  local caps = c.server_capabilities or c.resolved_capabilities or {}
  if not caps.inlineCompletionProvider then
    return nil
  end
  return c
end

--- Whether this Neovim renders inline completions itself (0.12+).
function M.native()
  return opts().native ~= false and type(vim.lsp.inline_completion) == "table"
    and type(vim.lsp.inline_completion.enable) == "function"
end

local function cancel_pending()
  if not pending then
    return
  end
  local p = pending
  pending = nil
  M.stats.cancelled = M.stats.cancelled + 1
  pcall(compat.call, p.client, "cancel_request", p.id)
end

--- Removes the suggestion from the screen.
function M.clear()
  local s = M.shown
  M.shown = nil
  if s and vim.api.nvim_buf_is_valid(s.buf) then
    pcall(vim.api.nvim_buf_del_extmark, s.buf, M.ns, s.mark)
  end
end

local function stop_timer()
  if timer then
    timer:stop()
  end
end

--- Clears the suggestion and forgets any request in flight.
function M.reset()
  stop_timer()
  gen = gen + 1
  cancel_pending()
  M.clear()
end

local function show(buf, row, col, tick, text)
  M.clear()
  local lines = vim.split(text, "\n", { plain = true })
  local hl = opts().highlight or "Comment"
  local mark_opts = {
    virt_text = { { lines[1], hl } },
    virt_text_pos = vim.fn.has("nvim-0.10") == 1 and "inline" or "overlay",
    hl_mode = "combine",
  }
  if #lines > 1 then
    local extra = {}
    for i = 2, #lines do
      table.insert(extra, { { lines[i], hl } })
    end
    mark_opts.virt_lines = extra
  end
  local mark = vim.api.nvim_buf_set_extmark(buf, M.ns, row, col, mark_opts)
  M.shown = { buf = buf, row = row, col = col, tick = tick, lines = lines, text = text, mark = mark }
  M.stats.shown = M.stats.shown + 1
end

-- The cursor as (0-based) row and byte column, and as an LSP position in the
-- client's encoding.
local function position(c, buf, win)
  local cur = vim.api.nvim_win_get_cursor(win)
  local row, col = cur[1] - 1, cur[2]
  local line = vim.api.nvim_buf_get_lines(buf, row, row + 1, false)[1] or ""
  local character = col
  local enc = c.offset_encoding or "utf-16"
  if enc ~= "utf-8" then
    local ok, c_enc = pcall(compat.utf_col, line, col, enc)
    if ok then
      character = c_enc
    end
  end
  return row, col, { line = row, character = character }
end

--- Asks agentd for a suggestion at the cursor now (the debounce calls this).
function M.request()
  local c = M.client()
  if not c or vim.fn.mode() ~= "i" then
    return
  end
  local buf, win = vim.api.nvim_get_current_buf(), vim.api.nvim_get_current_win()
  local name = vim.api.nvim_buf_get_name(buf)
  if name == "" or vim.bo[buf].buftype ~= "" then
    return -- only files have a URI agentd can read
  end
  cancel_pending()
  gen = gen + 1
  local my = gen
  local row, col, pos = position(c, buf, win)
  local tick = vim.api.nvim_buf_get_changedtick(buf)
  local params = { textDocument = { uri = vim.uri_from_bufnr(buf) }, position = pos, context = { triggerKind = 2 } }
  M.asked[buf] = params.textDocument.uri
  M.stats.requests = M.stats.requests + 1
  local ok, id = client.raw_request(c, methods.inline_completion, params, function(err, result)
    if pending and pending.gen == my then
      pending = nil
    end
    local okc, e = pcall(function()
      if my ~= gen then
        return -- a newer request (or a keystroke) made this one outdated
      end
      if err then
        log(tostring(err.message or vim.inspect(err)))
        return
      end
      if not vim.api.nvim_buf_is_valid(buf) or vim.api.nvim_get_current_buf() ~= buf
        or vim.api.nvim_buf_get_changedtick(buf) ~= tick or vim.fn.mode() ~= "i" then
        M.stats.stale = M.stats.stale + 1
        return
      end
      local cur = vim.api.nvim_win_get_cursor(0)
      if cur[1] - 1 ~= row or cur[2] ~= col then
        M.stats.stale = M.stats.stale + 1
        return
      end
      local items = type(result) == "table" and (result.items or result) or {}
      local first = type(items) == "table" and items[1] or nil
      local text = type(first) == "table" and first.insertText
      if type(text) == "table" then
        text = text.value -- a StringValue (snippet): shown as its text
      end
      if type(text) ~= "string" or text == "" then
        return
      end
      show(buf, row, col, tick, text)
    end)
    if not okc then
      log(tostring(e))
    end
  end, buf)
  if ok and id then
    pending = { client = c, id = id, gen = my }
  end
end

--- Restarts the debounce after a keystroke.
local function on_change()
  M.reset()
  if not M.client() then
    return
  end
  timer = timer or compat.uv.new_timer()
  local delay = opts().debounce_ms or 75
  timer:start(delay, 0, vim.schedule_wrap(function()
    local ok, e = pcall(M.request)
    if not ok then
      log(tostring(e))
    end
  end))
end

--- Whether a suggestion is shown at the cursor of the current buffer.
function M.visible()
  local s = M.shown
  if not s or s.buf ~= vim.api.nvim_get_current_buf() or not vim.api.nvim_buf_is_valid(s.buf) then
    return false
  end
  local cur = vim.api.nvim_win_get_cursor(0)
  return cur[1] - 1 == s.row and cur[2] == s.col and vim.api.nvim_buf_get_changedtick(s.buf) == s.tick
end

--- Inserts the suggestion at the cursor and puts the cursor after it.
--- Returns whether there was one.
function M.accept()
  if not M.visible() then
    return false
  end
  local s = M.shown
  M.reset()
  vim.api.nvim_buf_set_text(s.buf, s.row, s.col, s.row, s.col, s.lines)
  local last = s.lines[#s.lines]
  local row = s.row + #s.lines - 1
  local col = (#s.lines == 1 and s.col or 0) + #last
  vim.api.nvim_win_set_cursor(0, { row + 1, col })
  M.stats.accepted = M.stats.accepted + 1
  -- Inserting moved the cursor and changed the buffer; the suggestion that
  -- the autocmds would ask for now is for the text after it.
  return true
end

local function termcodes(s)
  return vim.api.nvim_replace_termcodes(s, true, false, true)
end

-- The accept key: accepts when a suggestion is shown, and types the key
-- itself otherwise (unmapped, so "<Tab>" still indents).
function M._accept_key(key)
  local ok, accepted = pcall(M.accept)
  if not ok then
    log(tostring(accepted))
  end
  if not (ok and accepted) then
    vim.api.nvim_feedkeys(termcodes(key), "n", false)
  end
end

local group = nil

--- Installs (or removes, when the `inline.enabled` option is false) the
--- autocmds and the accept key. Called by setup().
function M.setup()
  if group then
    vim.api.nvim_del_augroup_by_id(group)
    group = nil
  end
  M.reset()
  local o = opts()
  if M._key then
    pcall(vim.keymap.del, "i", M._key)
    M._key = nil
  end
  if o.enabled == false then
    return
  end
  group = vim.api.nvim_create_augroup("agentd_inline", { clear = true })
  local function guarded(fn)
    return function()
      local ok, e = pcall(fn)
      if not ok then
        log(tostring(e))
      end
    end
  end
  -- agentd keeps a document's last suggestion (to answer typing through it)
  -- until it hears the document closed.
  vim.api.nvim_create_autocmd({ "BufDelete", "BufWipeout" }, { group = group, callback = function(ev)
    local ok, e = pcall(function()
      local uri = M.asked[ev.buf]
      M.asked[ev.buf] = nil
      local c = M.client()
      if uri and c then
        client.raw_notify(c, methods.did_close, { textDocument = { uri = uri } })
      end
    end)
    if not ok then
      log(tostring(e))
    end
  end })
  if M.native() then
    -- Neovim renders and accepts these itself; agentd only needs to be
    -- attached to the buffer for the native client to ask it.
    vim.api.nvim_create_autocmd("InsertEnter", { group = group, callback = guarded(function()
      local c = M.client()
      local buf = vim.api.nvim_get_current_buf()
      if c and vim.api.nvim_buf_get_name(buf) ~= "" and vim.bo[buf].buftype == "" then
        vim.lsp.buf_attach_client(buf, c.id)
        vim.lsp.inline_completion.enable(true, { bufnr = buf })
        M.asked[buf] = vim.uri_from_bufnr(buf)
      end
    end) })
    return
  end
  vim.api.nvim_create_autocmd({ "TextChangedI", "TextChangedP" }, { group = group, callback = guarded(on_change) })
  vim.api.nvim_create_autocmd("CursorMovedI", { group = group, callback = guarded(function()
    if M.shown and not M.visible() then
      M.reset()
    end
  end) })
  vim.api.nvim_create_autocmd({ "InsertLeave", "BufLeave" }, { group = group, callback = guarded(M.reset) })
  local key = o.accept
  if key and key ~= false then
    M._key = key
    vim.keymap.set("i", key, function()
      M._accept_key(key)
    end, { silent = true, desc = "agentd: accept the inline suggestion" })
  end
end

return M
