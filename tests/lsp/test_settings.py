"""Settings reach the running server: initializationOptions, workspace/configuration,
didChangeConfiguration, pyproject.toml changes, and invalid settings."""
from __future__ import annotations

import pytest
from lsprotocol import types as lsp

from tests.lsp.lsp_session import NEOVIM, PROFILES, VSCODE, session, wait_until

pytestmark = pytest.mark.asyncio(loop_scope="module")

SNIPPET = """import torch
import torch.nn as nn

model = nn.Linear(4, 2)
model = nn.DataParallel(model)
with torch.no_grad():
    loss = model(torch.ones(4)).sum()
    loss.backward()
"""
BOTH = ["TL107", "TL406"]
IGNORE_TL406 = {"ignore": ["TL406"]}


def codes(diagnostics) -> list[str]:
    return sorted(d.code for d in diagnostics)


@pytest.mark.parametrize(
    ("profile", "options"),
    [(VSCODE, {"torch-lsp": IGNORE_TL406}), (NEOVIM, IGNORE_TL406)],
    ids=["vscode-wrapped", "neovim-plain"],
)
async def test_initialization_options_in_either_form(profile, options, tmp_path):
    async with session(profile, tmp_path, initialization_options=options) as editor:
        document = editor.open("train.py", SNIPPET)
        assert codes(await editor.diagnostics(document)) == ["TL107"]


@pytest.mark.parametrize("profile", PROFILES)
async def test_workspace_configuration_and_did_change_configuration(profile, tmp_path):
    async with session(profile, tmp_path, configuration={"torch-lsp": IGNORE_TL406}) as editor:
        document = editor.open("train.py", SNIPPET)
        # The first answer already uses the settings the client holds.
        assert codes(await editor.diagnostics(document)) == ["TL107"]

        before = editor.publish_count(document)
        editor.client.set_configuration({}, section="torch-lsp")
        editor.configuration_changed()
        assert codes(await editor.diagnostics(document, after=before)) == BOTH

        before = editor.publish_count(document)
        editor.client.set_configuration({"ignore": ["TL107"]}, section="torch-lsp")
        editor.configuration_changed()
        assert codes(await editor.diagnostics(document, after=before)) == ["TL406"]
        assert editor.client.messages == []


@pytest.mark.parametrize("profile", PROFILES)
async def test_settings_pushed_in_did_change_configuration(profile, tmp_path):
    """A client without workspace/configuration sends the settings in the notification."""
    async with session(profile, tmp_path, configuration_support=False) as editor:
        document = editor.open("train.py", SNIPPET)
        assert codes(await editor.diagnostics(document)) == BOTH
        before = editor.publish_count(document)
        editor.configuration_changed({"torch-lsp": IGNORE_TL406})
        assert codes(await editor.diagnostics(document, after=before)) == ["TL107"]


async def test_pull_client_is_asked_to_refresh(tmp_path):
    async with session(NEOVIM, tmp_path, pull_refresh=True) as editor:
        document = editor.open("train.py", SNIPPET)
        assert codes(await editor.diagnostics(document)) == BOTH
        editor.client.set_configuration(IGNORE_TL406, section="torch-lsp")
        editor.configuration_changed()
        await wait_until(lambda: editor.client.diagnostic_refresh_count > 0, "workspace/diagnostic/refresh")
        assert codes(await editor.diagnostics(document)) == ["TL107"]
        assert editor.client.published[document.uri] == []  # a pull client never gets pushes


