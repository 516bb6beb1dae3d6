-- MCP in the plugin: a server's questions (agent/elicitation/create) through
-- the real handler table with vim.ui.select/input answered as a user would,
-- the :AgentdMcp list's lines, and the @server:uri completion and mention.
local h = require("helpers")
local cases = require("harness").cases()

local function call(params)
  local fn = require("agentd").lsp_handlers()["agent/elicitation/create"]
  h.truthy(fn, "handler for agent/elicitation/create")
  return fn(nil, params, { method = "agent/elicitation/create", client_id = 0 })
end

-- Answers each vim.ui.select / vim.ui.input in turn from answers (a string
-- picks the item whose label it is; nil cancels), recording the prompts.
local function script(answers)
  local prompts, i = {}, 0
  local sel, inp = vim.ui.select, vim.ui.input
  h.on_cleanup(function()
    vim.ui.select, vim.ui.input = sel, inp
  end)
  local function next_answer()
    i = i + 1
    return answers[i]
  end
  vim.ui.select = function(items, opts, cb)
    prompts[#prompts + 1] = opts.prompt
    local want = next_answer()
    for _, it in ipairs(items) do
      local l = opts.format_item and opts.format_item(it) or it
      if l == want then
        return cb(it)
      end
    end
    cb(nil)
  end
  vim.ui.input = function(opts, cb)
    prompts[#prompts + 1] = opts.prompt
    cb(next_answer())
  end
  return prompts
end

local form = {
  sessionId = "s",
  toolCallId = "c1",
  mode = "form",
  message = "Deploy where?\27[2J",
  requestedSchema = {
    type = "object",
    properties = {
      env = { type = "string", enum = { "dev", "prod" }, title = "Environment" },
      replicas = { type = "integer", title = "Replicas" },
      note = { type = "string" },
      confirm = { type = "boolean" },
    },
    required = { "env", "replicas", "confirm" },
  },
  _meta = { ["agentd/mcpServer"] = "deploy" },
}

cases.add("a form question is asked field by field and answered with the values", function()
  local prompts = script({ "Answer", "yes", "dev", "two", "2", "" })
  local res = call(form)
  h.eq("accept", res.action, "accepted")
  h.eq("dev", res.content.env, "enum field")
  h.eq(2, res.content.replicas, "integer field, after a bad number")
  h.eq(true, res.content.confirm, "boolean field")
  h.eq(nil, res.content.note, "optional field left empty")
  h.contains(prompts[1], "MCP server deploy asks: Deploy where?", "the question names the server")
  h.truthy(not prompts[1]:find("\27"), "no escape sequence reaches the prompt")
end)

cases.add("declining or cancelling a form says so, and nothing is sent", function()
  script({ "Decline" })
  h.eq("decline", call(form).action, "declined")
  script({ "Answer", nil })
  h.eq("cancel", call(form).action, "cancelled at the first field")
  script({})
  h.eq("cancel", call(form).action, "cancelled at the first question")
end)

cases.add("a link is opened only when the user agrees", function()
  local link = { sessionId = "s", mode = "url", message = "Connect your account", url = "https://auth.example/x", elicitationId = "e1", _meta = { ["agentd/mcpServer"] = "gh" } }
  local prompts = script({ "Open the link" })
  h.eq("accept", call(link).action, "agreed")
  h.contains(prompts[1], "https://auth.example/x", "the link is shown before it opens")
  script({ "Decline" })
  h.eq("decline", call(link).action, "declined")
end)

cases.add(":AgentdMcp lines show state, tools and resources; @server:uri completes and mentions", function()
  local mcp = require("agentd.mcp")
  local servers = {
    { name = "docs", type = "http", target = "https://d.example/mcp", state = "ready", tools = { { name = "lookup", description = "Looks\nup", offered = true }, { name = "rare", offered = false } }, resources = { { uri = "doc://intro", name = "Intro" } } },
    { name = "gone", type = "stdio", target = "gone-server", state = "failed", error = "its command was not found", tools = {}, resources = {} },
  }
  local texts = {}
  for _, l in ipairs(mcp.lines(servers)) do
    texts[#texts + 1] = l.text
  end
  local all = table.concat(texts, "\n")
  h.contains(all, "docs (http https://d.example/mcp): ready", "server line")
  h.contains(all, "● lookup", "an offered tool")
  h.contains(all, "○ rare", "a tool not offered")
  h.contains(all, "gone (stdio gone-server): failed — its command was not found", "a failed server and why")
  h.contains(all, "1 resources (mention one as @docs:URI)", "resources")
  h.eq(5, #texts, "one line per server, tool and resource count")
  mcp.cache["s1"] = servers
  local items = mcp.complete("s1", "@do")
  h.eq("@docs:doc://intro", items[1] and items[1].word, "completion item")
  local r = mcp.resource("s1", "@docs:doc://intro")
  h.eq("doc://intro", r and r.uri, "mention resolves")
  h.eq(nil, mcp.resource("s1", "@docs:doc://other"), "an unlisted uri is not a mention")
end)

return cases
