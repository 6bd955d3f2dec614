"""Jupyter notebooks over LSP 3.17 notebook sync, in both client profiles: the notebook's
code cells are checked as one program, and everything comes back in each cell's own
coordinates (diagnostics per cell URI, hover, inlay hints, quick fixes, fix-all).
Cell diagnostics are pushed in both profiles, the pull profile included (VS Code's
bundled language client never pulls for cells), and a pull for a cell is answered
empty, so a client that pulls too never lists a finding twice."""
from __future__ import annotations

import pytest
import pytest_lsp
from lsprotocol import types as lsp
from pytest_lsp import LanguageClient

from torch_lsp.codeactions import FIX_ALL
from tests.lsp.lsp_session import PROFILES, column_units, open_session, server_config, span_of, wait_until
from tests.lsp.notebook_client import CODE, MARKDOWN, ClientNotebook

pytestmark = pytest.mark.asyncio(loop_scope="module")


@pytest_lsp.fixture(config=server_config(), scope="module", params=PROFILES)
async def client(request, lsp_client: LanguageClient, workspace):
    """Both profiles, each declaring notebook sync (Neovim's own client does not have it)."""
    lsp_client.session = await open_session(lsp_client, request.param, workspace, notebooks=True)
    yield
    await lsp_client.shutdown_session()

IMPORTS = "!pip install -q torch\nimport torch\nimport torch.nn as nn\nimport torch.nn.functional as F"
MODEL = "%matplotlib inline\nmodel = nn.Linear(4, 2)"
WRAP = 'label = "é😀"; model = nn.DataParallel(model)'


def codes(diagnostics) -> list[tuple[str, int]]:
    return sorted((str(d.code), d.range.start.line) for d in diagnostics)


async def resolved(editor, action: lsp.CodeAction) -> lsp.CodeAction:
    if action.edit is None:
        action = await editor.client.code_action_resolve_async(action)
    assert action.edit is not None
    return action


async def test_diagnostics_come_per_cell_in_the_cells_coordinates(editor):
    notebook = ClientNotebook(editor, "wrap.ipynb", [(CODE, IMPORTS), (MARKDOWN, "# A model"), (CODE, MODEL),
                                                     (CODE, WRAP)])
    imports, _, model, wrap = notebook.cells
    (diagnostic,) = await notebook.diagnostics(wrap, until=bool)
    assert diagnostic.code == "TL406"
    # Line 0 of the cell; the column in the client's unit, after the non-ASCII label.
    assert diagnostic.range == span_of(WRAP, "nn.DataParallel(model)", editor.encoding)
    assert diagnostic.range.start.character == column_units('label = "é😀"; model = ', editor.encoding)
    assert await notebook.diagnostics(imports) == []
    assert await notebook.diagnostics(model) == []
    notebook.close()


async def test_a_cell_edit_moves_the_finding_and_a_fixed_cell_is_cleared(editor):
    notebook = ClientNotebook(editor, "edit.ipynb", [(CODE, IMPORTS), (CODE, MODEL), (CODE, WRAP)])
    wrap = notebook.cells[2]
    assert codes(await notebook.diagnostics(wrap, until=bool)) == [("TL406", 0)]
    notebook.edit_cell(2, "x = 1\n\n" + WRAP)
    assert codes(await notebook.diagnostics(wrap, until=lambda d: codes(d) == [("TL406", 2)])) == [("TL406", 2)]
    # A ranged change, as some clients send whatever the server asked for.
    start = span_of(notebook.cells[2].text, "model = nn.DataParallel(model)", editor.encoding)
    notebook.edit_cell_range(2, start, "model = model")
    assert await notebook.diagnostics(wrap, until=lambda d: d == []) == []
    notebook.save()
    notebook.close()


async def test_cells_added_removed_and_moved(editor):
    notebook = ClientNotebook(editor, "structure.ipynb", [(CODE, IMPORTS), (CODE, MODEL)])
    added = notebook.new_cell(CODE, "p = F.softmax(torch.randn(4, 3))")
    notebook.splice(2, 0, [added])
    assert codes(await notebook.diagnostics(added, until=bool)) == [("TL201", 0)]
    # Removing the imports cell: `F` is unknown now, so the softmax is no longer recognised.
    imports = notebook.cells[0]
    notebook.splice(0, 1, [])
    assert await notebook.diagnostics(added, until=lambda d: d == []) == []
    # Back at the top, then the softmax cell moved above the model cell: order matters no more here,
    # but the finding follows the cell that holds it.
    notebook.splice(0, 0, [imports])
    assert codes(await notebook.diagnostics(added, until=bool)) == [("TL201", 0)]
    notebook.splice(1, 2, [added, notebook.cells[1]])
    assert [cell.uri for cell in notebook.cells] == [imports.uri, added.uri, notebook.cells[2].uri]
    notebook.edit_cell(1, "\n" + added.text)
    assert codes(await notebook.diagnostics(added, until=lambda d: codes(d) == [("TL201", 1)])) == [("TL201", 1)]
    notebook.close()


