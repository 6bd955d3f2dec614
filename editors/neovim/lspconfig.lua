-- torch-lsp through nvim-lspconfig's setup() (Neovim 0.8 to 0.10 with nvim-lspconfig installed).
--
-- torch-lsp is not one of nvim-lspconfig's bundled servers, so this defines it as a custom
-- server first. On Neovim 0.11 or newer, nvim-lspconfig deprecates require("lspconfig");
-- use torch_lsp.lua (vim.lsp.config / vim.lsp.enable) there instead — it works with or
-- without nvim-lspconfig installed.
-- Use: paste into your init.lua after nvim-lspconfig is loaded.

local lspconfig = require("lspconfig")
local configs = require("lspconfig.configs")

if not configs.torch_lsp then -- defined once, also when this file is sourced again
  configs.torch_lsp = {
    default_config = {
      cmd = { "torch-lsp", "serve" },
      filetypes = { "python" },
      root_dir = lspconfig.util.root_pattern("pyproject.toml", "setup.py", "setup.cfg", ".git"),
      single_file_support = true,
      settings = {},
    },
  }
end

lspconfig.torch_lsp.setup({
  -- The same keys as [tool.torch-lsp] in pyproject.toml; these override it.
  settings = {
    ["torch-lsp"] = {
      -- ignore = { "TL401" },
      -- severity = { TL301 = "error", TL4 = "hint" },
      shapes = { inlayHints = true },
    },
  },
  on_attach = function(client, bufnr)
    -- Tensor shapes as inlay hints, on Neovim 0.10 (0.8 and 0.9 have none).
    if type(vim.lsp.inlay_hint) == "table" and client.server_capabilities.inlayHintProvider then
      vim.lsp.inlay_hint.enable(true, { bufnr = bufnr })
    end
  end,
})
