"""TL3xx — memory: graphs kept alive, graphs built for nothing; one module per rule, named after its
code.  Importing the package registers its rules.
"""
from torch_lsp.diagnostics.memory import (  # noqa: F401 - importing a rule's module registers it
    tl301_accumulated_graph,
    tl302_eval_without_no_grad,
)
