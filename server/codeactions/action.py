"""What the front ends apply: a code action with its edits built."""
from __future__ import annotations

from dataclasses import dataclass

from torch_lsp.codeactions.edits import TextEdit

QUICKFIX = "quickfix"
FIX_ALL = "source.fixAll.torch-lsp"
FIX_ALL_TITLE = "Fix all auto-fixable torch-lsp problems"


@dataclass(frozen=True)
class Action:
    """A code action ready to apply (a rule's fix, the `# noqa` edit, or fix-all): its edits are
    character offsets into the text it was built from, in text order, none overlapping."""

    title: str
    kind: str  # QUICKFIX or FIX_ALL
    edits: tuple[TextEdit, ...]
    code: str  # the rule code of the finding this action answers ("" for fix-all)
    preferred: bool = False
