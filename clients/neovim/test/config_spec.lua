-- setup() validation and what the plugin tells agentd at initialize.
local h = require("helpers")
local cases = require("harness").cases()

cases.add("setup names each bad option", function()
  local agentd = require("agentd")
  local bad = {
    { { mode = "yolo" }, "`mode`" },
    { { cmd = "agentd --stdio" }, "`cmd`" },
    { { cmd = {} }, "`cmd`" },
    { { settings = "x" }, "`settings`" },
    { { settings = { mode = "fast" } }, "`settings.mode`" },
    { { keymaps = { toggle = 3 } }, "`keymaps.toggle`" },
    { { keymaps = { nope = "x" } }, "`keymaps.nope`" },
    { { chat = { position = "up" } }, "`chat.position`" },
    { { init_timeout = -1 }, "`init_timeout`" },
    { { colour = "red" }, "`colour`" },
  }
  for _, c in ipairs(bad) do
    h.notes = {}
    h.eq(false, agentd.setup(c[1]), "setup(" .. vim.inspect(c[1]) .. ") result")
    h.eq(1, #h.notes, "one message for " .. vim.inspect(c[1]))
    h.contains(h.notes[1].msg, c[2], "message names the option")
    h.eq(vim.log.levels.ERROR, h.notes[1].level, "level")
  end
  h.notes = {}
  h.eq(true, agentd.setup({ mode = "plan", settings = { provider = "x" }, keymaps = { toggle = false } }), "good options")
  h.eq(0, #h.notes, "no message for good options")
  h.eq(true, agentd.setup(), "setup() without options")
end)

cases.add("initialize carries settings, mode and client capabilities", function()
  local agentd = require("agentd")
  h.truthy(agentd.setup({ mode = "auto", settings = { provider = "p", providers = { p = { apiType = "openai" } } } }))
  local client = require("agentd.client")
  local init = client.init_options().agent
  h.eq(1, init.protocolVersion, "protocolVersion")
  h.eq("p", init.settings.provider, "settings.provider")
  h.eq("auto", init.settings.mode, "mode folded into settings")
  local cc = init.clientCapabilities
  h.eq(true, cc.fs.readTextFile, "fs.readTextFile")
  h.eq(true, cc.dirtyBuffers, "dirtyBuffers")
  h.eq(true, cc.diagnostics, "diagnostics")
  h.eq(true, cc.permissions.ui, "permissions.ui")
  h.eq(true, cc.saveBuffers, "saveBuffers")
  local caps = client.capabilities()
  h.eq(true, caps.workspace.applyEdit, "workspace.applyEdit")
  h.eq(true, caps.workspace.workspaceEdit.documentChanges, "documentChanges")
  h.eq({ "create", "rename", "delete" }, caps.workspace.workspaceEdit.resourceOperations, "resourceOperations")
end)

cases.add("commands are defined by plugin/agentd.lua", function()
  local cmds = vim.api.nvim_get_commands({})
  for _, c in ipairs({ "AgentdChat", "AgentdPrompt", "AgentdCancel", "AgentdMode", "AgentdNew", "AgentdSessions" }) do
    h.truthy(cmds[c], c .. " defined")
  end
  -- Loading the plugin file started nothing.
  h.eq(nil, require("agentd.client").state.client_id, "no daemon started at load")
  h.eq({ "ask", "auto", "plan" }, vim.fn.getcompletion("AgentdMode ", "cmdline"), "mode completion")
end)

cases.add("keymaps are set from options", function()
  h.truthy(require("agentd").setup({ keymaps = { toggle = "<leader>zz", cancel = false } }))
  vim.g.mapleader = "\\"
  local m = vim.fn.maparg("\\zz", "n", false, true)
  h.truthy(m and m.desc and m.desc:find("toggle chat"), "toggle mapping: " .. vim.inspect(m))
  h.eq("", vim.fn.maparg("<leader>ax", "n"), "cancel keymap disabled")
end)

cases.add(":help agentd opens the plugin's help", function()
  local rtp = h.tmpdir()
  vim.fn.mkdir(rtp .. "/doc", "p")
  local src = vim.api.nvim_get_runtime_file("doc/agentd.txt", false)[1]
  h.truthy(src, "doc/agentd.txt on the runtimepath")
  h.write(rtp .. "/doc/agentd.txt", h.read(src))
  vim.cmd("helptags " .. vim.fn.fnameescape(rtp .. "/doc"))
  vim.opt.runtimepath:prepend(rtp)
  for _, topic in ipairs({ "agentd", ":AgentdPrompt", "agentd-options", "agentd.setup()", "agentd-permissions" }) do
    vim.cmd("help " .. topic)
    h.eq("agentd.txt", vim.fn.expand("%:t"), ":help " .. topic)
    vim.cmd("helpclose")
  end
end)

cases.add("the README's lazy.nvim snippet loads the plugin", function()
  local here = vim.api.nvim_get_runtime_file("plugin/agentd.lua", false)[1]
  local plugin_dir = vim.fn.fnamemodify(here, ":h:h")
  local readme = h.read(plugin_dir .. "/README.md")
  local snippet = readme:match("```lua\n(%{\n  \"agentd%-dev/agentd\".-\n%})\n```")
  h.truthy(snippet, "lazy.nvim spec found in README.md")
  local spec = assert(loadstring("return " .. snippet))()
  -- A lazy.nvim checkout of the repository: clients/neovim inside it.
  local checkout = h.tmpdir()
  vim.fn.mkdir(checkout .. "/clients", "p")
  vim.fn.system({ "cp", "-r", plugin_dir, checkout .. "/clients/neovim" })
  vim.fn.delete(checkout .. "/clients/neovim/doc/tags")
  -- Forget the copy minimal_init loaded.
  vim.opt.runtimepath:remove(plugin_dir)
  vim.g.loaded_agentd = nil
  for _, c in ipairs({ "AgentdChat", "AgentdPrompt", "AgentdCancel", "AgentdMode", "AgentdNew", "AgentdSessions" }) do
    vim.api.nvim_del_user_command(c)
  end
  for name in pairs(package.loaded) do
    if name == "agentd" or name:match("^agentd%.") then
      package.loaded[name] = nil
    end
  end
  local plugin = { dir = checkout, name = spec.name }
  spec.build(plugin)
  h.notes = {}
  spec.config(plugin)
  h.eq({}, h.errors(), "no errors from setup")
  h.truthy(vim.api.nvim_get_commands({}).AgentdChat, ":AgentdChat defined by the snippet")
  h.truthy(vim.fn.filereadable(checkout .. "/clients/neovim/doc/tags") == 1, "build made the help tags")
  vim.cmd("help :AgentdSessions")
  h.eq(checkout .. "/clients/neovim/doc/agentd.txt", vim.fn.expand("%:p"), "help from the checkout")
  h.eq("claude-sonnet-4-5", require("agentd.config").options.settings.providers.anthropic.model, "setup ran")
end)

return cases
