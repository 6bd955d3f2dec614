"""TL7xx in the editor: findings judged against the editor's `targetVersion`, and their fixes
applied the way each client applies them."""
from __future__ import annotations

import pytest
from lsprotocol import types as lsp

from tests.lsp.lsp_session import PROFILES, session

pytestmark = pytest.mark.asyncio(loop_scope="module")

SOURCE = """import torch as T


def restore(a, path):
    q, r = T.qr(a, some=False)
    return q, r, T.load(path)
"""


@pytest.mark.parametrize("profile", PROFILES)
async def test_target_version_from_the_editor_and_the_rewrite_through_the_files_alias(profile, tmp_path):
    async with session(profile, tmp_path, configuration={"torch-lsp": {"targetVersion": "2.4"}}) as editor:
        document = editor.open("restore.py", SOURCE)
        found = {d.code: d for d in await editor.diagnostics(document)}
        assert found["TL705"].severity == lsp.DiagnosticSeverity.Warning
        assert "on PyTorch 2.4" in found["TL705"].message
        qr = found["TL704"]
        assert "`T.qr` (`torch.qr`) is deprecated since PyTorch 1.9" in qr.message
        actions = await editor.code_actions(document, qr.range, [qr])
        fix = actions[0]
        assert fix.title == 'Replace with `T.linalg.qr(a, mode="complete")`' and fix.is_preferred
        if fix.edit is None:
            fix = await editor.client.code_action_resolve_async(fix)
        assert editor.applied(document, fix) == SOURCE.replace('T.qr(a, some=False)', 'T.linalg.qr(a, mode="complete")')

        before = editor.publish_count(document)
        editor.client.set_configuration({"targetVersion": "2.6"}, section="torch-lsp")
        editor.configuration_changed()
        found = {d.code: d for d in await editor.diagnostics(document, after=before)}
        assert found["TL705"].severity == lsp.DiagnosticSeverity.Information
