"""TL1xx — correctness of the training loop: one module per rule, named after its code.

Importing the package registers its rules.  What they share (which loops train, which calls
evaluate a model) is in `torch_lsp.analysis` and `torch_lsp.roles`.
"""
from torch_lsp.diagnostics.training import (  # noqa: F401 - importing a rule's module registers it
    tl101_missing_zero_grad,
    tl102_missing_train_mode,
    tl103_missing_eval_mode,
    tl104_inplace_on_leaf,
    tl105_hardcoded_device,
    tl106_factory_without_device,
    tl107_backward_under_no_grad,
    tl108_scheduler_before_optimizer,
)
