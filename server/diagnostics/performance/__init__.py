"""TL4xx — performance: syncs, repeated moves, quadratic copies, unbatched work; one module per rule,
named after its code.  Importing the package registers its rules.
"""
from torch_lsp.diagnostics.performance import (  # noqa: F401 - importing a rule's module registers it
    tl401_sync_in_training_loop,
    tl402_module_move_in_loop,
    tl403_cat_in_loop,
    tl404_per_sample_forward,
    tl405_dataloader_defaults,
    tl406_data_parallel,
    tl407_manual_zero_grad,
    tl408_anomaly_detection_on,
    tl409_missing_compile,
)
