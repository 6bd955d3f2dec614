"""Tensor shapes in the editor: hover and inlay hints from the cached analysis."""
from __future__ import annotations

import pytest
from lsprotocol import types as lsp

from tests.lsp.lsp_session import PROFILES, Session, capabilities, server_config, session, wait_until

pytestmark = pytest.mark.asyncio(loop_scope="module")

MODEL = """import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3 * 32 * 32, 10)

    def forward(self, x):
        h = x.flatten(1)
        return self.fc(h)


images = torch.randn(8, 3, 32, 32)  # é😀
logits = Net()(images)
"""

MISMATCH = MODEL.replace("nn.Linear(3 * 32 * 32, 10)", "nn.Linear(3 * 32 * 32 + 1, 10)")


def position_of(text: str, needle: str, encoding: str, offset: int = 0) -> lsp.Position:
    line_no, line = next((i, line) for i, line in enumerate(text.split("\n")) if needle in line)
    prefix = line[: line.index(needle) + offset]
    units = len(prefix.encode("utf-16-le")) // 2 if encoding == "utf-16" else len(prefix.encode())
    return lsp.Position(line=line_no, character=units)


async def hover_text(editor: Session, document, text: str, needle: str, offset: int = 0) -> str:
    hover = await editor.client.text_document_hover_async(lsp.HoverParams(
        text_document=lsp.TextDocumentIdentifier(uri=document.uri),
        position=position_of(text, needle, editor.encoding, offset)))
    return hover.contents.value if hover is not None else ""


@pytest.mark.parametrize("profile", PROFILES)
async def test_hover_shows_the_tensor_shape(profile, tmp_path):
    async with session(profile, tmp_path) as editor:
        document = editor.open("net.py", MODEL)
        await editor.diagnostics(document)
        hover = await editor.client.text_document_hover_async(lsp.HoverParams(
            text_document=lsp.TextDocumentIdentifier(uri=document.uri),
            position=position_of(MODEL, "logits =", editor.encoding, 2),
        ))
        assert hover is not None and hover.contents.kind == lsp.MarkupKind.Markdown
        assert "logits: Tensor[8, 10]" in hover.contents.value
        hover = await editor.client.text_document_hover_async(lsp.HoverParams(
            text_document=lsp.TextDocumentIdentifier(uri=document.uri),
            position=position_of(MODEL, "h = x", editor.encoding),
        ))
        assert hover is not None and "h: Tensor[8, 3072]" in hover.contents.value
        # Past the end of the file: no hover, no error.
        nothing = await editor.client.text_document_hover_async(lsp.HoverParams(
            text_document=lsp.TextDocumentIdentifier(uri=document.uri),
            position=lsp.Position(line=2**31 - 1, character=2**31 - 1),
        ))
        assert nothing is None


@pytest.mark.parametrize("profile", PROFILES)
async def test_inlay_hints_follow_the_setting(profile, tmp_path):
    async with session(profile, tmp_path) as editor:
        document = editor.open("net.py", MODEL)
        await editor.diagnostics(document)
        everything = lsp.Range(start=lsp.Position(line=0, character=0), end=lsp.Position(line=100, character=0))
        params = lsp.InlayHintParams(text_document=lsp.TextDocumentIdentifier(uri=document.uri), range=everything)
        hints = await editor.client.text_document_inlay_hint_async(params)
        labels = {(h.position.line, h.label) for h in hints}
        images = position_of(MODEL, "images =", editor.encoding, len("images"))
        assert (images.line, ": [8, 3, 32, 32]") in labels
        (hint,) = [h for h in hints if h.position.line == images.line]
        assert hint.position == images and hint.kind == lsp.InlayHintKind.Type
        before = editor.publish_count(document)
        editor.client.set_configuration({"shapes": {"inlayHints": False}}, section="torch-lsp")
        editor.configuration_changed()
        await editor.diagnostics(document, after=before)  # the new settings are in force
        assert not await editor.client.text_document_inlay_hint_async(params)
        if profile == "neovim":  # it declares refresh support: hints are asked for again
            assert editor.client.inlay_hint_refreshes >= 1


