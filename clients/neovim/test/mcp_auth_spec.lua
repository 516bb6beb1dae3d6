-- MCP sign-in end to end: this Neovim, the real agentd binary, the fake model
-- and a fake OAuth authorization server with the MCP server it protects
-- (mcp/mcpauth/oauthtest/fakeoauth, built by run.sh). The "browser" is curl
-- following the authorization URL's redirect to agentd's loopback listener.
local h = require("helpers")
local cases = require("harness").cases()

-- Starts fakeoauth; returns the protected MCP server's URL.
local function fakeoauth()
  local bin = h.need_bin("FAKEOAUTH_BIN", "the fake OAuth server")
  local url
  local job = vim.fn.jobstart({ bin }, {
    on_stdout = function(_, data)
      for _, l in ipairs(data) do
        local ok, v = pcall(vim.json.decode, l)
        if ok and type(v) == "table" and v.mcp then
          url = v.mcp
        end
      end
    end,
  })
  h.truthy(job > 0, "fakeoauth started")
  h.on_cleanup(function()
    vim.fn.jobstop(job)
  end)
  h.wait_for(function()
    return url
  end, "fakeoauth's URL", 10000)
  return url
end

local function notes()
  local got = {}
  vim.notify = function(msg, level)
    table.insert(got, { msg = msg, level = level })
  end
  return got
end

local function said(got, needle)
  for _, n in ipairs(got) do
    if n.msg:find(needle, 1, true) then
      return n
    end
  end
end

cases.add("a server that needs sign-in is said, and :AgentdMcpSignIn signs in through the browser", function()
  local dir = h.tmpdir()
  local mcp = fakeoauth()
  local fm = h.fakemodel({ turns = {
    { toolCalls = { { name = "whoami", arguments = vim.empty_dict() } } },
    { text = "Signed in and called." },
  } })
  local settings = h.fake_settings(fm.url)
  settings.mcpServers = { { type = "http", name = "docs", url = mcp, headers = {} } }
  local opened = {}
  h.setup_agentd(fm.url, dir, {
    settings = settings,
    open_url = function(url)
      table.insert(opened, url)
      vim.fn.jobstart({ "curl", "-sfL", "-o", "/dev/null", url })
      return true
    end,
  })
  local got = notes()
  local auth = require("agentd.mcp_auth")
  require("agentd").with_session(function() end)
  h.wait_for(function()
    return auth.pending.docs ~= nil
  end, "the sign-in notice", 20000, h.report)
  h.truthy(said(got, "MCP server docs needs you to sign in: :AgentdMcpSignIn docs"), "the user is told how to sign in")
  h.eq(0, #opened, "no browser before the user asks")
  h.eq({ "docs" }, vim.fn.getcompletion("AgentdMcpSignIn ", "cmdline"), "the command completes the waiting server")

  vim.cmd("AgentdMcpSignIn docs")
  h.wait_for(function()
    return said(got, "signed in to docs") or said(got, "sign-in to docs failed")
  end, "the sign-in", 30000, h.report)
  h.truthy(said(got, "signed in to docs"), "signed in: " .. vim.inspect(got))
  h.eq(1, #opened, "the browser opened once")
  h.truthy(opened[1]:find("/authorize?", 1, true) and opened[1]:find("code_challenge_method=S256", 1, true), "the authorization URL: " .. opened[1])
  h.eq(nil, auth.pending.docs, "no longer waiting")

  h.stub_select(function(items)
    for _, it in ipairs(items) do
      if it.option and it.option.optionId == "allow_once" then
        return it
      end
    end
  end)
  vim.cmd("AgentdPrompt who am I")
  h.wait_for(function()
    return h.transcript_text():find("Signed in and called.", 1, true)
  end, "the turn", 30000, h.report)
  h.contains(vim.json.encode(fm.requests()[2].messages), "token access-", "the call reached the server with the token")
end)

cases.add("with the browser elsewhere, :AgentdMcpSignIn NAME ADDRESS finishes the sign-in", function()
  local dir = h.tmpdir()
  local mcp = fakeoauth()
  local fm = h.fakemodel({ turns = { { text = "unused" } } })
  local settings = h.fake_settings(fm.url)
  settings.mcpServers = { { type = "http", name = "docs", url = mcp, headers = {} } }
  -- A browser on another machine: it is sent to agentd's callback but never gets there.
  local ended
  h.setup_agentd(fm.url, dir, {
    settings = settings,
    open_url = function(url)
      vim.fn.jobstart({ "curl", "-s", "-o", "/dev/null", "-w", "%{redirect_url}", url }, {
        stdout_buffered = true,
        on_stdout = function(_, data)
          ended = table.concat(data, "")
        end,
      })
      return true
    end,
  })
  local got = notes()
  local auth = require("agentd.mcp_auth")
  require("agentd").with_session(function() end)
  h.wait_for(function()
    return auth.pending.docs ~= nil
  end, "the sign-in notice", 20000, h.report)

  vim.cmd("AgentdMcpSignIn docs http://127.0.0.1:1/oauth/callback?code=c&state=s")
  h.wait_for(function()
    return said(got, "no sign-in to docs is under way")
  end, "a paste with no sign-in refused", 5000, h.report)

  vim.cmd("AgentdMcpSignIn docs")
  h.wait_for(function()
    return ended and ended:find("/oauth/callback?", 1, true)
  end, "the browser's last address", 20000, h.report)
  h.truthy(said(got, ":AgentdMcpSignIn docs ADDRESS"), "the user is told how to paste it")

  vim.cmd("AgentdMcpSignIn docs " .. ended:gsub("state=[^&]+", "state=forged"))
  h.wait_for(function()
    return said(got, "did not complete the sign-in to docs")
  end, "a forged state refused", 10000, h.report)
  h.truthy(said(got, "state agentd did not send"), "why: " .. vim.inspect(got))
  h.eq(nil, said(got, "sign-in to docs failed"), "the sign-in still waits")

  vim.cmd("AgentdMcpSignIn docs " .. ended)
  h.wait_for(function()
    return said(got, "signed in to docs") or said(got, "sign-in to docs failed")
  end, "the sign-in", 20000, h.report)
  h.truthy(said(got, "signed in to docs"), "signed in: " .. vim.inspect(got))
  h.eq(nil, auth.running.docs, "no sign-in under way any more")
end)

cases.add("window/showDocument opens only an external http(s) page", function()
  local auth = require("agentd.mcp_auth")
  local opened = {}
  require("agentd.config").options.open_url = function(url)
    table.insert(opened, url)
    return true
  end
  h.eq(false, auth.show_document({ uri = "file:///etc/passwd", external = true }).success, "a file URI")
  h.eq(false, auth.show_document({ uri = "javascript:alert(1)", external = true }).success, "a script URI")
  h.eq(false, auth.show_document({ uri = "https://as.example/authorize" }).success, "not external")
  h.eq(0, #opened, "nothing was opened")
  h.eq(true, auth.show_document({ uri = "https://as.example/authorize?x=1", external = true }).success, "an https page")
  h.eq({ "https://as.example/authorize?x=1" }, opened, "it was opened")
  local _, err = auth.show_document({ external = true })
  h.truthy(err, "no uri is an error")
end)

return cases
