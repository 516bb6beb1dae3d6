-- The differences between the Neovim versions the plugin runs on (0.7.2
-- and newer), in one place, detected by what the running Neovim has rather
-- than by its version number where that can be told: the other modules call
-- these and never spell out an old or a new form themselves, so 0.12's
-- deprecation warnings stay out of the user's messages.
local M = {}

M.uv = vim.uv or vim.loop

--- Calls method name of an LSP client. Neovim 0.11 made the client an
--- object whose methods take self (client:request) and warns about the old
--- client.request form; before that they are closures over the client.
function M.call(client, name, ...)
  local mt = getmetatable(client)
  local cls = mt and mt.__index
  if type(cls) == "table" and type(rawget(cls, name)) == "function" then
    return cls[name](client, ...)
  end
  return client[name](...)
end

--- Every running LSP client (vim.lsp.get_clients from 0.10 on).
function M.clients()
  if vim.lsp.get_clients then
    return vim.lsp.get_clients()
  end
  return vim.lsp.get_active_clients()
end

--- The path of Neovim's LSP log (vim.lsp.get_log_path is deprecated in 0.12).
function M.log_path()
  return require("vim.lsp.log").get_filename()
end

-- Neovim 0.11 gave vim.str_utfindex an encoding argument and deprecated the
-- (s, index) form; the old one refuses a string where the index goes.
local utfindex_takes_encoding = pcall(vim.str_utfindex, "", "utf-16", 0)

--- The column of byte col of line in encoding enc ("utf-8", "utf-16" or
--- "utf-32"), clamped to the line.
function M.utf_col(line, col, enc)
  col = math.max(0, math.min(col or 0, #line))
  if enc == "utf-8" then
    return col
  end
  if utfindex_takes_encoding then
    return vim.str_utfindex(line, enc, col, false)
  end
  local u32, u16 = vim.str_utfindex(line, col)
  return enc == "utf-32" and u32 or u16
end

return M