async def test_pyproject_change_applies_without_restart(editor, tmp_path):
    project = tmp_path / "project"
    (project / "pkg").mkdir(parents=True)
    pyproject = project / "pyproject.toml"
    pyproject.write_text('[tool.torch-lsp]\nignore = ["TL406"]\n')
    document = editor.open_path(project / "pkg" / "train.py", SNIPPET)
    assert codes(await editor.diagnostics(document)) == ["TL107"]

    before = editor.publish_count(document)
    pyproject.write_text('[tool.torch-lsp]\nignore = ["TL107"]\n')
    editor.file_changed(pyproject)
    assert codes(await editor.diagnostics(document, after=before)) == ["TL406"]
    editor.close(document)

    watched = [r for r in editor.client.registrations if r.method == lsp.WORKSPACE_DID_CHANGE_WATCHED_FILES]
    if editor.profile == VSCODE:  # the only profile that allows dynamic registration
        (registration,) = watched
        assert registration.register_options["watchers"][0]["globPattern"] == "**/pyproject.toml"
    else:
        assert watched == []


async def test_invalid_pyproject_is_reported_once_and_defaults_apply(editor, tmp_path):
    project = tmp_path / "broken"
    project.mkdir()
    (project / "pyproject.toml").write_text('[tool.torch-lsp]\nignore = 42\n')
    shown = len(editor.client.messages)
    first = editor.open_path(project / "a.py", SNIPPET)
    second = editor.open_path(project / "b.py", SNIPPET)
    assert codes(await editor.diagnostics(first)) == BOTH
    assert codes(await editor.diagnostics(second)) == BOTH
    # Shown when a check completes (after its shape pass), which may be after both first publishes.
    await wait_until(lambda: editor.client.messages[shown:], "window/showMessage")
    (message,) = editor.client.messages[shown:]
    assert message.type == lsp.MessageType.Warning
    assert "pyproject.toml" in message.message and "ignore" in message.message
    editor.close(first)
    editor.close(second)


async def test_a_message_about_thousands_of_unknown_codes_stays_short(editor, tmp_path):
    project = tmp_path / "many_codes"
    project.mkdir()
    codes_listed = ", ".join(f'"XX{n:05d}"' for n in range(10_000))
    patterns = "\n".join(f'"generated_{n}/**" = ["YY{n}"]' for n in range(2_000))
    (project / "pyproject.toml").write_text(
        f"[tool.torch-lsp]\nignore = [{codes_listed}]\n\n[tool.torch-lsp.per-file-ignores]\n{patterns}\n")
    shown = len(editor.client.messages)
    document = editor.open_path(project / "a.py", SNIPPET)
    assert codes(await editor.diagnostics(document)) == BOTH
    await wait_until(lambda: editor.client.messages[shown:], "window/showMessage")
    (message,) = editor.client.messages[shown:]
    assert len(message.message) < 2_000, len(message.message)
    assert '"XX00000"' in message.message and "9,995 more" in message.message
    assert "more problems" in message.message  # the 2,000 patterns' sentences, counted
    editor.close(document)


@pytest.mark.parametrize("profile", PROFILES)
async def test_invalid_editor_settings_show_one_message_and_defaults_apply(profile, tmp_path):
    invalid = {"torch-lsp": {"ignore": 42, "severity": {"TL406": "loud"}}}
    async with session(profile, tmp_path, initialization_options=invalid) as editor:
        document = editor.open("train.py", SNIPPET)
        diagnostics = await editor.diagnostics(document)
        assert codes(diagnostics) == BOTH
        wrapped = next(d for d in diagnostics if d.code == "TL406")
        assert wrapped.severity == lsp.DiagnosticSeverity.Warning
        await wait_until(lambda: editor.client.messages, "window/showMessage")
        (message,) = editor.client.messages
        assert message.type == lsp.MessageType.Warning
        assert "`ignore`" in message.message and "`severity`" in message.message

        # The same problems again: no second message.  Different ones: one more.
        before = editor.publish_count(document)
        editor.configuration_changed(invalid)
        assert codes(await editor.diagnostics(document, after=before)) == BOTH
        assert len(editor.client.messages) == 1
        before = editor.publish_count(document)
        editor.configuration_changed({"torch-lsp": {"select": ["TLXYZ"]}})
        await editor.diagnostics(document, after=before)
        await wait_until(lambda: len(editor.client.messages) == 2, "a message for the new problem")
        assert "TLXYZ" in editor.client.messages[1].message
