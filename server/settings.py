"""One Settings type: defaults < pyproject `[tool.torch-lsp]` < editor settings.

The keys are ruff's:

    [tool.torch-lsp]
    select = ["TL1", "TL3"]        # replaces the default selection
    extend-select = ["TL409"]      # adds to it
    ignore = ["TL401"]             # removes from it
    per-file-ignores = { "tests/**" = ["TL1"], "__init__.py" = ["TL406"] }
    severity = { TL301 = "error", TL4 = "hint" }
    shapes.inlayHints = true       # shapes after assignments, as inlay hints
    probe.device = "meta"          # the shape probe: "meta", "cpu" or "cuda"
    probe.timeout = 10             # seconds per probe
    probe.memory = 4096            # MB of address space for the probe's process
    target-version = "2.4"         # the PyTorch the code runs on (default: the one installed
                                   # in the project's environment, else the newest)

The probe runs the project's own code, so `probe.enabled` and `probe.python` are read
only from the editor's settings (in VS Code, of a trusted workspace) or the command line
(`--probe`), never from a pyproject.toml that came with the code.

Codes may be prefixes (`"TL4"`).  Each source of settings (the pyproject table, the
editor, the command line) is one *selection layer*, resolved like ruff: within a
layer the most specific selector wins and `ignore` wins a tie; a layer with
`select` starts from nothing, one without it starts from the layer below.  A rule
that is off by default (TL409) is only turned on by its full code, never by a
prefix.  `per-file-ignores` globs are relative to the folder of the pyproject.toml
(the workspace folder for editor settings) and are also tried against the bare file
name, as ruff does.

The nearest pyproject.toml *that has a `[tool.torch-lsp]` table* applies (again as
ruff); an invalid part of the settings produces a sentence in the error list and
falls back to its default, never an exception.  Treat a `Settings` as read-only:
loaded settings are cached and shared.
"""
from __future__ import annotations

import os
import re
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Iterator, Mapping

from torch_lsp.diagnostics.base import SEVERITIES
from torch_lsp.files import glob_regex
from torch_lsp.shapes.probe.client import PROBE_DEVICES, ProbeOptions

TOOL_TABLE = "[tool.torch-lsp]"
EDITOR_SOURCE = "the editor settings for torch-lsp"
KNOWN_KEYS = ("select", "extend-select", "ignore", "per-file-ignores", "severity", "target-version", "shapes.inlayHints",
              "probe.enabled", "probe.python", "probe.device", "probe.timeout", "probe.memory")
# Settings that make torch-lsp run the project's code: never taken from the project's own files.
EDITOR_ONLY_KEYS = ("probe.enabled", "probe.python")


# -- what is selected -----------------------------------------------------------------
@dataclass(frozen=True)
class Selection:
    """One layer of rule selection: a pyproject table, the editor, or the command line."""

    select: tuple[str, ...] | None = None
    extend_select: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()

    def decide(self, code: str, enabled: bool, *, off_by_default: bool) -> bool:
        """Whether `code` is enabled after this layer, given `enabled` from the layers below."""
        best: tuple[int, bool] | None = None  # (specificity, enabled)
        for selector in (self.select or ()) + self.extend_select:
            if _selects(selector, code, off_by_default) and (best is None or len(selector) > best[0]):
                best = (len(selector), True)
        for selector in self.ignore:
            if code.startswith(selector) and (best is None or len(selector) >= best[0]):
                best = (len(selector), False)
        if best is not None:
            return best[1]
        return False if self.select is not None else enabled


def _selects(selector: str, code: str, off_by_default: bool) -> bool:
    # Rules that are off by default are opt-in by name: `select = ["TL4"]` leaves TL409 off.
    return selector == code if off_by_default else code.startswith(selector)


