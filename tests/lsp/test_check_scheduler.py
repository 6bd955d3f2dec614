"""The states of a check (`torch_lsp.check_scheduler`), seen from a client of the real server.

The server checks on one analysis thread, in order, so the complete diagnostics of a
document opened later are a point by which every earlier check has been published or
dropped: the tests wait for that instead of for a while."""
from __future__ import annotations

import itertools

import pytest
from lsprotocol import types as lsp

from tests.lsp.lsp_session import session

pytestmark = pytest.mark.asyncio(loop_scope="module")

WITHOUT_SHAPE_FINDINGS = """import torch.nn as nn

model = nn.Linear(4, 2)
model = nn.DataParallel(model)
"""

WITH_A_SHAPE_FINDING = """import torch
import torch.nn as nn

layer = nn.Linear(5, 2)
out = layer(torch.randn(8, 4))
model = nn.DataParallel(layer)
"""


_later_names = (f"later_{n}.py" for n in itertools.count())


def codes(diagnostics) -> list[str]:
    return [d.code for d in diagnostics]


async def everything_before_is_done(editor) -> None:
    """Wait for the complete check of a document opened now (see the module docstring)."""
    later = editor.open(next(_later_names), WITHOUT_SHAPE_FINDINGS)
    await editor.diagnostics(later)
    if not editor.pulls:
        await editor.pull(later)  # answered with the complete pass, after the first one was published
    editor.close(later)


async def test_complete_pass_is_published_only_when_it_adds_findings(tmp_path):
    async with session("visual-studio-code", tmp_path) as editor:
        plain = editor.open("plain.py", WITHOUT_SHAPE_FINDINGS)
        shaped = editor.open("shaped.py", WITH_A_SHAPE_FINDING)
        await everything_before_is_done(editor)

        plain_publishes = editor.client.published[plain.uri]
        assert [p.version for p in plain_publishes] == [1]
        assert codes(plain_publishes[0].diagnostics) == ["TL406"]

        first, complete = editor.client.published[shaped.uri]
        assert first.version == complete.version == 1
        assert "TL501" not in codes(first.diagnostics)
        assert sorted(codes(complete.diagnostics)) == sorted(codes(first.diagnostics) + ["TL501"])


async def test_a_closed_document_is_never_published_again(tmp_path):
    async with session("visual-studio-code", tmp_path) as editor:
        document = editor.open("closed.py", WITH_A_SHAPE_FINDING)
        editor.change(document, WITH_A_SHAPE_FINDING + "\n")
        editor.close(document)
        await everything_before_is_done(editor)

        publishes = editor.client.published[document.uri]
        assert publishes and not publishes[-1].diagnostics
        # A closed document is checked no more: a pull of it is answered empty.
        assert not (await editor.pull(document)).items


async def test_pull_client_is_refreshed_only_when_the_complete_pass_differs(tmp_path):
    async with session("neovim", tmp_path, pull_refresh=True) as editor:
        plain = editor.open("plain.py", WITHOUT_SHAPE_FINDINGS)
        first = await editor.pull(plain)
        assert codes(first.items) == ["TL406"]
        await everything_before_is_done(editor)
        assert editor.client.diagnostic_refresh_count == 0

        shaped = editor.open("shaped.py", WITH_A_SHAPE_FINDING)
        assert "TL501" not in codes((await editor.pull(shaped)).items)
        await everything_before_is_done(editor)
        assert editor.client.diagnostic_refresh_count == 1
        assert "TL501" in codes((await editor.pull(shaped)).items)


TYPED_FILE = """import torch
import torch.nn as nn


def build():
    layer = nn.Linear(5, 2)
    return layer


def run():
    layer = nn.Linear(5, 2)
    out = layer(torch.randn(8, 4))
    return out


def train(model, loader, optimizer):
    for x, y in loader:
        loss = model(x).sum()
        loss.backward()
        optimizer.step()
"""


def at(line: int, character: int, end_line: int | None = None, end_character: int | None = None) -> lsp.Range:
    return lsp.Range(start=lsp.Position(line=line, character=character),
                     end=lsp.Position(line=line if end_line is None else end_line,
                                      character=character if end_character is None else end_character))


def shown(publish) -> list[tuple]:
    return [(d.code, d.range, d.message) for d in publish.diagnostics]


async def test_edits_inside_functions_publish_no_stale_version_and_end_as_a_fresh_check(tmp_path):
    """Edits checked as edits of the previous version (parsed in part, per-statement facts
    reused), some awaited one by one, some in a burst that arrives while a check runs."""
    async with session("visual-studio-code", tmp_path) as editor:
        typed = editor.open("typed.py", TYPED_FILE)
        await editor.diagnostics(typed)
        editor.edit(typed, at(11, 31), "0")  # torch.randn(8, 40): still a mismatch
        await editor.diagnostics(typed)
        editor.edit(typed, at(18, 0), "        optimizer.zero_grad()\n")  # a line added in train()
        await editor.diagnostics(typed)
        for column, character in enumerate("    scale = 2\n"):  # typed in build(), a keystroke a change
            editor.edit(typed, at(6, column), character)
        editor.edit(typed, at(11, 30, 11, 32), "5")  # torch.randn(8, 5): the mismatch is gone
        fresh = editor.open("fresh.py", typed.text)
        await everything_before_is_done(editor)

        publishes = editor.client.published[typed.uri]
        versions = [p.version for p in publishes]
        assert versions == sorted(versions), "an older version was published after a newer one"
        assert versions[-1] == typed.version
        assert shown(publishes[-1]) == shown(editor.client.published[fresh.uri][-1])
        assert any("TL501" in codes(p.diagnostics) for p in publishes if p.version == 1)
        assert "TL501" not in codes(publishes[-1].diagnostics)
        assert "    scale = 2\n    return layer\n" in typed.text
