"""Settings: defaults < `[tool.torch-lsp]` in the nearest pyproject.toml < editor settings.

(Named `test_settings_loading.py` because tests/lsp/test_settings.py exists and
pytest's default import mode needs unique test module names.)
"""
from __future__ import annotations

import os
import textwrap
from pathlib import Path

import pytest

from torch_lsp.diagnostics import all_rules
from torch_lsp.settings import Settings, load_project_settings, merge_editor_settings

DEFAULT_ON = [code for code, rule in all_rules().items() if rule.enabled_by_default]


def project(tmp_path: Path, table: str, folder: str = ".") -> Path:
    root = tmp_path / folder
    root.mkdir(parents=True, exist_ok=True)
    (root / "pyproject.toml").write_text(textwrap.dedent(table), encoding="utf-8")
    return root


def selected(settings: Settings, path: str | None = None) -> set[str]:
    return {code for code in all_rules() if settings.is_selected(code, path)}


def editor(options: dict, base: Settings | None = None, root: Path | None = None) -> Settings:
    settings, errors = merge_editor_settings(base or Settings(), options, root=root)
    assert errors == []
    return settings


# -- selection -------------------------------------------------------------------------
def test_defaults_select_every_rule_that_is_on_by_default():
    assert selected(Settings()) == set(DEFAULT_ON)
    assert not Settings().is_selected("TL409")
    assert Settings().severity_of("TL301") is None


def test_select_ignore_and_specificity_like_ruff():
    assert selected(editor({"select": ["TL4"]})) == {c for c in DEFAULT_ON if c.startswith("TL4")}
    assert not editor({"select": ["TL4"], "ignore": ["TL406"]}).is_selected("TL406")
    # The more specific selector wins, whichever list it is in ...
    assert editor({"select": ["TL406"], "ignore": ["TL4"]}).is_selected("TL406")
    assert not editor({"select": ["TL406"], "ignore": ["TL4"]}).is_selected("TL401")
    # ... and `ignore` wins a tie.
    assert not editor({"select": ["TL4"], "ignore": ["TL4"]}).is_selected("TL401")
    assert selected(editor({"extend-select": ["TL409"]})) == set(DEFAULT_ON) | {"TL409"}


def test_off_by_default_rules_need_their_full_code():
    assert not editor({"select": ["TL"]}).is_selected("TL409")
    assert not editor({"extend-select": ["TL4"]}).is_selected("TL409")
    assert editor({"select": ["TL409"]}).is_selected("TL409")
    # Within a layer the full code is the more specific selector; a later layer's prefix removes it.
    assert editor({"extend-select": ["TL409"], "ignore": ["TL4"]}).is_selected("TL409")
    assert not editor({"ignore": ["TL4"]}, editor({"extend-select": ["TL409"]})).is_selected("TL409")


def test_editor_settings_layer_on_top_of_the_pyproject(tmp_path):
    root = project(tmp_path, """\
        [tool.torch-lsp]
        select = ["TL1"]
        ignore = ["TL101"]
        """)
    base, errors, pyproject = load_project_settings(root / "train.py")
    assert errors == [] and pyproject == root / "pyproject.toml"
    assert selected(base) == {c for c in DEFAULT_ON if c.startswith("TL1")} - {"TL101"}
    # extend-select adds to the project's selection, and can bring back what it ignored.
    assert selected(editor({"extendSelect": ["TL406", "TL101"]}, base)) == selected(base) | {"TL406", "TL101"}
    # select replaces it; ignore removes from it.
    assert selected(editor({"select": ["TL3"]}, base)) == {c for c in DEFAULT_ON if c.startswith("TL3")}
    assert selected(editor({"ignore": ["TL102"]}, base)) == selected(base) - {"TL102"}
    # Keys an editor did not set (null) change nothing.
    assert selected(editor({"select": None, "ignore": None}, base)) == selected(base)


