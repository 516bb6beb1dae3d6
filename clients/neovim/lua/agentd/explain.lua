-- :AgentdExplain: an explanation of the selected lines from the user's
-- model through agent/x/infer (outside any session), streamed into a scratch
-- window as agent/x/infer/chunk arrives and replaced by the whole answer.
local methods = require("agentd.methods")

local M = {}

M.system = "You explain code to the programmer who is reading it. Say what the code does and why, "
  .. "briefly, in plain prose; point out a bug if you see one. Do not repeat the code."

-- The explanation in progress: { id, buf, text }.
M.current = nil

local function set_text(buf, text)
  if not vim.api.nvim_buf_is_valid(buf) then
    return
  end
  vim.bo[buf].modifiable = true
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, vim.split(text, "\n", { plain = true }))
  vim.bo[buf].modifiable = false
end

local function open_window(title)
  local buf = vim.api.nvim_create_buf(false, true)
  vim.bo[buf].bufhidden = "wipe"
  vim.bo[buf].filetype = "markdown"
  pcall(vim.api.nvim_buf_set_name, buf, "agentd://explain/" .. buf)
  vim.cmd("botright split")
  vim.api.nvim_win_set_buf(0, buf)
  vim.api.nvim_win_set_height(0, math.max(6, math.floor(vim.o.lines / 3)))
  vim.keymap.set("n", "q", "<Cmd>close<CR>", { buffer = buf, silent = true })
  set_text(buf, title)
  return buf
end

--- Streams a chunk into the window of the request it belongs to.
function M.on_chunk(params)
  local cur = M.current
  if type(params) ~= "table" or not cur or params.requestId ~= cur.id or type(params.text) ~= "string" then
    return
  end
  cur.text = cur.text .. params.text
  set_text(cur.buf, cur.text)
end

--- Explains lines line1..line2 of the current buffer.
function M.explain(line1, line2)
  local agentd = require("agentd")
  local client = require("agentd.client")
  local src = vim.api.nvim_get_current_buf()
  local lines = vim.api.nvim_buf_get_lines(src, line1 - 1, line2, false)
  local ft = vim.bo[src].filetype
  local name = vim.api.nvim_buf_get_name(src)
  local where = name ~= "" and agentd.display_path(name) or "an unnamed buffer"
  local prompt = string.format("Lines %d-%d of %s:\n```%s\n%s\n```", line1, line2, where, ft, table.concat(lines, "\n"))
  local win = vim.api.nvim_get_current_win()
  local buf = open_window("(asking the model…)")
  vim.api.nvim_set_current_win(win)
  agentd.with_client(function(err, c)
    if err then
      set_text(buf, "agentd: " .. tostring(err))
      return
    end
    local me = { buf = buf, text = "" }
    local ok, id = client.raw_request(c, methods.infer, { system = M.system, prompt = prompt }, function(e, result)
      if M.current == me then
        M.current = nil
      end
      if e then
        set_text(buf, "agentd: could not explain: " .. tostring(e.message or vim.inspect(e)))
        vim.notify("agentd: could not explain: " .. tostring(e.message or vim.inspect(e)), vim.log.levels.ERROR, { title = "agentd" })
        return
      end
      local text = type(result) == "table" and result.text or ""
      set_text(buf, text ~= "" and text or "(the model said nothing)")
    end)
    if ok then
      me.id = id
      M.current = me
    end
  end)
  return buf
end

return M