async def test_hover_and_inlay_hints_follow_shapes_across_cells(editor):
    notebook = ClientNotebook(editor, "shapes.ipynb", [
        (CODE, "import torch\nx = torch.randn(8, 3, 32, 32)"),
        (MARKDOWN, "Flatten it"),
        (CODE, "%time y = x.flatten(1)\nz = y @ torch.randn(3072, 10)"),
    ])
    cell = notebook.cells[2]
    await notebook.diagnostics(cell)
    position = span_of(cell.text, "z = ", editor.encoding).start
    hover = await editor.client.text_document_hover_async(
        lsp.HoverParams(text_document=lsp.TextDocumentIdentifier(uri=cell.uri), position=position))
    assert hover is not None and "[8, 10]" in hover.contents.value
    assert "(line 2 of cell 3)" in hover.contents.value  # where `z` comes from, in the notebook's terms
    assert hover.range.start.line == 1
    hints = await editor.client.text_document_inlay_hint_async(lsp.InlayHintParams(
        text_document=lsp.TextDocumentIdentifier(uri=cell.uri),
        range=lsp.Range(start=lsp.Position(0, 0), end=lsp.Position(2, 0))))
    labels = {(hint.position.line, str(hint.label)) for hint in hints}
    assert any(line == 0 and "[8, 3072]" in label for line, label in labels), labels
    assert any(line == 1 and "[8, 10]" in label for line, label in labels), labels
    first = notebook.cells[0]
    hints = await editor.client.text_document_inlay_hint_async(lsp.InlayHintParams(
        text_document=lsp.TextDocumentIdentifier(uri=first.uri),
        range=lsp.Range(start=lsp.Position(0, 0), end=lsp.Position(2, 0))))
    assert [(hint.position.line, "[8, 3, 32, 32]" in str(hint.label)) for hint in hints] == [(1, True)]
    notebook.close()


async def test_quick_fix_and_noqa_edit_the_cell(editor):
    notebook = ClientNotebook(editor, "fix.ipynb", [(CODE, IMPORTS), (CODE, "%time p = F.softmax(torch.randn(4, 3))")])
    cell = notebook.cells[1]
    (diagnostic,) = await notebook.diagnostics(cell, until=bool)
    actions = await editor.client.text_document_code_action_async(lsp.CodeActionParams(
        text_document=lsp.TextDocumentIdentifier(uri=cell.uri), range=diagnostic.range,
        context=lsp.CodeActionContext(diagnostics=[diagnostic])))
    titles = [action.title for action in actions]
    fix = await resolved(editor, next(a for a in actions if a.kind == lsp.CodeActionKind.QuickFix
                                      and "noqa" not in a.title.lower() and "Disable" not in a.title))
    assert list(fix.diagnostics) == [diagnostic]
    assert notebook.applied(fix.edit) == {cell.uri: "%time p = F.softmax(torch.randn(4, 3), dim=-1)"}
    noqa = await resolved(editor, next(a for a in actions if a.title == "Disable TL201 for this line"))
    assert notebook.applied(noqa.edit) == {cell.uri: "%time p = F.softmax(torch.randn(4, 3))  # noqa: TL201"}, titles
    notebook.edit_cell(1, notebook.applied(fix.edit)[cell.uri])
    assert await notebook.diagnostics(cell, until=lambda d: d == []) == []
    notebook.close()


async def test_fix_all_fixes_every_cell_of_the_notebook(editor):
    notebook = ClientNotebook(editor, "fix_all.ipynb", [
        (CODE, IMPORTS), (MARKDOWN, "two softmaxes"),
        (CODE, "a = F.softmax(torch.randn(4, 3))"), (CODE, "!echo\nb = F.log_softmax(torch.randn(4, 3))"),
    ])
    first, second = notebook.cells[2], notebook.cells[3]
    await notebook.diagnostics(first, until=bool)
    (action,) = await editor.client.text_document_code_action_async(lsp.CodeActionParams(
        text_document=lsp.TextDocumentIdentifier(uri=second.uri),
        range=lsp.Range(start=lsp.Position(0, 0), end=lsp.Position(0, 0)),
        context=lsp.CodeActionContext(diagnostics=[], only=[FIX_ALL])))
    action = await resolved(editor, action)
    assert notebook.applied(action.edit) == {
        first.uri: "a = F.softmax(torch.randn(4, 3), dim=-1)",
        second.uri: "!echo\nb = F.log_softmax(torch.randn(4, 3), dim=-1)",
    }
    notebook.close()


