"""How JupyterLab starts torch-lsp: the server spec that jupyter-lsp (the Jupyter server
extension behind jupyterlab-lsp) reads from the `jupyter_lsp_spec_v1` entry point.

jupyter-lsp calls `spec(manager)` in the Jupyter server's own Python, where this package
is installed, so the server runs as that interpreter's `-m torch_lsp serve`: no PATH
lookup, no configuration. Nothing here imports jupyter_lsp (it is not a dependency).
"""
from __future__ import annotations

import sys

from torch_lsp import DOCS_URL

KEY = "torch-lsp"
# The version of jupyter-lsp's language-server spec schema this dictionary follows.
SPEC_SCHEMA_VERSION = 2
HOME_URL = "https://github.com/torch-lsp/torch-lsp"


def spec(manager: object = None) -> dict[str, dict]:
    """The spec of torch-lsp, keyed by its name, as jupyter-lsp's spec finders return it."""
    return {
        KEY: {
            "argv": [sys.executable, "-m", "torch_lsp", "serve"],
            "languages": ["python"],
            "version": SPEC_SCHEMA_VERSION,
            "display_name": "torch-lsp",
            "mime_types": ["text/python", "text/x-ipython"],
            # The server checks the text it is sent; it never needs cells written to disk.
            "requires_documents_on_disk": False,
            "urls": {"home": HOME_URL, "issues": f"{HOME_URL}/issues", "docs": DOCS_URL},
            "env": {"PYTHONUNBUFFERED": "1"},
        }
    }
