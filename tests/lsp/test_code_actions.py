"""The "Disable TLxxx for this line" quick fix, applied the way a client applies it."""
from __future__ import annotations

import pytest
from lsprotocol import types as lsp

from tests.lsp.lsp_session import span_of

pytestmark = pytest.mark.asyncio(loop_scope="module")

HUGE = 2**31 - 1
SNIPPET = """import torch.nn as nn

model = nn.Linear(4, 2)
model = nn.DataParallel(model)   
"""


def only_action(actions) -> lsp.CodeAction:
    (action,) = actions
    assert action.kind == lsp.CodeActionKind.QuickFix
    return action


async def test_noqa_action_silences_the_finding(editor):
    document = editor.open("noqa.py", SNIPPET)
    (diagnostic,) = await editor.diagnostics(document)
    action = only_action(await editor.code_actions(document, diagnostic.range, [diagnostic]))
    assert action.title == "Disable TL406 for this line"
    assert list(action.diagnostics) == [diagnostic]
    fixed = editor.applied(document, action)
    assert fixed == SNIPPET.replace("(model)   \n", "(model)  # noqa: TL406\n")
    editor.change(document, fixed)
    assert await editor.diagnostics(document) == []
    editor.close(document)


async def test_noqa_action_extends_an_existing_comment_and_never_duplicates(editor):
    text = SNIPPET.replace("(model)   \n", "(model)  # noqa: TL101\n")
    document = editor.open("noqa_extend.py", text)
    (diagnostic,) = await editor.diagnostics(document)
    action = only_action(await editor.code_actions(document, diagnostic.range, [diagnostic]))
    fixed = editor.applied(document, action)
    assert fixed == text.replace("# noqa: TL101", "# noqa: TL101, TL406")
    editor.change(document, fixed)
    assert await editor.diagnostics(document) == []
    # The finding is gone; a stale diagnostic sent back by the client gets no second code.
    assert not await editor.code_actions(document, diagnostic.range, [diagnostic])
    editor.close(document)


async def test_action_works_when_the_client_drops_data(editor):
    document = editor.open("no_data.py", SNIPPET)
    (diagnostic,) = await editor.diagnostics(document)
    diagnostic.data = None
    action = only_action(await editor.code_actions(document, diagnostic.range, [diagnostic]))
    assert editor.applied(document, action).count("# noqa: TL406") == 1
    editor.close(document)


async def test_context_only_is_honoured(editor):
    document = editor.open("only.py", SNIPPET)
    (diagnostic,) = await editor.diagnostics(document)
    source_only = await editor.code_actions(document, diagnostic.range, [diagnostic], only=[lsp.CodeActionKind.Source])
    assert not source_only
    quickfix = await editor.code_actions(document, diagnostic.range, [diagnostic], only=[lsp.CodeActionKind.QuickFix])
    assert only_action(quickfix).title == "Disable TL406 for this line"
    editor.close(document)


async def test_out_of_range_positions_are_clamped_not_errors(editor):
    document = editor.open("out_of_range.py", SNIPPET)
    (diagnostic,) = await editor.diagnostics(document)
    everything = lsp.Range(start=lsp.Position(line=0, character=0), end=lsp.Position(line=HUGE, character=HUGE))
    beyond = lsp.Diagnostic(
        range=lsp.Range(start=lsp.Position(line=HUGE, character=HUGE), end=lsp.Position(line=HUGE, character=HUGE)),
        message="a diagnostic from an older, longer version of the file",
        code="TL406",
        source="torch-lsp",
    )
    past_line_end = lsp.Diagnostic(
        range=lsp.Range(
            start=lsp.Position(line=diagnostic.range.start.line, character=HUGE),
            end=lsp.Position(line=HUGE, character=HUGE),
        ),
        message=diagnostic.message,
        code="TL406",
        source="torch-lsp",
    )
    actions = await editor.code_actions(document, everything, [beyond, diagnostic, past_line_end])
    action = only_action(actions)  # the two on the reported line are one edit; none past the end
    assert editor.applied(document, action).count("# noqa: TL406") == 1
    editor.close(document)


async def test_foreign_diagnostics_get_no_action(editor):
    document = editor.open("foreign.py", SNIPPET)
    await editor.diagnostics(document)
    foreign = lsp.Diagnostic(
        range=lsp.Range(start=lsp.Position(line=3, character=0), end=lsp.Position(line=3, character=5)),
        message="line too long",
        code="E501",
        source="ruff",
    )
    assert not await editor.code_actions(document, foreign.range, [foreign])
    editor.close(document)


async def test_noqa_edit_lands_right_after_non_ascii_and_a_line_separator(editor):
    text = (
        "import torch.nn as nn\n"
        'note = "before\u2028after"\n'
        "model = nn.Linear(4, 2)\n"
        'label = "é😀"; wrapped = nn.DataParallel(model)\n'
        "print(wrapped)\n"
    )
    document = editor.open("noqa_non_ascii.py", text)
    (diagnostic,) = await editor.diagnostics(document)
    assert diagnostic.range == span_of(text, "nn.DataParallel(model)", editor.encoding)
    action = only_action(await editor.code_actions(document, diagnostic.range, [diagnostic]))
    fixed = editor.applied(document, action)
    assert fixed == text.replace("(model)\n", "(model)  # noqa: TL406\n")
    editor.change(document, fixed)
    assert await editor.diagnostics(document) == []
    editor.close(document)
