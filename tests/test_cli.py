"""The real `torch-lsp` command line, run as a subprocess on small PyTorch projects."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]

DATA_PARALLEL = """\
import torch
from torch import nn

model = nn.Linear(4, 2)
model = nn.DataParallel(model)
"""

# The same call after non-ASCII text: columns are code points, not bytes.
DATA_PARALLEL_AFTER_ACCENTS = """\
import torch
from torch import nn

model = nn.Linear(4, 2)
label = "héllo wörld"; model = nn.DataParallel(model)
"""

TRAINING_LOOP = """\
import torch
from torch import nn

model = nn.Linear(4, 2)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
losses = []
for x, y in loader:
    optimizer.zero_grad()
    loss = nn.functional.mse_loss(model(x), y)
    loss.backward()
    optimizer.step()
    losses.append(loss)
"""

# TL401 (severity "information"): a host-device sync every step of a GPU training loop.
SYNC_EVERY_STEP = """\
import torch
from torch import nn

device = torch.device("cuda")
model = nn.Linear(4, 2).to(device)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for x, y in loader:
    x, y = x.to(device), y.to(device)
    optimizer.zero_grad()
    loss = nn.functional.mse_loss(model(x), y)
    loss.backward()
    optimizer.step()
    print(loss.item())
"""

CLEAN = """\
import torch
from torch import nn

