-- torch-lsp for Neovim 0.7 to 0.10 (vim.lsp.start_client). On 0.11 or newer use torch_lsp.lua.
--
-- Use: paste into your init.lua, or copy this file to ~/.config/nvim/plugin/torch_lsp.lua.
-- `torch-lsp` must be on Neovim's PATH (start Neovim from the activated virtual
-- environment), or put the full path in `cmd`, e.g. { "/path/to/.venv/bin/torch-lsp", "serve" }.
-- One server runs per project root; every Python buffer under that root attaches to it.
-- Check with :lua for _, c in ipairs(vim.lsp.get_active_clients()) do print(c.name, c.config.root_dir) end

local config = {
  name = "torch-lsp",
  cmd = { "torch-lsp", "serve" },
  -- The same keys as [tool.torch-lsp] in pyproject.toml (`extend-select` may be written
  -- extendSelect); these override it. Neovim answers the server's workspace/configuration
  -- request with this table.
  settings = {
    ["torch-lsp"] = {
      -- select = { "TL1", "TL3" },
      -- ignore = { "TL401" },
      -- severity = { TL301 = "error", TL4 = "hint" },
      shapes = { inlayHints = true },
    },
  },
  -- Read once at start-up, before the settings above arrive; the same keys are accepted.
  init_options = {},
}

local root_markers = { "pyproject.toml", "setup.py", "setup.cfg", ".git" }

-- The folder of the nearest root marker above the buffer's file, else the file's folder.
local function project_root(bufnr)
  local folder = vim.fn.fnamemodify(vim.api.nvim_buf_get_name(bufnr), ":p:h")
  for _, marker in ipairs(root_markers) do
    local file = vim.fn.findfile(marker, folder .. ";")
    if file ~= "" then
      return vim.fn.fnamemodify(file, ":p:h")
    end
    local dir = vim.fn.finddir(marker, folder .. ";")
    if dir ~= "" then
      return vim.fn.fnamemodify(dir, ":p:h:h") -- ":p" of a folder ends in "/": one ":h" drops it
    end
  end
  return folder
end

-- Tensor shapes as inlay hints (`: [B, T, C]` after a tensor's name): Neovim 0.10 only;
-- 0.7 to 0.9 have no inlay hints and skip this.
local function enable_inlay_hints(client, bufnr)
  local inlay_hint = vim.lsp.inlay_hint
  if type(inlay_hint) == "table" and inlay_hint.enable and client.server_capabilities.inlayHintProvider then
    inlay_hint.enable(true, { bufnr = bufnr })
  end
end

local clients = {} -- project root -> client id

vim.api.nvim_create_autocmd("FileType", {
  group = vim.api.nvim_create_augroup("torch_lsp", { clear = true }),
  pattern = "python",
  callback = function(args)
    if vim.bo[args.buf].buftype ~= "" then
      return -- not a file: help, terminal, scratch
    end
    local root = project_root(args.buf)
    local id = clients[root]
    if not (id and vim.lsp.get_client_by_id(id)) then
      id = vim.lsp.start_client(vim.tbl_extend("force", config, {
        root_dir = root,
        on_attach = enable_inlay_hints,
      }))
      clients[root] = id
    end
    if id then
      vim.lsp.buf_attach_client(args.buf, id)
    end
  end,
})
