"""TL5xx — shapes: contradictions the static shape pass proves (`server.shapes`); one module per rule,
named after its code.  Importing the package registers its rules.
"""
from server.diagnostics.shapes import (  # noqa: F401 - importing a rule's module registers it
    tl501_shape_mismatch,
)
