-- Neovim's buffers as agentd sees them: finding the buffer of a path, its
-- text (unsaved changes included) and its version. The version is the
-- buffer's `changedtick`, the same number Neovim's LSP client reports as a
-- document version, so an edit computed against a read can be checked
-- against the buffer before it lands.
local M = {}

local uv = vim.uv or vim.loop

--- Normalizes a path for comparison: absolute, symlinks resolved when the
--- file exists, no trailing slash.
function M.normalize(path)
  if type(path) ~= "string" or path == "" then
    return nil
  end
  local abs = vim.fn.fnamemodify(path, ":p")
  local real = uv.fs_realpath(abs)
  abs = real or abs
  if #abs > 1 then
    abs = abs:gsub("/+$", "")
  end
  return abs
end

--- The loaded, file-backed buffer showing path, or nil.
function M.find(path)
  local want = M.normalize(path)
  if not want then
    return nil
  end
  for _, b in ipairs(vim.api.nvim_list_bufs()) do
    if vim.api.nvim_buf_is_valid(b) and vim.api.nvim_buf_is_loaded(b) then
      local name = vim.api.nvim_buf_get_name(b)
      if name ~= "" and vim.bo[b].buftype == "" and M.normalize(name) == want then
        return b
      end
    end
  end
  return nil
end

--- The buffer's version (its changedtick).
function M.version(b)
  return vim.api.nvim_buf_get_changedtick(b)
end

--- The buffer's text as it would be written, with "\n" line ends.
function M.text(b, first, count)
  local total = vim.api.nvim_buf_line_count(b)
  local start = (first and first > 1) and (first - 1) or 0
  local stop = total
  if count and count >= 0 then
    stop = math.min(total, start + count)
  end
  local lines = vim.api.nvim_buf_get_lines(b, start, stop, false)
  if total == 1 and lines[1] == "" and start == 0 then
    return ""
  end
  local text = table.concat(lines, "\n")
  local eol = vim.bo[b].eol or (vim.bo[b].fixeol and not vim.bo[b].binary)
  if #lines > 0 and (stop < total or eol) then
    text = text .. "\n"
  end
  return text
end

--- Reads a file from disk. Returns text, or nil and a reason.
function M.read_disk(path)
  local stat = uv.fs_stat(path)
  if not stat then
    return nil, "not_found"
  end
  if stat.type == "directory" then
    return nil, "is a directory"
  end
  local fd = io.open(path, "rb")
  if not fd then
    return nil, "cannot open"
  end
  local data = fd:read("*a")
  fd:close()
  return data
end

--- Slices text by 1-based first line and line count, like the buffer path.
function M.slice(text, first, count)
  if (not first or first <= 1) and not count then
    return text
  end
  local lines = vim.split(text, "\n", true)
  local trailing = text:sub(-1) == "\n"
  if trailing then
    table.remove(lines)
  end
  local start = (first and first > 1) and first or 1
  local stop = #lines
  if count and count >= 0 then
    stop = math.min(#lines, start + count - 1)
  end
  local out = {}
  for i = start, stop do
    out[#out + 1] = lines[i]
  end
  local s = table.concat(out, "\n")
  if #out > 0 and (stop < #lines or trailing) then
    s = s .. "\n"
  end
  return s
end

--- Every loaded, modified, file-backed buffer.
function M.dirty()
  local out = {}
  for _, b in ipairs(vim.api.nvim_list_bufs()) do
    if vim.api.nvim_buf_is_loaded(b) and vim.bo[b].buftype == "" and vim.bo[b].modified then
      local name = vim.api.nvim_buf_get_name(b)
      if name ~= "" then
        out[#out + 1] = { bufnr = b, path = M.normalize(name) }
      end
    end
  end
  return out
end

return M