@dataclass(frozen=True)
class PerFileIgnore:
    """`"pattern" = ["codes"]`: the codes are ignored in files the pattern matches."""

    pattern: str
    codes: tuple[str, ...]
    root: str
    regex: re.Pattern[str]
    negated: bool

    @classmethod
    def build(cls, pattern: str, codes: tuple[str, ...], root: str) -> "PerFileIgnore":
        negated = pattern.startswith("!")
        body = pattern[1:] if negated else pattern
        body = body[2:] if body.startswith("./") else body
        regex = re.compile(glob_regex(body, braces=True), re.DOTALL)
        return cls(pattern, codes, os.path.abspath(root), regex, negated)

    def applies_to(self, absolute_path: str) -> bool:
        name = os.path.basename(absolute_path)
        hit = self.regex.fullmatch(name) is not None
        if not hit and absolute_path.startswith(self.root + os.sep):
            relative = absolute_path[len(self.root) + 1 :].replace(os.sep, "/")
            hit = self.regex.fullmatch(relative) is not None
        return hit != self.negated


@dataclass
class Settings:
    selections: tuple[Selection, ...] = ()
    per_file_ignores: tuple[PerFileIgnore, ...] = ()
    severity: dict[str, str] = field(default_factory=dict)
    inlay_hints: bool = True
    probe_enabled: bool = False
    probe: ProbeOptions = field(default_factory=ProbeOptions)
    # `target-version`: the PyTorch version the code runs on ("2.4"), None when not set.
    torch_version: str | None = None
    # The folder relative globs refer to: the pyproject's, or the editor's workspace.
    root: str | None = None
    _file_ignores: dict[str, tuple[str, ...]] = field(default_factory=dict, init=False, repr=False, compare=False)

    def is_selected(self, code: str, path: str | None = None) -> bool:
        rule = _registered_rules().get(code)
        default = rule.enabled_by_default if rule is not None else True
        enabled = default
        for layer in self.selections:
            enabled = layer.decide(code, enabled, off_by_default=not default)
        if enabled and path and self.per_file_ignores:
            enabled = not any(code.startswith(prefix) for prefix in self.ignored_in(path))
        return enabled

    def ignored_in(self, path: str) -> tuple[str, ...]:
        """Codes and prefixes that `per-file-ignores` turns off in `path`."""
        absolute = os.path.abspath(path)
        if absolute not in self._file_ignores:
            self._file_ignores[absolute] = tuple(
                code for entry in self.per_file_ignores if entry.applies_to(absolute) for code in entry.codes
            )
        return self._file_ignores[absolute]

    def severity_of(self, code: str) -> str | None:
        """The configured severity of `code` (the most specific prefix wins), or None."""
        best = max((s for s in self.severity if code.startswith(s)), key=len, default=None)
        return self.severity[best] if best is not None else None

    def with_selection(self, layer: Selection) -> "Settings":
        return replace(self, selections=self.selections + (layer,))


def _registered_rules() -> Mapping[str, Any]:
    # Every family, always: the rules may be loading on another thread right now (the
    # language server loads them after answering `initialize`), and `RULES` would then hold
    # only the families registered so far; importing waits for that thread's imports.
    from torch_lsp.diagnostics import all_rules

    return all_rules()


# -- codes and prefixes ---------------------------------------------------------------
def known_selectors() -> set[str]:
    """Every valid selector: each registered code and each of its prefixes from "TL"."""
    return {code[:end] for code in _registered_rules() for end in range(2, len(code) + 1)}


def family_prefixes() -> list[str]:
    return sorted({code[:3] for code in _registered_rules()})


def unknown_selectors(selectors: list[str]) -> list[str]:
    known = known_selectors()
    return [s for s in selectors if s not in known]


def selector_hint() -> str:
    """One sentence that tells a user what a valid code or prefix looks like."""
    families = ", ".join(family_prefixes()) or "none registered"
    return (
        f"Use a rule code such as TL301 or a prefix such as TL3 (families: {families}); "
        "`torch-lsp rules` lists every code."
    )


# -- reading a table of settings ------------------------------------------------------
def _normalized_key(key: str) -> str:
    """`extendSelect`, `extend_select` and `extend-select` are the same key."""
    parts = [re.sub(r"(?<=[a-z0-9])([A-Z])", r"-\1", part).replace("_", "-").lower() for part in key.split(".")]
    return ".".join(parts)


def _flattened(table: Mapping[str, Any]) -> Iterator[tuple[str, str, Any]]:
    """(normalized key, key as written, value); the `shapes` table is flattened."""
    for key, value in table.items():
        normalized = _normalized_key(str(key))
        if normalized in ("shapes", "probe") and isinstance(value, Mapping):
            for inner, inner_value in value.items():
                yield f"{normalized}.{_normalized_key(str(inner))}", f"{key}.{inner}", inner_value
        else:
            yield normalized, str(key), value


