"""`workspace/diagnostic`: the findings of files that are not open, through the real server,
for both client profiles."""
from __future__ import annotations

import os

import pytest
from lsprotocol import types as lsp

from torch_lsp.workspace_diagnostics import MAX_FILES, PARTIAL_BATCH_ITEMS
from tests.lsp.lsp_session import NEOVIM, PROFILES, session, wait_until

pytestmark = pytest.mark.asyncio

WRAPPED = "import torch.nn as nn\n\nmodel = nn.Linear(4, 2)\nmodel = nn.DataParallel(model)\n"


def project(root):
    """Two files with a finding each, one to open, and folders the CLI does not walk."""
    (root / "models").mkdir()
    (root / "models" / "net.py").write_text(WRAPPED)
    (root / "train.py").write_text("import torch.nn as nn\n\nwrapped = nn.DataParallel(nn.Linear(2, 2))\n")
    (root / "opened.py").write_text(WRAPPED)
    (root / ".hidden").mkdir()
    (root / ".hidden" / "secret.py").write_text(WRAPPED)
    (root / "env" / "lib").mkdir(parents=True)
    (root / "env" / "pyvenv.cfg").write_text("home = /usr/bin\n")
    (root / "env" / "lib" / "site.py").write_text(WRAPPED)


async def pull_workspace(editor, previous: dict[str, str] | None = None) -> dict[str, lsp.WorkspaceDocumentDiagnosticReport]:
    ids = [lsp.PreviousResultId(uri=uri, value=value) for uri, value in (previous or {}).items()]
    report = await editor.client.workspace_diagnostic_async(lsp.WorkspaceDiagnosticParams(previous_result_ids=ids))
    return {item.uri: item for item in report.items}


@pytest.mark.parametrize("profile", PROFILES)
async def test_files_not_open_are_reported_once_and_then_unchanged(profile, tmp_path):
    project(tmp_path)
    net, train, opened = (tmp_path / "models" / "net.py", tmp_path / "train.py", tmp_path / "opened.py")
    async with session(profile, tmp_path) as editor:
        provider = editor.capabilities.diagnostic_provider
        assert provider is not None and provider.workspace_diagnostics
        editor.open_path(opened, opened.read_text())

        reports = await pull_workspace(editor)
        # The open file is reported by its own document diagnostics, not a second time here;
        # hidden folders and virtual environments are not walked.
        assert set(reports) == {net.as_uri(), train.as_uri()}
        assert all(report.kind == "full" for report in reports.values())
        assert [d.code for d in reports[net.as_uri()].items] == ["TL406"]
        assert [d.code for d in reports[train.as_uri()].items] == ["TL406"]
        assert reports[train.as_uri()].items[0].range.start.line == 2

        previous = {uri: report.result_id for uri, report in reports.items()}
        again = await pull_workspace(editor, previous)
        assert {uri: report.kind for uri, report in again.items()} == {net.as_uri(): "unchanged",
                                                                       train.as_uri(): "unchanged"}
        assert {uri: report.result_id for uri, report in again.items()} == previous

        # A file changed on disk is reported afresh; the other stays unchanged.
        train.write_text("import torch.nn as nn\n\nlayer = nn.Linear(2, 2)\n")
        stat = train.stat()
        os.utime(train, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000_000))
        third = await pull_workspace(editor, previous)
        assert third[net.as_uri()].kind == "unchanged"
        assert third[train.as_uri()].kind == "full" and not third[train.as_uri()].items


async def test_a_large_workspace_is_capped_and_the_log_says_so(tmp_path):
    for index in range(MAX_FILES + 5):
        (tmp_path / f"module_{index:04}.py").write_text("x = 1\n")
    async with session(NEOVIM, tmp_path) as editor:
        reports = await pull_workspace(editor)
        assert len(reports) == MAX_FILES
        assert (tmp_path / f"module_{MAX_FILES:04}.py").as_uri() not in reports  # the walk's order: the first ones
        assert any(f"first {MAX_FILES:,} Python files" in message.message for message in editor.client.log_messages)


@pytest.mark.parametrize("profile", PROFILES)
async def test_reports_stream_as_partial_results_when_the_client_gives_a_token(profile, tmp_path):
    project(tmp_path)
    count = PARTIAL_BATCH_ITEMS + 5  # more than one batch, whatever the timing
    for index in range(count):
        (tmp_path / f"layer_{index:03}.py").write_text("x = 1\n")
    net, train, opened = (tmp_path / "models" / "net.py", tmp_path / "train.py", tmp_path / "opened.py")
    async with session(profile, tmp_path) as editor:
        editor.open_path(opened, opened.read_text())
        streamed = await editor.client.workspace_diagnostic_async(
            lsp.WorkspaceDiagnosticParams(previous_result_ids=[], partial_result_token="workspace-1"))
        # Everything went in `$/progress` under the token, before the answer; the answer is empty.
        assert not streamed.items
        batches = editor.client.partial_results["workspace-1"]
        assert len(batches) >= 2
        reports = [item for batch in batches for item in batch["items"]]
        uris = [item["uri"] for item in reports]
        assert len(uris) == len(set(uris)) == count + 2
        assert set(uris) == {net.as_uri(), train.as_uri()} | {
            (tmp_path / f"layer_{index:03}.py").as_uri() for index in range(count)}
        by_uri = {item["uri"]: item for item in reports}
        assert [d["code"] for d in by_uri[train.as_uri()]["items"]] == ["TL406"]
        assert by_uri[train.as_uri()]["kind"] == "full"

        # The same reports as without a token, unchanged ones included.
        previous = {item["uri"]: item["resultId"] for item in reports}
        await editor.client.workspace_diagnostic_async(lsp.WorkspaceDiagnosticParams(
            previous_result_ids=[lsp.PreviousResultId(uri=uri, value=value) for uri, value in previous.items()],
            partial_result_token="workspace-2"))
        again = [item for batch in editor.client.partial_results["workspace-2"] for item in batch["items"]]
        assert {item["uri"]: item["kind"] for item in again} == {uri: "unchanged" for uri in previous}
        unstreamed = await pull_workspace(editor)
        assert {uri: report.result_id for uri, report in unstreamed.items()} == previous


