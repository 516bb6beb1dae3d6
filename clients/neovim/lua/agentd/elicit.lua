-- An MCP server's questions during a tool call (agent/elicitation/create):
-- a form asked one field at a time (vim.ui.select for a choice or a yes/no,
-- vim.ui.input for text and numbers), or a link to open, which agentd opens
-- (window/showDocument) once the user agrees. First the user chooses to
-- answer or to decline; <Esc> at any step cancels. Every string is the
-- server's, shown through chat.visible.
local chat = require("agentd.chat")
local permission = require("agentd.permission")

local M = {}

local function select(items, opts)
  return permission.await(function(finish)
    vim.ui.select(items, opts, finish)
  end)
end

local function input(opts)
  return permission.await(function(finish)
    vim.ui.input(opts, finish)
  end)
end

local function is_nil(v)
  return v == nil or v == vim.NIL
end

--- The form's fields in order: required ones first, then by name.
function M.fields(schema)
  local props = type(schema) == "table" and type(schema.properties) == "table" and schema.properties or {}
  local required = {}
  for _, n in ipairs(type(schema) == "table" and type(schema.required) == "table" and schema.required or {}) do
    required[n] = true
  end
  local out = {}
  for name, p in pairs(props) do
    if type(p) == "table" then
      out[#out + 1] = { name = name, schema = p, required = required[name] == true }
    end
  end
  table.sort(out, function(a, b)
    if a.required ~= b.required then
      return a.required
    end
    return a.name < b.name
  end)
  return out
end

-- The choices of a field: enum, oneOf/anyOf {const, title}, or items.enum
-- for a multi-select (asked as one choice at a time is too much: one).
local function choices(p)
  local out = {}
  if type(p.enum) == "table" then
    for i, v in ipairs(p.enum) do
      local title = type(p.enumNames) == "table" and p.enumNames[i] or tostring(v)
      out[#out + 1] = { value = v, label = chat.visible(tostring(title)) }
    end
  end
  for _, key in ipairs({ "oneOf", "anyOf" }) do
    if type(p[key]) == "table" then
      for _, o in ipairs(p[key]) do
        if type(o) == "table" and not is_nil(o.const) then
          out[#out + 1] = { value = o.const, label = chat.visible(tostring(o.title or o.const)) }
        end
      end
    end
  end
  return out
end

-- Asks one field; returns its value, or nil with skip=true for an optional
-- field left empty, or nil when cancelled.
local function ask_field(f)
  local p = f.schema
  local title = chat.visible(tostring(p.title or f.name))
  if not is_nil(p.description) then
    title = title .. " (" .. chat.visible(tostring(p.description)) .. ")"
  end
  if not f.required then
    title = title .. " [optional]"
  end
  local opts = choices(p)
  if #opts > 0 then
    if not f.required then
      table.insert(opts, 1, { skip = true, label = "(leave empty)" })
    end
    local c = select(opts, { prompt = title, format_item = function(o) return o.label end, kind = "agentd.elicit" })
    if not c then
      return nil
    end
    if c.skip then
      return nil, true
    end
    if p.type == "array" then
      return { c.value }
    end
    return c.value
  end
  if p.type == "boolean" then
    local c = select({ "yes", "no" }, { prompt = title, kind = "agentd.elicit" })
    if not c then
      return nil
    end
    return c == "yes"
  end
  local default = not is_nil(p.default) and tostring(p.default) or ""
  while true do
    local s = input({ prompt = title .. ": ", default = default })
    if s == nil then
      return nil
    end
    if s == "" and not f.required then
      return nil, true
    end
    if p.type == "number" or p.type == "integer" then
      local n = tonumber(s)
      if n and (p.type == "number" or n == math.floor(n)) then
        return n
      end
      vim.notify("agentd: " .. title .. " must be " .. (p.type == "integer" and "a whole number" or "a number"), vim.log.levels.WARN)
    else
      return s
    end
  end
end

--- Answers agent/elicitation/create: {action = "accept", content?},
--- {action = "decline"} or {action = "cancel"}.
function M.ask(params)
  if type(params) ~= "table" then
    return { action = "cancel" }
  end
  local meta = type(params._meta) == "table" and params._meta or {}
  local server = chat.visible(tostring(meta["agentd/mcpServer"] or "an MCP server"))
  local message = chat.visible(tostring(params.message or ""))
  if params.mode == "url" then
    local url = chat.visible(tostring(params.url or ""))
    local c = select({ "Open the link", "Decline" }, { prompt = "MCP server " .. server .. " asks you to open " .. url .. ": " .. message, kind = "agentd.elicit" })
    if c == nil then
      return { action = "cancel" }
    end
    return { action = c == "Decline" and "decline" or "accept" }
  end
  local c = select({ "Answer", "Decline" }, { prompt = "MCP server " .. server .. " asks: " .. message, kind = "agentd.elicit" })
  if c == nil then
    return { action = "cancel" }
  elseif c == "Decline" then
    return { action = "decline" }
  end
  local content = {}
  for _, f in ipairs(M.fields(params.requestedSchema)) do
    local v, skip = ask_field(f)
    if v == nil and not skip then
      return { action = "cancel" }
    end
    if v ~= nil then
      content[f.name] = v
    end
  end
  return { action = "accept", content = next(content) and content or vim.empty_dict() }
end

return M
