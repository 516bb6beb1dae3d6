-- Permission requests from agentd. Before asking, the chat is redrawn with
-- the request in it and the change is shown in a floating window (the
-- unified diff of every file, or the program's command, directory and the
-- files saved first), so the user sees what they approve.
--
-- With Neovim's built-in vim.ui.select the question is asked by the plugin
-- itself, in the command line, so the preview stays usable while it waits:
-- j/k, <C-d>/<C-u>, <C-f>/<C-b>, gg/G scroll it, a key chooses, <Esc>
-- (or q, <C-c>) cancels. Each answer has the same key on every card (1 allow
-- once … 5 always reject, d show diff, r reject with a reason). Typing can
-- never answer: keys typed before the question appeared, in its first
-- moments, or in a burst (each within quiet_ms of the one before) count for
-- nothing and are given back to the editor when the question closes; only
-- a key pressed after a pause is a decision. A vim.ui.select the user
-- installed (dressing.nvim, snacks, telescope…), before or after this
-- plugin loaded, is used as it is. "Show diff" opens the diff side by side
-- in a tab; "Reject with a reason…" asks for the reason with vim.ui.input
-- and answers reject_once with it, for the model to read.
--
-- Where Neovim runs server requests in a coroutine (0.10+), an asynchronous
-- vim.ui.select is awaited by yielding. On older Neovim the handler must
-- answer synchronously: the built-in select is, and any other is waited for
-- with vim.wait.
local chat = require("agentd.chat")

local M = {}

M.timeout_ms = 10 * 60 * 1000
M.pending = {} -- set of { cancel = fn }

-- A key counts as a decision only when no other key came for quiet_ms
-- before it, and not before arm_ms after the question appeared.
M.quiet_ms = 400
M.arm_ms = 600

--- The clock the timing rules read, in milliseconds (tests replace it).
function M.now()
  return require("agentd.compat").uv.hrtime() / 1e6
end

--- Whether select is Neovim's own vim.ui.select, told by where it is
--- defined (runtime/lua/vim/ui.lua), not by when it was seen: a picker set
--- up before this plugin loaded (the usual lazy.nvim order) is the user's.
function M.is_builtin(select)
  if type(select) ~= "function" then
    return false
  end
  local info = debug.getinfo(select, "S")
  local src = info and info.source or ""
  return src:match("[/\\]lua[/\\]vim[/\\]ui%.lua$") ~= nil
end

local SHOW_DIFF = { show_diff = true }
local WITH_REASON = { with_reason = true }

-- The key of each answer, the same on every card whatever else it offers.
M.option_keys = {
  allow_once = "1",
  allow_session = "2",
  allow_always = "3",
  reject_once = "4",
  reject_always = "5",
  switch_mode_ask = "6",
  switch_mode_auto = "7",
}

--- The key that chooses item on a card.
function M.key_of(item, items)
  if item.show_diff then
    return "d"
  end
  if item.with_reason then
    return "r"
  end
  local k = M.option_keys[item.option.optionId]
  if k then
    return k
  end
  -- An option agentd does not name here: 8, 9, … in the order offered.
  local n = 7
  for _, it in ipairs(items) do
    if it.option and not M.option_keys[it.option.optionId] then
      n = n + 1
      if it == item then
        return tostring(n)
      end
    end
  end
end

local function label(item)
  if item.show_diff then
    return "Show diff"
  end
  if item.with_reason then
    return "Reject with a reason…"
  end
  local o = item.option
  return tostring(o.name or o.optionId)
end

--- Waits for an asynchronous call: start(finish) must call finish(value)
--- once; returns value (nil when cancelled).
local function await(start, pending)
  local co, is_main = coroutine.running()
  local done, result, yielded = false, nil, false
  local function finish(v)
    if done then
      return
    end
    done, result = true, v
    if yielded then
      vim.schedule(function()
        coroutine.resume(co)
      end)
    end
  end
  pending.cancel = function()
    finish(nil)
  end
  local ok, err = pcall(start, finish)
  if not ok then
    vim.notify("agentd: " .. tostring(err), vim.log.levels.ERROR)
    return nil
  end
  if done then
    return result
  end
  if co and not is_main then
    yielded = true
    coroutine.yield()
    return result
  end
  vim.wait(M.timeout_ms, function()
    return done
  end, 20)
  return result
end

