"""A real batch Emacs with eglot, running the documented set-up against the real server.

`emacs --batch` loads editors/emacs/torch-lsp.el as a user's init would, then
`emacs_harness.el` visits a copy of the example (see example.py): python-mode's hook
starts eglot, Flymake shows the diagnostics, ElDoc shows the hover text over `tokens`,
and M-x eglot-code-actions applies the softmax quick fix.  Editor settings go through
`eglot-workspace-configuration`, as the set-up's comments say.  This file judges the
JSON the harness wrote.  Needs Emacs with eglot: Debian `emacs-nox elpa-eglot`
(Emacs 28.2, eglot 1.9 in CI); Emacs 29 or newer has eglot built in.
"""
from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

from tests.editors import example
from tests.editors.headless import REPO_ROOT, isolated_environment, require, run_editor

HERE = Path(__file__).resolve().parent
HARNESS = HERE / "emacs_harness.el"
SETUP = REPO_ROOT / "editors" / "emacs" / "torch-lsp.el"
WAIT_MS = 20_000  # per step; a healthy run takes well under a second for each


def emacs_with_eglot() -> str:
    install = "Install Emacs with eglot: `apt-get install -y emacs-nox elpa-eglot` (.ci/run does)."
    emacs = require(shutil.which("emacs"), "Emacs", install)
    probe = subprocess.run([emacs, "--batch", "--eval", "(princ (if (locate-library \"eglot\") \"yes\" \"no\"))"],
                           capture_output=True, text=True, timeout=60)
    return require(emacs if probe.stdout.strip() == "yes" else None, f"eglot (for {emacs})", install)


def test_emacs_eglot_with_the_documented_setup(tmp_path):
    emacs = emacs_with_eglot()
    text = example.sample_text()
    file = example.write_project(tmp_path / "project")
    out = tmp_path / "emacs-result.json"
    env = isolated_environment(
        tmp_path / "home",
        TORCH_LSP_FILE=str(file),
        TORCH_LSP_OUT=str(out),
        TORCH_LSP_SETTINGS=json.dumps({"torch-lsp": {"severity": example.SEVERITY_OVERRIDE}}),
        TORCH_LSP_HOVER=json.dumps(example.hover_spot(text).as_json()),
        TORCH_LSP_FIX=json.dumps({**example.fix_spot(text).as_json(), "title": example.FIX_TITLE}),
        TORCH_LSP_TIMEOUT_MS=str(WAIT_MS),
    )
    command = [emacs, "--batch", "-l", str(SETUP), "-l", str(HARNESS)]
    run = run_editor(command, file.parent, env, out)
    result = run.result
    versions = f"Emacs {result.get('emacs_version')}, eglot {result.get('eglot_version')}"
    assert result.get("error") is None, f"{result['error']} ({versions})\n{run.describe()}"
    assert result["server_name"] == "torch-lsp"

    # Diagnostics, as Flymake holds them: codes per line, and the softmax call's place in
    # characters after "é" and an emoji (eglot converts the server's UTF-16 columns).
    received = result["diagnostics"]
    assert {(d["line"] + 1, d["code"]) for d in received} == example.expected_findings(text)
    assert all(d["source"] == "torch-lsp" and d["text"].strip() for d in received)
    softmax = next(d for d in received if d["code"] == example.FIX_CODE)
    spot = example.fix_spot(text)
    assert (softmax["line"], softmax["char"], softmax["end_char"]) == (
        spot.line, spot.char_col, spot.char_col + len(example.FIX_BEFORE))
    # The settings from eglot-workspace-configuration reached the server.
    types = {d["code"]: d["type"] for d in received}
    assert types["TL301"] == "eglot-error" and types["TL101"] == "eglot-warning"

    assert result.get("hover_error") is None, result["hover_error"]
    assert example.HOVER_TEXT in result["hover"], f"ElDoc text: {result['hover']!r}"

    assert example.FIX_TITLE in result["offered_actions"]
    assert result["text_after_fix"] == example.text_after_fix(text)
    after = {(d["line"] + 1, d["code"]) for d in result["diagnostics_after_fix"]}
    assert after == example.expected_findings(text) - {(spot.line + 1, example.FIX_CODE)}
