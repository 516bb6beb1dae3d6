-- Minimal init for the plugin's tests: only the plugin and the test helpers
-- on the runtimepath, no user config, no swap or shada files.
local here = debug.getinfo(1, "S").source:sub(2):match("(.*)/")
local plugin = vim.fn.fnamemodify(here, ":h")
-- Neovim's own tree-sitter parsers stay (0.12's help and markdown
-- ftplugins start them, and fail without them).
local rtp = { plugin, vim.env.VIMRUNTIME }
for _, p in ipairs(vim.api.nvim_list_runtime_paths()) do
  if vim.fn.isdirectory(p .. "/parser") == 1 and p ~= plugin and p ~= vim.env.VIMRUNTIME then
    table.insert(rtp, p)
  end
end
vim.opt.runtimepath = rtp
package.path = here .. "/?.lua;" .. package.path
vim.opt.swapfile = false
vim.opt.shadafile = "NONE"
vim.opt.more = false
vim.opt.hidden = true
vim.cmd("runtime plugin/agentd.lua")
