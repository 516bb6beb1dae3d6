-- A missing, crashing or garbled daemon gives one clear message and leaves
-- a working editor.
local h = require("helpers")
local cases = require("harness").cases()

local function agentd_errors()
  local out = {}
  for _, m in ipairs(h.errors()) do
    if m:find("agentd", 1, true) then
      table.insert(out, m)
    end
  end
  return out
end

local function editor_still_works()
  vim.cmd("enew")
  vim.api.nvim_buf_set_lines(0, 0, -1, false, { "still editing" })
  vim.cmd("normal! yyp")
  h.eq({ "still editing", "still editing" }, h.lines(0), "editing works")
end

local function expect_failure(opts, needle)
  h.truthy(require("agentd").setup(opts), "setup")
  vim.cmd("AgentdPrompt hello there")
  h.wait_for(function()
    return #agentd_errors() > 0
  end, "an error message", 15000, h.report)
  -- Let any late callbacks run; there must still be exactly one.
  vim.wait(300)
  local errs = agentd_errors()
  h.eq(1, #errs, "exactly one agentd error: " .. vim.inspect(errs))
  h.contains(errs[1], needle, "the message says what is wrong")
  h.wait_for(function()
    return h.transcript_text():find("agentd is not available", 1, true)
  end, "the chat to say agentd is not available", 5000, h.transcript_text)
  h.eq(nil, h.transcript_text():find("working", 1, true), "chat not left busy")
  editor_still_works()
end

cases.add("missing binary", function()
  expect_failure({ cmd = { "/nonexistent/agentd", "--stdio" } }, "not found")
  -- Trying again gives the message again, still no Lua error.
  vim.cmd("AgentdPrompt again")
  vim.wait(100)
  h.eq(2, #agentd_errors(), "one message per attempt")
end)

cases.add("daemon crashing at start", function()
  expect_failure({ cmd = { "sh", "-c", "echo boom >&2; exit 3" } }, "exited (code 3) before it initialized")
end)

cases.add("daemon speaking garbage JSON", function()
  expect_failure({ cmd = { "sh", "-c", "printf 'Content-Length: 9\\r\\n\\r\\n{garbage}'; sleep 30" }, init_timeout = 5 },
    "not speaking LSP")
end)

cases.add("daemon that never answers initialize", function()
  expect_failure({ cmd = { "sh", "-c", "echo hello; sleep 30" }, init_timeout = 1 }, "did not answer initialize within 1 s")
end)

cases.add("checkhealth reports a missing binary without a Lua error", function()
  h.truthy(require("agentd").setup({ cmd = { "/nonexistent/agentd" } }))
  vim.cmd("checkhealth agentd")
  local text = table.concat(h.lines(0), "\n")
  h.contains(text, "not found or not executable", "binary problem reported")
  h.contains(text, "Neovim 0.", "features section")
  h.contains(text, "vim.diagnostic", "features listed")
end)

return cases
