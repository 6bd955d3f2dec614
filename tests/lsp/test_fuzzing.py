"""The real server under seeded, bounded random use, in both client profiles: edits of
real-looking files the way people type (`tests/robustness/mutations.py`), hovers, inlay
hints and code actions at random positions (past the end of a line or of the file),
close and reopen; and the texts that once broke it: a leading byte-order mark, a lone
surrogate, a 5 MB file.  Every request is answered with a result (never an internal
error), and the server is alive at the end."""
from __future__ import annotations

import random

import pytest
from lsprotocol import types as lsp

from tests.lsp.lsp_session import NEOVIM, position_of
from tests.robustness.mutations import SOURCES, apply, random_mutation, read

pytestmark = pytest.mark.asyncio(loop_scope="module")

SEED = 17
OPERATIONS = 40
HUGE = 2**31 - 1
DATA_PARALLEL = "import torch.nn as nn\n\nmodel = nn.DataParallel(nn.Linear(4, 2))\n"


def random_position(rng: random.Random, text: str) -> lsp.Position:
    """Anywhere, often past the end of a line or of the file."""
    lines = text.count("\n") + 1
    line = rng.choice([rng.randrange(lines), lines, lines + 5, HUGE])
    return lsp.Position(line=line, character=rng.choice([0, 3, 12, 80, 10_000, HUGE]))


def random_range(rng: random.Random, text: str) -> lsp.Range:
    start, end = random_position(rng, text), random_position(rng, text)
    return lsp.Range(start=min(start, end, key=lambda p: (p.line, p.character)),
                     end=max(start, end, key=lambda p: (p.line, p.character)))


async def one_operation(editor, rng: random.Random, document, name: str):
    """One random thing a user's editor does; returns the document (reopened or not)."""
    uri = lsp.TextDocumentIdentifier(uri=document.uri)
    kind = rng.choice(["edit", "edit", "edit", "hover", "hover", "actions", "hints", "reopen"])
    if kind == "edit":
        editor.change(document, apply(document.text, random_mutation(rng)))
    elif kind == "hover":
        await editor.client.text_document_hover_async(
            lsp.HoverParams(text_document=uri, position=random_position(rng, document.text)))
    elif kind == "hints":
        await editor.client.text_document_inlay_hint_async(
            lsp.InlayHintParams(text_document=uri, range=random_range(rng, document.text)))
    elif kind == "actions":
        # Diagnostics as the client holds them (of this version or an older one), at their
        # ranges or anywhere.
        diagnostics = list(editor.client.diagnostics.get(document.uri, []))
        span = rng.choice([d.range for d in diagnostics] or [random_range(rng, document.text)])
        await editor.code_actions(document, span, diagnostics,
                                  only=rng.choice([None, [lsp.CodeActionKind.SourceFixAll]]))
    else:
        editor.close(document)
        document = editor.open(name, document.text)
    return document


def logged_errors(editor) -> list[str]:
    """What the server logged as failures (`window/logMessage` of type Error)."""
    return [m.message for m in editor.client.log_messages if m.type == lsp.MessageType.Error]


async def test_random_use_is_always_answered(editor):
    rng = random.Random(f"{SEED}-{editor.profile}")
    errors_before = len(logged_errors(editor))
    documents = {}
    for source in rng.sample(SOURCES, 3):
        name = f"fuzz_{source.stem.replace('.', '_')}.py"
        documents[name] = editor.open(name, read(source))
    for _ in range(OPERATIONS):
        name = rng.choice(sorted(documents))
        documents[name] = await one_operation(editor, rng, documents[name], name)
    for name, document in documents.items():
        await editor.diagnostics(document)  # the last version of each is checked and published
        editor.close(document)
    alive = editor.open("alive.py", DATA_PARALLEL)
    assert [d.code for d in await editor.diagnostics(alive)] == ["TL406"]
    editor.close(alive)
    assert logged_errors(editor)[errors_before:] == []


async def test_a_byte_order_mark_keeps_line_1(editor):
    text = "\ufeffimport torch.nn as nn; model = nn.DataParallel(nn.Linear(4, 2))\n"
    document = editor.open("bom.py", text)
    (diagnostic,) = await editor.diagnostics(document)
    assert diagnostic.code == "TL406"
    assert diagnostic.range.start == position_of(text, "nn.DataParallel", editor.encoding)
    editor.close(document)


async def test_a_lone_surrogate_in_a_string_leaves_the_file_checked(editor):
    document = editor.open("surrogate.py", DATA_PARALLEL + 'name = "\ud800"\n')
    assert [d.code for d in await editor.diagnostics(document)] == ["TL406"]
    hover = await editor.client.text_document_hover_async(lsp.HoverParams(
        text_document=lsp.TextDocumentIdentifier(uri=document.uri), position=lsp.Position(line=3, character=9)))
    assert hover is None or hover.contents
    editor.close(document)


async def test_a_5_mb_file_is_answered(editor):
    if editor.profile == NEOVIM:
        pytest.skip("one profile is enough for a file past the size limit (7 s of JSON each)")
    line = "x = torch.zeros(3, 4)  # " + "padding " * 8 + "\n"
    text = "import torch\n" + line * (5_200_000 // len(line))
    document = editor.open("huge.py", text)
    uri = lsp.TextDocumentIdentifier(uri=document.uri)
    assert [d.code for d in await editor.diagnostics(document)] == ["file-too-large"]
    await editor.client.text_document_hover_async(lsp.HoverParams(text_document=uri, position=lsp.Position(10, 2)))
    everything = lsp.Range(start=lsp.Position(0, 0), end=lsp.Position(HUGE, HUGE))
    await editor.client.text_document_inlay_hint_async(lsp.InlayHintParams(text_document=uri, range=everything))
    await editor.code_actions(document, everything, [])
    editor.close(document)
