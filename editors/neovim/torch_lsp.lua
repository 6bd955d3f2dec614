-- torch-lsp for Neovim 0.11 or newer (vim.lsp.config / vim.lsp.enable).
--
-- Use: paste into your init.lua, or copy this file to ~/.config/nvim/plugin/torch_lsp.lua.
-- `torch-lsp` must be on Neovim's PATH (start Neovim from the activated virtual
-- environment), or put the full path in `cmd`, e.g. { "/path/to/.venv/bin/torch-lsp", "serve" }.
-- To change a setting without editing this file, call vim.lsp.config again after it:
--   vim.lsp.config("torch_lsp", { settings = { ["torch-lsp"] = { ignore = { "TL401" } } } })
-- (configs merge). Check with :checkhealth vim.lsp.

vim.lsp.config("torch_lsp", {
  cmd = { "torch-lsp", "serve" },
  filetypes = { "python" },
  -- The project root: where the nearest of these is. pyproject.toml also holds [tool.torch-lsp].
  root_markers = { "pyproject.toml", "setup.py", "setup.cfg", ".git" },
  -- The same keys as [tool.torch-lsp] in pyproject.toml (`extend-select` may be written
  -- extendSelect); these override it. Neovim answers the server's workspace/configuration
  -- request with this table.
  settings = {
    ["torch-lsp"] = {
      -- select = { "TL1", "TL3" },
      -- extendSelect = { "TL409" },
      -- ignore = { "TL401" },
      -- severity = { TL301 = "error", TL4 = "hint" },
      -- perFileIgnores = { ["tests/**"] = { "TL1" } },
      shapes = { inlayHints = true },
    },
  },
  -- Read once at start-up, before the settings above arrive; the same keys are accepted.
  init_options = {},
})
vim.lsp.enable("torch_lsp")

-- Tensor shapes as inlay hints (`: [B, T, C]` after a tensor's name), in the buffers
-- torch-lsp is attached to. Toggle with :lua vim.lsp.inlay_hint.enable(false, { bufnr = 0 }).
vim.api.nvim_create_autocmd("LspAttach", {
  group = vim.api.nvim_create_augroup("torch_lsp_inlay_hints", { clear = true }),
  callback = function(args)
    local client = vim.lsp.get_client_by_id(args.data.client_id)
    if client and client.name == "torch_lsp" and client:supports_method("textDocument/inlayHint") then
      vim.lsp.inlay_hint.enable(true, { bufnr = args.buf })
    end
  end,
})