# -- per-file-ignores -------------------------------------------------------------------
def test_per_file_ignores_globs_are_relative_to_the_pyproject(tmp_path):
    root = project(tmp_path, """\
        [tool.torch-lsp.per-file-ignores]
        "tests/**" = ["TL1"]
        "scripts/*.py" = ["TL406"]
        "__init__.py" = ["TL4"]
        "{bench,tools}/*.py" = ["TL3"]
        """)
    settings, errors, _ = load_project_settings(root)
    assert errors == []
    assert not settings.is_selected("TL101", str(root / "tests" / "unit" / "test_loop.py"))
    assert settings.is_selected("TL301", str(root / "tests" / "unit" / "test_loop.py"))
    assert not settings.is_selected("TL406", str(root / "scripts" / "run.py"))
    assert settings.is_selected("TL406", str(root / "scripts" / "deeper" / "run.py"))  # `*` stays in a folder
    assert not settings.is_selected("TL401", str(root / "pkg" / "sub" / "__init__.py"))  # bare names: any depth
    assert not settings.is_selected("TL301", str(root / "tools" / "x.py"))
    assert not settings.is_selected("TL301", str(root / "bench" / "x.py"))
    assert settings.is_selected("TL301", str(root / "src" / "x.py"))
    # The same relative path elsewhere is not under the pyproject's folder.
    assert settings.is_selected("TL406", str(tmp_path.parent / "scripts" / "run.py"))


def test_per_file_ignores_with_relative_paths_and_negation(tmp_path, monkeypatch):
    root = project(tmp_path, """\
        [tool.torch-lsp]
        per-file-ignores = { "!src/**" = ["TL406"] }
        """)
    settings, _, _ = load_project_settings(root)
    monkeypatch.chdir(root)
    assert settings.is_selected("TL406", "src/model.py")
    assert not settings.is_selected("TL406", "examples/demo.py")


def test_editor_per_file_ignores_are_relative_to_the_workspace(tmp_path):
    settings = editor({"perFileIgnores": {"legacy/*.py": ["TL406"]}}, root=tmp_path)
    assert not settings.is_selected("TL406", str(tmp_path / "legacy" / "old.py"))
    assert settings.is_selected("TL406", str(tmp_path / "new" / "old.py"))


# -- severity ----------------------------------------------------------------------------
def test_severity_overrides_by_code_and_prefix(tmp_path):
    root = project(tmp_path, """\
        [tool.torch-lsp]
        severity = { TL4 = "hint", TL406 = "error" }
        """)
    settings, errors, _ = load_project_settings(root)
    assert errors == []
    assert settings.severity_of("TL406") == "error"  # the most specific wins
    assert settings.severity_of("TL401") == "hint"
    assert settings.severity_of("TL301") is None
    assert editor({"severity": {"TL401": "warning"}}, settings).severity_of("TL401") == "warning"
    assert editor({"severity": {"TL401": "warning"}}, settings).severity_of("TL406") == "error"


# -- shapes -------------------------------------------------------------------------------
def test_shapes_inlay_hints_in_every_spelling(tmp_path):
    assert Settings().inlay_hints is True
    nested = project(tmp_path, "[tool.torch-lsp.shapes]\ninlayHints = false\n", "nested")
    dotted = project(tmp_path, "[tool.torch-lsp]\nshapes.inlay-hints = false\n", "dotted")
    for root in (nested, dotted):
        settings, errors, _ = load_project_settings(root)
        assert errors == [] and settings.inlay_hints is False
    assert editor({"shapes": {"inlayHints": False}}).inlay_hints is False
    assert editor({"shapes.inlayHints": False}).inlay_hints is False