model = nn.Linear(4, 2)
"""

JSON_KEYS = ["path", "line", "column", "end_line", "end_column", "code", "severity", "message", "fix"]


def write(root: Path, files: dict[str, str | bytes]) -> Path:
    for name, content in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(textwrap.dedent(content), encoding="utf-8")
    return root


def findings(completed: subprocess.CompletedProcess) -> list[dict]:
    assert completed.returncode in (0, 1), completed.stderr
    return json.loads(completed.stdout)


def codes_by_path(completed: subprocess.CompletedProcess) -> dict[str, set[str]]:
    result: dict[str, set[str]] = {}
    for item in findings(completed):
        result.setdefault(Path(item["path"]).as_posix(), set()).add(item["code"])
    return result


# -- text output and exit codes --------------------------------------------------------
def test_text_output_names_file_line_column_code_and_message(tmp_path, cli):
    write(tmp_path, {"train.py": DATA_PARALLEL})
    completed = cli("check", "train.py", cwd=tmp_path)
    assert completed.returncode == 1
    lines = completed.stdout.splitlines()
    assert len(lines) == 1
    assert lines[0].startswith("train.py:5:9: TL406 ")
    assert "DistributedDataParallel" in lines[0]
    assert "Found 1 problem in 1 of 1 file checked." in completed.stderr


def test_clean_file_exits_zero_and_says_so(tmp_path, cli):
    write(tmp_path, {"model.py": CLEAN})
    completed = cli("check", "model.py", cwd=tmp_path)
    assert completed.returncode == 0, completed.stderr
    assert completed.stdout == ""
    assert "No problems found in 1 file checked." in completed.stderr


def test_exit_zero_keeps_output_but_exits_zero(tmp_path, cli):
    write(tmp_path, {"train.py": DATA_PARALLEL})
    completed = cli("check", "--exit-zero", "train.py", cwd=tmp_path)
    assert completed.returncode == 0
    assert "TL406" in completed.stdout


def test_missing_path_is_a_usage_error(tmp_path, cli):
    completed = cli("check", "no_such_dir", cwd=tmp_path)
    assert completed.returncode == 2
    assert "no such file or folder: no_such_dir" in completed.stderr


def test_no_command_prints_help_and_exits_two(cli):
    completed = cli()
    assert completed.returncode == 2
    assert "check" in completed.stderr and "rules" in completed.stderr


def test_unknown_option_is_a_usage_error(tmp_path, cli):
    completed = cli("check", "--no-such-option", ".", cwd=tmp_path)
    assert completed.returncode == 2
    assert "unrecognized arguments" in completed.stderr


def test_every_report_format_is_offered_and_serve_loads_no_checker():
    from torch_lsp import cli, reporting

    assert list(cli.REPORT_FORMATS) == list(reporting.FORMATS)
    # `serve` must answer `initialize` fast: its command line loads nothing of the checker.
    loaded = subprocess.run([sys.executable, "-c", "import sys, torch_lsp.cli as c; c.build_parser(); "
                             "print(sorted(m for m in sys.modules if m.startswith('torch_lsp')))"],
                            capture_output=True, text=True, check=True).stdout
    assert "torch_lsp.checker" not in loaded and "torch_lsp.reporting" not in loaded


def test_version(cli):
    completed = cli("--version")
    assert completed.returncode == 0
    from torch_lsp import __version__

    assert completed.stdout.strip() == f"torch-lsp {__version__}"


def test_syntax_error_is_reported_and_the_rest_still_checked(tmp_path, cli):
    source = DATA_PARALLEL + "def broken(:\n    pass\n"
    write(tmp_path, {"train.py": source})
    codes = {item["code"] for item in findings(cli("check", "--format", "json", "train.py", cwd=tmp_path))}
    assert codes == {"syntax-error", "TL406"}


# -- JSON, SARIF, GitHub ---------------------------------------------------------------
def test_json_has_exactly_the_documented_keys_and_code_point_columns(tmp_path, cli):
    write(tmp_path, {"a.py": DATA_PARALLEL_AFTER_ACCENTS, "b.py": TRAINING_LOOP})
    items = findings(cli("check", "--format", "json", "a.py", "b.py", cwd=tmp_path))
    assert [list(item) for item in items] == [JSON_KEYS] * len(items)
    by_code = {item["code"]: item for item in items}
    data_parallel = by_code["TL406"]
    # `label = "héllo wörld"; model = ` is 31 code points (33 UTF-8 bytes).
    assert (data_parallel["path"], data_parallel["line"], data_parallel["column"]) == ("a.py", 5, 32)
    assert data_parallel["end_line"] == 5
    assert data_parallel["end_column"] == 32 + len("nn.DataParallel(model)")
    assert data_parallel["severity"] == "warning"
    assert data_parallel["fix"] is None
    accumulated = by_code["TL301"]
    assert accumulated["fix"]["safety"] == "safe"
    assert set(accumulated["fix"]) == {"title", "safety"} and accumulated["fix"]["title"]
    for item in items:
        assert item["severity"] in ("error", "warning", "information", "hint")


def test_json_of_a_clean_run_is_an_empty_array(tmp_path, cli):
    write(tmp_path, {"model.py": CLEAN})
    completed = cli("check", "--format", "json", ".", cwd=tmp_path)
    assert completed.returncode == 0
    assert json.loads(completed.stdout) == []


def test_github_format_makes_workflow_annotations(tmp_path, cli):
    write(tmp_path, {"train.py": DATA_PARALLEL, "loop.py": TRAINING_LOOP})
    completed = cli("check", "--format", "github", "train.py", cwd=tmp_path)
    assert completed.returncode == 1
    line = completed.stdout.strip()
    assert line.startswith("::warning file=train.py,line=5,col=9,endLine=5,endColumn=31,title=TL406::")
    assert "DistributedDataParallel" in line


def test_github_format_escapes_properties_and_maps_information_to_notice(tmp_path, cli):
    write(tmp_path, {"odd,name:x.py": SYNC_EVERY_STEP})
    completed = cli("check", "--format", "github", "--select", "TL401", "odd,name:x.py", cwd=tmp_path)
    assert completed.returncode == 1, completed.stderr
    assert completed.stdout.startswith("::notice file=odd%2Cname%3Ax.py,line=13,col=15,endLine=13,endColumn=22,")
    assert ",title=TL401::" in completed.stdout
    assert "%25" in completed.stdout and "% " not in completed.stdout  # `step % N` in the message


# -- selection on the command line -------------------------------------------------------
def test_select_and_ignore_by_code_and_prefix(tmp_path, cli):
    write(tmp_path, {"a.py": DATA_PARALLEL, "b.py": TRAINING_LOOP})

    def codes(*options):
        return {item["code"] for item in findings(cli("check", "--format", "json", *options, ".", cwd=tmp_path))}

    assert codes() == {"TL406", "TL301"}
    assert codes("--select", "TL4") == {"TL406"}
    assert codes("--select", "TL1,TL301") == {"TL301"}
    assert codes("--ignore", "TL406") == {"TL301"}
    assert codes("--select", "TL3,TL4", "--ignore", "TL3") == {"TL406"}
    assert codes("--ignore", "TL", "--extend-select", "TL406") == {"TL406"}


def test_unknown_code_in_select_is_a_usage_error_that_lists_prefixes(tmp_path, cli):
    write(tmp_path, {"a.py": DATA_PARALLEL})
    completed = cli("check", "--select", "TL4,TL999", "a.py", cwd=tmp_path)
    assert completed.returncode == 2
    assert '"TL999"' in completed.stderr
    assert "TL1" in completed.stderr and "TL4" in completed.stderr
    assert completed.stdout == ""
    assert cli("check", "--ignore", "E501", "a.py", cwd=tmp_path).returncode == 2


# -- standard input ------------------------------------------------------------------------
def test_stdin_with_a_filename(tmp_path, cli):
    completed = cli("check", "--stdin-filename", "pkg/train.py", "-", cwd=tmp_path, stdin=DATA_PARALLEL)
    assert completed.returncode == 1
    assert completed.stdout.startswith("pkg/train.py:5:9: TL406 ")


def test_stdin_filename_without_a_path_reads_stdin(tmp_path, cli):
    completed = cli("check", "--stdin-filename", "x.py", "--format", "json", cwd=tmp_path, stdin=TRAINING_LOOP)
    assert [(item["path"], item["code"]) for item in findings(completed)] == [("x.py", "TL301")]


def test_stdin_without_a_filename_is_shown_as_dash(tmp_path, cli):
    completed = cli("check", "-", cwd=tmp_path, stdin=DATA_PARALLEL)
    assert completed.stdout.startswith("-:5:9: TL406 ")


def test_stdin_filename_picks_the_settings_of_its_folder(tmp_path, cli):
    write(tmp_path, {"pyproject.toml": '[tool.torch-lsp]\nper-file-ignores = { "legacy/*" = ["TL406"] }\n'})
    ignored = cli("check", "--stdin-filename", "legacy/old.py", cwd=tmp_path, stdin=DATA_PARALLEL)
    assert ignored.returncode == 0, ignored.stdout + ignored.stderr
    reported = cli("check", "--stdin-filename", "new/model.py", cwd=tmp_path, stdin=DATA_PARALLEL)
    assert reported.returncode == 1


def test_stdin_without_a_filename_uses_the_settings_of_the_current_folder(tmp_path, cli):
    write(tmp_path, {"pyproject.toml": '[tool.torch-lsp]\nignore = ["TL406"]\n'})
    completed = cli("check", "-", cwd=tmp_path, stdin=DATA_PARALLEL)
    assert completed.returncode == 0, completed.stdout


def test_stdin_mixed_with_paths_is_a_usage_error(tmp_path, cli):
    write(tmp_path, {"a.py": CLEAN})
    completed = cli("check", "-", "a.py", cwd=tmp_path, stdin=CLEAN)
    assert completed.returncode == 2
    assert "standard input" in completed.stderr


# -- walking folders -----------------------------------------------------------------------
WALK_TREE = {
    "top.py": DATA_PARALLEL,
    "pkg/model.py": DATA_PARALLEL,
    "pkg/notes.txt": DATA_PARALLEL,
    "pkg/deep/er/layer.py": DATA_PARALLEL,
    ".hidden/secret.py": DATA_PARALLEL,
    "pkg/__pycache__/model.py": DATA_PARALLEL,
    "venv/lib/site.py": DATA_PARALLEL,
    "env312/pyvenv.cfg": "home = /usr/bin\n",
    "env312/lib/python3.12/site-packages/torchish/core.py": DATA_PARALLEL,
    "vendor/site-packages/lib.py": DATA_PARALLEL,
    # .gitignore: plain names at any depth, dir-only, anchored, negation, `**`.
    ".gitignore": "build/\n/generated.py\n*_pb2.py\nlogs\n!keep_pb2.py\ndocs/**/conf.py\n",
    "build/out.py": DATA_PARALLEL,
    "generated.py": DATA_PARALLEL,
    "pkg/generated.py": DATA_PARALLEL,  # `/generated.py` is anchored: this one stays
    "pkg/api_pb2.py": DATA_PARALLEL,
    "pkg/keep_pb2.py": DATA_PARALLEL,
    "logs/run.py": DATA_PARALLEL,
    "docs/a/b/conf.py": DATA_PARALLEL,
    "docs/conf.py": DATA_PARALLEL,  # `**/` matches zero folders too
    "docs/index.py": DATA_PARALLEL,
    # A nested .gitignore refines the outer one (deeper files win).
    "sub/.gitignore": "*.py\n!wanted.py\n",
    "sub/unwanted.py": DATA_PARALLEL,
    "sub/wanted.py": DATA_PARALLEL,
    "tools/build": DATA_PARALLEL,  # not a .py file
    "tools/build.py": DATA_PARALLEL,  # `build/` is dir-only: a file stays
}

WALK_EXPECTED = {
    "top.py",
    "pkg/model.py",
    "pkg/deep/er/layer.py",
    "pkg/generated.py",
    "pkg/keep_pb2.py",
    "docs/index.py",
    "sub/wanted.py",
    "tools/build.py",
}


def test_folders_are_walked_skipping_hidden_venvs_caches_and_gitignored(tmp_path, cli):
    write(tmp_path, WALK_TREE)
    completed = cli("check", "--format", "json", ".", cwd=tmp_path)
    assert set(codes_by_path(completed)) == WALK_EXPECTED


@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
def test_the_walk_agrees_with_git_about_ignored_files(tmp_path, cli):
    write(tmp_path, WALK_TREE)
    subprocess.run(["git", "init", "-q"], cwd=tmp_path, check=True)
    listed = subprocess.run(
        ["git", "ls-files", "--others", "--exclude-standard", "--", "*.py"],
        cwd=tmp_path, check=True, capture_output=True, text=True,
    ).stdout.split()
    # git does not know about hidden folders or virtual environments; we skip those too.
    skipped_by_us = (".hidden/", "venv/", "env312/", "vendor/", "pkg/__pycache__/")
    by_git = {p for p in listed if not p.startswith(skipped_by_us)}
    completed = cli("check", "--format", "json", ".", cwd=tmp_path)
    assert set(codes_by_path(completed)) == by_git == WALK_EXPECTED


def test_gitignore_of_the_work_tree_applies_when_checking_a_subfolder(tmp_path, cli):
    write(tmp_path, {".gitignore": "pkg/gen/\n", "pkg/gen/x.py": DATA_PARALLEL, "pkg/y.py": DATA_PARALLEL})
    (tmp_path / ".git").mkdir()
    completed = cli("check", "--format", "json", "pkg", cwd=tmp_path)
    assert set(codes_by_path(completed)) == {"pkg/y.py"}


def test_git_info_exclude_is_honoured(tmp_path, cli):
    write(tmp_path, {".git/info/exclude": "scratch.py\n", "scratch.py": DATA_PARALLEL, "main.py": DATA_PARALLEL})
    completed = cli("check", "--format", "json", ".", cwd=tmp_path)
    assert set(codes_by_path(completed)) == {"main.py"}


def test_a_file_named_explicitly_is_checked_even_when_ignored(tmp_path, cli):
    write(tmp_path, {".gitignore": "generated.py\n", "generated.py": DATA_PARALLEL, ".venv/x.py": DATA_PARALLEL})
    completed = cli("check", "--format", "json", "generated.py", ".venv/x.py", cwd=tmp_path)
    assert set(codes_by_path(completed)) == {"generated.py", ".venv/x.py"}


def test_a_folder_without_python_files_is_not_an_error(tmp_path, cli):
    write(tmp_path, {"readme.txt": "nothing here"})
    completed = cli("check", ".", cwd=tmp_path)
    assert completed.returncode == 0
    assert "no Python files found" in completed.stderr


# -- files that cannot be checked -----------------------------------------------------------
def test_non_utf8_file_is_named_skipped_and_the_rest_checked(tmp_path, cli):
    write(tmp_path, {"bad.py": b"x = 1\nname = '\xff\xfe'\n", "good.py": DATA_PARALLEL})
    completed = cli("check", ".", cwd=tmp_path)
    assert completed.returncode == 1  # good.py decides
    message = [line for line in completed.stderr.splitlines() if "bad.py" in line]
    assert len(message) == 1
    assert "not valid UTF-8" in message[0] and "line 2" in message[0] and "save it as UTF-8" in message[0]
    assert "good.py:5:9: TL406" in completed.stdout
    assert "1 file was skipped" in completed.stderr


def test_only_unreadable_input_exits_two(tmp_path, cli):
    write(tmp_path, {"bad.py": b"\xff\xfe\x00x"})
    completed = cli("check", "bad.py", cwd=tmp_path)
    assert completed.returncode == 2
    assert "bad.py was skipped" in completed.stderr


def test_declared_encoding_is_honoured(tmp_path, cli):
    accented = DATA_PARALLEL.replace("model = nn.Linear", "caf\xe9 = 1\nmodel = nn.Linear")
    source = "# -*- coding: latin-1 -*-\n" + accented
    write(tmp_path, {"latin.py": source.encode("latin-1")})
    completed = cli("check", "--format", "json", "latin.py", cwd=tmp_path)
    assert [item["code"] for item in findings(completed)] == ["TL406"]


def test_huge_file_is_skipped_with_a_message(tmp_path, cli):
    write(tmp_path, {"huge.py": "x = 1\n" * 1_000_000, "small.py": DATA_PARALLEL})
    completed = cli("check", ".", cwd=tmp_path)
    assert completed.returncode == 1
    assert "huge.py was skipped because it is 6.0 MB" in completed.stderr
    assert "small.py:5:9: TL406" in completed.stdout


@pytest.mark.skipif(os.name != "posix" or os.geteuid() == 0, reason="root can read any file")
def test_unreadable_file_is_skipped_with_a_message(tmp_path, cli):
    write(tmp_path, {"locked.py": DATA_PARALLEL, "open.py": DATA_PARALLEL})
    (tmp_path / "locked.py").chmod(0)
    completed = cli("check", ".", cwd=tmp_path)
    assert completed.returncode == 1
    assert "locked.py was skipped because it cannot be read" in completed.stderr


# -- settings from pyproject.toml -------------------------------------------------------------
def test_pyproject_ignore_and_severity(tmp_path, cli):
    write(tmp_path, {
        "pyproject.toml": """\
            [project]
            name = "demo"

            [tool.torch-lsp]
            ignore = ["TL3"]
            severity = { TL406 = "error" }
            """,
        "a.py": DATA_PARALLEL,
        "b.py": TRAINING_LOOP,
    })
    items = findings(cli("check", "--format", "json", ".", cwd=tmp_path))
    assert [(item["code"], item["severity"]) for item in items] == [("TL406", "error")]


def test_command_line_selection_applies_on_top_of_pyproject(tmp_path, cli):
    write(tmp_path, {"pyproject.toml": '[tool.torch-lsp]\nignore = ["TL406"]\n', "a.py": DATA_PARALLEL})
    assert cli("check", "a.py", cwd=tmp_path).returncode == 0
    assert cli("check", "--extend-select", "TL406", "a.py", cwd=tmp_path).returncode == 1


def test_per_file_ignores_are_relative_to_the_pyproject(tmp_path, cli):
    write(tmp_path, {
        "project/pyproject.toml": """\
            [tool.torch-lsp]
            per-file-ignores = { "scripts/*.py" = ["TL406"], "legacy_*.py" = ["TL4"] }
            """,
        "project/scripts/run.py": DATA_PARALLEL,
        "project/scripts/deeper/run.py": DATA_PARALLEL,  # `*` stays within one folder
        "project/pkg/legacy_model.py": DATA_PARALLEL,  # a bare-name pattern matches at any depth
        "project/pkg/model.py": DATA_PARALLEL,
    })
    # Run from outside the project: globs still refer to the pyproject's folder.
    completed = cli("check", "--format", "json", "project", cwd=tmp_path)
    assert set(codes_by_path(completed)) == {"project/scripts/deeper/run.py", "project/pkg/model.py"}


def test_nearest_pyproject_with_a_torch_lsp_table_wins(tmp_path, cli):
    write(tmp_path, {
        "pyproject.toml": '[tool.torch-lsp]\nignore = ["TL406"]\n',
        "quiet/a.py": DATA_PARALLEL,
        "loud/pyproject.toml": '[tool.torch-lsp]\nselect = ["TL4"]\n',
        "loud/a.py": DATA_PARALLEL,
        "plain/pyproject.toml": '[project]\nname = "plain"\n',  # no table: the root one applies
        "plain/a.py": DATA_PARALLEL,
    })
    completed = cli("check", "--format", "json", ".", cwd=tmp_path)
    assert set(codes_by_path(completed)) == {"loud/a.py"}


def test_invalid_settings_give_one_clear_message_and_fall_back(tmp_path, cli):
    write(tmp_path, {
        "pyproject.toml": """\
            [tool.torch-lsp]
            ignore = ["TL301", "TL999"]
            severity = { TL406 = "fatal" }
            selct = ["TL1"]
            """,
        "a.py": DATA_PARALLEL,
        "b.py": TRAINING_LOOP,
        "c.py": DATA_PARALLEL,
    })
    completed = cli("check", "--format", "json", ".", cwd=tmp_path)
    assert completed.returncode == 1
    assert [(i["path"], i["code"], i["severity"]) for i in json.loads(completed.stdout)] == [
        ("a.py", "TL406", "warning"),
        ("c.py", "TL406", "warning"),
    ]
    messages = completed.stderr.splitlines()
    assert len([m for m in messages if '"TL999"' in m]) == 1  # once, not once per file
    assert len([m for m in messages if "fatal" in m]) == 1
    assert len([m for m in messages if "`selct` is not a torch-lsp setting" in m]) == 1
    assert all("pyproject.toml" in m for m in messages if "TL999" in m or "fatal" in m)


def test_invalid_toml_falls_back_to_defaults_with_a_message(tmp_path, cli):
    write(tmp_path, {"pyproject.toml": "[tool.torch-lsp\nselect = \n", "a.py": DATA_PARALLEL})
    completed = cli("check", "a.py", cwd=tmp_path)
    assert completed.returncode == 1
    assert "could not be read as TOML" in completed.stderr
    assert "default settings" in completed.stderr


def test_off_by_default_rule_needs_its_full_code(tmp_path, cli):
    # A model worth compiling (TL409 is silent on a known tiny one and on a single nn.Linear).
    write(tmp_path, {"train.py": TRAINING_LOOP.replace(
        "nn.Linear(4, 2)", "nn.Sequential(nn.Linear(4, 512), nn.ReLU(), nn.Linear(512, 2))")})

    def codes(*options):
        return {i["code"] for i in findings(cli("check", "--format", "json", *options, "train.py", cwd=tmp_path))}

    assert "TL409" not in codes()
    assert "TL409" not in codes("--select", "TL4")
    assert "TL409" in codes("--extend-select", "TL409")


# -- rules -------------------------------------------------------------------------------------
def test_rules_lists_the_catalogue_as_an_aligned_table(cli):
    from torch_lsp.diagnostics import all_rules

    completed = cli("rules")
    assert completed.returncode == 0
    lines = completed.stdout.splitlines()
    assert lines[0].split() == ["CODE", "NAME", "SEVERITY", "FIX", "SUMMARY"]
    rules = all_rules()
    assert [line.split()[0] for line in lines[1:]] == list(rules)
    starts = [lines[0].index(title) for title in ("NAME", "SEVERITY", "FIX", "SUMMARY")]
    for line, rule in zip(lines[1:], rules.values()):
        name, severity, fix = (line[a:b].strip() for a, b in zip(starts, starts[1:]))
        assert name == rule.name and severity.split()[0] == rule.severity and fix == rule.fix_safety
        assert line[starts[-1]:] == rule.summary()


def test_rules_code_prints_its_documentation(cli):
    completed = cli("rules", "TL406")
    assert completed.returncode == 0
    from torch_lsp.diagnostics import all_rules

    rule = all_rules()["TL406"]
    assert completed.stdout.startswith(f"TL406 {rule.name}\n")
    assert rule.documentation() in completed.stdout
    assert "#tl406" in completed.stdout


def test_rules_prefix_lists_that_family(cli):
    completed = cli("rules", "TL4")
    assert completed.returncode == 0
    codes = [line.split()[0] for line in completed.stdout.splitlines()[1:]]
    assert codes and all(code.startswith("TL4") for code in codes)


def test_rules_unknown_code_exits_two_with_a_sentence(cli):
    completed = cli("rules", "TL999")
    assert completed.returncode == 2
    assert '"TL999" is not a torch-lsp rule code' in completed.stderr
    assert completed.stdout == ""


def test_docs_page_is_fresh(cli):
    generated = cli("rules", "--format", "markdown").stdout
    checked_in = (REPO / "docs" / "rules.md").read_text(encoding="utf-8")
    assert checked_in == generated, (
        "docs/rules.md is out of date with the rule docstrings; regenerate it with "
        "`torch-lsp rules --format markdown > docs/rules.md`."
    )


def test_docs_page_has_an_anchor_per_rule(cli):
    from torch_lsp.diagnostics import all_rules

    page = cli("rules", "--format", "markdown").stdout
    for code in all_rules():
        assert f"\n## {code}\n" in page  # GitHub's anchor for this heading is #tlNNN
        assert f"](#{code.lower()})" in page


# -- what `check` loads, and `serve` ---------------------------------------------------------
def test_check_does_not_import_the_language_server(tmp_path):
    write(tmp_path, {"a.py": DATA_PARALLEL})
    probe = (
        "import runpy, sys\n"
        "sys.argv = ['torch-lsp', 'check', 'a.py']\n"
        "try:\n"
        "    runpy.run_module('torch_lsp', run_name='__main__')\n"
        "except SystemExit as done:\n"
        "    assert done.code == 1, done.code\n"
        "heavy = ('pygls', 'lsprotocol', 'torch_lsp.lsp', 'libcst', 'jedi', 'torch', 'cattrs')\n"
        "loaded = sorted(m for m in sys.modules if any(m == h or m.startswith(h + '.') for h in heavy))\n"
        "sys.stderr.write('LOADED=' + ','.join(loaded) + '\\n')\n"
    )
    completed = subprocess.run([sys.executable, "-c", probe], cwd=tmp_path, capture_output=True, text=True)
    assert completed.returncode == 0, completed.stderr
    assert "TL406" in completed.stdout
    assert "LOADED=\n" in completed.stderr


def _lsp_message(payload: dict) -> bytes:
    body = json.dumps(payload).encode("utf-8")
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


def test_serve_speaks_lsp_on_stdio():
    messages = b"".join([
        _lsp_message({"jsonrpc": "2.0", "id": 1, "method": "initialize",
                      "params": {"processId": None, "rootUri": None, "capabilities": {}}}),
        _lsp_message({"jsonrpc": "2.0", "method": "initialized", "params": {}}),
        _lsp_message({"jsonrpc": "2.0", "id": 2, "method": "shutdown"}),
        _lsp_message({"jsonrpc": "2.0", "method": "exit"}),
    ])
    completed = subprocess.run([sys.executable, "-m", "torch_lsp", "serve", "--stdio"], input=messages,
                               capture_output=True, timeout=60)
    assert completed.returncode == 0, completed.stderr.decode()
    assert b'"capabilities"' in completed.stdout
    assert b'"id": 2' in completed.stdout or b'"id":2' in completed.stdout


# -- progress bar ------------------------------------------------------------------------------
def _run_with_terminal_stderr(args: list[str], cwd: Path) -> tuple[int, str]:
    import pty

    leader, follower = pty.openpty()
    process = subprocess.Popen([sys.executable, "-m", "torch_lsp", *args], cwd=cwd, stdin=subprocess.DEVNULL,
                               stdout=subprocess.PIPE, stderr=follower)
    os.close(follower)
    chunks = []
    while True:
        try:
            chunk = os.read(leader, 65536)
        except OSError:  # the child closed the terminal
            break
        if not chunk:
            break
        chunks.append(chunk)
    process.stdout.read()
    os.close(leader)
    return process.wait(timeout=60), b"".join(chunks).decode("utf-8", "replace")


@pytest.mark.skipif(os.name != "posix", reason="needs a pseudo-terminal")
def test_progress_bar_on_a_terminal_when_many_files(tmp_path):
    write(tmp_path, {f"m{i:02}.py": DATA_PARALLEL for i in range(25)})
    status, terminal = _run_with_terminal_stderr(["check", "."], tmp_path)
    assert status == 1
    assert "/25 " in terminal and "[" in terminal
    assert "Found 25 problems" in terminal


def test_no_progress_bar_when_stderr_is_not_a_terminal(tmp_path, cli):
    write(tmp_path, {f"m{i:02}.py": DATA_PARALLEL for i in range(25)})
    completed = cli("check", ".", cwd=tmp_path)
    assert "/25 " not in completed.stderr and "\r" not in completed.stderr
    assert completed.stderr.strip() == "Found 25 problems in 25 of 25 files checked."


@pytest.mark.skipif(os.name != "posix", reason="needs a pseudo-terminal")
def test_no_progress_bar_for_a_few_files(tmp_path):
    write(tmp_path, {f"m{i:02}.py": DATA_PARALLEL for i in range(3)})
    status, terminal = _run_with_terminal_stderr(["check", "."], tmp_path)
    assert status == 1
    assert "/3 " not in terminal


# -- what is not a readable Python file ------------------------------------------------------
def test_a_symbolic_link_loop_is_skipped_and_the_rest_checked(tmp_path, cli):
    write(tmp_path, {"pkg/model.py": DATA_PARALLEL})
    os.symlink("b.py", tmp_path / "pkg" / "a.py")
    os.symlink("a.py", tmp_path / "pkg" / "b.py")
    completed = cli("check", "pkg", cwd=tmp_path)
    assert completed.returncode == 1, completed.stderr
    assert "model.py:5:9: TL406" in completed.stdout
    assert "a.py was skipped because it is a symbolic link that leads back to itself" in completed.stderr


@pytest.mark.skipif(os.name != "posix", reason="named pipes and /dev/zero are POSIX")
@pytest.mark.parametrize("kind", ["named pipe", "character device"])
def test_what_is_not_a_regular_file_is_refused_not_read(tmp_path, cli, kind):
    if kind == "named pipe":
        os.mkfifo(tmp_path / "pipe.py")
        target = "pipe.py"
    else:
        target = "/dev/zero"
    completed = cli("check", target, cwd=tmp_path, timeout=30)  # reading either would block or never end
    assert completed.returncode == 2
    assert f"{target} was skipped because it is a {kind}, not a file" in completed.stderr
    assert "Nothing was checked." in completed.stderr


@pytest.mark.parametrize("content, says", [
    ("import torch\nx = 1\n".encode("utf-16"), "saved as UTF-16; save it as UTF-8"),
    (b"\x7fELF\x02\x01\x01\x00\x00\x00\xde\xad\xbe\xef", "contains NUL bytes (the first on line 1)"),
    (b"\x00" * 64, "contains NUL bytes"),
    (b"\x89PNG\r\n\x1a\n\xfe\xed", "is not valid UTF-8 (byte 0x89 on line 1)"),
])
def test_binary_and_utf_16_files_are_told_what_they_are(tmp_path, cli, content, says):
    write(tmp_path, {"odd.py": content})
    completed = cli("check", "odd.py", cwd=tmp_path)
    assert completed.returncode == 2
    assert says in completed.stderr
    assert "coding:" not in completed.stderr.split("comment on its first line")[0].replace("`# -*- coding: <name>", "")
    assert "No problems found" not in completed.stderr and "Nothing was checked." in completed.stderr


def test_an_expression_too_deep_to_parse_costs_its_line_and_says_so(tmp_path, cli):
    write(tmp_path, {"deep.py": DATA_PARALLEL + "total = " + " + ".join(["x"] * 30_000) + "\n"})
    completed = cli("check", "deep.py", cwd=tmp_path)
    (deep,) = [line for line in completed.stdout.splitlines() if "syntax-error" in line]
    assert deep.startswith("deep.py:6:1:") and "nested too deeply" in deep and "still checked" in deep
    assert "deep.py:5:9: TL406" in completed.stdout  # the rest of the file was checked


def run_as_nobody(args: list[str], cwd: str) -> subprocess.CompletedProcess:
    def drop_privileges():
        os.setgid(65534)
        os.setuid(65534)
    return subprocess.run([sys.executable, "-m", "torch_lsp", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=60, preexec_fn=drop_privileges if os.geteuid() == 0 else None)


@pytest.mark.skipif(os.name != "posix", reason="POSIX permissions")
def test_a_folder_that_cannot_be_listed_is_reported(tmp_path, cli):
    import tempfile

    root = Path(tempfile.mkdtemp(prefix="torch-lsp-unreadable-"))  # not under pytest's private folder
    try:
        root.chmod(0o755)
        write(root, {"open/model.py": DATA_PARALLEL, "locked/model.py": DATA_PARALLEL})
        (root / "open").chmod(0o755)
        (root / "open" / "model.py").chmod(0o644)
        (root / "locked").chmod(0)
        try:
            probe = run_as_nobody(["rules", "TL406"], str(root))
        except OSError as error:  # this Python lies in a folder only its owner may enter
            probe = subprocess.CompletedProcess([], 1, "", str(error))
        if probe.returncode != 0:
            pytest.skip(f"torch-lsp cannot run as an unprivileged user here (root reads every folder): "
                        f"{probe.stderr[-200:]}")
        completed = run_as_nobody(["check", "."], str(root))
        assert "open/model.py:5:9: TL406" in completed.stdout, completed.stderr
        assert "the folder ./locked was skipped because it cannot be read (Permission denied)" in completed.stderr
    finally:
        (root / "locked").chmod(0o755)
        shutil.rmtree(root)


def test_many_files_checked_on_several_cores_report_what_one_process_reports(tmp_path, cli):
    """Enough files for worker processes: the same problems in the same order, the skipped
    file and the summary included, whatever the number of processes."""
    files = {f"pkg/module_{i:02d}.py": DATA_PARALLEL if i % 3 else TRAINING_LOOP for i in range(12)}
    files["pkg/not_utf8.py"] = b"name = '\xe9\xff'\n"
    write(tmp_path, files)
    alone = cli("check", "--jobs", "1", "pkg", cwd=tmp_path)
    workers = cli("check", "--jobs", "3", "pkg", cwd=tmp_path)
    assert alone.returncode == workers.returncode == 1
    assert workers.stdout == alone.stdout and "TL406" in workers.stdout
    assert workers.stderr == alone.stderr and "1 file was skipped" in workers.stderr
    as_json = cli("check", "--jobs", "3", "--format", "json", "pkg", cwd=tmp_path)
    assert json.loads(as_json.stdout) == json.loads(cli("check", "--jobs", "1", "--format", "json", "pkg",
                                                          cwd=tmp_path).stdout)
