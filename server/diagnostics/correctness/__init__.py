"""TL2xx — silent correctness: code that runs, or runs once, and computes the wrong thing; one
module per rule, named after its code.  Importing the package registers its rules.

Every rule here resolves torch names through the imports (`F.softmax` is
`torch.nn.functional.softmax`) and follows values only as `provenance` does: what cannot be
followed is unknown, and unknown is silent.  `torch_names` and `quoting` hold the names and the
message text the rules share.
"""
from torch_lsp.diagnostics.correctness import (  # noqa: F401 - importing a rule's module registers it
    tl201_softmax_implicit_dim,
    tl202_softmax_over_batch,
    tl203_view_after_transpose,
    tl204_unchecked_strict_false,
    tl205_tensor_from_tensor,
    tl206_activation_before_loss,
)
