"""torch-lsp: reviews PyTorch code while it is typed."""

__version__ = "0.1.0"
DOCS_URL = "https://github.com/torch-lsp/torch-lsp/blob/main/docs/rules.md"
