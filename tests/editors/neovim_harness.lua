-- Headless Neovim harness for tests/editors/test_neovim.py (Neovim 0.7 or newer).
--
-- Sources a documented set-up from editors/neovim/ (TORCH_LSP_SETUP), opens TORCH_LSP_FILE
-- so that set-up starts the real server, then does what a user does, through Neovim's own
-- LSP client and UI functions: waits for the diagnostics, hovers a tensor name
-- (vim.lsp.buf.hover, read from the floating window it opens), collects the inlay hints
-- where the version has them, and applies one quick fix (vim.lsp.buf.code_action).
-- What the editor ended up with is written as JSON to TORCH_LSP_OUT; the test judges it.
-- Exit 0 = the harness ran to the end (the JSON says what happened), 2 = it could not.
--
-- TORCH_LSP_HOVER is {"line": L, "col": C} and TORCH_LSP_FIX {"line": L, "col": C,
-- "title": T}, 0-based lines and byte columns. TORCH_LSP_SETTINGS (optional, JSON) is
-- passed as the config's `settings` through vim.lsp.config, the way a user overrides them.

local function setting(name)
  local value = os.getenv(name)
  if not value or value == "" then
    error(name .. " is not set; tests/editors/test_neovim.py sets it")
  end
  return value
end

local function json_setting(name)
  return vim.fn.json_decode(setting(name))
end

local timeout_ms = tonumber(os.getenv("TORCH_LSP_TIMEOUT_MS") or "30000")
local version = vim.version()
local at_least = function(minor)
  return version.major > 0 or version.minor >= minor
end

local function write_result(path, result)
  local handle = assert(io.open(path, "w"))
  handle:write(vim.fn.json_encode(result))
  handle:close()
end

-- The torch-lsp client attached to the buffer (the set-ups name it "torch-lsp" or "torch_lsp").
local function attached_client(bufnr)
  local clients = vim.lsp.get_clients and vim.lsp.get_clients({ bufnr = bufnr })
    or vim.lsp.buf_get_clients(bufnr)
  for _, client in pairs(clients) do
    if client.name == "torch-lsp" or client.name == "torch_lsp" then
      return client
    end
  end
  return nil
end

local function diagnostics_of(bufnr)
  local found = {}
  for _, d in ipairs(vim.diagnostic.get(bufnr)) do
    table.insert(found, {
      code = d.code, lnum = d.lnum, col = d.col, end_lnum = d.end_lnum, end_col = d.end_col,
      severity = d.severity, message = d.message, source = d.source,
    })
  end
  return found
end

local function floating_windows()
  local found = {}
  for _, win in ipairs(vim.api.nvim_list_wins()) do
    if vim.api.nvim_win_get_config(win).relative ~= "" then
      table.insert(found, win)
    end
  end
  return found
end

local function set_cursor(position)
  -- nvim_win_set_cursor takes a 1-based line and a 0-based byte column.
  vim.api.nvim_win_set_cursor(0, { position.line + 1, position.col })
end

-- The text of the hover window vim.lsp.buf.hover opens, or an error sentence.
local function hover_text(client, position)
  if not client.server_capabilities.hoverProvider then
    return nil, "the server does not advertise hoverProvider"
  end
  set_cursor(position)
  vim.lsp.buf.hover()
  local opened = vim.wait(timeout_ms, function()
    return #floating_windows() > 0
  end, 20)
  if not opened then
    return nil, "vim.lsp.buf.hover opened no window within " .. timeout_ms .. " ms"
  end
  local win = floating_windows()[1]
  local lines = vim.api.nvim_buf_get_lines(vim.api.nvim_win_get_buf(win), 0, -1, false)
  vim.api.nvim_win_close(win, true)
  return table.concat(lines, "\n"), nil
end

-- Inlay hints as Neovim holds them (0.10+, enabled by the set-up on attach).
local function inlay_hints(bufnr)
  local inlay_hint = vim.lsp.inlay_hint
  if type(inlay_hint) ~= "table" or not inlay_hint.get then
    return nil, "this Neovim has no vim.lsp.inlay_hint.get"
  end
  local hints = {}
  local arrived = vim.wait(timeout_ms, function()
    hints = inlay_hint.get({ bufnr = bufnr })
    return #hints > 0
  end, 20)
  if not arrived then
    return nil, "no inlay hints within " .. timeout_ms .. " ms (enabled: "
      .. tostring(inlay_hint.is_enabled({ bufnr = bufnr })) .. ")"
  end
  local found = {}
  for _, item in ipairs(hints) do
    local label = item.inlay_hint.label
    if type(label) == "table" then
      local parts = {}
      for _, part in ipairs(label) do
        table.insert(parts, part.value)
      end
      label = table.concat(parts)
    end
    table.insert(found, {
      line = item.inlay_hint.position.line, character = item.inlay_hint.position.character, label = label,
    })
  end
  return found, nil
