"""The pre-commit hooks (.pre-commit-hooks.yaml), run by the real `pre-commit` tool on a
scratch git repository with a buggy file: `pre-commit try-repo` (how a hook is tried
out), and `pre-commit run` with a .pre-commit-config.yaml naming the repository and its
`rev` (how a project that adopts it runs it). Each installs the hook repository into a
hook environment with pip, then runs the hook.

The hook repository is a one-commit copy of this checkout's working tree (tracked and
untracked files git does not ignore), so the code under test is what is on disk.
"""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
BUGGY = "import torch.nn.functional as F\n\n\ndef probabilities(logits):\n    return F.softmax(logits)\n"
FIXED = BUGGY.replace("F.softmax(logits)", "F.softmax(logits, dim=-1)")
TIMEOUT_S = 600


def git(*args: str, cwd: Path) -> str:
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com",
           "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.com"}
    return subprocess.run(["git", *args], cwd=cwd, env=env, check=True, capture_output=True, text=True).stdout


@pytest.fixture(scope="module")
def hook_repository(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if shutil.which("git") is None:
        pytest.skip("git is not installed; pre-commit needs it")
    copy = tmp_path_factory.mktemp("hook-repository")
    files = git("ls-files", "--cached", "--others", "--exclude-standard", "-z", cwd=REPO).split("\0")
    for name in filter(None, files):
        if (REPO / name).is_file():
            (copy / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(REPO / name, copy / name)
    git("init", "-q", cwd=copy)
    git("add", "-A", cwd=copy)
    git("commit", "-q", "-m", "the working tree under test", cwd=copy)
    return copy


@pytest.fixture(scope="module")
def pre_commit_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Where `pre-commit run` keeps its hook environments (try-repo always uses a fresh one)."""
    return tmp_path_factory.mktemp("pre-commit-home")


def scratch_repository(folder: Path) -> Path:
    folder.mkdir()
    (folder / "model.py").write_text(BUGGY)
    git("init", "-q", cwd=folder)
    git("add", "model.py", cwd=folder)
    return folder


def pre_commit(*args: str, project: Path, home: Path) -> subprocess.CompletedProcess:
    env = {key: value for key, value in os.environ.items() if key != "PYTHONPATH"}
    env.update(PRE_COMMIT_HOME=str(home), PRE_COMMIT_COLOR="never")
    return subprocess.run([sys.executable, "-m", "pre_commit", *args], cwd=project, env=env,
                          capture_output=True, text=True, timeout=TIMEOUT_S)


def adopt_hook(project: Path, hook_repo: Path, hook: str) -> None:
    """A project's .pre-commit-config.yaml that uses the hook at the hook repository's current commit."""
    rev = git("rev-parse", "HEAD", cwd=hook_repo).strip()
    (project / ".pre-commit-config.yaml").write_text(
        f"repos:\n  - repo: {hook_repo}\n    rev: {rev}\n    hooks:\n      - id: {hook}\n")
    git("add", ".pre-commit-config.yaml", cwd=project)


def test_the_check_hook_fails_and_reports_the_problem(tmp_path: Path, hook_repository: Path,
                                                                       pre_commit_home: Path):
    project = scratch_repository(tmp_path / "project")
    result = pre_commit("try-repo", str(hook_repository), "torch-lsp", "--all-files", project=project,
                        home=pre_commit_home)
    output = result.stdout + result.stderr
    assert result.returncode == 1, output
    assert "torch-lsp" in output and "Failed" in output, output
    assert "model.py:5:12: TL201" in output, output
    assert (project / "model.py").read_text() == BUGGY


def test_the_fix_hook_fixes_the_file_and_fails_because_it_changed_it(tmp_path: Path, hook_repository: Path,
                                                                       pre_commit_home: Path):
    project = scratch_repository(tmp_path / "project")
    adopt_hook(project, hook_repository, "torch-lsp-fix")
    result = pre_commit("run", "--all-files", project=project, home=pre_commit_home)
    output = result.stdout + result.stderr
    # pre-commit fails a hook that modified files, so the user reviews the fix before committing.
    assert result.returncode == 1, output
    assert "files were modified by this hook" in output, output
    assert "Fixed 1 problem (TL201)" in output, output
    assert (project / "model.py").read_text() == FIXED
    # Run again on the fixed file: nothing left, the hook passes.
    again = pre_commit("run", "--all-files", project=project, home=pre_commit_home)
    assert again.returncode == 0, again.stdout + again.stderr