MAX_NAMES_SHOWN = 5
MAX_NAME_CHARS = 30


def some_of(names: list[str], quote: str) -> str:
    """A few of `names`, quoted, and how many more: a settings message stays a sentence
    however many unknown codes or keys it is about."""
    shown = [quote + (n if len(n) <= MAX_NAME_CHARS else n[:MAX_NAME_CHARS] + "…") + quote
             for n in names[:MAX_NAMES_SHOWN]]
    rest = len(names) - len(shown)
    if rest:
        return f"{', '.join(shown)} and {rest:,} more"
    return shown[0] if len(shown) == 1 else f"{', '.join(shown[:-1])} and {shown[-1]}"


def _describe(value: Any) -> str:
    kind = {bool: "a boolean", int: "a number", float: "a number", str: "a string", list: "a list"}.get(
        type(value), "a table" if isinstance(value, Mapping) else type(value).__name__
    )
    shown = repr(value)
    return f"{kind} ({shown[:40] + '…' if len(shown) > 40 else shown})"


class _TableReader:
    """Turns one table (pyproject or editor) into a selection layer and overrides,
    collecting a sentence for every part it has to drop."""

    def __init__(self, where: str) -> None:
        self.where = where
        self._errors: list[str] = []
        self.unknown_keys: list[str] = []

    @property
    def errors(self) -> list[str]:
        """Every sentence, the unknown keys in one of them."""
        if not self.unknown_keys:
            return self._errors
        one, listed = len(self.unknown_keys) == 1, some_of(self.unknown_keys, quote="`")
        return self._errors + [
            f"In {self.where}, {listed} {'is not a torch-lsp setting' if one else 'are not torch-lsp settings'}, "
            f"so {'it is' if one else 'they are'} ignored. Known settings: {', '.join(KNOWN_KEYS)}."
        ]

    def wrong_type(self, key: str, expected: str, value: Any) -> None:
        self._errors.append(
            f"In {self.where}, `{key}` must be {expected}, not {_describe(value)}; the default is used instead."
        )

    def selectors(self, key: str, value: Any) -> tuple[str, ...] | None:
        if isinstance(value, str):
            value = [part for part in value.split(",") if part.strip()]
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            self.wrong_type(key, 'a list of rule codes such as ["TL1", "TL301"]', value)
            return None
        wanted = [v.strip().upper() for v in value]
        unknown = unknown_selectors(wanted)
        if unknown:
            one, listed = len(unknown) == 1, some_of(unknown, quote='"')
            self._errors.append(
                f"In {self.where}, `{key}` lists {listed}, which "
                f"{'matches' if one else 'match'} no torch-lsp rule, so {'it is' if one else 'they are'} ignored. "
                f"{selector_hint()}"
            )
        known = known_selectors()
        valid = tuple(v for v in wanted if v in known)
        if wanted and not valid:
            return None  # `select = ["TL999"]` falls back to the default, not to "nothing"
        return valid

    def per_file_ignores(self, key: str, value: Any, root: str) -> tuple[PerFileIgnore, ...]:
        if not isinstance(value, Mapping):
            self.wrong_type(key, 'a table of glob = [codes], such as { "tests/**" = ["TL1"] }', value)
            return ()
        entries = []
        for pattern, codes in value.items():
            codes = self.selectors(f'{key}."{pattern}"', codes)
            if codes:
                entries.append(PerFileIgnore.build(str(pattern), codes, root))
        return tuple(entries)

    def severity(self, key: str, value: Any) -> dict[str, str]:
        if not isinstance(value, Mapping):
            self.wrong_type(key, 'a table of code = severity, such as { TL301 = "error" }', value)
            return {}
        overrides = {}
        for code, level in value.items():
            if not self.selectors(key, [str(code)]):
                continue
            if not isinstance(level, str) or level.strip().lower() not in SEVERITIES:
                self._errors.append(
                    f'In {self.where}, `{key}` sets {str(code).upper()} to {_describe(level)}, which is not a '
                    f"severity, so its default severity is kept. Use one of: {', '.join(SEVERITIES)}."
                )
                continue
            overrides[str(code).strip().upper()] = level.strip().lower()
        return overrides

    def boolean(self, key: str, value: Any, default: bool) -> bool:
        if isinstance(value, bool):
            return value
        self.wrong_type(key, "true or false", value)
        return default

    def number(self, key: str, value: Any, default: float, *, whole: bool = False) -> float:
        if isinstance(value, (int, float)) and not isinstance(value, bool) and value > 0 \
                and (not whole or float(value).is_integer()):
            return int(value) if whole else float(value)
        self.wrong_type(key, "a positive whole number" if whole else "a positive number", value)
        return default

    def choice(self, key: str, value: Any, choices: tuple[str, ...], default: str) -> str:
        if isinstance(value, str) and value.strip().lower() in choices:
            return value.strip().lower()
        self.wrong_type(key, "one of " + ", ".join(f'"{c}"' for c in choices), value)
        return default

    def text(self, key: str, value: Any, default: str | None) -> str | None:
        if isinstance(value, str):
            return value.strip() or None
        self.wrong_type(key, "a string", value)
        return default

    def version(self, key: str, value: Any, default: str | None) -> str | None:
        from torch_lsp.torch_version import parse_version

        if isinstance(value, str) and parse_version(value) is not None:
            return value
        self.wrong_type(key, 'a PyTorch version such as "2.4"', value)
        return default

    def editor_only(self, key: str) -> None:
        self._errors.append(
            f"In {self.where}, `{key}` is ignored: it makes torch-lsp run the project's code, so it is "
            "read only from the editor's settings or the command line (`--probe`)."
        )

    def unknown_key(self, key: str) -> None:
        self.unknown_keys.append(key)


