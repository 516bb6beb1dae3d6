-- Options of the agentd plugin: defaults, validation and the merged result.
-- A bad option is reported by its name, so that `setup()` can tell the user
-- exactly which line of their config to fix.
local M = {}

M.modes = { ask = true, auto = true, plan = true }

M.defaults = {
  -- Command that starts the daemon; agentd speaks LSP framing on stdio.
  cmd = { "agentd", "--stdio" },
  -- Extra environment for the daemon (e.g. an API key variable).
  cmd_env = nil,
  -- Passed as initializationOptions.agent.settings (same keys as agentd's
  -- config file: provider, providers, mode, maxIterations, …).
  settings = {},
  -- Permission mode for new sessions: "ask", "auto" or "plan" (nil keeps
  -- agentd's own default or the settings' "mode").
  mode = nil,
  -- Working directory of sessions: a string, or a function returning one.
  cwd = nil,
  -- Where agentd's `agent/x/secrets/get` finds API keys, looked up by the
  -- server's origin (scheme://host[:port]): a function(origin) returning the
  -- key or nil, or a map from origin to an environment variable, e.g.
  -- { ["https://openrouter.ai"] = "OPENROUTER_API_KEY" }. nil: none served.
  secrets = nil,
  -- Seconds to wait for agentd to answer `initialize`.
  init_timeout = 15,
  -- How an MCP server's sign-in page is opened: false keeps the default
  -- (vim.ui.open, else xdg-open/open), or a function(url) returning false
  -- when it could not open it.
  open_url = false,
  -- Global keymaps (normal mode); false disables one, false for the whole
  -- table disables all.
  keymaps = {
    toggle = "<leader>aa",
    cancel = "<leader>ax",
    -- Chat-window keymaps (buffer-local).
    send = "<CR>",        -- normal mode in the input window
    send_insert = "<C-s>", -- insert mode in the input window
    close = "q",          -- normal mode in the transcript
    open = "<CR>",        -- transcript: open the file of the tool call under the cursor (or show its output)
    expand = "<Tab>",     -- transcript: show or hide the output of the tool call under the cursor
    edit = "e",           -- transcript: edit and resend the prompt under the cursor (back to before its turn)
    stop = "<C-c>",       -- both chat windows
    steer = "<M-CR>",     -- input window (normal and insert): steer the running turn with the message
    -- In a buffer :AgentdChanges listed (buffer-local, normal mode):
    hunk_next = "]h",     -- next change of the last turn
    hunk_prev = "[h",     -- previous change
    hunk_keep = "<leader>hk", -- keep the change under the cursor (drop it from the review)
    hunk_undo = "<leader>hu", -- put the text from before the turn back
  },
  chat = {
    -- "right", "left", "bottom" or "tab".
    position = "right",
    -- Width (columns, or a fraction of the screen) for left/right.
    width = 0.4,
    -- Height of the input window.
    input_height = 5,
  },
  -- Inline completions (shown only when agentd's settings name a
  -- `completion` provider and model, so that it advertises them).
  inline = {
    enabled = true,
    -- Milliseconds without typing before a suggestion is asked for.
    debounce_ms = 75,
    -- Insert-mode key that accepts the suggestion; without one shown it is
    -- the key itself, so "<Tab>" keeps indenting. false: no key.
    accept = "<M-l>",
    -- Highlight group of the suggestion's text.
    highlight = "Comment",
    -- On Neovim 0.12+, let vim.lsp.inline_completion show them instead.
    native = true,
  },
}

local function fail(name, msg)
  return false, string.format("agentd: option `%s` %s", name, msg)
end

-- The conventional variables, each only for its vendor's own origin.
M.vendor_origin = {
  ANTHROPIC_API_KEY = "https://api.anthropic.com",
  OPENAI_API_KEY = "https://api.openai.com",
  GEMINI_API_KEY = "https://generativelanguage.googleapis.com",
}

--- Checks the `secrets` option: a function, or a map from origin to the
--- name of an environment variable. A conventional variable may only be
--- mapped to its own vendor's origin.
function M.validate_secrets(v)
  if type(v) == "function" then
    return true
  end
  if type(v) ~= "table" then
    return fail("secrets", "must be a function(origin) or a table mapping origins to environment variable names")
  end
  for origin, var in pairs(v) do
    local name = "secrets[" .. vim.inspect(origin) .. "]"
    if type(origin) ~= "string" or not origin:match("^https?://[^/]+$") or origin ~= origin:lower() then
      return fail(name, "must be keyed by an origin such as \"https://openrouter.ai\" (scheme://host[:port], lowercase, no path)")
    end
    if type(var) ~= "string" or not var:match("^[%a_][%w_]*$") then
      return fail(name, "must name an environment variable")
    end
    local own = M.vendor_origin[var]
    if own and own ~= origin then
      return fail(name, string.format("maps %s to %s, but that variable is only ever sent to %s; name another variable for this server", var, origin, own))
    end
  end
  return true
end

local function is_list_of_strings(v)
  if type(v) ~= "table" or #v == 0 then
    return false
  end
  for k, s in pairs(v) do
    if type(k) ~= "number" or type(s) ~= "string" then
      return false
    end
  end
  return true
end

