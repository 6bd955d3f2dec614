"""Work caps of the shape pass: one pathological file must not freeze the editor."""
from __future__ import annotations

MAX_CALL_DEPTH = 12
MAX_CONTEXTS = 8  # call contexts per function and instance; more calls share its standalone run
MAX_FUNCTION_CONTEXTS = 64  # call contexts per function over all instances (the blocks of a ResNet)
MAX_UNROLL = 16
MAX_STEPS = 200_000  # statements and calls per file: a cap, so one pathological file stays responsive
MAX_TEXT = 48


class Budget(Exception):
    """The per-file work cap was reached."""
