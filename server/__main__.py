"""`python -m server` behaves exactly like the `torch-lsp` command."""
from server.cli import main

if __name__ == "__main__":
    raise SystemExit(main())
