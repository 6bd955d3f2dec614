"""torch-lsp's benchmark: `python -m bench [--quick]` prints figures; it never asserts."""
