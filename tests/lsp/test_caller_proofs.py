"""An error that a call in train.py proves inside model.py is shown in both files, each
diagnostic pointing at the other, and follows edits of either file.  A client that pulls
is told to pull again when a caller's proofs change; here it pulls the caller first, as
an editor showing both does."""
from __future__ import annotations

import pytest
from lsprotocol import types as lsp

from tests.lsp.lsp_session import PROFILES, VSCODE, session, span_of, wait_until
from tests.lsp.notebook_client import CODE, MARKDOWN, ClientNotebook
from tests.lsp.test_shapes import eventually

pytestmark = pytest.mark.asyncio(loop_scope="module")

# `ŷ` is 2 UTF-8 bytes and 1 UTF-16 unit: the ranges are checked in each client's unit.
MODEL = """import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3)
        self.fc = nn.Linear(8 * 30 * 30, 10)

    def forward(self, x):
        x = self.conv(x)
        x = x.flatten(1)
        ŷ = self.fc(x)
        return ŷ
"""

TRAIN = """import torch
from model import Net

model = Net()
batch = torch.randn(16, 3, 64, 64)
ŷ = model(batch)
"""

FITTING = TRAIN.replace("torch.randn(16, 3, 64, 64)", "torch.randn(16, 3, 32, 32)")
# A batch whose shape is not known: nothing is proven, in either file.
UNKNOWN = TRAIN.replace("torch.randn(16, 3, 64, 64)", "torch.load('batch.pt')")


def tl501(items: list[lsp.Diagnostic]) -> list[lsp.Diagnostic]:
    return [d for d in items if d.code == "TL501"]


@pytest.mark.parametrize("profile", PROFILES)
async def test_an_error_a_caller_proves_is_shown_in_the_model_file_too(profile, tmp_path):
    (tmp_path / "model.py").write_text(MODEL, encoding="utf-8")
    (tmp_path / "train.py").write_text(TRAIN, encoding="utf-8")
    async with session(profile, tmp_path) as editor:
        model = editor.open("model.py", MODEL)
        train = editor.open("train.py", TRAIN)
        encoding = editor.encoding

        (at_call,) = tl501(await eventually(editor, train, lambda items: len(tl501(items)) == 1))
        assert at_call.range == span_of(TRAIN, "model(batch)", encoding)
        assert at_call.message.startswith(f"in `Net.forward` ({tmp_path / 'model.py'}, line 14): `self.fc` is")
        (raises,) = at_call.related_information
        assert raises.location.uri == model.uri
        assert raises.location.range == span_of(MODEL, "self.fc(x)", encoding)
        assert raises.message == "raises here, with the shapes of this call"

        (in_model,) = tl501(await eventually(editor, model, lambda items: len(tl501(items)) == 1))
        assert in_model.range == span_of(MODEL, "self.fc(x)", encoding)
        assert in_model.message == (
            "`self.fc` is Linear(7200 → 10), which expects 7200 features in its last dim, but it is given "
            "[16, 30752] (from x.flatten(1) (model.py, line 13)), with the arguments of the call in train.py, "
            "line 6; this raises at run time.")
        (call,) = in_model.related_information
        assert call.location.uri == train.uri
        assert call.location.range == span_of(TRAIN, "model(batch)", encoding)
        assert call.message == "the call that gives these shapes"

        # The caller's batch fits: gone from both files.
        editor.change(train, FITTING)
        await eventually(editor, train, lambda items: not tl501(items))
        await eventually(editor, model, lambda items: not tl501(items))
        # A batch of unknown shape proves nothing.
        editor.change(train, UNKNOWN)
        await eventually(editor, train, lambda items: not tl501(items))
        assert not tl501(await eventually(editor, model, lambda items: True))
        editor.change(train, TRAIN)
        await eventually(editor, train, lambda items: len(tl501(items)) == 1)
        await eventually(editor, model, lambda items: len(tl501(items)) == 1)

        # An edit of the model file moves the error with its line, in both files.
        moved = "# the model\n" + MODEL
        editor.change(model, moved)
        await eventually(editor, train, lambda items: [r.location.range for d in tl501(items)
                                                       for r in d.related_information]
                         == [span_of(moved, "self.fc(x)", encoding)])
        (in_model,) = tl501(await eventually(
            editor, model, lambda items: [d.range for d in tl501(items)] == [span_of(moved, "self.fc(x)", encoding)]))
        assert in_model.related_information[0].location.range == span_of(TRAIN, "model(batch)", encoding)
        # ... and a model that takes the batch clears both.
        fixed = moved.replace("nn.Linear(8 * 30 * 30, 10)", "nn.Linear(8 * 62 * 62, 10)")
        editor.change(model, fixed)
        await eventually(editor, train, lambda items: not tl501(items))
        await eventually(editor, model, lambda items: not tl501(items))

        # Closing the caller takes its proof away.
        editor.change(model, moved)
        await eventually(editor, train, lambda items: len(tl501(items)) == 1)
        await eventually(editor, model, lambda items: len(tl501(items)) == 1)
        editor.close(train)
        await eventually(editor, model, lambda items: not tl501(items))


async def test_a_pull_client_is_told_when_a_caller_proves_something_new(tmp_path):
    """The model file's result id follows its callers' proofs: after a refresh its pull is a
    full report with (or without) the proven error, and unchanged after that."""
    (tmp_path / "model.py").write_text(MODEL, encoding="utf-8")
    (tmp_path / "train.py").write_text(FITTING, encoding="utf-8")
    async with session("neovim", tmp_path, pull_refresh=True) as editor:
        model = editor.open("model.py", MODEL)
        train = editor.open("train.py", FITTING)
        await eventually(editor, train, lambda items: True)
        clean = await eventually(editor, model, lambda items: True)
        assert not tl501(clean)
        before = (await editor.pull(model)).result_id

        refreshes = editor.client.diagnostic_refresh_count
        editor.change(train, TRAIN)
        await eventually(editor, train, lambda items: len(tl501(items)) == 1)
        await wait_until(lambda: editor.client.diagnostic_refresh_count > refreshes, "workspace/diagnostic/refresh")
        proven = await editor.pull(model, previous_result_id=before)
        assert proven.kind == "full"
        assert [d.range for d in tl501(proven.items)] == [span_of(MODEL, "self.fc(x)", editor.encoding)]
        assert (await editor.pull(model, previous_result_id=proven.result_id)).kind == "unchanged"
        assert editor.client.published[model.uri] == []  # never a push


async def test_a_call_in_a_notebook_cell_is_the_related_place_in_its_cell(tmp_path):
    (tmp_path / "model.py").write_text(MODEL, encoding="utf-8")
    async with session(VSCODE, tmp_path, notebooks=True) as editor:
        model = editor.open("model.py", MODEL)
        notebook = ClientNotebook(editor, "explore.ipynb", [
            (CODE, "import torch\nfrom model import Net"),
            (MARKDOWN, "Try it"),
            (CODE, "model = Net()\nŷ = model(torch.randn(16, 3, 64, 64))"),
        ])
        call_cell = notebook.cells[2]
        await notebook.diagnostics(call_cell, until=lambda items: len(tl501(items)) == 1)
        (in_model,) = tl501(await eventually(editor, model, lambda items: len(tl501(items)) == 1))
        assert in_model.range == span_of(MODEL, "self.fc(x)", editor.encoding)
        (call,) = in_model.related_information
        assert call.location.uri == call_cell.uri
        assert call.location.range == span_of(call_cell.text, "model(torch.randn(16, 3, 64, 64))", editor.encoding)
        notebook.close()
        await eventually(editor, model, lambda items: not tl501(items))