async def test_hover_is_plain_text_for_a_client_without_markdown(tmp_path):
    """eglot without markdown-mode, for one, declares plain text only."""
    client = await server_config().start()
    try:
        caps = capabilities("visual-studio-code")
        caps.text_document.hover = lsp.HoverClientCapabilities(content_format=[lsp.MarkupKind.PlainText])
        result = await client.initialize_session(lsp.InitializeParams(capabilities=caps, root_uri=tmp_path.as_uri()))
        editor = Session(client, "visual-studio-code", tmp_path, result)
        document = editor.open("net.py", MODEL)
        await editor.diagnostics(document)
        hover = await client.text_document_hover_async(lsp.HoverParams(
            text_document=lsp.TextDocumentIdentifier(uri=document.uri),
            position=position_of(MODEL, "logits =", editor.encoding, 2),
        ))
        assert hover.contents.kind == lsp.MarkupKind.PlainText
        assert "logits: Tensor[8, 10]" in hover.contents.value and "```" not in hover.contents.value
        await client.shutdown_session()
    finally:
        await client.stop()


async def test_hover_follows_an_imported_model_class(tmp_path):
    (tmp_path / "model.py").write_text(
        "import torch.nn as nn\n\n\n"
        "class Classifier(nn.Module):\n"
        "    def __init__(self, n_in, n_out):\n"
        "        super().__init__()\n"
        "        self.fc = nn.Linear(n_in, n_out)\n\n"
        "    def forward(self, x):\n"
        "        return self.fc(x)\n",
        encoding="utf-8",
    )
    train = "import torch\nfrom model import Classifier\n\nscores = Classifier(64, 5)(torch.randn(4, 64))\n"
    async with session("visual-studio-code", tmp_path) as editor:
        document = editor.open_path(tmp_path / "train.py", train)
        await editor.diagnostics(document)
        hover = await editor.client.text_document_hover_async(lsp.HoverParams(
            text_document=lsp.TextDocumentIdentifier(uri=document.uri),
            position=position_of(train, "scores =", editor.encoding, 1),
        ))
        assert hover is not None and "scores: Tensor[4, 5]" in hover.contents.value


async def test_shape_findings_arrive_in_a_second_push(tmp_path):
    """The rules that need the shape pass follow the others in a second publish of the same version."""
    async with session("visual-studio-code", tmp_path) as editor:
        document = editor.open("mismatch.py", MISMATCH)
        await wait_until(lambda: len(editor.client.published[document.uri]) >= 2, "two publishes")
        first, second = editor.client.published[document.uri][:2]
        assert first.version == second.version == document.version
        assert "TL501" not in [d.code for d in first.diagnostics]
        assert [d.code for d in second.diagnostics].count("TL501") == 1
        # A client that did not declare pull, pulling anyway, is answered in full.
        report = await editor.pull(document)
        assert "TL501" in [d.code for d in report.items]


async def test_pull_client_with_refresh_gets_shape_findings_after_a_refresh(tmp_path):
    """A pull client that supports `workspace/diagnostic/refresh` is answered like a push
    client: every rule but the shape rules at once, then a refresh, after which its pull
    holds the shape findings too."""
    async with session("neovim", tmp_path, pull_refresh=True) as editor:
        document = editor.open("mismatch.py", MISMATCH)
        first = await editor.pull(document)
        assert first.kind == "full" and "TL501" not in [d.code for d in first.items]
        await wait_until(lambda: editor.client.diagnostic_refresh_count > 0, "workspace/diagnostic/refresh")
        complete = await editor.pull(document, previous_result_id=first.result_id)
        assert complete.kind == "full"
        assert [d.code for d in complete.items].count("TL501") == 1
        assert all(d in complete.items for d in first.items)
        again = await editor.pull(document, previous_result_id=complete.result_id)
        assert again.kind == "unchanged"
        assert editor.client.published[document.uri] == []  # still never a push


async def test_pull_client_without_refresh_gets_everything_in_one_answer(tmp_path):
    async with session("neovim", tmp_path) as editor:
        document = editor.open("mismatch.py", MISMATCH)
        report = await editor.pull(document)
        assert [d.code for d in report.items].count("TL501") == 1


DEFINITE_ERRORS = """import torch
import torch.nn as nn
import torch.nn.functional as F


class Encoder(nn.Module):
    def __init__(self, features, hidden):
        super().__init__()
        self.rnn = nn.GRU(features, hidden, bidirectional=True)
        self.proj = nn.Linear(hidden, hidden)

    def forward(self, x):
        states, _ = self.rnn(x)
        return self.proj(states)


logits = torch.randn(4, 10)
labels = torch.randint(0, 10, (4,)).float()
loss = F.cross_entropy(logits, labels)
"""


