"""The shape probe in the editor: TL502 and 'confirmed by probe' arrive after the other
diagnostics, the server keeps answering while a probe runs, and it is off by default."""
from __future__ import annotations

import asyncio
import sys

import pytest
from lsprotocol import types as lsp

from tests.lsp.lsp_session import PROFILES, Session, session, wait_until
from tests.shapes.conftest import require_torch

pytestmark = pytest.mark.asyncio(loop_scope="module")

MODELS = """import torch
import torch.nn as nn


class Spectral(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(64, 16)

    def forward(self, x):
        spectrum = torch.fft.rfft(x).abs()
        return self.proj(spectrum)


class Good(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3)

    def forward(self, x):
        h = self.conv(x)
        return h.flatten(1)


good = Good()(torch.randn(5, 3, 32, 32))
bad = Spectral()(torch.randn(4, 64))
optimizer = torch.optim.SGD(Good().parameters(), lr=0.1, momentum=0.9)
"""

SPIN = """import torch
import torch.nn as nn


class Spin(nn.Module):
    def forward(self, x):
        while True:
            pass


images = torch.randn(2, 3)
out = Spin()(images)
"""


def probe_settings(**extra) -> dict:
    return {"torch-lsp": {"probe": {"enabled": True, "python": sys.executable, **extra}}}


async def probed_diagnostics(editor: Session, document, code: str) -> list[lsp.Diagnostic]:
    """The diagnostics once one with `code` is among them (pushed, or pulled again)."""
    found: list = []

    async def pull_again():
        while not any(d.code == code for d in found):
            found[:] = list((await editor.pull(document)).items)
            await asyncio.sleep(0.2)

    if editor.pulls:
        await asyncio.wait_for(pull_again(), 120)
        return found
    def pushed():
        for params in editor.client.published[document.uri]:
            if params.version == document.version and any(d.code == code for d in params.diagnostics):
                found[:] = params.diagnostics
                return True
        return False
    await wait_until(pushed, f"a {code} diagnostic")
    return found


def position_of(text: str, needle: str) -> lsp.Position:
    line_no, line = next((i, line) for i, line in enumerate(text.split("\n")) if needle in line)
    return lsp.Position(line=line_no, character=line.index(needle))


@pytest.mark.parametrize("profile", PROFILES)
async def test_the_probe_reports_tl502_and_confirms_shapes(profile, tmp_path):
    require_torch()
    async with session(profile, tmp_path, configuration=probe_settings()) as editor:
        document = editor.open("models.py", MODELS)
        diagnostics = await probed_diagnostics(editor, document, "TL502")
        (failure,) = [d for d in diagnostics if d.code == "TL502"]
        assert failure.range.start == position_of(MODELS, "return self.proj(spectrum)")
        assert failure.severity == lsp.DiagnosticSeverity.Error
        assert failure.message == ("The shape probe ran `Spectral()` on a [4, 64] input and it raised "
                                   "RuntimeError: mat1 and mat2 shapes cannot be multiplied (4x33 and 64x16)")
        hover = await editor.client.text_document_hover_async(lsp.HoverParams(
            text_document=lsp.TextDocumentIdentifier(uri=document.uri), position=position_of(MODELS, "h = self")))
        assert hover is not None and "h: Tensor[5, 8, 30, 30]" in hover.contents.value
        assert "confirmed by probe" in hover.contents.value
        summary = await editor.client.text_document_hover_async(lsp.HoverParams(
            text_document=lsp.TextDocumentIdentifier(uri=document.uri), position=position_of(MODELS, "Good(nn")))
        text = summary.contents.value
        assert "Memory for one training step" in text and "optimizer state (SGD)" in text
        # Conv2d(3, 8, 3): 8*3*3*3 + 8 = 224 parameters of 4 bytes; SGD keeps one momentum buffer.
        assert "| parameters | 896 B |" in text and "| optimizer state (SGD) | 896 B |" in text


@pytest.mark.parametrize("profile", PROFILES)
async def test_the_probe_is_off_by_default(profile, tmp_path):
    async with session(profile, tmp_path) as editor:
        document = editor.open("models.py", MODELS)
        diagnostics = await editor.diagnostics(document)
        await asyncio.sleep(1)
        assert not any(d.code == "TL502" for d in await editor.diagnostics(document))
        assert not any(d.code == "TL502" for d in diagnostics)


@pytest.mark.parametrize("profile", PROFILES[:1])
async def test_a_hanging_probe_never_stops_the_server(profile, tmp_path):
    require_torch()
    async with session(profile, tmp_path, configuration=probe_settings(timeout=3)) as editor:
        document = editor.open("spin.py", SPIN)
        await editor.diagnostics(document)
        # While the probe spins, hovers are answered at once.
        for _ in range(5):
            hover = await asyncio.wait_for(editor.client.text_document_hover_async(lsp.HoverParams(
                text_document=lsp.TextDocumentIdentifier(uri=document.uri),
                position=position_of(SPIN, "images ="))), 2)
            assert hover is not None
            await asyncio.sleep(0.3)
        edited = SPIN.replace("while True:\n            pass", "return x")
        editor.change(document, edited)
        assert not any(d.code == "TL502" for d in await editor.diagnostics(document))