# -- validation ------------------------------------------------------------------------------
def test_invalid_parts_fall_back_with_one_sentence_each(tmp_path):
    root = project(tmp_path, """\
        [tool.torch-lsp]
        select = 5
        ignore = ["TL406", "TL999", "E501"]
        severity = { TL301 = "fatal", TL998 = "error", TL401 = "hint" }
        per-file-ignores = ["tests/*"]
        shapes = { inlayHints = "yes" }
        selct = ["TL1"]
        """)
    settings, errors, pyproject = load_project_settings(root / "a.py")
    assert len(errors) == 7, errors  # one per invalid value (the unknown codes of one list in one)
    where = f"[tool.torch-lsp] of {pyproject}"
    for error in errors:
        assert error.startswith(f"In {where}, ") and error.endswith(".")
    text = "\n".join(errors)
    assert "`select` must be a list of rule codes" in text and "not a number (5)" in text
    assert '`ignore` lists "TL999" and "E501", which match no torch-lsp rule, so they are ignored' in text
    assert "TL301 to a string ('fatal'), which is not a severity" in text
    assert "error, warning, information, hint" in text
    assert '"TL998"' in text
    assert "`per-file-ignores` must be a table" in text
    assert "`shapes.inlayHints` must be true or false" in text
    assert "`selct` is not a torch-lsp setting" in text
    # What was valid still applies; what was not fell back to its default.
    assert not settings.is_selected("TL406")
    assert settings.is_selected("TL101")  # `select = 5` fell back to the default selection
    assert settings.severity_of("TL401") == "hint"
    assert settings.severity_of("TL301") is None
    assert settings.inlay_hints is True


def test_a_select_of_only_unknown_codes_falls_back_to_the_default_selection():
    settings, errors = merge_editor_settings(Settings(), {"select": ["TL999"]})
    assert len(errors) == 1
    assert selected(settings) == set(DEFAULT_ON)
    assert selected(editor({"select": []})) == set()  # an empty list is a valid (if odd) choice


def test_invalid_toml_falls_back_to_defaults(tmp_path):
    root = project(tmp_path, "[tool.torch-lsp\nselect = [\n")
    settings, errors, pyproject = load_project_settings(root)
    assert pyproject == root / "pyproject.toml"
    assert len(errors) == 1 and str(pyproject) in errors[0] and "could not be read as TOML" in errors[0]
    assert selected(settings) == set(DEFAULT_ON)


def test_editor_settings_that_are_not_an_object():
    settings, errors = merge_editor_settings(Settings(), ["TL1"])
    assert selected(settings) == set(DEFAULT_ON)
    assert errors == [
        "The editor settings for torch-lsp must be an object of settings, not a list (['TL1']); they are ignored."
    ]


def test_editor_validation_names_the_editor(tmp_path):
    _, errors = merge_editor_settings(Settings(), {"extendSelect": ["TL777"], "severity": {"TL301": 3}})
    assert len(errors) == 2
    assert all(e.startswith("In the editor settings for torch-lsp, ") for e in errors)
    assert "`extendSelect` lists \"TL777\"" in errors[0]


# -- finding and caching the pyproject ----------------------------------------------------------
def test_nearest_pyproject_with_a_table_is_used(tmp_path):
    outer = project(tmp_path, '[tool.torch-lsp]\nignore = ["TL406"]\n')
    project(tmp_path, '[project]\nname = "inner"\n', "inner")
    settings, _, pyproject = load_project_settings(tmp_path / "inner" / "deep" / "x.py")
    assert pyproject == outer / "pyproject.toml"
    assert not settings.is_selected("TL406")


def test_no_pyproject_gives_defaults(tmp_path):
    settings, errors, pyproject = load_project_settings(tmp_path / "x.py")
    # A pyproject.toml above the temporary folder would be a surprise; accept only "none".
    if pyproject is not None:
        pytest.skip(f"a pyproject.toml above the temporary folder ({pyproject}) applies")
    assert errors == [] and selected(settings) == set(DEFAULT_ON)


def test_a_changed_pyproject_is_read_again(tmp_path):
    root = project(tmp_path, '[tool.torch-lsp]\nignore = ["TL406"]\n')
    first, _, _ = load_project_settings(root)
    again, _, _ = load_project_settings(root)
    assert again is first  # cached while unchanged
    pyproject = root / "pyproject.toml"
    pyproject.write_text('[tool.torch-lsp]\nignore = ["TL401"]\n', encoding="utf-8")
    stat = pyproject.stat()
    os.utime(pyproject, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000_000))
    changed, _, _ = load_project_settings(root)
    assert changed.is_selected("TL406") and not changed.is_selected("TL401")
