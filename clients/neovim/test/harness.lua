-- A small test harness run inside a child Neovim: each case runs in its own
-- `nvim --headless` started by run.sh, and reports "ok" or the failure into
-- the file named by $AGENTD_TEST_RESULT.
local M = {}

function M.cases()
  local list = { names = {}, fns = {} }
  function list.add(name, fn)
    table.insert(list.names, name)
    list.fns[name] = fn
  end
  return list
end

local function load(spec)
  local chunk = assert(loadfile(spec))
  return chunk()
end

--- Writes the case names of spec, one per line, to out.
function M.list(spec, out)
  local ok, cases = pcall(load, spec)
  local f = assert(io.open(out, "w"))
  if ok then
    for _, n in ipairs(cases.names) do
      f:write(n, "\n")
    end
  else
    f:write("<load error> ", tostring(cases):gsub("\n", " "), "\n")
  end
  f:close()
  vim.cmd("qall!")
end

--- Ends the running case as skipped, saying why (run.sh prints the reason).
function M.skip(reason)
  error("AGENTD_SKIP: " .. reason, 0)
end

--- Runs one case and exits Neovim with 0 (pass or skip) or 1 (fail).
function M.run()
  local spec, name, result = vim.env.AGENTD_TEST_SPEC, vim.env.AGENTD_TEST_CASE, vim.env.AGENTD_TEST_RESULT
  local h = require("helpers")
  -- A deprecated Neovim API used on the way fails the case: on 0.12 it is a
  -- warning in the user's messages (or an entry in :checkhealth vim.deprecated).
  local deprecated = {}
  local deprecate = vim.deprecate
  vim.deprecate = function(what, alternative, ...)
    table.insert(deprecated, tostring(what) .. " (use " .. tostring(alternative) .. ")\n" .. debug.traceback("", 2))
    return deprecate(what, alternative, ...)
  end
  local ok, err = xpcall(function()
    local cases = load(spec)
    local fn = cases.fns[name]
    if not fn then
      error("no such case: " .. tostring(name))
    end
    fn()
    if #deprecated > 0 then
      error("deprecated Neovim API used: " .. table.concat(deprecated, "\n"), 0)
    end
  end, debug.traceback)
  local cleanup_ok, cleanup_err = pcall(h.cleanup)
  local f = io.open(result, "w")
  local skip = not ok and type(err) == "string" and err:match("^AGENTD_SKIP: ([^\n]*)")
  if skip then
    f:write("skip\n", skip, "\n")
    ok = true
  elseif ok then
    f:write("ok\n")
  else
    f:write("FAIL: ", tostring(err), "\n")
    if not cleanup_ok then
      f:write("cleanup: ", tostring(cleanup_err), "\n")
    end
    f:write(h.report())
  end
  f:close()
  if ok then
    vim.cmd("qall!")
  else
    vim.cmd("cquit 1")
  end
end

return M
