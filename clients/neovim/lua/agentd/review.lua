-- Reviewing what a turn changed. The prompt's answer lists the files
-- (`_meta["agentd/changes"]`) and the turn's diffs give each file's text
-- from before the turn (the chat model's `baseline`). `:AgentdChanges`
-- compares that with the buffers now and puts one quickfix entry per hunk.
--
-- Hunks are shown with extmarks, not diff mode: added and changed lines are
-- highlighted in the file's own window (DiffAdd/DiffChange), removed lines
-- appear as virtual lines (DiffDelete) above where they were, and the file
-- stays editable. In such a buffer `]h`/`[h` move between hunks, "keep"
-- accepts the hunk under the cursor (it leaves the review) and "undo" puts
-- the text from before the turn back into the buffer (one undoable change,
-- left unsaved like the agent's own edits). Every keep or undo recomputes
-- the hunks from the buffer, so typing in between is fine.
local config = require("agentd.config")
local buffers = require("agentd.buffers")

local M = {}

M.ns = vim.api.nvim_create_namespace("agentd_review")

-- path -> { base = text before the turn, bufnr }
M.files = {}

local function split_lines(text)
  local ls = vim.split(text or "", "\n", true)
  if ls[#ls] == "" then
    table.remove(ls)
  end
  return ls
end

local function buf_text(b)
  return table.concat(vim.api.nvim_buf_get_lines(b, 0, -1, false), "\n") .. "\n"
end

--- The hunks between base and the buffer: a list of {start_a, count_a,
--- start_b, count_b} (1-based; a count of 0 means the hunk sits after that
--- line), in buffer order.
function M.hunks(path)
  local f = M.files[path]
  if not (f and vim.api.nvim_buf_is_valid(f.bufnr)) then
    return {}
  end
  local base = f.base
  if base ~= "" and base:sub(-1) ~= "\n" then
    base = base .. "\n"
  end
  local now = buf_text(f.bufnr)
  if now == "\n" and vim.api.nvim_buf_line_count(f.bufnr) == 1 then
    now = ""
  end
  local ok, idx = pcall(vim.diff, base, now, { result_type = "indices" })
  if not ok or type(idx) ~= "table" then
    return {}
  end
  return idx
end

-- Highlights a buffer's hunks.
local function mark(path)
  local f = M.files[path]
  if not (f and vim.api.nvim_buf_is_valid(f.bufnr)) then
    return
  end
  local b = f.bufnr
  vim.api.nvim_buf_clear_namespace(b, M.ns, 0, -1)
  local base = split_lines(f.base)
  local total = vim.api.nvim_buf_line_count(b)
  for _, h in ipairs(M.hunks(path)) do
    local sa, ca, sb, cb = h[1], h[2], h[3], h[4]
    local hl = ca > 0 and "DiffChange" or "DiffAdd"
    for l = sb, sb + cb - 1 do
      if l >= 1 and l <= total then
        pcall(vim.api.nvim_buf_set_extmark, b, M.ns, l - 1, 0, { line_hl_group = hl, sign_text = ca > 0 and "~" or "+", sign_hl_group = hl })
      end
    end
    if ca > 0 then
      local virt = {}
      for l = sa, sa + ca - 1 do
        virt[#virt + 1] = { { "- " .. (base[l] or ""), "DiffDelete" } }
      end
      -- Removed lines show above the hunk's first line (below line sb when
      -- the hunk only removes).
      local row, above = sb - 1, true
      if cb == 0 then
        row, above = math.max(0, sb - 1), sb == 0
        if sb == 0 then
          row = 0
        end
      end
      row = math.min(math.max(row, 0), total - 1)
      pcall(vim.api.nvim_buf_set_extmark, b, M.ns, row, 0, { virt_lines = virt, virt_lines_above = above })
    end
  end
end

--- The hunk {sa, ca, sb, cb} at or around buffer line lnum, or nil.
function M.hunk_at(path, lnum)
  for _, h in ipairs(M.hunks(path)) do
    local first, lastl = h[3], h[3] + math.max(h[4], 1) - 1
    if h[4] == 0 then
      first, lastl = h[3], h[3] + 1 -- a removal sits between two lines
    end
    if lnum >= first and lnum <= lastl then
      return h
    end
  end
  return nil
end

local function path_of(b)
  for path, f in pairs(M.files) do
    if f.bufnr == b then
      return path
    end
  end
  return nil
end

--- Moves the cursor to the next (dir 1) or previous (dir -1) hunk.
function M.jump(dir)
  local b = vim.api.nvim_get_current_buf()
  local path = path_of(b)
  if not path then
    return false
  end
  local cur = vim.api.nvim_win_get_cursor(0)[1]
  local hs = M.hunks(path)
  local target
  if dir > 0 then
    for _, h in ipairs(hs) do
      if math.max(h[3], 1) > cur then
        target = math.max(h[3], 1)
        break
      end
    end
  else
    for i = #hs, 1, -1 do
      if math.max(hs[i][3], 1) < cur then
        target = math.max(hs[i][3], 1)
        break
      end
    end
  end
  if not target then
    vim.notify("agentd: no " .. (dir > 0 and "next" or "previous") .. " change", vim.log.levels.INFO)
    return false
  end
  vim.api.nvim_win_set_cursor(0, { math.min(target, vim.api.nvim_buf_line_count(b)), 0 })
  return true
end

-- Replaces lines [first, first+count) (1-based) of list with repl.
local function splice(list, first, count, repl)
  local out = {}
  for i = 1, first - 1 do
    out[#out + 1] = list[i]
  end
  for _, l in ipairs(repl) do
    out[#out + 1] = l
  end
  for i = first + count, #list do
    out[#out + 1] = list[i]
  end
  return out
end

--- The buffer, the hunk under the cursor and its file's review state, or nil (with a word to the
--- user) when the cursor is on no change of the last turn.
local function cursor_hunk()
  local b = vim.api.nvim_get_current_buf()
  local path = path_of(b)
  local h = path and M.hunk_at(path, vim.api.nvim_win_get_cursor(0)[1])
  if not h then
    vim.notify("agentd: no change of the last turn under the cursor", vim.log.levels.INFO)
    return nil
  end
  return b, h, M.files[path]
end

--- Keeps the hunk under the cursor: it becomes part of the base, so it
--- leaves the review. Returns true when there was one.
function M.keep()
  local b, h, f = cursor_hunk()
  if not b then
    return false
  end
  local base = split_lines(f.base)
  local now = vim.api.nvim_buf_get_lines(b, h[3] - 1 + (h[4] == 0 and 1 or 0), h[3] - 1 + h[4] + (h[4] == 0 and 1 or 0), false)
  local first = h[2] == 0 and h[1] + 1 or h[1]
  base = splice(base, first, h[2], now)
  f.base = #base > 0 and (table.concat(base, "\n") .. "\n") or ""
  M.refresh()
  return true
end

--- Undoes the hunk under the cursor: the buffer gets the text from before
--- the turn back there. Returns true when there was one.
function M.undo()
  local b, h, f = cursor_hunk()
  if not b then
    return false
  end
  local base = split_lines(f.base)
  local old = {}
  for l = h[1], h[1] + h[2] - 1 do
    old[#old + 1] = base[l]
  end
  -- A pure insertion (count_b lines after start_b-1) is removed; a pure
  -- removal (count_b 0) is put back after line start_b.
  local first0 = h[4] == 0 and h[3] or (h[3] - 1)
  vim.api.nvim_buf_set_lines(b, first0, first0 + h[4], false, old)
  M.refresh()
  return true
end

--- Remarks every buffer under review and rebuilds the quickfix list.
function M.refresh()
  for path in pairs(M.files) do
    mark(path)
  end
  M.set_quickfix(true)
end

--- The quickfix items of every hunk under review.
function M.items()
  local items = {}
  local paths = vim.tbl_keys(M.files)
  table.sort(paths, function(a, b)
    return (M.files[a].order or 0) < (M.files[b].order or 0)
  end)
  for _, path in ipairs(paths) do
    local f = M.files[path]
    local b = f.bufnr
    for _, h in ipairs(M.hunks(path)) do
      local lnum = math.max(1, h[3])
      local first = vim.api.nvim_buf_get_lines(b, lnum - 1, lnum, false)[1] or ""
      local what
      if h[2] == 0 then
        what = string.format("+%d", h[4])
      elseif h[4] == 0 then
        what = string.format("-%d", h[2])
      else
        what = string.format("+%d -%d", h[4], h[2])
      end
      items[#items + 1] = { bufnr = b, filename = path, lnum = lnum, col = 1, text = what .. ": " .. (h[4] > 0 and first or "(lines removed)") }
    end
  end
  return items
end

function M.set_quickfix(replace)
  local items = M.items()
  local title = "agentd: changes of the last turn"
  local info = vim.fn.getqflist({ title = 0 })
  if replace and info.title ~= title then
    return -- the user moved on to another list; leave it
  end
  vim.fn.setqflist({}, (replace and info.title == title) and "r" or " ", { title = title, items = items })
  return items
end

local function set_keymaps(b)
  local km = config.options.keymaps or {}
  local function map(lhs, fn, desc)
    if lhs then
      vim.keymap.set("n", lhs, fn, { buffer = b, silent = true, desc = desc })
    end
  end
  map(km.hunk_next, function()
    M.jump(1)
  end, "agentd: next change of the last turn")
  map(km.hunk_prev, function()
    M.jump(-1)
  end, "agentd: previous change of the last turn")
  map(km.hunk_keep, M.keep, "agentd: keep this change")
  map(km.hunk_undo, M.undo, "agentd: undo this change")
end

--- Starts reviewing a turn's changes: last = {changes, baseline} from the
--- chat model. Loads every changed file into a buffer (the agent's edits
--- are there, unsaved), marks the hunks, fills the quickfix list and opens
--- it. Returns the quickfix items.
function M.review(last)
  for path, f in pairs(M.files) do
    if vim.api.nvim_buf_is_valid(f.bufnr) then
      vim.api.nvim_buf_clear_namespace(f.bufnr, M.ns, 0, -1)
    end
    M.files[path] = nil
  end
  for i, c in ipairs(last.changes or {}) do
    if c.change ~= "deleted" then
      local base = last.baseline and last.baseline[c.path]
      if base == nil and c.change == "created" then
        base = ""
      end
      if base ~= nil then
        local b = require("agentd.chat").file_buffer(c.path)
        M.files[buffers.normalize(c.path) or c.path] = { base = base, bufnr = b, order = i }
        set_keymaps(b)
      end
    end
  end
  for path in pairs(M.files) do
    mark(path)
  end
  return M.set_quickfix(false)
end

return M
