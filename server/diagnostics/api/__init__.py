"""TL7xx — API hygiene: removed, deprecated and non-public APIs, typos, unsafe loading,
numerics and torchvision's deprecated arguments (everything TorchFix checks), found by
qualified name and judged against the target PyTorch version; one module per rule, named
after its code.  Importing the package registers its rules.
"""
from torch_lsp.diagnostics.api import (  # noqa: F401 - importing a rule's module registers it
    tl701_removed_api,
    tl702_require_grad_typo,
    tl703_checkpoint_reentrant,
    tl704_deprecated_api,
    tl705_torch_load_unsafe,
    tl706_non_public_api,
    tl707_numerics,
    tl708_torchvision_deprecated,
)
