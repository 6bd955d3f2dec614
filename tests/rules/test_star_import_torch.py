"""`torch` brought in by a star import (`from build_utils.utils import *`) in a module that
imports from PyTorch (or a library built on it) at the top: `@torch.no_grad()` and other
`torch.` names resolve."""
from __future__ import annotations

import textwrap

from torch_lsp.checker import check_source
from torch_lsp.settings import Selection, Settings

EVAL_HELPERS = '''
from torch.cuda import amp
from project_helpers import *


@torch.no_grad()
def evaluate(model, loader):
    model.eval()
    return [model(images)[0] for images in loader]
'''

# A course notebook's helpers: `from torch_snippets import *` re-exports torch, and the only
# explicit import is from torchvision.
ECOSYSTEM_IMPORT = '''
from torch_snippets import *
from torchvision import models


@torch.no_grad()
def validate_batch(model, data, criterion):
    model.eval()
    ims, labels = data
    return criterion(model(ims), labels).item()
'''

NO_STAR = '''
from torch.cuda import amp


@torch.no_grad()
def evaluate(model, loader):
    model.eval()
    return [model(images)[0] for images in loader]
'''

NO_TORCH_IMPORT = '''
from project_helpers import *


def evaluate(model, loader):
    model.eval()
    return torch.load(loader)
'''


def _codes(source: str, codes: tuple[str, ...] = ("TL",)) -> list[str]:
    settings = Settings().with_selection(Selection(select=tuple(codes)))
    return [f.code for f in check_source(textwrap.dedent(source), "val_utils.py", settings).findings]


def test_no_grad_decorator_through_a_star_import_is_seen():
    assert "TL302" not in _codes(EVAL_HELPERS)


def test_a_star_import_beside_a_torchvision_import_brings_torch():
    assert "TL302" not in _codes(ECOSYSTEM_IMPORT)


def test_without_a_star_import_torch_stays_unknown():
    # Nothing binds `torch`: the decorator is not PyTorch's, so the evaluation is flagged.
    assert "TL302" in _codes(NO_STAR)


def test_a_star_import_alone_does_not_make_a_file_pytorch_code():
    assert _codes(NO_TORCH_IMPORT) == []