SHAPED = """import torch
import torch.nn as nn

layer = nn.Linear(5, 2)
out = layer(torch.randn(8, 4))
model = nn.DataParallel(layer)
"""


def shown(diagnostics) -> list[tuple]:
    return [(d.code, d.range, d.message) for d in diagnostics]


def answers(editor, document) -> int:
    """How often the client was told of the document's diagnostics beyond the first answer:
    publishes after the first (push), or refreshes (pull)."""
    if editor.pulls:
        return editor.client.diagnostic_refresh_count
    return len(editor.client.published[document.uri]) - 1


@pytest.mark.parametrize("profile", PROFILES)
async def test_a_file_checked_in_the_background_is_answered_complete_as_soon_as_it_is_opened(profile, tmp_path):
    """A client is first told every rule's findings but the shape rules' (pushed, or the
    answer of its first pull), then all of them; a file opened with the text the workspace
    diagnostics checked is answered with their report, shape rules included, at once."""
    shaped, edited = tmp_path / "shaped.py", tmp_path / "edited.py"
    shaped.write_text(SHAPED)
    edited.write_text(SHAPED)
    async with session(profile, tmp_path, pull_refresh=True) as editor:
        reports = await pull_workspace(editor)
        assert sorted(d.code for d in reports[shaped.as_uri()].items) == ["TL406", "TL501"]

        document = editor.open_path(shaped, SHAPED)
        assert shown(await editor.diagnostics(document)) == shown(reports[shaped.as_uri()].items)

        # A text the report was not made from (edits not saved) is checked in two steps.
        unsaved = editor.open_path(edited, SHAPED + "# not saved\n")
        assert "TL501" not in [d.code for d in await editor.diagnostics(unsaved)]
        await wait_until(lambda: answers(editor, unsaved) == 1, "the complete diagnostics of edited.py")
        complete = (await editor.pull(unsaved)).items if editor.pulls else editor.client.published[unsaved.uri][-1].diagnostics
        assert sorted(d.code for d in complete) == ["TL406", "TL501"]

        # shaped.py's own check, done before edited.py's, agreed with the report: nothing more
        # was sent for it; hovers answer from that check.
        assert answers(editor, document) == (1 if editor.pulls else 0)
        hover = await editor.client.text_document_hover_async(lsp.HoverParams(
            text_document=lsp.TextDocumentIdentifier(uri=document.uri), position=lsp.Position(line=3, character=1)))
        assert hover is not None and "Linear" in hover.contents.value


MODELS = """import torch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear({width}, 2)

    def forward(self, x):
        return self.fc(x)
"""

TRAIN = """import torch
from models import Net

net = Net()
out = net(torch.randn(8, 5))
"""


async def test_an_answer_from_the_background_check_is_refreshed_when_an_open_import_changed_it(tmp_path):
    """The report was made with the files on disk; an imported file open with unsaved edits
    can change the findings: the opened file's own check follows and the client is asked to
    pull again, and then gets that check's findings."""
    models, train = tmp_path / "models.py", tmp_path / "train.py"
    models.write_text(MODELS.format(width=4))
    train.write_text(TRAIN)
    async with session(NEOVIM, tmp_path, pull_refresh=True) as editor:
        reports = await pull_workspace(editor)
        assert [d.code for d in reports[train.as_uri()].items] == ["TL501"]
        editor.open_path(models, MODELS.format(width=5))  # fixed, not saved

        document = editor.open_path(train, TRAIN)
        refreshes = editor.client.diagnostic_refresh_count
        assert [d.code for d in (await editor.pull(document)).items] == ["TL501"]
        await wait_until(lambda: editor.client.diagnostic_refresh_count > refreshes, "workspace/diagnostic/refresh")
        assert not (await editor.pull(document)).items


async def test_a_report_made_under_other_settings_is_not_used_when_the_file_is_opened(tmp_path):
    shaped = tmp_path / "shaped.py"
    shaped.write_text(SHAPED)
    async with session(NEOVIM, tmp_path, pull_refresh=True) as editor:
        reports = await pull_workspace(editor)
        assert sorted(d.code for d in reports[shaped.as_uri()].items) == ["TL406", "TL501"]
        editor.client.set_configuration({"ignore": ["TL406"]}, section="torch-lsp")
        editor.configuration_changed()
        await wait_until(lambda: editor.client.diagnostic_refresh_count > 0, "workspace/diagnostic/refresh")

        document = editor.open_path(shaped, SHAPED)
        assert "TL406" not in [d.code for d in (await editor.pull(document)).items]
