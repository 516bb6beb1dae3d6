-- Commands of the agentd plugin. Nothing here starts the daemon or reads
-- options: require("agentd").setup(opts) configures, and the first command
-- that needs agentd starts it.
if vim.g.loaded_agentd then
  return
end
vim.g.loaded_agentd = true

local function agentd()
  return require("agentd")
end

vim.api.nvim_create_user_command("AgentdChat", function()
  agentd().toggle_chat()
end, { desc = "agentd: open or close the chat window" })

vim.api.nvim_create_user_command("AgentdPrompt", function(o)
  local range = o.range > 0 and { o.line1, o.line2 } or nil
  agentd().prompt(o.args, { range = range })
end, { nargs = "+", range = true, desc = "agentd: send a prompt (with the lines of a range as context)" })

vim.api.nvim_create_user_command("AgentdExplain", function(o)
  require("agentd.explain").explain(o.line1, o.line2)
end, { range = true, desc = "agentd: explain the selected lines (the current line without a range)" })

vim.api.nvim_create_user_command("AgentdCancel", function()
  agentd().cancel()
end, { desc = "agentd: cancel the running turn" })

vim.api.nvim_create_user_command("AgentdMode", function(o)
  agentd().set_mode(o.args)
end, {
  nargs = 1,
  complete = function()
    return { "ask", "auto", "plan" }
  end,
  desc = "agentd: set the permission mode (ask, auto, plan)",
})

vim.api.nvim_create_user_command("AgentdMcp", function()
  agentd().mcp()
end, { desc = "agentd: list the session's MCP servers, their state and tools" })
vim.api.nvim_create_user_command("AgentdMcpSignIn", function(o)
  require("agentd.mcp_auth").command(o.fargs)
end, {
  nargs = "*",
  complete = function(_, line)
    if line:match("^%S+%s+%S+%s") then
      return {}
    end
    return require("agentd.mcp_auth").names()
  end,
  desc = "agentd: sign in to an MCP server that asks for it (opens the browser); NAME ADDRESS finishes it with the address the browser ended on",
})

vim.api.nvim_create_user_command("AgentdNew", function()
  agentd().new_session()
end, { desc = "agentd: start a new chat (the one shown stays live: :AgentdChats)" })

vim.api.nvim_create_user_command("AgentdChats", function()
  agentd().chats()
end, { desc = "agentd: switch between the live chats (a running turn goes on in the others)" })

vim.api.nvim_create_user_command("AgentdCloseChat", function()
  agentd().close_chat()
end, { desc = "agentd: end the chat shown and show the newest other one" })

vim.api.nvim_create_user_command("AgentdSessions", function()
  agentd().sessions()
end, { desc = "agentd: list and load sessions" })

vim.api.nvim_create_user_command("AgentdSteer", function(o)
  agentd().steer(o.args)
end, { nargs = "+", desc = "agentd: add a message to the running turn (a prompt when none runs)" })

vim.api.nvim_create_user_command("AgentdChanges", function()
  agentd().changes()
end, { desc = "agentd: the last turn's changes in the quickfix list (]h [h to move, keep or undo each)" })

vim.api.nvim_create_user_command("AgentdRestore", function()
  agentd().restore()
end, { desc = "agentd: restore a checkpoint (files and/or conversation from before a turn)" })

vim.api.nvim_create_user_command("AgentdGrants", function()
  agentd().grants()
end, { desc = "agentd: list the remembered permission answers and revoke one" })
vim.api.nvim_create_user_command("AgentdPrograms", function()
  agentd().programs()
end, { desc = "agentd: list the session's background programs; pick a running one to stop it" })

vim.api.nvim_create_user_command("AgentdFork", function()
  agentd().fork()
end, { desc = "agentd: fork the session (a new one with a copy of its history)" })

vim.api.nvim_create_user_command("AgentdModel", function(o)
  agentd().set_model(o.args)
end, {
  nargs = "?",
  complete = function()
    return agentd().model_names()
  end,
  desc = "agentd: switch the session's model (pick from a list without an argument)",
})