def _apply_table(base: Settings, table: Mapping[str, Any], where: str, root: str) -> tuple[Settings, list[str]]:
    """`base` overridden by the settings in `table`, and the errors met."""
    reader = _TableReader(where)
    layer: dict[str, tuple[str, ...] | None] = {}
    per_file: tuple[PerFileIgnore, ...] = ()
    severity: dict[str, str] = {}
    inlay_hints = base.inlay_hints
    torch_version = base.torch_version
    probe_enabled, probe = base.probe_enabled, base.probe
    for key, written, value in _flattened(table):
        if value is None:  # editors send null for "not set"
            continue
        if key.startswith("probe."):
            if key in EDITOR_ONLY_KEYS and where != EDITOR_SOURCE:
                reader.editor_only(written)
            elif key == "probe.enabled":
                probe_enabled = reader.boolean(written, value, probe_enabled)
            elif key == "probe.python":
                probe = replace(probe, python=reader.text(written, value, probe.python))
            elif key == "probe.device":
                probe = replace(probe, device=reader.choice(written, value, PROBE_DEVICES, probe.device))
            elif key == "probe.timeout":
                probe = replace(probe, timeout=reader.number(written, value, probe.timeout))
            elif key == "probe.memory":
                probe = replace(probe, memory=reader.number(written, value, probe.memory, whole=True))
            else:
                reader.unknown_key(written)
            continue
        if key in ("select", "extend-select", "ignore"):
            layer[key] = reader.selectors(written, value)
        elif key == "per-file-ignores":
            per_file = reader.per_file_ignores(written, value, root)
        elif key == "severity":
            severity = reader.severity(written, value)
        elif key == "target-version":
            torch_version = reader.version(written, value, torch_version)
        elif key == "shapes.inlay-hints":
            inlay_hints = reader.boolean(written, value, base.inlay_hints)
        elif key in ("shapes", "probe"):
            reader.wrong_type(written, "a table such as { inlayHints = true }" if key == "shapes"
                              else 'a table such as { device = "meta" }', value)
        else:
            reader.unknown_key(written)
    settings = replace(
        base,
        per_file_ignores=base.per_file_ignores + per_file,
        severity={**base.severity, **severity},
        inlay_hints=inlay_hints,
        torch_version=torch_version,
        probe_enabled=probe_enabled,
        probe=probe,
        root=base.root or root,
    )
    if any(v is not None for v in layer.values()):
        settings = settings.with_selection(
            Selection(layer.get("select"), layer.get("extend-select") or (), layer.get("ignore") or ())
        )
    return settings, reader.errors


