"""`python -m torch_lsp` behaves exactly like the `torch-lsp` command."""
from torch_lsp.cli import main

if __name__ == "__main__":
    raise SystemExit(main())
