-- :checkhealth agentd — the binary and its version, whether it starts and
-- initializes, the configured provider and its key status, and which Neovim
-- features the plugin can use.
local config = require("agentd.config")

local M = {}

local health = vim.health or require("health")
local start = health.start or health.report_start
local ok = health.ok or health.report_ok
local warn = health.warn or health.report_warn
local report_error = health.error or health.report_error
local info = health.info or health.report_info

local function frame(msg)
  local body = vim.json.encode(msg)
  return "Content-Length: " .. #body .. "\r\n\r\n" .. body
end

--- Starts the daemon outside the LSP client, sends `initialize`, and returns
--- the result (or nil and why). The probe shuts the daemon down afterwards.
function M.probe(timeout_ms)
  local opts = config.options
  local client = require("agentd.client")
  local buf = ""
  local result, perr
  local exited, code
  local job = vim.fn.jobstart(opts.cmd, {
    cwd = config.cwd(),
    env = opts.cmd_env,
    on_stdout = function(_, data)
      buf = buf .. table.concat(data, "\n")
      while true do
        local hdr_end = buf:find("\r\n\r\n", 1, true)
        if not hdr_end then
          if #buf > 4096 then
            perr = "agentd wrote something that is not LSP framing: " .. vim.inspect(buf:sub(1, 80))
          end
          return
        end
        local len = tonumber(buf:sub(1, hdr_end):match("[Cc]ontent%-[Ll]ength: *(%d+)"))
        if not len then
          perr = "agentd wrote a header without Content-Length: " .. vim.inspect(buf:sub(1, 80))
          return
        end
        if #buf < hdr_end + 3 + len then
          return
        end
        local body = buf:sub(hdr_end + 4, hdr_end + 3 + len)
        buf = buf:sub(hdr_end + 4 + len)
        local okj, msg = pcall(vim.json.decode, body)
        if not okj then
          perr = "agentd sent invalid JSON: " .. vim.inspect(body:sub(1, 80))
        elseif msg.id == 1 then
          if msg.error then
            perr = "initialize failed: " .. tostring(msg.error.message)
          else
            result = msg.result
          end
        end
      end
    end,
    on_exit = function(_, c)
      exited, code = true, c
    end,
  })
  if job <= 0 then
    return nil, "could not run " .. table.concat(opts.cmd, " ")
  end
  local params = {
    processId = vim.fn.getpid(),
    rootUri = vim.uri_from_fname(config.cwd()),
    capabilities = client.capabilities(),
    initializationOptions = client.init_options(),
    clientInfo = { name = "agentd.nvim checkhealth" },
  }
  vim.fn.chansend(job, frame({ jsonrpc = "2.0", id = 1, method = "initialize", params = params }))
  vim.wait(timeout_ms or 5000, function()
    return result ~= nil or perr ~= nil or exited
  end, 20)
  if result then
    vim.fn.chansend(job, frame({ jsonrpc = "2.0", id = 2, method = "shutdown" }))
    vim.fn.chansend(job, frame({ jsonrpc = "2.0", method = "exit" }))
    vim.wait(1000, function()
      return exited
    end, 20)
  end
  if not exited then
    vim.fn.jobstop(job)
  end
  if result then
    return result
  end
  if perr then
    return nil, perr
  end
  if exited then
    return nil, "agentd exited with code " .. tostring(code) .. " before answering initialize"
  end
  return nil, "agentd did not answer initialize within " .. (timeout_ms or 5000) .. " ms"
end

function M.check()
  start("agentd: daemon")
  local cmd = config.options.cmd
  local exe = vim.fn.exepath(cmd[1])
  if exe == "" then
    report_error(string.format("`%s` not found or not executable", cmd[1]), {
      "Install agentd from a checkout (CGO_ENABLED=0 go install ./cmd/agentd) or set `cmd` in setup().",
    })
  else
    ok("binary: " .. exe)
    local res, why = M.probe(5000)
    if not res then
      report_error("agentd does not start and initialize: " .. tostring(why))
    else
      local si = res.serverInfo or {}
      ok(string.format("starts and initializes: %s %s", tostring(si.name or "?"), tostring(si.version or "(no version)")))
      local agent = ((res.capabilities or {}).experimental or {}).agent
      if type(agent) ~= "table" then
        warn("initialize result has no capabilities.experimental.agent: is this agentd?")
      else
        ok("agent protocol version " .. tostring(agent.protocolVersion))
        local settings = config.settings()
        -- Without settings.provider, agentd's config file or its built-in
        -- default ("anthropic") decides.
        local chosen = settings.provider or "anthropic"
        local providers = type(agent.providers) == "table" and agent.providers or {}
        if #providers == 0 then
          warn("no providers configured", { "Set `settings.provider` and `settings.providers` in setup(), or agentd's config.json." })
        end
        for _, p in ipairs(providers) do
          local line = string.format("provider %s (%s, %s)%s: key %s", tostring(p.providerId), tostring(p.apiType),
            tostring(p.baseUrl or "default URL"), p.providerId == chosen and " [configured]" or "", tostring(p.keyStatus))
          if p.providerId ~= chosen then
            info(line)
          elseif p.keyStatus == "missing" then
            report_error(line, { "Export the provider's API key variable (e.g. ANTHROPIC_API_KEY) before starting Neovim,",
              "or set `apiKeyEnv` in the provider's settings to the variable that holds it." })
          else
            ok(line)
          end
        end
      end
    end
  end

  start("agentd: Neovim features")
  local v = vim.version()
  local vs = string.format("%d.%d.%d", v.major, v.minor, v.patch)
  if vim.fn.has("nvim-0.7") == 1 then
    ok("Neovim " .. vs)
  else
    report_error("Neovim " .. vs .. " is too old: agentd needs 0.7 or newer")
  end
  local function feature(cond, yes, no)
    if cond then
      ok(yes)
    else
      info(no)
    end
  end
  feature(vim.lsp.start ~= nil and vim.fn.has("nvim-0.11") == 1, "vim.lsp.start (used to start agentd)", "vim.lsp.start_client (vim.lsp.start needs 0.11 for unattached clients)")
  feature(vim.diagnostic ~= nil, "vim.diagnostic: agentd can read diagnostics", "no vim.diagnostic: diagnostics are not shared")
  feature(vim.diff ~= nil, "vim.diff: diffs shown in the chat", "no vim.diff: diffs not rendered inline")
  feature(vim.fn.has("nvim-0.10") == 1, "server requests run in coroutines: asynchronous vim.ui.select works for permissions",
    "permission prompts need a synchronous vim.ui.select (the built-in one is); asynchronous ones are waited for")
  feature(vim.ui and vim.ui.select ~= nil, "vim.ui.select: permission prompts and :AgentdSessions", "no vim.ui.select")
  feature(vim.keymap ~= nil, "vim.keymap: keymaps", "no vim.keymap")
end

return M