async def test_closing_the_notebook_clears_its_cells(editor):
    notebook = ClientNotebook(editor, "close.ipynb", [(CODE, IMPORTS), (CODE, WRAP.replace("model)", "nn.Linear(2, 2))"))])
    cell = notebook.cells[1]
    assert await notebook.diagnostics(cell, until=bool)
    notebook.close()
    await wait_until(lambda: notebook.shown(cell.uri) == [], "the closed cell cleared")


async def test_a_removed_cell_and_a_cell_turned_markdown_are_cleared(editor):
    finding = "import torch.nn as nn\nm = nn.DataParallel(nn.Linear(2, 2))"
    notebook = ClientNotebook(editor, "removed.ipynb", [(CODE, IMPORTS), (CODE, finding), (CODE, MODEL),
                                                        (CODE, finding)])
    _, removed, model, turned = notebook.cells
    assert codes(await notebook.diagnostics(removed, until=bool)) == [("TL406", 1)]
    assert codes(await notebook.diagnostics(turned, until=bool)) == [("TL406", 1)]
    notebook.splice(1, 1, [])
    await wait_until(lambda: notebook.shown(removed.uri) == [], "the removed cell cleared")
    assert codes(notebook.shown(turned.uri)) == [("TL406", 1)]
    notebook.change_kind(2, MARKDOWN)
    await wait_until(lambda: notebook.shown(turned.uri) == [], "the cell turned markdown cleared")
    assert await notebook.diagnostics(model) == []
    notebook.close()


async def test_the_notebook_file_itself_gets_no_diagnostics(editor):
    """The program's diagnostics are the cells': none go to the notebook's own URI, pushed
    or pulled (they would land on lines of its JSON)."""
    notebook = ClientNotebook(editor, "file.ipynb", [(CODE, IMPORTS), (CODE, WRAP.replace("model)", "nn.Linear(2, 2))"))])
    assert await notebook.diagnostics(notebook.cells[1], until=bool)
    assert editor.client.published[notebook.uri] == []
    if editor.pulls:
        report = await editor.client.text_document_diagnostic_async(
            lsp.DocumentDiagnosticParams(text_document=lsp.TextDocumentIdentifier(uri=notebook.uri)))
        assert list(report.items) == []
    notebook.close()


async def test_a_python_file_beside_it_is_unaffected(editor):
    document = editor.open("plain.py", "import torch.nn as nn\nmodel = nn.DataParallel(nn.Linear(2, 2))\n")
    assert codes(await editor.diagnostics(document)) == [("TL406", 1)]
    editor.close(document)


async def test_the_server_declares_notebook_sync_for_jupyter_python_cells(editor):
    sync = editor.capabilities.notebook_document_sync
    (selector,) = sync.notebook_selector
    assert selector.notebook == "jupyter-notebook"
    assert [cell.language for cell in selector.cells] == ["python"]


async def test_related_information_points_into_the_cell_that_holds_it(editor):
    notebook = ClientNotebook(editor, "related.ipynb", [
        (CODE, "import torch\nimport torch.nn.functional as F\nmodel = torch.nn.Linear(2, 1)\n"
               "optimizer = torch.optim.SGD(model.parameters(), lr=0.1)"),
        (MARKDOWN, "Train"),
        (CODE, "for x, y in loader:\n    F.mse_loss(model(x), y).backward()\n    optimizer.step()"),
    ])
    optimizer_cell, loop_cell = notebook.cells[0], notebook.cells[2]
    diagnostics = await notebook.diagnostics(loop_cell, until=lambda d: any(x.code == "TL101" for x in d))
    (tl101,) = [d for d in diagnostics if d.code == "TL101"]
    assert tl101.range.start.line == 0
    if not tl101.related_information:
        pytest.skip("this client profile declares no relatedInformation support")
    (info,) = tl101.related_information
    assert info.location.uri == optimizer_cell.uri
    assert info.location.range.start == lsp.Position(line=3, character=12)
    notebook.close()


async def test_a_half_typed_cell_does_not_blank_the_others(editor):
    notebook = ClientNotebook(editor, "half_typed.ipynb", [
        (CODE, "x = (1,"), (CODE, "import torch.nn as nn\nm = nn.DataParallel(nn.Linear(2, 2))")])
    typed, other = notebook.cells
    assert codes(await notebook.diagnostics(other, until=bool)) == [("TL406", 1)]
    assert codes(await notebook.diagnostics(typed, until=bool)) == [("syntax-error", 0)]
    notebook.close()
