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
  h.eq(true, cc.editorState, "editorState")
  h.eq(true, cc.notices, "notices")
  local caps = client.capabilities()
  h.eq(true, caps.workspace.applyEdit, "workspace.applyEdit")
  h.eq(true, caps.workspace.workspaceEdit.documentChanges, "documentChanges")
  h.eq({ "create", "rename", "delete" }, caps.workspace.workspaceEdit.resourceOperations, "resourceOperations")
end)

cases.add("commands are defined by plugin/agentd.lua", function()
  local cmds = vim.api.nvim_get_commands({})
  for _, c in ipairs({ "AgentdChat", "AgentdPrompt", "AgentdCancel", "AgentdMode", "AgentdNew", "AgentdSessions",
    "AgentdSteer", "AgentdChanges", "AgentdRestore", "AgentdFork", "AgentdModel", "AgentdExplain" }) do
    h.truthy(cmds[c], c .. " defined")
  end
  -- Loading the plugin file started nothing.
  h.eq(nil, require("agentd.client").state.client_id, "no daemon started at load")
  h.eq({ "ask", "auto", "plan" }, vim.fn.getcompletion("AgentdMode ", "cmdline"), "mode completion")
end)

cases.add("method names come from one module of constants that matches the contract", function()
  local here = vim.api.nvim_get_runtime_file("plugin/agentd.lua", false)[1]
  local plugin_dir = vim.fn.fnamemodify(here, ":h:h")
  local methods = require("agentd.methods")
  local contract = h.read(plugin_dir .. "/../../docs/protocol.md")
  -- Methods the plugin answers or sends before docs/protocol.md lists them.
  local upcoming = {}
  local n = 0
  for name, m in pairs(methods) do
    n = n + 1
    if m:match("^agent/") and not upcoming[name] then
      h.contains(contract, "`" .. m, "docs/protocol.md names " .. name)
    end
  end
  h.truthy(n >= 20, "the constants are there")
  h.truthy(not pcall(function()
    return methods.no_such_method
  end), "an unknown name is an error, not nil")
  -- No other file spells a method out.
  local files = vim.fn.globpath(plugin_dir, "lua/agentd/*.lua", false, true)
  vim.list_extend(files, vim.fn.globpath(plugin_dir, "plugin/*.lua", false, true))
  h.truthy(#files > 10, "the plugin's files found")
  for _, f in ipairs(files) do
    if not f:match("methods%.lua$") then
      local text = h.read(f)
      h.eq(nil, text:find('"agent/', 1, true), f .. " has no agent/ literal")
      h.eq(nil, text:find('"workspace/', 1, true), f .. " has no workspace/ literal")
    end
  end
end)

cases.add("sessions are listed by title and relative time", function()
  local agentd = require("agentd")
  local now = os.time()
  local function iso(t)
    return os.date("!%Y-%m-%dT%H:%M:%SZ", t)
  end
  h.eq("Fix the parser  · 5 min ago", agentd.fmt_session({ sessionId = "abc", title = "Fix the parser", updatedAt = iso(now - 300) }), "title and minutes")
  h.eq("untitled (12345678)  · 2 h ago", agentd.fmt_session({ sessionId = "1234567890", updatedAt = iso(now - 7300) }), "no title")
  h.eq("x  · 3 days ago", agentd.fmt_session({ sessionId = "y", title = "x", updatedAt = iso(now - 3 * 86400 - 10) }), "days")
  h.eq("just now", agentd.relative_time(iso(now)), "now")
  h.eq("5 min ago", agentd.relative_time(os.date("!%Y-%m-%dT%H:%M:%S", now - 300 + 3600) .. "+01:00"), "an offset is honoured")
  h.eq("t", agentd.fmt_session({ sessionId = "q", title = "t", updatedAt = "garbage" }), "a bad time is left out")
end)

cases.add("editor_state: the active file, its selection and the open files", function()
  local dir = h.tmpdir()
  local a, b = dir .. "/a.go", dir .. "/b.go"
  h.write(a, "l1\nl2\nl3\nl4\n")
  h.write(b, "b\n")
  vim.cmd("edit " .. vim.fn.fnameescape(b))
  vim.cmd("edit " .. vim.fn.fnameescape(a))
  local win = vim.api.nvim_get_current_win()
  local agentd = require("agentd")
  h.truthy(agentd.setup({}))
  local handler = agentd.lsp_handlers()["agent/x/editor_state"]
  local function call()
    local r, e = handler(nil, { sessionId = "s" }, { client_id = 1 })
    h.eq(nil, e, "no error")
    return r
  end
  agentd.open_chat() -- focus in the chat's input: the file is still the active one
  local r = call()
  h.eq(a, r.activeFile, "the last file window's buffer")
  h.eq(nil, r.selection, "no selection yet")
  table.sort(r.openFiles)
  h.eq({ a, b }, r.openFiles, "listed file buffers only (not the chat)")
  -- A visual selection made in the file.
  vim.api.nvim_set_current_win(win)
  vim.api.nvim_win_set_cursor(0, { 2, 0 })
  vim.api.nvim_feedkeys("Vj\27", "x", false)
  r = call()
  h.eq({ path = a, startLine = 2, endLine = 3, text = "l2\nl3" }, r.selection, "the selection")
  -- In Visual mode right now.
  vim.api.nvim_win_set_cursor(0, { 4, 0 })
  vim.api.nvim_feedkeys("vk", "xt!", false)
  r = call()
  h.eq(3, r.selection.startLine, "live selection start")
  h.eq(4, r.selection.endLine, "live selection end")
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

cases.add("the README's runtimepath setup for Neovim 0.7 loads the plugin and its help", function()
  local here = vim.api.nvim_get_runtime_file("plugin/agentd.lua", false)[1]
  local plugin_dir = vim.fn.fnamemodify(here, ":h:h")
  local readme = h.read(plugin_dir .. "/README.md")
  local snippet = readme:match("On any Neovim from 0%.7%.2.-```lua\n(.-)```")
  h.truthy(snippet and snippet:find("runtimepath", 1, true), "runtimepath setup found in README.md")
  h.truthy(readme:find("needs **Neovim 0.8 or newer**", 1, true), "lazy.nvim's requirement stated")
  h.truthy(readme:find("runtimepath", 1, true) < readme:find("lazy.nvim", 1, true), "the plain setup comes first")
  local checkout = h.tmpdir()
  vim.fn.mkdir(checkout .. "/clients", "p")
  vim.fn.system({ "cp", "-r", plugin_dir, checkout .. "/clients/neovim" })
  vim.fn.delete(checkout .. "/clients/neovim/doc/tags")
  vim.opt.runtimepath:remove(plugin_dir)
  for name in pairs(package.loaded) do
    if name == "agentd" or name:match("^agentd%.") then
      package.loaded[name] = nil
    end
  end
  snippet = snippet:gsub("~/src/agentd", checkout)
  assert(loadstring(snippet))()
  h.eq({}, h.errors(), "no errors from setup")
  h.truthy(vim.fn.filereadable(checkout .. "/clients/neovim/doc/tags") == 1, "help tags made")
  vim.cmd("help agentd-review")
  h.eq(checkout .. "/clients/neovim/doc/agentd.txt", vim.fn.expand("%:p"), ":help from the checkout")
  h.eq("claude-sonnet-4-5", require("agentd.config").options.settings.providers.anthropic.model, "setup ran")
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
  for c in pairs(vim.api.nvim_get_commands({})) do
    if c:match("^Agentd") then
      vim.api.nvim_del_user_command(c)
    end
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
