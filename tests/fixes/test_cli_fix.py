"""`torch-lsp check --fix / --diff / --unsafe-fixes`, run as a subprocess."""
from __future__ import annotations

import shutil
from pathlib import Path

GOLDEN = Path(__file__).parent / "golden"


def copy_case(name: str, folder: Path, as_name: str | None = None) -> Path:
    target = folder / (as_name or f"{name}.py")
    shutil.copyfile(GOLDEN / f"{name}.in.py", target)
    return target


def golden_out(name: str) -> bytes:
    return (GOLDEN / f"{name}.out.py").read_bytes()


def test_fix_rewrites_files_keeping_crlf_and_tabs(cli, tmp_path):
    crlf = copy_case("TL104_crlf_tabs", tmp_path)
    decorated = copy_case("TL302_crlf", tmp_path)
    done = cli("check", "--fix", ".", cwd=tmp_path)
    assert crlf.read_bytes() == golden_out("TL104_crlf_tabs")
    assert decorated.read_bytes() == golden_out("TL302_crlf")
    assert "Fixed 2 problems (TL104, TL302) in 2 files." in done.stderr
    assert "No problems found in 2 files checked." in done.stderr
    assert done.stdout == ""
    assert done.returncode == 0
    assert not list(tmp_path.glob(".*torch-lsp-fix")), "a temporary file was left behind"


def test_fix_reports_what_remains_and_exits_as_check_does(cli, tmp_path):
    path = copy_case("TL301_append_and_sum", tmp_path)
    source = path.read_text()
    path.write_text(source + "\n\nparallel = torch.nn.DataParallel(torch.nn.Linear(4, 2))\n")
    done = cli("check", "--fix", "--select", "TL301,TL406", str(path), cwd=tmp_path)
    assert "Fixed 2 problems (TL301 ×2) in 1 file." in done.stderr
    assert "loss.detach()" in path.read_text()
    assert done.returncode == 1, done.stderr
    remaining = [line for line in done.stdout.splitlines() if line]
    assert len(remaining) == 1 and " TL406 " in remaining[0], done.stdout


def test_diff_prints_a_unified_diff_and_writes_nothing(cli, tmp_path):
    path = copy_case("TL302_wrap_alternative", tmp_path, "evaluate.py")
    before = path.read_bytes()
    done = cli("check", "--diff", "evaluate.py", cwd=tmp_path)
    assert path.read_bytes() == before
    assert done.stdout.startswith("--- a/evaluate.py\n+++ b/evaluate.py\n@@ ")
    assert "+@torch.no_grad()\n" in done.stdout
    assert "Would fix 1 problem (TL302) in 1 file." in done.stderr
    assert done.returncode == 0, "nothing would remain"


def test_diff_applies_to_give_the_fixed_file(cli, tmp_path):
    path = copy_case("TL402_hoist_nested", tmp_path)
    diff = cli("check", "--diff", path.name, cwd=tmp_path).stdout
    assert _patched(path.read_text(), diff) == golden_out("TL402_hoist_nested").decode()


def test_unsafe_fixes_are_applied_only_when_asked(cli, tmp_path):
    path = copy_case("TL405_loader", tmp_path)
    before = path.read_bytes()
    safe_only = cli("check", "--fix", path.name, cwd=tmp_path)
    assert path.read_bytes() == before
    assert "2 more problems can be fixed with --unsafe-fixes" in safe_only.stderr
    assert safe_only.returncode == 1
    unsafe = cli("check", "--fix", "--unsafe-fixes", path.name, cwd=tmp_path)
    assert path.read_bytes() == golden_out("TL405_loader")
    assert "Fixed 2 problems (TL405 ×2) in 1 file." in unsafe.stderr
    assert unsafe.returncode == 0


def test_unsafe_fixes_alone_is_a_usage_error(cli, tmp_path):
    done = cli("check", "--unsafe-fixes", ".", cwd=tmp_path)
    assert done.returncode == 2
    assert "--unsafe-fixes only applies with --fix or --diff" in done.stderr


def test_fix_from_standard_input_prints_the_fixed_text(cli, tmp_path):
    source = (GOLDEN / "TL101_for_loop.in.py").read_text()
    done = cli("check", "--fix", "--stdin-filename", "train.py", cwd=tmp_path, stdin=source)
    assert done.stdout == golden_out("TL101_for_loop").decode()
    assert "Fixed 1 problem (TL101) in 1 file." in done.stderr
    assert done.returncode == 0


def test_encoding_and_byte_order_mark_are_kept(cli, tmp_path):
    path = tmp_path / "bom.py"
    text = (GOLDEN / "TL203_view.in.py").read_text().replace("# x:", "# é x:")
    path.write_bytes(b"\xef\xbb\xbf" + text.encode("utf-8"))
    cli("check", "--fix", path.name, cwd=tmp_path)
    fixed = path.read_bytes()
    assert fixed.startswith(b"\xef\xbb\xbf")
    assert fixed[3:].decode("utf-8") == text.replace(".view(", ".reshape(")


def test_a_file_with_a_syntax_error_is_left_alone(cli, tmp_path):
    path = copy_case("TL203_view", tmp_path)
    broken = path.read_text() + "\ndef half_typed(:\n"
    path.write_text(broken)
    done = cli("check", "--fix", path.name, cwd=tmp_path)
    assert path.read_text() == broken
    assert "syntax-error" in done.stdout
    assert done.returncode == 1


def test_plain_check_does_not_load_libcst(tmp_path):
    """libcst is for fixes only; `check` without `--fix` must not pay for importing it."""
    import subprocess
    import sys

    path = copy_case("TL203_view", tmp_path)
    probe = (
        "import sys\nfrom torch_lsp.cli import main\n"
        f"status = main(['check', {str(path)!r}])\n"
        "print('libcst' in sys.modules, file=sys.stderr)\n"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60)
    assert done.stderr.strip().endswith("False"), done.stderr


def _patched(text: str, diff: str) -> str:
    """Apply a one-file unified diff (enough of `patch` for these tests)."""
    lines = text.splitlines(keepends=True)
    out, cursor = [], 0
    body = diff.splitlines(keepends=True)[2:]
    for line in body:
        if line.startswith("@@"):
            start = int(line.split()[1].split(",")[0][1:]) - 1
            out += lines[cursor:start]
            cursor = start
        elif line.startswith(" "):
            out.append(lines[cursor])
            cursor += 1
        elif line.startswith("-"):
            cursor += 1
        elif line.startswith("+"):
            out.append(line[1:])
    return "".join(out + lines[cursor:])
