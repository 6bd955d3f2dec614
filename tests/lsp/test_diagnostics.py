"""Diagnostics while typing, through the real server, for both client profiles."""
from __future__ import annotations

import pytest
from lsprotocol import types as lsp

from torch_lsp import DOCS_URL
from tests.lsp.lsp_session import VSCODE, span_of, wait_until

pytestmark = pytest.mark.asyncio(loop_scope="module")

DATA_PARALLEL = "nn.DataParallel(model)"
SNIPPET = """import torch
import torch.nn as nn

model = nn.Linear(4, 2)
model = nn.DataParallel(model)
"""


def with_wrappers(count: int) -> str:
    """A file with `count` DataParallel findings, one per line."""
    body = "".join(f"model_{i} = nn.DataParallel(model)\n" for i in range(count))
    return "import torch.nn as nn\n\nmodel = nn.Linear(4, 2)\n" + body


def codes(diagnostics) -> list[str]:
    return [d.code for d in diagnostics]


async def test_negotiated_position_encoding(editor):
    assert editor.encoding == ("utf-16" if editor.profile == VSCODE else "utf-8")


async def test_finding_has_code_precise_range_message_and_docs_link(editor):
    document = editor.open("snippet.py", SNIPPET)
    (diagnostic,) = await editor.diagnostics(document)
    assert diagnostic.code == "TL406"
    assert diagnostic.range == span_of(SNIPPET, DATA_PARALLEL, editor.encoding)
    assert diagnostic.source == "torch-lsp"
    assert diagnostic.severity == lsp.DiagnosticSeverity.Warning
    assert "DistributedDataParallel" in diagnostic.message
    assert diagnostic.message.rstrip().endswith(".")
    assert diagnostic.code_description.href == f"{DOCS_URL}#tl406"
    assert diagnostic.data["fix"] is None  # TL406 has no automatic fix
    editor.close(document)


async def test_diagnostics_reach_the_client_one_way_only(editor):
    document = editor.open("one_way.py", SNIPPET)
    if editor.pulls:
        assert codes(await editor.diagnostics(document)) == ["TL406"]
        editor.change(document, SNIPPET + "\n")
        assert codes(await editor.diagnostics(document)) == ["TL406"]
        # A client that pulls must not also get the same findings pushed.
        assert all(not p.diagnostics for p in editor.client.published[document.uri])
    else:
        published = await editor.pushed(document)
        assert published.version == document.version == 1
        assert codes(published.diagnostics) == ["TL406"]
    editor.close(document)


async def test_every_client_can_pull(editor):
    """VS Code's profile gets pushes, but an explicit pull must still be answered."""
    document = editor.open("pull.py", SNIPPET)
    if not editor.pulls:
        await editor.pushed(document)
    report = await editor.pull(document)
    assert report.kind == "full"
    assert codes(report.items) == ["TL406"]
    assert report.items[0].range == span_of(SNIPPET, DATA_PARALLEL, editor.encoding)
    unchanged = await editor.pull(document, previous_result_id=report.result_id)
    assert unchanged.kind == "unchanged"
    editor.change(document, SNIPPET.replace("nn.DataParallel(model)", "model"))
    changed = await editor.pull(document, previous_result_id=report.result_id)
    assert changed.kind == "full" and not changed.items
    editor.close(document)


async def test_diagnostics_follow_edits_and_are_never_stale(editor):
    document = editor.open("typing.py", with_wrappers(1))
    assert codes(await editor.diagnostics(document)) == ["TL406"]
    expected = {1: 1}
    # Type quickly: every version must be answered with its own findings, or not at all.
    for count in (3, 0, 2, 4, 2):
        editor.change(document, with_wrappers(count))
        expected[document.version] = count
    assert codes(await editor.diagnostics(document)) == ["TL406"] * 2
    for published in editor.client.published[document.uri]:
        assert len(published.diagnostics) == expected[published.version]
    editor.close(document)


async def test_close_clears_diagnostics(editor):
    document = editor.open("closing.py", SNIPPET)
    assert codes(await editor.diagnostics(document)) == ["TL406"]
    count = editor.publish_count(document)
    editor.close(document)
    await wait_until(lambda: editor.publish_count(document) > count, "the publish that clears a closed file")
    assert not editor.client.published[document.uri][-1].diagnostics
    report = await editor.pull(document)
    assert not report.items


async def test_syntax_error_keeps_other_findings(editor):
    text = SNIPPET.replace("model = nn.Linear(4, 2)\n", "model = nn.Linear(4, 2)\ndef broken(:\n")
    document = editor.open("half_typed.py", text)
    diagnostics = await editor.diagnostics(document)
    assert codes(diagnostics) == ["syntax-error", "TL406"]
    syntax = diagnostics[0]
    assert syntax.range.start.line == 4
    assert syntax.severity == lsp.DiagnosticSeverity.Error
    assert syntax.code_description is None
    assert diagnostics[1].range == span_of(text, DATA_PARALLEL, editor.encoding)
    editor.close(document)


