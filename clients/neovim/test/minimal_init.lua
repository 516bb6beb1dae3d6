-- Minimal init for the plugin's tests: only the plugin and the test helpers
-- on the runtimepath, no user config, no swap or shada files.
local here = debug.getinfo(1, "S").source:sub(2):match("(.*)/")
local plugin = vim.fn.fnamemodify(here, ":h")
vim.opt.runtimepath = { plugin, vim.env.VIMRUNTIME }
package.path = here .. "/?.lua;" .. package.path
vim.opt.swapfile = false
vim.opt.shadafile = "NONE"
vim.opt.more = false
vim.opt.hidden = true
vim.cmd("runtime plugin/agentd.lua")