@pytest.mark.parametrize("profile", PROFILES)
async def test_errors_for_every_size_and_of_dtypes_reach_the_editor(profile, tmp_path):
    """TL501 where no call site fixes `hidden` (2*hidden features are never hidden), TL503 for
    a floating-point class-index target: errors, on their lines, in both client profiles."""
    async with session(profile, tmp_path) as editor:
        document = editor.open("encoder.py", DEFINITE_ERRORS)
        if editor.pulls:
            items = (await editor.pull(document)).items
        else:
            await wait_until(lambda: len(editor.client.published[document.uri]) >= 2, "the shape pass's publish")
            items = editor.client.published[document.uri][-1].diagnostics
        found = {(d.code, d.range.start.line) for d in items if d.code in ("TL501", "TL503")}
        assert found == {("TL501", 13), ("TL503", 18)}
        (dtype,) = [d for d in items if d.code == "TL503"]
        assert dtype.severity == lsp.DiagnosticSeverity.Error
        assert "floating-point target [4]" in dtype.message
        (shape,) = [d for d in items if d.code == "TL501"]
        assert "2*hidden" in shape.message


BLOCK = """import torch
import torch.nn as nn


class Block(nn.Module):
    def __init__(self, width):
        super().__init__()
        self.fc = nn.Linear(width, width)

    def forward(self, x):
        return self.fc(x)


def head(features):
    return features.mean(0)


def classify(scores):
    assert scores.dim() == 2
    flat = scores.reshape(-1, 10)
    return flat.softmax(-1)


small = Block(16)(torch.randn(4, 16))
large = Block(32)(torch.randn(2, 32))
"""


@pytest.mark.parametrize("profile", PROFILES)
async def test_sizes_that_differ_between_calls_are_named_and_unknown_ones_can_be(profile, tmp_path):
    async with session(profile, tmp_path) as editor:
        document = editor.open("block.py", BLOCK)
        await editor.diagnostics(document)
        hover = await hover_text(editor, document, BLOCK, "x):")
        assert "x: Tensor[B, width]" in hover
        assert "`B`: a size that differs between the calls of this function: 4 (call on line 24), " \
               "2 (call on line 25)" in hover
        assert "`width`: the argument `width` of `Block.__init__`" in hover
        # `features` is never called with a tensor: the hover suggests the annotation that
        # names its sizes, and a code action inserts it.
        where = position_of(BLOCK, "features):", editor.encoding)
        everything = lsp.Range(start=where, end=where)
        actions = await editor.code_actions(document, everything, [], only=["refactor"])
        assert not actions  # nothing is known of `features`' shape, not even its rank
        where = position_of(BLOCK, "x):", editor.encoding)
        actions = await editor.code_actions(document, lsp.Range(start=where, end=where), [], only=["refactor"])
        assert not actions  # every size of `x` is named already
        hover = await hover_text(editor, document, BLOCK, "scores):")
        assert "scores: Tensor[?, ?]" in hover
        assert 'annotate it, `scores: Float[Tensor, "B D"]`' in hover
        where = position_of(BLOCK, "scores):", editor.encoding, 2)
        (action,) = await editor.code_actions(document, lsp.Range(start=where, end=where), [], only=["refactor"])
        assert action.kind == "refactor.rewrite"
        fixed = editor.applied(document, action)
        assert 'def classify(scores: Float[Tensor, "B D"]):' in fixed
        assert fixed.startswith("from jaxtyping import Float\nfrom torch import Tensor\nimport torch\n")
        where = position_of(BLOCK, "flat =", editor.encoding)
        (action,) = await editor.code_actions(document, lsp.Range(start=where, end=where), [], only=["refactor"])
        assert "    flat = scores.reshape(-1, 10)  # [B, 10]\n" in editor.applied(document, action)


IMPORTED_MODEL = """import torch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(32, 10)

    def forward(self, x):
        return self.fc(x)
"""

TRAIN = """import torch

from model import Net

logits = Net()(torch.randn(4, 32))
"""