async def test_positions_with_non_ascii_text_and_a_line_separator_before_the_finding(editor):
    # U+2028 inside a string on an earlier line is not a line break for LSP or Python;
    # "é😀" before the finding on its own line is 2 UTF-16 units / 6 UTF-8 bytes wider than
    # its code-point count.
    text = (
        "import torch.nn as nn\n"
        'note = "before\u2028after"\n'
        "model = nn.Linear(4, 2)\n"
        'label = "é😀"; wrapped = nn.DataParallel(model)\n'
    )
    document = editor.open("non_ascii.py", text)
    (diagnostic,) = await editor.diagnostics(document)
    expected = span_of(text, DATA_PARALLEL, editor.encoding)
    assert expected.start.line == 3
    assert diagnostic.range == expected
    editor.close(document)


async def test_ranged_changes_are_applied_with_lsp_line_splitting(editor):
    """The server asks for whole-document sync; a client that sends ranged changes
    anyway must still be understood, with lines split only at \\n, \\r\\n and \\r."""
    text = (
        "import torch.nn as nn\n"
        'note = "before\u2028after"\r\n'
        "model = nn.Linear(4, 2)\n"
        'label = "é😀"; wrapped = model\n'
    )
    document = editor.open("ranged.py", text)
    assert await editor.diagnostics(document) == []
    target = span_of(text, "wrapped = model", editor.encoding)
    target.start.character += len("wrapped = ")
    editor.edit(document, target, DATA_PARALLEL)
    assert document.text.endswith('label = "é😀"; wrapped = nn.DataParallel(model)\n')
    (diagnostic,) = await editor.diagnostics(document)
    assert diagnostic.range == span_of(document.text, DATA_PARALLEL, editor.encoding)
    editor.close(document)


async def test_huge_document_gets_one_notice_and_nothing_else(editor):
    text = "x = 1\n" * 100_001 + "model = nn.DataParallel(model)\n"
    document = editor.open("huge.py", text)
    (diagnostic,) = await editor.diagnostics(document)
    assert diagnostic.severity == lsp.DiagnosticSeverity.Information
    assert "too large" in diagnostic.message
    editor.close(document)


async def test_pathological_input_does_not_stop_the_server(editor):
    nested = "x = " + "-" * 200_000 + "1\n" + "y = " + "(" * 5_000 + ")" * 5_000 + "\n"
    document = editor.open("pathological.py", nested + SNIPPET)
    await editor.diagnostics(document)  # whatever it says, it answers
    healthy = editor.open("after_pathological.py", SNIPPET)
    assert codes(await editor.diagnostics(healthy)) == ["TL406"]
    editor.close(document)
    editor.close(healthy)


async def test_typing_sends_ranged_changes_and_only_the_newest_version_is_published(editor):
    """The server asks for incremental sync; a burst of one-character changes (CRLF lines,
    non-ASCII before the cursor) ends with the newest version's diagnostics, and no
    version is published after a newer one."""
    sync = editor.capabilities.text_document_sync
    assert getattr(sync, "change", sync) == lsp.TextDocumentSyncKind.Incremental
    text = 'import torch.nn as nn\r\nmodel = nn.Linear(4, 2)\r\nnote = "é😀"; \r\n'
    document = editor.open("typed.py", text)
    assert await editor.diagnostics(document) == []
    typed = "wrapped = " + DATA_PARALLEL
    start = span_of(text, "; ", editor.encoding).end
    for index, character in enumerate(typed):
        position = lsp.Position(line=start.line, character=start.character + index)
        editor.edit(document, lsp.Range(start=position, end=position), character)
    editor.edit(document, lsp.Range(start=lsp.Position(line=1, character=0), end=lsp.Position(line=1, character=0)),
                "# typed\r\n")

    assert document.text.endswith('note = "é😀"; wrapped = nn.DataParallel(model)\r\n')
    (diagnostic,) = await editor.diagnostics(document)
    assert diagnostic.range == span_of(document.text, DATA_PARALLEL, editor.encoding)
    # Another document's diagnostics: whatever was still queued for this one is out by then.
    other = editor.open("typed_other.py", SNIPPET)
    await editor.diagnostics(other)
    versions = [params.version for params in editor.client.published[document.uri]]
    assert versions == sorted(versions)
    assert not versions or versions[-1] == document.version
    editor.close(document)
    editor.close(other)
