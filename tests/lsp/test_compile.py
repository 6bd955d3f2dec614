"""TL601 through the real server, in both client profiles: a graph break inside a compiled
function arrives with the shape rules' findings, as information, pointing at the compile."""
from __future__ import annotations

import pytest
from lsprotocol import types as lsp

from tests.lsp.lsp_session import PROFILES, session, span_of, wait_until

pytestmark = pytest.mark.asyncio(loop_scope="module")

COMPILED = """import torch


@torch.compile
def step(x):
    y = torch.relu(x)
    return y * y.sum().item()


def eager(x):
    return x.sum().item()
"""


@pytest.mark.parametrize("profile", PROFILES)
async def test_graph_break_reaches_the_editor_with_the_compile_it_breaks(tmp_path, profile):
    async with session(profile, tmp_path) as editor:
        document = editor.open("compiled.py", COMPILED)
        if editor.pulls:
            diagnostics = (await editor.pull(document)).items
        else:  # pushed with the shape rules, in the second publish of the version
            await wait_until(lambda: len(editor.client.published[document.uri]) >= 2, "two publishes")
            diagnostics = editor.client.published[document.uri][1].diagnostics
        (finding,) = [d for d in diagnostics if d.code == "TL601"]
        assert finding.severity == lsp.DiagnosticSeverity.Information
        assert finding.range == span_of(COMPILED, "y.sum().item()", editor.encoding)
        assert "capture_scalar_outputs" in finding.message and "`step`" in finding.message
        (related,) = finding.related_information
        assert related.location.uri == document.uri
        assert related.location.range == span_of(COMPILED, "torch.compile", editor.encoding)
        assert related.message == "compiled here"