# -- pyproject.toml -------------------------------------------------------------------
@dataclass(frozen=True)
class _ProjectFile:
    has_table: bool
    settings: Settings
    errors: tuple[str, ...]


_PROJECT_FILES: dict[str, tuple[tuple[int, int], _ProjectFile]] = {}


def _toml_loads():
    try:
        import tomllib
    except ModuleNotFoundError:  # Python 3.10
        import tomli as tomllib
    return tomllib


def _read_project_file(path: str) -> _ProjectFile | None:
    """The parsed `[tool.torch-lsp]` of one pyproject.toml, cached by (path, mtime, size)."""
    try:
        stat = os.stat(path)
    except OSError:
        return None
    signature = (stat.st_mtime_ns, stat.st_size)
    cached = _PROJECT_FILES.get(path)
    if cached and cached[0] == signature:
        return cached[1]
    parsed = _parse_project_file(path)
    _PROJECT_FILES[path] = (signature, parsed)
    return parsed


def _parse_project_file(path: str) -> _ProjectFile:
    tomllib = _toml_loads()
    try:
        with open(path, "rb") as handle:
            document = tomllib.load(handle)
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as error:
        message = (
            f"{path} could not be read as TOML ({error}), so torch-lsp uses its default settings. "
            "Fix the file and run the check again."
        )
        return _ProjectFile(True, Settings(), (message,))
    tool = document.get("tool")
    table = tool.get("torch-lsp") if isinstance(tool, dict) else None
    if table is None:
        return _ProjectFile(False, Settings(), ())
    where = f"{TOOL_TABLE} of {path}"
    if not isinstance(table, dict):
        message = f"In {path}, {TOOL_TABLE} must be a table, not {_describe(table)}; the defaults are used instead."
        return _ProjectFile(True, Settings(), (message,))
    settings, errors = _apply_table(Settings(), table, where, os.path.dirname(path))
    return _ProjectFile(True, settings, tuple(errors))


def find_pyproject(path: str | os.PathLike) -> Path | None:
    """The nearest pyproject.toml at or above `path` that configures torch-lsp
    (or that cannot be read, so that its error is reported)."""
    folder = os.path.abspath(path)
    if not os.path.isdir(folder):
        folder = os.path.dirname(folder)
    while True:
        candidate = os.path.join(folder, "pyproject.toml")
        if os.path.isfile(candidate):
            project = _read_project_file(candidate)
            if project is not None and project.has_table:
                return Path(candidate)
        parent = os.path.dirname(folder)
        if parent == folder:
            return None
        folder = parent


def load_project_settings(path: str | os.PathLike) -> tuple[Settings, list[str], Path | None]:
    """Settings for a file or folder: defaults < its nearest `[tool.torch-lsp]`.

    Returns the settings, the sentences describing invalid parts (which fell back
    to their defaults), and the pyproject.toml used (None when there is none).
    """
    pyproject = find_pyproject(path)
    if pyproject is None:
        return Settings(), [], None
    project = _read_project_file(str(pyproject))
    if project is None:  # removed between the two looks
        return Settings(), [], None
    return project.settings, list(project.errors), pyproject


# -- editor settings ------------------------------------------------------------------
def merge_editor_settings(
    base: Settings, options: Any, *, root: str | os.PathLike | None = None
) -> tuple[Settings, list[str]]:
    """`base` overridden by the editor's settings (initializationOptions or the
    `torch-lsp` section of workspace/configuration).  Keys may be written like the
    pyproject (`extend-select`) or camelCase (`extendSelect`); `per-file-ignores`
    globs are relative to `root` (the workspace folder), else to the pyproject's folder.
    """
    if options is None:
        return base, []
    if not isinstance(options, Mapping):
        return base, [
            f"{EDITOR_SOURCE[0].upper()}{EDITOR_SOURCE[1:]} must be an object of settings, "
            f"not {_describe(options)}; they are ignored."
        ]
    # Editor settings belong to the workspace: their globs are relative to it.
    folder = os.fspath(root) if root is not None else (base.root or os.getcwd())
    return _apply_table(base, options, EDITOR_SOURCE, folder)
