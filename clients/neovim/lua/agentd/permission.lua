-- Permission requests from agentd, asked through vim.ui.select. The diff is
-- in the transcript before the question, and a "Show diff" choice opens it in
-- Neovim's diff mode before asking again.
--
-- Where Neovim runs server requests in a coroutine (0.10+), an asynchronous
-- vim.ui.select (dressing.nvim, telescope…) is awaited by yielding. On older
-- Neovim the handler must answer synchronously: the built-in select is, and
-- any other is waited for with vim.wait.
local chat = require("agentd.chat")

local M = {}

M.timeout_ms = 10 * 60 * 1000
M.pending = {} -- set of { cancel = fn }

local SHOW_DIFF = { show_diff = true }

local function label(item)
  if item.show_diff then
    return "Show diff"
  end
  local o = item.option
  return tostring(o.name or o.optionId)
end

--- Calls vim.ui.select and returns the choice (nil when dismissed or
--- cancelled).
local function select(items, opts, pending)
  local co, is_main = coroutine.running()
  local done, result, yielded = false, nil, false
  local function finish(choice)
    if done then
      return
    end
    done, result = true, choice
    if yielded then
      vim.schedule(function()
        coroutine.resume(co)
      end)
    end
  end
  pending.cancel = function()
    finish(nil)
  end
  local ok, err = pcall(vim.ui.select, items, opts, finish)
  if not ok then
    vim.notify("agentd: vim.ui.select failed: " .. tostring(err), vim.log.levels.ERROR)
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
  for _, o in ipairs(params.options) do
    if type(o) == "table" and o.optionId then
      items[#items + 1] = { option = o }
    end
  end
  -- One line (vim.ui.select shows it as the question): what, the program and
  -- where it runs, and the files saved before it runs.
  local prompt = "agentd wants to: " .. chat.visible(tc.title or "run a tool")
  if entry.command then
    prompt = prompt .. " — $ " .. entry.command .. (entry.cwd and (" (in " .. chat.visible(entry.cwd) .. ")") or "")
  end
  if entry.saves and #entry.saves > 0 then
    local names = {}
    for _, f in ipairs(entry.saves) do
      names[#names + 1] = chat.save_line(f)
    end
    prompt = prompt .. " — saves first: " .. table.concat(names, ", ")
  end
  local pending = {}
  M.pending[pending] = true
  local choice
  local diff_tabs = {} -- one per diff, per time "Show diff" was chosen
  while true do
    choice = select(items, { prompt = prompt, format_item = label, kind = "agentd.permission" }, pending)
    if choice and choice.show_diff then
      for _, d in ipairs(entry.diffs) do
        diff_tabs[#diff_tabs + 1] = chat.show_diff(d)
      end
    else
      break
    end
  end
  M.pending[pending] = nil
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
  entry.decision = label(choice)
  if model then
    chat.render_soon()
  end
  return { outcome = { outcome = "selected", optionId = choice.option.optionId } }
end

--- Answers every pending permission question with "cancelled".
function M.cancel_all()
  for p in pairs(M.pending) do
    if p.cancel then
      p.cancel()
    end
  end
end

return M
