-- The contract's method names (docs/protocol.md), in one place: every
-- request, notification and handler in the plugin names its method through
-- this table, never as a string literal, so a renamed method is one edit
-- here and a typo is a nil the tests catch.
local M = {}

-- Neovim → agentd requests.
M.session_new = "agent/session/new"
M.session_load = "agent/session/load"
M.session_resume = "agent/session/resume"
M.session_fork = "agent/session/fork"
M.session_list = "agent/session/list"
M.session_close = "agent/session/close"
M.session_prompt = "agent/session/prompt"
M.session_set_config_option = "agent/session/set_config_option"
M.session_steer = "agent/x/session/steer"
M.checkpoints_list = "agent/x/checkpoints/list"
M.checkpoints_restore = "agent/x/checkpoints/restore"
M.grants_list = "agent/x/grants/list"
M.grants_revoke = "agent/x/grants/revoke"
M.programs_list = "agent/x/programs/list"
M.programs_stop = "agent/x/programs/stop"
M.inline_completion = "textDocument/inlineCompletion"
M.did_close = "textDocument/didClose"
M.infer = "agent/x/infer"
M.mcp_servers = "agent/x/mcp/servers"
M.mcp_sign_in = "agent/mcp/signIn"
M.mcp_complete_sign_in = "agent/x/mcp/completeSignIn"

-- Neovim → agentd notifications.
M.session_cancel = "agent/session/cancel"
M.did_change_configuration = "workspace/didChangeConfiguration"

-- agentd → Neovim notification.
M.session_update = "agent/session/update"
M.infer_chunk = "agent/x/infer/chunk"

-- agentd → Neovim requests.
M.request_permission = "agent/session/request_permission"
M.elicitation_create = "agent/elicitation/create"
M.read_text_file = "agent/fs/read_text_file"
M.dirty_buffers = "agent/x/dirty_buffers"
M.diagnostics = "agent/x/diagnostics"
M.save_buffers = "agent/x/save_buffers"
M.secrets_get = "agent/x/secrets/get"
M.workspace_symbols = "agent/x/workspace_symbols"
M.editor_state = "agent/x/editor_state"
M.apply_edit = "workspace/applyEdit"
M.show_document = "window/showDocument"

-- What Neovim asks the other language servers.
M.lsp_workspace_symbol = "workspace/symbol"

-- Reading a name that is not here is a bug in the plugin: say so at once.
return setmetatable(M, {
  __index = function(_, k)
    error("agentd.methods: no method named " .. tostring(k), 2)
  end,
})