-- How much of a program's standard input the question shows.
M.stdin_preview_lines = 20

--- The first lines of stdin, escaped, with a last line saying how much more
--- there is.
function M.stdin_lines(stdin)
  local all = vim.split(stdin, "\n", true)
  if all[#all] == "" then
    all[#all] = nil
  end
  local out = {}
  for i = 1, math.min(#all, M.stdin_preview_lines) do
    out[#out + 1] = chat.visible((all[i]:gsub("\t", "    ")))
  end
  if #all > M.stdin_preview_lines then
    out[#out + 1] = string.format("… %d more lines", #all - M.stdin_preview_lines)
  end
  return out
end

--- The lines the preview shows for a permission entry.
function M.preview_lines(entry)
  local lines = {}
  if entry.command then
    lines[#lines + 1] = "$ " .. entry.command
    if entry.cwd then
      lines[#lines + 1] = "in " .. chat.visible(entry.cwd)
    end
  end
  for _, group in ipairs({ { "with environment:", entry.env }, { "with headers:", entry.headers } }) do
    if group[2] and #group[2] > 0 then
      lines[#lines + 1] = group[1]
      for _, kv in ipairs(group[2]) do
        lines[#lines + 1] = "  " .. kv
      end
    end
  end
  if entry.stdin then
    local shown = M.stdin_lines(entry.stdin)
    lines[#lines + 1] = string.format("standard input (%d bytes):", #entry.stdin)
    for _, l in ipairs(shown) do
      lines[#lines + 1] = "  " .. l
    end
  end
  if entry.saves and #entry.saves > 0 then
    lines[#lines + 1] = "saves first:"
    for _, f in ipairs(entry.saves) do
      lines[#lines + 1] = "  " .. chat.save_line(f)
    end
  end
  for _, d in ipairs(entry.diffs or {}) do
    lines[#lines + 1] = "diff " .. chat.visible(type(d.path) == "string" and chat.display_path(d.path) or d.path)
    for _, l in ipairs(chat.diff_lines(d)) do
      lines[#lines + 1] = chat.visible((l:gsub("\t", "    ")))
    end
  end
  return lines
end

--- Opens the preview float; returns its window (nil when there is nothing
--- to preview or no room).
function M.open_preview(entry, title)
  local lines = M.preview_lines(entry)
  if #lines == 0 then
    return nil
  end
  local b = vim.api.nvim_create_buf(false, true)
  vim.bo[b].bufhidden = "wipe"
  vim.api.nvim_buf_set_lines(b, 0, -1, false, lines)
  vim.bo[b].modifiable = false
  if #entry.diffs > 0 then
    vim.bo[b].filetype = "diff"
  end
  local want = #lines + (title and 1 or 0)
  -- Over the window being edited, beside the chat, when it is wide enough;
  -- else in the middle of the screen.
  local config
  local ew = chat.editing_window()
  if ew and vim.api.nvim_win_get_width(ew) >= 40 and vim.api.nvim_win_get_height(ew) >= 8 then
    local ww, wh = vim.api.nvim_win_get_width(ew), vim.api.nvim_win_get_height(ew)
    config = { relative = "win", win = ew, row = 1, col = 0, width = ww - 2, height = math.max(3, math.min(want, wh - 4)) }
  else
    local cols, rows = vim.o.columns, vim.o.lines - vim.o.cmdheight - 2
    if rows < 6 or cols < 24 then
      return nil
    end
    local width = math.max(20, math.min(cols - 4, 100))
    local height = math.max(3, math.min(want, rows - 8))
    config = { relative = "editor", row = math.max(0, math.floor((rows - height) / 2) - 2),
      col = math.max(0, math.floor((cols - width) / 2)), width = width, height = height }
  end
  config.style, config.border, config.focusable, config.zindex = "minimal", "rounded", true, 60
  local ok, w = pcall(vim.api.nvim_open_win, b, false, config)
  if not ok then
    return nil
  end
  vim.wo[w].wrap = false
  vim.wo[w].winhighlight = "Normal:NormalFloat"
  if title then
    -- 0.7 floats have no title: the first line says what it is.
    vim.bo[b].modifiable = true
    vim.api.nvim_buf_set_lines(b, 0, 0, false, { title })
    vim.bo[b].modifiable = false
  end
  return w
end

local SCROLL = {
  j = "\5", -- <C-e>
  k = "\25", -- <C-y>
  ["\4"] = "\4", -- <C-d>
  ["\21"] = "\21", -- <C-u>
  ["\6"] = "\6", -- <C-f>
  ["\2"] = "\2", -- <C-b>
  G = "G",
  g = "gg",
}

--- Asks in the command line while the preview window stays on screen and
--- scrolls. Returns the chosen item or nil. Keys that come too soon (see
--- quiet_ms and arm_ms) do nothing here and are fed back to the editor once
--- the question is closed, so text being typed is neither lost nor read as
--- an answer.
function M.ask_builtin(items, prompt, preview)
  local labels, by_key = {}, {}
  for _, it in ipairs(items) do
    local k = M.key_of(it, items)
    by_key[k] = it
    labels[#labels + 1] = string.format("%s: %s", k, label(it))
  end
  local hint = preview and "  (j/k, <C-d>/<C-u> scroll the change; <Esc> cancels)" or "  (<Esc> cancels)"
  local text = prompt .. "\n" .. table.concat(labels, "   ") .. hint .. "\n> "
  -- Room for the whole question, so it never turns into a "Press ENTER"
  -- prompt that scrolls the screen (and the diff) away.
  local rows = 1
  for _, l in ipairs(vim.split(text, "\n", true)) do
    rows = rows + math.max(1, math.ceil(vim.fn.strdisplaywidth(l) / math.max(1, vim.o.columns - 1)))
  end
  local cmdheight = vim.o.cmdheight
  vim.o.cmdheight = math.max(cmdheight, math.min(rows, math.floor(vim.o.lines / 3)))
  -- Keys typed before the question appeared were meant for the editor.
  local given_back = {}
  while true do
    local ok, c = pcall(vim.fn.getchar, 0)
    if not ok or c == 0 or c == "" then
      break
    end
    given_back[#given_back + 1] = type(c) == "number" and vim.fn.nr2char(c) or c
  end
  local function done(v)
    vim.o.cmdheight = cmdheight
    vim.api.nvim_echo({ { "" } }, false, {})
    if #given_back > 0 then
      vim.api.nvim_feedkeys(table.concat(given_back), "n", false)
    end
    return v
  end
  local opened = M.now()
  local last = opened
  local warning = ""
  while true do
    vim.cmd("redraw")
    local chunks = { { prompt, "Question" }, { "\n" .. table.concat(labels, "   ") .. hint, "Normal" } }
    if warning ~= "" then
      chunks[#chunks + 1] = { "\n" .. warning, "WarningMsg" }
    end
    chunks[#chunks + 1] = { "\n> ", "Normal" }
    vim.api.nvim_echo(chunks, false, {})
    local ok, key = pcall(vim.fn.getcharstr)
    if not ok then
      return done(nil)
    end
    local t = M.now()
    local deliberate = t - last >= M.quiet_ms and t - opened >= M.arm_ms
    last = t
    if not deliberate then
      -- Part of something being typed: not an answer, not a scroll.
      given_back[#given_back + 1] = key
      warning = "agentd is asking: keys typed now are kept for the editor; pause, then press a key to answer"
    else
      warning = ""
      if key == "\27" or key == "q" or key == "\3" then
        return done(nil)
      end
      if by_key[key] then
        return done(by_key[key])
      end
      -- The keys scroll the preview, or, after "Show diff", the diff tab's
      -- windows (scroll-bound in diff mode).
      local target = preview
      if not (target and vim.api.nvim_win_is_valid(target)
        and vim.api.nvim_win_get_tabpage(target) == vim.api.nvim_get_current_tabpage()) then
        target = vim.wo.diff and vim.api.nvim_get_current_win() or nil
      end
      if target and SCROLL[key] then
        pcall(vim.api.nvim_win_call, target, function()
          vim.cmd("normal! " .. SCROLL[key])
        end)
      end
    end
  end
end

--- Answers agent/session/request_permission. model is the session's chat
--- model (may be nil).
function M.ask(params, model)
  if type(params) ~= "table" or type(params.options) ~= "table" or #params.options == 0 then
    return { outcome = { outcome = "cancelled" } }
  end
  local tc = type(params.toolCall) == "table" and params.toolCall or {}
  local entry = chat.add_permission(model or chat.new_model(nil), tc)
  if model then
    chat.render_now()
  end
  local items = {}
  if #entry.diffs > 0 then
    items[#items + 1] = SHOW_DIFF
  end
  local can_reason = false
  for _, o in ipairs(params.options) do
    if type(o) == "table" and o.optionId then
      items[#items + 1] = { option = o }
      if o.optionId == "reject_once" then
        can_reason = true
      end
    end
  end
  if can_reason then
    items[#items + 1] = WITH_REASON
  end
  -- One line (vim.ui.select shows it as the question): what, the program and
  -- where it runs, and the files saved before it runs.
  local what = chat.visible(tc.title or "run a tool")
  if entry.mcp_server then
    what = what .. " (MCP server " .. chat.visible(entry.mcp_server) .. ")"
  end
  local prompt = "agentd wants to: " .. what
  if entry.command then
    prompt = prompt .. " — $ " .. entry.command .. (entry.cwd and (" (in " .. chat.visible(entry.cwd) .. ")") or "")
  end
  for _, group in ipairs({ { "environment", entry.env }, { "headers", entry.headers } }) do
    if group[2] and #group[2] > 0 then
      prompt = prompt .. " — with " .. group[1] .. ": " .. table.concat(group[2], " ")
    end
  end
  if entry.stdin then
    prompt = prompt .. string.format(" — with %d bytes of standard input (in the preview)", #entry.stdin)
  end
  local sb = chat.sandbox_line(entry)
  if sb then
    prompt = prompt .. " — " .. sb
  end
  if entry.saves and #entry.saves > 0 then
    local names = {}
    for _, f in ipairs(entry.saves) do
      names[#names + 1] = chat.save_line(f)
    end
    prompt = prompt .. " — saves first: " .. table.concat(names, ", ")
  end
  local pending = { session = params.sessionId }
  M.pending[pending] = true
  local preview = M.open_preview(entry, "agentd wants to: " .. what)
  M.preview_win = preview
  pcall(vim.cmd, "redraw")
  local choice
  local diff_tabs = {} -- one per diff, per time "Show diff" was chosen
  local reason
  while true do
    if M.is_builtin(vim.ui.select) then
      choice = M.ask_builtin(items, prompt, preview)
    else
      choice = await(function(finish)
        vim.ui.select(items, { prompt = prompt, format_item = label, kind = "agentd.permission" }, finish)
      end, pending)
    end
    if choice and choice.show_diff then
      for _, d in ipairs(entry.diffs) do
        diff_tabs[#diff_tabs + 1] = chat.show_diff(d)
      end
    elseif choice and choice.with_reason then
      reason = await(function(finish)
        vim.ui.input({ prompt = "Reject, and tell the agent what to do instead: " }, finish)
      end, pending)
      if reason ~= nil then
        break
      end
    else
      break
    end
  end
  M.pending[pending] = nil
  if preview and vim.api.nvim_win_is_valid(preview) then
    pcall(vim.api.nvim_win_close, preview, true)
  end
  M.preview_win = nil
  for _, tab in ipairs(diff_tabs) do
    if vim.api.nvim_tabpage_is_valid(tab) and #vim.api.nvim_list_tabpages() > 1 then
      pcall(vim.cmd, "tabclose " .. vim.api.nvim_tabpage_get_number(tab))
    end
  end
  if not choice then
    entry.decision = "cancelled"
    if model then
      chat.render_soon()
    end
    return { outcome = { outcome = "cancelled" } }
  end
  if choice.with_reason then
    entry.decision = "rejected: " .. reason
    if model then
      chat.render_soon()
    end
    return { outcome = { outcome = "selected", optionId = "reject_once", _meta = { ["agentd/instruction"] = reason } } }
  end
  entry.decision = label(choice)
  if model then
    chat.render_soon()
  end
  return { outcome = { outcome = "selected", optionId = choice.option.optionId } }
end

--- Awaits an asynchronous question (vim.ui.select/input started by start,
--- which calls finish with the answer); cancel_all answers it nil. For the
--- other questions agentd asks (agentd.elicit).
function M.await(start)
  local pending = {}
  M.pending[pending] = true
  local v = await(start, pending)
  M.pending[pending] = nil
  return v
end

--- Answers every pending permission question (of session_id, when given)
--- with "cancelled".
function M.cancel_all(session_id)
  for p in pairs(M.pending) do
    if p.cancel and (session_id == nil or p.session == session_id) then
      p.cancel()
    end
  end
end

return M
