"""Requests about a checked document are answered while other documents are edited in a
flood: a hover never queues behind the handling of other documents' edits (issue 17,
fault 2).

Each edit used to walk the tree of every analysed open document on the event loop (to
find who imports the edited file), so a flood of edits to large files kept the loop busy
for seconds per hundred edits, and a hover sent after them was answered only once all
were handled.  The bound below is generous (a loaded CI machine); the latencies
themselves are measured by `python -m bench --only storm`.
"""
from __future__ import annotations

import asyncio

import pytest
from lsprotocol import types as lsp

from tests.lsp.lsp_session import PROFILES, session
from tests.lsp.test_shapes import MODEL, position_of

pytestmark = pytest.mark.asyncio(loop_scope="module")

LARGE_DOCUMENTS = 4  # more lines than the server keeps analysed, so the hovered file is analysed again
BLOCKS_PER_DOCUMENT = 80  # 25 lines each: 2,000-line documents
EDITS = 500  # sent at once, spread over the large documents
ANSWERED_WITHIN_S = 5.0  # "answered at all", not a latency target

BLOCK = '''

class Encoder{n}(nn.Module):
    """Block {n} of a generated model."""

    def __init__(self, width: int = 64):
        super().__init__()
        self.proj = nn.Linear(width, width)
        self.norm = nn.LayerNorm(width)

    def forward(self, x):
        h = self.proj(x)
        return self.norm(F.relu(h))


def train_{n}(model, loader, optimizer):
    model.train()
    for inputs, targets in loader:
        optimizer.zero_grad()
        loss = F.mse_loss(model(inputs), targets)
        loss.backward()
        optimizer.step()
    # note {n}
    return model

'''


def large_document(index: int) -> str:
    header = "import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n"
    return header + "".join(BLOCK.replace("{n}", f"{index}_{n}") for n in range(BLOCKS_PER_DOCUMENT))


@pytest.mark.parametrize("profile", PROFILES)
async def test_a_hover_is_answered_while_many_large_documents_are_edited(profile, tmp_path):
    async with session(profile, tmp_path) as editor:
        quiet = editor.open("quiet.py", MODEL)
        await editor.diagnostics(quiet)
        hover_params = lsp.HoverParams(text_document=lsp.TextDocumentIdentifier(uri=quiet.uri),
                                       position=position_of(MODEL, "logits =", editor.encoding, 2))
        before = await editor.client.text_document_hover_async(hover_params)
        assert before is not None and "logits: Tensor[8, 10]" in before.contents.value

        large = [editor.open(f"large_{index}.py", large_document(index)) for index in range(LARGE_DOCUMENTS)]
        for document in large:
            await editor.diagnostics(document)  # checked, so their analyses are kept
        # One character typed, then deleted again, in a comment of each: the text stays valid.
        note = position_of(large[0].text, "# note ", editor.encoding, len("# note "))
        for edit in range(EDITS):
            document = large[edit % LARGE_DOCUMENTS]
            start = note
            inserting = (edit // LARGE_DOCUMENTS) % 2 == 0
            end = start if inserting else lsp.Position(line=start.line, character=start.character + 1)
            editor.edit(document, lsp.Range(start=start, end=end), "x" if inserting else "")

        during = await asyncio.wait_for(editor.client.text_document_hover_async(hover_params), ANSWERED_WITHIN_S)
        assert during is not None and "logits: Tensor[8, 10]" in during.contents.value