--- Checks user options. Returns true, or false and a message naming the bad
--- option.
function M.validate(opts)
  if opts == nil then
    return true
  end
  if type(opts) ~= "table" then
    return false, "agentd: setup() takes a table of options, got " .. type(opts)
  end
  for k in pairs(opts) do
    if M.defaults[k] == nil and k ~= "cmd_env" and k ~= "mode" and k ~= "cwd" and k ~= "secrets" then
      return fail(tostring(k), "is not an agentd option")
    end
  end
  if opts.cmd ~= nil and not is_list_of_strings(opts.cmd) then
    return fail("cmd", "must be a non-empty list of strings, e.g. { \"agentd\", \"--stdio\" }")
  end
  if opts.cmd_env ~= nil and type(opts.cmd_env) ~= "table" then
    return fail("cmd_env", "must be a table of environment variables")
  end
  if opts.settings ~= nil and type(opts.settings) ~= "table" then
    return fail("settings", "must be a table (agentd settings), got " .. type(opts.settings))
  end
  if opts.mode ~= nil and not M.modes[opts.mode] then
    return fail("mode", string.format("must be one of ask, auto, plan; got %s", vim.inspect(opts.mode)))
  end
  if opts.settings and opts.settings.mode ~= nil and not M.modes[opts.settings.mode] then
    return fail("settings.mode", string.format("must be one of ask, auto, plan; got %s", vim.inspect(opts.settings.mode)))
  end
  if opts.cwd ~= nil and type(opts.cwd) ~= "string" and type(opts.cwd) ~= "function" then
    return fail("cwd", "must be a string or a function returning one")
  end
  if opts.secrets ~= nil then
    local ok, err = M.validate_secrets(opts.secrets)
    if not ok then
      return false, err
    end
  end
  if opts.open_url ~= nil and opts.open_url ~= false and type(opts.open_url) ~= "function" then
    return fail("open_url", "must be false or a function(url)")
  end
  if opts.init_timeout ~= nil and (type(opts.init_timeout) ~= "number" or opts.init_timeout <= 0) then
    return fail("init_timeout", "must be a positive number of seconds")
  end
  if opts.keymaps ~= nil and opts.keymaps ~= false then
    if type(opts.keymaps) ~= "table" then
      return fail("keymaps", "must be a table or false")
    end
    for k, v in pairs(opts.keymaps) do
      if M.defaults.keymaps[k] == nil then
        local known = vim.tbl_keys(M.defaults.keymaps)
        table.sort(known)
        return fail("keymaps." .. tostring(k), "is not an agentd keymap (known: " .. table.concat(known, ", ") .. ")")
      end
      if v ~= false and (type(v) ~= "string" or v == "") then
        return fail("keymaps." .. k, "must be a key sequence string or false")
      end
    end
  end
  if opts.chat ~= nil then
    if type(opts.chat) ~= "table" then
      return fail("chat", "must be a table")
    end
    for k in pairs(opts.chat) do
      if M.defaults.chat[k] == nil then
        return fail("chat." .. tostring(k), "is not an agentd chat option")
      end
    end
    local pos = opts.chat.position
    if pos ~= nil and pos ~= "right" and pos ~= "left" and pos ~= "bottom" and pos ~= "tab" then
      return fail("chat.position", "must be right, left, bottom or tab")
    end
    local w = opts.chat.width
    if w ~= nil and (type(w) ~= "number" or w <= 0) then
      return fail("chat.width", "must be a positive number")
    end
    local h = opts.chat.input_height
    if h ~= nil and (type(h) ~= "number" or h < 1) then
      return fail("chat.input_height", "must be a number >= 1")
    end
  end
  if opts.inline ~= nil then
    if type(opts.inline) ~= "table" then
      return fail("inline", "must be a table")
    end
    for k in pairs(opts.inline) do
      if M.defaults.inline[k] == nil then
        local known = vim.tbl_keys(M.defaults.inline)
        table.sort(known)
        return fail("inline." .. tostring(k), "is not an agentd inline option (known: " .. table.concat(known, ", ") .. ")")
      end
    end
    local i = opts.inline
    for _, k in ipairs({ "enabled", "native" }) do
      if i[k] ~= nil and type(i[k]) ~= "boolean" then
        return fail("inline." .. k, "must be true or false")
      end
    end
    if i.debounce_ms ~= nil and (type(i.debounce_ms) ~= "number" or i.debounce_ms < 0 or i.debounce_ms > 5000) then
      return fail("inline.debounce_ms", "must be a number of milliseconds from 0 to 5000")
    end
    if i.accept ~= nil and i.accept ~= false and (type(i.accept) ~= "string" or i.accept == "") then
      return fail("inline.accept", "must be a key sequence string such as \"<M-l>\" or \"<Tab>\", or false")
    end
    if i.highlight ~= nil and (type(i.highlight) ~= "string" or i.highlight == "") then
      return fail("inline.highlight", "must be a highlight group name")
    end
  end
  return true
end

M.options = vim.deepcopy(M.defaults)

--- Validates and merges opts over the defaults. Returns true or false, err.
function M.set(opts)
  local ok, err = M.validate(opts)
  if not ok then
    return false, err
  end
  opts = opts or {}
  local merged = vim.tbl_deep_extend("force", vim.deepcopy(M.defaults), opts)
  -- Lists replace rather than merge.
  if opts.cmd then
    merged.cmd = vim.deepcopy(opts.cmd)
  end
  if opts.keymaps == false then
    merged.keymaps = false
  end
  M.options = merged
  return true
end

--- The working directory for sessions.
function M.cwd()
  local c = M.options.cwd
  if type(c) == "function" then
    c = c()
  end
  if type(c) ~= "string" or c == "" then
    c = vim.fn.getcwd()
  end
  c = vim.fn.fnamemodify(c, ":p"):gsub("(.)/$", "%1")
  return c
end

--- Settings as sent to agentd, with `mode` folded in.
function M.settings()
  local s = vim.deepcopy(M.options.settings or {})
  if M.options.mode then
    s.mode = M.options.mode
  end
  return s
end

return M