end

-- Applies the quick fix titled `fix.title` with the cursor at `fix`, the way a user picks
-- it from the code-action menu: 0.8+ filter it and apply it directly; 0.7 has neither
-- option, so its vim.ui.select menu (the UI hook Neovim documents for this) picks it.
local function apply_quick_fix(bufnr, fix)
  set_cursor(fix)
  local offered = {}
  local tick = vim.api.nvim_buf_get_changedtick(bufnr)
  if at_least(8) then
    vim.lsp.buf.code_action({
      filter = function(action)
        table.insert(offered, action.title)
        return action.title == fix.title
      end,
      apply = true,
    })
  else
    vim.ui.select = function(items, opts, on_choice)
      for _, item in ipairs(items) do
        local action = item[2]
        table.insert(offered, action.title)
        if action.title == fix.title then
          return on_choice(item)
        end
      end
      on_choice(nil)
    end
    vim.lsp.buf.code_action()
  end
  local changed = vim.wait(timeout_ms, function()
    return vim.api.nvim_buf_get_changedtick(bufnr) ~= tick
  end, 20)
  if not changed then
    return offered, "the buffer did not change within " .. timeout_ms .. " ms of asking for the code action"
  end
  return offered, nil
end

local function run(result)
  local file = setting("TORCH_LSP_FILE")
  local hover_at = json_setting("TORCH_LSP_HOVER")
  local fix = json_setting("TORCH_LSP_FIX")
  local settings = os.getenv("TORCH_LSP_SETTINGS")

  vim.cmd("filetype on")
  vim.cmd("source " .. vim.fn.fnameescape(setting("TORCH_LSP_SETUP")))
  if settings and settings ~= "" then
    vim.lsp.config("torch_lsp", { settings = vim.fn.json_decode(settings) })
  end
  vim.cmd("edit " .. vim.fn.fnameescape(file))
  local bufnr = vim.api.nvim_get_current_buf()

  local client
  local received = vim.wait(timeout_ms, function()
    client = attached_client(bufnr)
    return client ~= nil and client.initialized ~= false and #vim.diagnostic.get(bufnr) > 0
  end, 20)
  result.diagnostics = diagnostics_of(bufnr)
  if not client then
    result.error = "the set-up attached no torch-lsp client to " .. file .. " within " .. timeout_ms .. " ms"
    return
  end
  result.client_name = client.name
  result.offset_encoding = client.offset_encoding
  -- Pulled when both sides declare it (0.10+); the server then never pushes.
  local capabilities = client.capabilities or vim.lsp.protocol.make_client_capabilities()
  result.pulls_diagnostics = capabilities.textDocument.diagnostic ~= nil
    and client.server_capabilities.diagnosticProvider ~= nil
  if not received then
    result.error = "Neovim received no diagnostics within " .. timeout_ms .. " ms"
    return
  end

  result.hover, result.hover_error = hover_text(client, hover_at)
  result.inlay_hints, result.inlay_hints_error = inlay_hints(bufnr)

  local fixed_before = vim.api.nvim_buf_get_lines(bufnr, fix.line, fix.line + 1, false)[1]
  result.offered_actions, result.fix_error = apply_quick_fix(bufnr, fix)
  result.lines_after_fix = vim.api.nvim_buf_get_lines(bufnr, 0, -1, false)
  if result.fix_error then
    return
  end
  -- The server re-checks the edited text; the fixed diagnostic must go, the others stay.
  local fixed_code = nil
  for _, d in ipairs(result.diagnostics) do
    if d.lnum == fix.line then
      fixed_code = d.code
    end
  end
  vim.wait(timeout_ms, function()
    for _, d in ipairs(vim.diagnostic.get(bufnr, { lnum = fix.line })) do
      if d.code == fixed_code then
        return false
      end
    end
    return #vim.diagnostic.get(bufnr) > 0
  end, 20)
  result.diagnostics_after_fix = diagnostics_of(bufnr)
  result.fixed_line_before = fixed_before
end

local out_path = os.getenv("TORCH_LSP_OUT") or ""
local result = {
  nvim_version = string.format("%d.%d.%d", version.major, version.minor, version.patch),
}
local ok, failure = pcall(run, result)
if not ok then
  result.error = "neovim_harness.lua: " .. tostring(failure)
  io.stderr:write(result.error .. "\n")
end
local written = pcall(write_result, out_path, result)
for _, client in pairs(vim.lsp.get_clients and vim.lsp.get_clients() or vim.lsp.get_active_clients()) do
  vim.lsp.stop_client(client.id)
end
if written then
  vim.cmd("qall!")
else
  vim.cmd("cquit 2")
end