async def eventually(editor: Session, document, wanted) -> list[lsp.Diagnostic]:
    """The document's diagnostics once `wanted(diagnostics)` holds (pulled again, or the
    latest push for its version), within the session's safety-net time."""
    import asyncio

    for _ in range(600):
        if editor.pulls:
            items = list((await editor.pull(document)).items)
        else:
            pushed = [p for p in editor.client.published[document.uri] if p.version == document.version]
            items = list(pushed[-1].diagnostics) if pushed else None
        if items is not None and wanted(items):
            return items
        await asyncio.sleep(0.1)
    raise AssertionError(f"diagnostics of {document.uri} never became as wanted")


@pytest.mark.parametrize("profile", PROFILES)
async def test_editing_a_model_file_rechecks_the_open_files_that_import_it(profile, tmp_path):
    (tmp_path / "model.py").write_text(IMPORTED_MODEL, encoding="utf-8")
    (tmp_path / "train.py").write_text(TRAIN, encoding="utf-8")
    async with session(profile, tmp_path) as editor:
        model = editor.open("model.py", IMPORTED_MODEL)
        train = editor.open("train.py", TRAIN)
        await eventually(editor, train, lambda items: not any(d.code == "TL501" for d in items))
        assert "logits: Tensor[4, 10]" in await hover_text(editor, train, TRAIN, "logits =")
        # An unsaved edit of model.py: train.py's call now contradicts it (the file on
        # disk still says 32, so this is the editor's text being followed).
        editor.change(model, IMPORTED_MODEL.replace("nn.Linear(32, 10)", "nn.Linear(64, 10)"))
        found = await eventually(editor, train, lambda items: any(d.code == "TL501" for d in items))
        assert any("64" in d.message for d in found if d.code == "TL501")
        editor.change(model, IMPORTED_MODEL.replace("nn.Linear(32, 10)", "nn.Linear(32, 7)"))
        await eventually(editor, train, lambda items: not any(d.code == "TL501" for d in items))
        assert "logits: Tensor[4, 7]" in await hover_text(editor, train, TRAIN, "logits =")


CONFIGURED = """from dataclasses import dataclass, field

import torch.nn as nn


@dataclass
class GPTConfig:
    block_size: int = 1024
    n_embd: int = 768
    n_head: int = field(default=12)


class Attention(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.c_attn = nn.Linear(config.n_embd, 3 * config.n_embd)
        self.n_embd = config.n_embd

    def forward(self, x):
        B, T, C = x.size()
        qkv = self.c_attn(x)
        q, k, v = qkv.split(self.n_embd, dim=2)
        return q


class Head(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.proj = nn.Linear(cfg.hidden_size, cfg.vocab_size)

    def forward(self, h):
        logits = self.proj(h)
        return logits


class Mixer(nn.Module):
    def __init__(self, c: "GPTConfig", layer):
        super().__init__()
        self.heads = nn.Linear(c.n_head, layer.out_features)

    def forward(self, z):
        mixed = self.heads(z)
        return mixed
"""


@pytest.mark.parametrize("profile", PROFILES)
async def test_hover_says_a_size_is_a_config_field(profile, tmp_path):
    async with session(profile, tmp_path) as editor:
        document = editor.open("gpt.py", CONFIGURED)
        await editor.diagnostics(document)
        # Read as `config.n_embd` in __init__, used through `self.n_embd` in forward.
        qkv = await hover_text(editor, document, CONFIGURED, "qkv =")
        assert "qkv: Tensor[B, T, 3*n_embd]" in qkv
        assert "`n_embd`: config field `GPTConfig.n_embd` (default 768)" in qkv
        q = await hover_text(editor, document, CONFIGURED, "q, k, v")
        assert "`n_embd`: config field `GPTConfig.n_embd` (default 768)" in q
        # A config class the file does not declare: the field of the object it is read from.
        logits = await hover_text(editor, document, CONFIGURED, "logits =")
        assert "logits: Tensor[*, vocab_size]" in logits
        assert "`vocab_size`: config field `vocab_size` of `cfg`" in logits
        # The class comes from the annotation; an object that is no config stays an attribute.
        mixed = await hover_text(editor, document, CONFIGURED, "mixed =")
        assert "mixed: Tensor[*, out_features]" in mixed
        assert "`out_features`: the value of `layer.out_features`" in mixed
        assert "config" not in mixed
        z = await hover_text(editor, document, CONFIGURED, "z):")
        assert "`n_head`: config field `GPTConfig.n_head` (default 12)" in z
