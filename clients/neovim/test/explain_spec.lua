-- :AgentdExplain through agent/x/infer, against the real agentd and the fake
-- model.
local h = require("helpers")
local cases = require("harness").cases()

local function explain_buf()
  for _, b in ipairs(vim.api.nvim_list_bufs()) do
    if vim.api.nvim_buf_get_name(b):find("agentd://explain/", 1, true) then
      return b
    end
  end
end

local function text_of(b)
  return b and table.concat(vim.api.nvim_buf_get_lines(b, 0, -1, false), "\n") or ""
end

cases.add(":AgentdExplain streams the model's explanation of the range into a window", function()
  local answer = "It adds a and b and returns the sum."
  local fm = h.fakemodel({ turns = { { text = answer, chunkSize = 6, chunkDelayMs = 120 } } })
  local dir = h.tmpdir()
  h.setup_agentd(fm.url, dir)
  local path = dir .. "/add.go"
  h.write(path, "package p\n\nfunc add(a, b int) int {\n\treturn a + b\n}\n")
  vim.cmd("edit " .. vim.fn.fnameescape(path))
  vim.cmd("3,5AgentdExplain")
  local partial = h.wait_for(function()
    local t = text_of(explain_buf())
    return t:find("^It adds") and t ~= answer and t
  end, "part of the explanation while it streams", 20000, h.report)
  h.truthy(#partial < #answer, "streamed in pieces: " .. partial)
  h.wait_for(function()
    return text_of(explain_buf()) == answer
  end, "the whole explanation", 20000, function()
    return text_of(explain_buf()) .. "\n" .. h.report()
  end)
  local reqs = fm.requests()
  h.eq(1, #reqs, "one model request")
  local body = vim.json.encode(reqs[1])
  h.contains(body, "You explain code", "the system text")
  h.contains(body, "func add(a, b int) int {", "the selected lines")
  h.truthy(not body:find("package p", 1, true), "only the range is sent")
  h.eq({}, h.errors(), "no errors")
end)

cases.add(":AgentdExplain shows a model failure in the window and one error", function()
  local fm = h.fakemodel({ turns = { { status = 401 } } })
  local dir = h.tmpdir()
  h.setup_agentd(fm.url, dir)
  vim.api.nvim_buf_set_lines(0, 0, -1, false, { "x = 1" })
  vim.cmd("AgentdExplain")
  h.wait_for(function()
    return text_of(explain_buf()):find("could not explain", 1, true)
  end, "the failure in the window", 20000, h.report)
  h.eq(1, #h.errors(), "one error message")
end)

return cases
