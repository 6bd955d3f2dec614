-- Headless Neovim harness for tests/editors/test_neovim.py (works on Neovim 0.7+).
-- Opens TORCH_LSP_FILE, attaches the real server (TORCH_LSP_CMD, a JSON list),
-- waits for its pushed diagnostics, writes what the editor received as JSON to
-- TORCH_LSP_OUT and quits: exit 0 = diagnostics received, 1 = none in time,
-- 2 = the harness itself failed (the reason is in the JSON, or on stderr).
local function setting(name)
  local value = os.getenv(name)
  if not value or value == "" then
    error(name .. " is not set; tests/editors/test_neovim.py sets it")
  end
  return value
end

local function write_result(path, result)
  local handle = assert(io.open(path, "w"))
  handle:write(vim.fn.json_encode(result))
  handle:close()
end

local function run()
  local out_path = setting("TORCH_LSP_OUT")
  local file = setting("TORCH_LSP_FILE")
  local cmd = vim.fn.json_decode(setting("TORCH_LSP_CMD"))
  local timeout_ms = tonumber(os.getenv("TORCH_LSP_TIMEOUT_MS") or "30000")
  local version = vim.version()

  vim.cmd("edit " .. vim.fn.fnameescape(file))
  local bufnr = vim.api.nvim_get_current_buf()
  local client_id = vim.lsp.start_client({
    name = "torch-lsp",
    cmd = cmd,
    root_dir = vim.fn.fnamemodify(file, ":p:h"),
  })
  if not client_id then
    error("vim.lsp.start_client could not start " .. table.concat(cmd, " "))
  end
  vim.lsp.buf_attach_client(bufnr, client_id)

  local received = vim.wait(timeout_ms, function()
    return #vim.diagnostic.get(bufnr) > 0
  end, 50)

  local diagnostics = {}
  for _, d in ipairs(vim.diagnostic.get(bufnr)) do
    table.insert(diagnostics, {
      code = d.code, lnum = d.lnum, col = d.col, end_lnum = d.end_lnum, end_col = d.end_col,
      severity = d.severity, message = d.message, source = d.source,
    })
  end
  local client = vim.lsp.get_client_by_id(client_id)
  write_result(out_path, {
    nvim_version = string.format("%d.%d.%d", version.major, version.minor, version.patch),
    offset_encoding = client and client.offset_encoding or vim.NIL,
    diagnostics = diagnostics,
    error = received and vim.NIL or ("Neovim received no diagnostics within " .. timeout_ms .. " ms"),
  })
  if client then
    client.stop()
  end
  return received
end

local ok, outcome = pcall(run)
if not ok then
  io.stderr:write("neovim_harness.lua: " .. tostring(outcome) .. "\n")
  pcall(write_result, os.getenv("TORCH_LSP_OUT") or "", { diagnostics = {}, error = tostring(outcome) })
  vim.cmd("cquit 2")
elseif outcome then
  vim.cmd("qall!")
else
  vim.cmd("cquit 1")
end
