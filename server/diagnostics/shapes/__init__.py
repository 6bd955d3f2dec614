"""TL5xx — shapes: contradictions the static shape pass proves (`torch_lsp.shapes`); one module per rule,
named after its code.  Importing the package registers its rules.
"""
from torch_lsp.diagnostics.shapes import (  # noqa: F401 - importing a rule's module registers it
    tl501_shape_mismatch,
    tl502_probe_failure,
    tl503_dtype_mismatch,
)
