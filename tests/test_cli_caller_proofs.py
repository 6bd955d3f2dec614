"""`torch-lsp check` on an error that a call in train.py proves inside model.py: reported
once, where it raises, when model.py is checked too (the call as its related place, as a
type checker reports an error in the file that holds it); at the call, pointing at the
line that raises, when only train.py is checked."""
from __future__ import annotations

import json
from pathlib import Path

from tests.lsp.test_caller_proofs import MODEL, TRAIN, UNKNOWN

MESSAGE = ("`self.fc` is Linear(7200 → 10), which expects 7200 features in its last dim, but it is given "
           "[16, 30752] (from x.flatten(1) (model.py, line 13)), with the arguments of the call in train.py, "
           "line 6; this raises at run time.")


def write(folder: Path, model: str = MODEL, train: str = TRAIN) -> None:
    (folder / "model.py").write_text(model, encoding="utf-8")
    (folder / "train.py").write_text(train, encoding="utf-8")


def columns(text: str, line: int, needle: str) -> tuple[int, int]:
    """1-based code-point columns of `needle` on a 1-based line, its end just past it."""
    start = text.splitlines()[line - 1].index(needle) + 1
    return start, start + len(needle)


def test_checking_both_files_reports_the_error_once_where_it_raises(cli, tmp_path: Path):
    write(tmp_path)
    completed = cli("check", ".", cwd=tmp_path)
    assert completed.returncode == 1, completed.stderr
    start, _ = columns(MODEL, 14, "self.fc(x)")
    assert completed.stdout == f"model.py:14:{start}: TL501 {MESSAGE}\n"
    assert "Found 1 problem in 1 of 2 files checked." in completed.stderr

    (record,) = json.loads(cli("check", "--format", "json", ".", cwd=tmp_path).stdout)
    start, end = columns(MODEL, 14, "self.fc(x)")
    assert (record["path"], record["line"], record["column"], record["end_column"]) == ("model.py", 14, start, end)
    assert record["message"] == MESSAGE
    call_start, call_end = columns(TRAIN, 6, "model(batch)")
    assert record["related"] == [{"path": "train.py", "line": 6, "column": call_start, "end_line": 6,
                                  "end_column": call_end, "message": "the call that gives these shapes"}]

    sarif = json.loads(cli("check", "--format", "sarif", ".", cwd=tmp_path).stdout)
    (result,) = sarif["runs"][0]["results"]
    assert result["locations"][0]["physicalLocation"]["artifactLocation"]["uri"].endswith("model.py")
    (related,) = result["relatedLocations"]
    assert related["physicalLocation"]["artifactLocation"]["uri"].endswith("train.py")
    assert related["physicalLocation"]["region"] == {"startLine": 6, "startColumn": call_start, "endLine": 6,
                                                     "endColumn": call_end}


def test_checking_the_caller_alone_reports_it_at_the_call(cli, tmp_path: Path):
    write(tmp_path)
    (record,) = json.loads(cli("check", "--format", "json", "train.py", cwd=tmp_path).stdout)
    call_start, call_end = columns(TRAIN, 6, "model(batch)")
    assert (record["path"], record["line"], record["column"], record["end_column"]) == ("train.py", 6, call_start,
                                                                                        call_end)
    assert record["message"].startswith(f"in `Net.forward` ({tmp_path / 'model.py'}, line 14): `self.fc` is")
    start, end = columns(MODEL, 14, "self.fc(x)")
    assert record["related"] == [{"path": str(tmp_path / "model.py"), "line": 14, "column": start, "end_line": 14,
                                  "end_column": end, "message": "raises here, with the shapes of this call"}]


def test_a_noqa_where_it_raises_silences_it_when_both_files_are_checked(cli, tmp_path: Path):
    write(tmp_path, model=MODEL.replace("ŷ = self.fc(x)", "ŷ = self.fc(x)  # noqa: TL501"))
    completed = cli("check", ".", cwd=tmp_path)
    assert completed.returncode == 0 and completed.stdout == "", completed.stdout


def test_a_batch_of_unknown_shape_proves_nothing(cli, tmp_path: Path):
    write(tmp_path, train=UNKNOWN)
    completed = cli("check", "--select", "TL501", ".", cwd=tmp_path)
    assert completed.returncode == 0 and completed.stdout == "", completed.stdout
