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


UNCALLED = """import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3, padding=1)
        self.fc = nn.Linear(8 * 16 * 16, 10)

    def forward(self, x):
        h = torch.relu(self.conv(x))
        h = nn.functional.max_pool2d(h, 2)
        return self.fc(h.flatten(1))
"""


async def code_lenses(editor: Session, document) -> list[lsp.CodeLens]:
    return await editor.client.text_document_code_lens_async(
        lsp.CodeLensParams(text_document=lsp.TextDocumentIdentifier(uri=document.uri)))


async def probe_shapes(editor: Session, *arguments):
    return await editor.client.workspace_execute_command_async(
        lsp.ExecuteCommandParams(command="torch-lsp.probeShapes", arguments=list(arguments)))


async def lens_title(editor: Session, document, expected: str) -> None:
    titles: list[str] = []

    async def until_titled():
        while expected not in titles:
            titles[:] = [lens.command.title for lens in await code_lenses(editor, document)]
            await asyncio.sleep(0.2)
    try:
        await asyncio.wait_for(until_titled(), 120)
    except asyncio.TimeoutError:
        raise AssertionError(f"no code lens titled {expected!r}; saw {titles}") from None


@pytest.mark.parametrize("profile", PROFILES)
async def test_probe_shapes_asks_for_an_input_remembers_it_and_probes_the_class(profile, tmp_path):
    require_torch()
    cache = tmp_path / "cache"
    (tmp_path / "project").mkdir()
    async with session(profile, tmp_path / "project", env={"XDG_CACHE_HOME": str(cache)},
                       configuration=probe_settings()) as editor:
        document = editor.open("net.py", UNCALLED)
        await editor.diagnostics(document)
        (lens,) = await code_lenses(editor, document)
        assert lens.command.title == "Probe shapes…" and lens.range.start == position_of(UNCALLED, "class Net")
        assert lens.command.command == "torch-lsp.probeShapes"
        assert list(lens.command.arguments[:2]) == [document.uri, "Net"]
        # The input the user types runs the class: 28x28 images do not fit the classifier.
        answer = await probe_shapes(editor, document.uri, "Net", "[B, 3, 28, 28]")
        assert answer == {"class": "Net", "inputs": "[B, 3, 28, 28]"}
        (failure,) = [d for d in await probed_diagnostics(editor, document, "TL502") if d.code == "TL502"]
        assert failure.range.start == position_of(UNCALLED, "return self.fc")
        assert failure.message == ("The shape probe ran `Net()` on a [2, 3, 28, 28] input and it raised "
                                   "RuntimeError: mat1 and mat2 shapes cannot be multiplied (2x1568 and 2048x10)")
        # A new input replaces it; the lens shows what ran, the batch named as the user named it.
        await probe_shapes(editor, document.uri, "Net", "[B, 3, 32, 32]")
        await lens_title(editor, document, "Probe: [B, 3, 32, 32] → [B, 10]")
        assert not any(d.code == "TL502" for d in await editor.diagnostics(document))
    remembered = (cache / "torch-lsp" / "probe-inputs.json").read_text()
    assert "net.py::Net" in remembered and '"dims": ["B", 3, 32, 32]' in remembered


@pytest.mark.parametrize("profile", PROFILES[:1])
async def test_probe_shapes_without_an_input_offers_what_the_first_layer_needs(profile, tmp_path):
    require_torch()
    (tmp_path / "project").mkdir()
    async with session(profile, tmp_path / "project", env={"XDG_CACHE_HOME": str(tmp_path / "cache")},
                       configuration=probe_settings()) as editor:
        document = editor.open("net.py", UNCALLED)
        await editor.diagnostics(document)
        answer = await probe_shapes(editor, document.uri, "Net")
        (asked,) = editor.client.message_requests
        assert [action.title for action in asked.actions] == ["[B, 3, 32, 32]", "[B, 3, 224, 224]"]
        assert answer == {"class": "Net", "inputs": "[B, 3, 32, 32]"}  # the test's user takes the first
        await lens_title(editor, document, "Probe: [B, 3, 32, 32] → [B, 10]")
        # Not a shape: one clear message, nothing remembered, the server still answers.
        assert await probe_shapes(editor, document.uri, "Net", "[B, C]") is None
        await lens_title(editor, document, "Probe: [B, 3, 32, 32] → [B, 10]")
