"""TL6xx — torch.compile: code that Dynamo cannot trace inside compiled functions; one module per
rule, named after its code.  Importing the package registers its rules.

`compiled_code` says which functions of a file run under `torch.compile` (decorated, wrapped,
or the `forward` of a local module passed to it, with the methods it calls on `self`) and which
of their nodes Dynamo traces.
"""
from torch_lsp.diagnostics.compile import (  # noqa: F401 - importing a rule's module registers it
    tl601_graph_break,
)
