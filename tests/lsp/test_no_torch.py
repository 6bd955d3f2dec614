"""The server process never imports torch (about 1.2 s and 200 MB if it did)."""
from __future__ import annotations

import os
import subprocess
import sys

import pytest

from tests.lsp.lsp_session import PROFILES, session

SNIPPET = """import torch
import torch.nn as nn
from torch.utils.data import DataLoader

model = nn.DataParallel(nn.Linear(4, 2))
loader = DataLoader(range(10))
for batch in loader:
    loss = model(batch).sum()
    loss.backward()
"""


def fake_torch(tmp_path):
    """A `torch` package, first on the path, that leaves a marker file when imported."""
    packages = tmp_path / "fake_site"
    (packages / "torch").mkdir(parents=True)
    marker = tmp_path / "torch-was-imported"
    (packages / "torch" / "__init__.py").write_text(
        f"open({str(marker)!r}, 'w').write('imported')\n"
    )
    python_path = os.pathsep.join(filter(None, [str(packages), os.environ.get("PYTHONPATH")]))
    return {"PYTHONPATH": python_path}, marker


def test_the_fake_torch_is_what_an_import_would_load(tmp_path):
    env, marker = fake_torch(tmp_path)
    subprocess.run([sys.executable, "-c", "import torch"], env={**os.environ, **env}, check=True)
    assert marker.exists()


@pytest.mark.asyncio(loop_scope="module")
@pytest.mark.parametrize("profile", PROFILES)
async def test_server_never_imports_torch(profile, tmp_path):
    env, marker = fake_torch(tmp_path)
    async with session(profile, tmp_path, env=env) as editor:
        document = editor.open("train.py", SNIPPET)
        diagnostics = await editor.diagnostics(document)
        assert "TL406" in [d.code for d in diagnostics]
        await editor.pull(document)
        wrapped = next(d for d in diagnostics if d.code == "TL406")
        assert await editor.code_actions(document, wrapped.range, [wrapped])
        editor.close(document)
    assert not marker.exists()
