"""Which files `torch-lsp check` reads: Python files and Jupyter notebooks (`.ipynb`)
under the paths it is given.

Directories are walked recursively in a stable (sorted) order.  A walk skips
hidden folders, virtual environments (folders holding `pyvenv.cfg` or
`conda-meta`, and the usual `venv`, `site-packages`, `__pycache__`,
`node_modules` folders) and whatever `.gitignore` files exclude.  Paths named
on the command line are always checked, even when a rule above would skip them.

`.gitignore` handling follows git's documented semantics without calling git:
nested `.gitignore` files (a deeper file wins over a shallower one), `!`
negation, directory-only patterns (`build/`), anchored patterns (`/dist`,
`docs/*.py`), `**`, `?`, `[...]`, and `.git/info/exclude`.  As in git, a file
inside an excluded folder cannot be re-included.  Inside a git work tree the
`.gitignore` files from the work-tree root down apply; outside one, those from
the walked folder down.
"""
from __future__ import annotations

import codecs
import errno
import os
import re
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterator

SKIPPED_FOLDER_NAMES = frozenset(
    {"__pycache__", "__pypackages__", "site-packages", "dist-packages", "node_modules", "venv"}
)
CHECKED_SUFFIXES = (".py", ".ipynb")
# A folder holding one of these files is an environment, whatever it is called.
ENVIRONMENT_MARKERS = ("pyvenv.cfg", "conda-meta")


# -- glob patterns -------------------------------------------------------------------
def glob_regex(pattern: str, *, braces: bool = False) -> str:
    """A regular expression (without anchors) for a `/`-separated glob pattern.

    `*` and `?` stay within one path segment, `[...]` is a character class
    (`[!...]` negated), `**` spans folders when it is a whole segment, and `\\x`
    is a literal `x`.  With `braces`, `{a,b}` matches either alternative (as in
    ruff's `per-file-ignores`; `.gitignore` has no braces).
    """
    out: list[str] = []
    i, n = 0, len(pattern)
    while i < n:
        char = pattern[i]
        if pattern.startswith("**", i):
            i = _double_star(pattern, i, out)
            continue
        if char == "*":
            out.append("[^/]*")
        elif char == "?":
            out.append("[^/]")
        elif char == "[" and pattern.find("]", i + 2) != -1:
            end = pattern.find("]", i + 2)
            out.append(_char_class(pattern[i + 1 : end]))
            i = end
        elif char == "\\" and i + 1 < n:
            i += 1
            out.append(re.escape(pattern[i]))
        elif char == "{" and braces and pattern.find("}", i) != -1:
            end = pattern.find("}", i)
            options = pattern[i + 1 : end].split(",")
            out.append("(?:" + "|".join(glob_regex(o, braces=False) for o in options) + ")")
            i = end
        else:
            out.append(re.escape(char))
        i += 1
    return "".join(out)


def _double_star(pattern: str, i: int, out: list[str]) -> int:
    """Translate the `**` at `i`; returns the index after it."""
    end = i + 2
    while end < len(pattern) and pattern[end] == "*":
        end += 1
    whole_segment = (i == 0 or pattern[i - 1] == "/") and (end == len(pattern) or pattern[end] == "/")
    if not whole_segment:
        out.append("[^/]*")  # git: other runs of asterisks are plain asterisks
        return end
    if end == len(pattern):
        out.append(".*")  # trailing `**`: everything below
        return end
    out.append("(?:.*/)?")  # `**/`: zero or more folders
    return end + 1


def _char_class(body: str) -> str:
    negated = body[:1] in ("!", "^")
    if negated:
        body = body[1:]
    escaped = "".join("\\" + c if c in "\\^[]" else c for c in body)
    return "[" + ("^" if negated else "") + escaped + "]"


# -- .gitignore ----------------------------------------------------------------------
@dataclass(frozen=True)
class IgnorePattern:
    """One line of a `.gitignore` file, relative to the folder holding it."""

    regex: re.Pattern[str]
    negated: bool
    directory_only: bool
    anchored: bool  # has a `/` before its end: matches the path from `base`, not a bare name
    base: str  # the folder of the `.gitignore`, as an absolute path string

    def matches(self, path: str, name: str, is_dir: bool) -> bool:
        if self.directory_only and not is_dir:
            return False
        if not self.anchored:
            return self.regex.fullmatch(name) is not None
        relative = path[len(self.base) :].lstrip(os.sep).replace(os.sep, "/")
        return self.regex.fullmatch(relative) is not None


def parse_gitignore(text: str, base: str) -> list[IgnorePattern]:
    """The patterns of one `.gitignore` file whose folder is `base`."""
    patterns = []
    for raw in text.splitlines():
        pattern = _strip_trailing_spaces(raw)
        if not pattern or pattern.startswith("#"):
            continue
        negated = pattern.startswith("!")
        if negated:
            pattern = pattern[1:]
        elif pattern.startswith(("\\!", "\\#")):
            pattern = pattern[1:]
        directory_only = pattern.endswith("/")
        pattern = pattern.rstrip("/")
        if not pattern:
            continue
        anchored = "/" in pattern
        pattern = pattern.lstrip("/")
        regex = re.compile(glob_regex(pattern), re.DOTALL)
        patterns.append(IgnorePattern(regex, negated, directory_only, anchored, base))
    return patterns


def _strip_trailing_spaces(line: str) -> str:
    """Trailing spaces are dropped unless escaped with a backslash (git's rule)."""
    stripped = line.rstrip(" ")
    if stripped.endswith("\\") and len(stripped) < len(line):
        return stripped[:-1] + " "
    return stripped


class GitignoreRules:
    """Reads each `.gitignore` once and answers whether a path is ignored."""

    def __init__(self) -> None:
        self._by_folder: dict[str, list[IgnorePattern]] = {}

    def patterns_in(self, folder: str) -> list[IgnorePattern]:
        if folder not in self._by_folder:
            self._by_folder[folder] = self._read(os.path.join(folder, ".gitignore"), folder)
        return self._by_folder[folder]

    def repository_excludes(self, work_tree: str) -> list[IgnorePattern]:
        key = os.path.join(work_tree, ".git", "info")
        if key not in self._by_folder:
            self._by_folder[key] = self._read(os.path.join(key, "exclude"), work_tree)
        return self._by_folder[key]

    @staticmethod
    def _read(file: str, base: str) -> list[IgnorePattern]:
        try:
            with open(file, encoding="utf-8", errors="replace") as handle:
                return parse_gitignore(handle.read(), base)
        except OSError:
            return []

    @staticmethod
    def is_ignored(chain: tuple[list[IgnorePattern], ...], path: str, is_dir: bool) -> bool:
        """Whether the patterns in `chain` (shallowest file first) ignore `path`; the
        last matching pattern decides."""
        name = os.path.basename(path)
        ignored = False
        for patterns in chain:
            for pattern in patterns:
                if pattern.matches(path, name, is_dir):
                    ignored = not pattern.negated
        return ignored


def git_work_tree(folder: str) -> str | None:
    """The root of the git work tree holding `folder`, if any."""
    current = folder
    while True:
        if os.path.exists(os.path.join(current, ".git")):
            return current
        parent = os.path.dirname(current)
        if parent == current:
            return None
        current = parent


# -- discovery -----------------------------------------------------------------------
def is_skipped_folder(entry: os.DirEntry) -> bool:
    """Hidden folders, virtual environments and caches are never walked into."""
    if entry.name.startswith(".") or entry.name in SKIPPED_FOLDER_NAMES:
        return True
    return any(os.path.exists(os.path.join(entry.path, marker)) for marker in ENVIRONMENT_MARKERS)


def python_files(paths: list[Path], unreadable_folder: Callable[[str], None] = lambda message: None) -> Iterator[Path]:
    """Every file to check under `paths`, in a stable order, each once.

    A path that is a file is yielded as is; a folder is walked.  A folder that cannot be
    listed is told to `unreadable_folder` (a sentence) and skipped; a `.py` entry whose
    kind cannot be told (a symbolic-link loop) is yielded, for its reading to say why
    it is skipped.
    """
    rules = GitignoreRules()
    seen: set[str] = set()
    for path in paths:
        candidates = _walk(path, rules, unreadable_folder) if path.is_dir() else iter([path])
        for candidate in candidates:
            key = os.path.abspath(candidate)
            if key not in seen:
                seen.add(key)
                yield candidate


def _walk(root: Path, rules: GitignoreRules, unreadable_folder: Callable[[str], None]) -> Iterator[Path]:
    absolute_root = os.path.abspath(root)
    stack = [(str(root), absolute_root, _initial_chain(absolute_root, rules))]
    while stack:
        shown, absolute, chain = stack.pop()
        folders = []
        try:
            entries = _sorted_entries(absolute)
        except OSError as error:
            unreadable_folder(f"the folder {shown} was skipped because it cannot be read "
                              f"({error.strerror or error}); check that you may list it.")
            continue
        for entry in entries:
            shown_entry = os.path.join(shown, entry.name)
            absolute_entry = os.path.join(absolute, entry.name)
            if entry.is_dir(follow_symlinks=False):
                if is_skipped_folder(entry) or rules.is_ignored(chain, absolute_entry, True):
                    continue
                folders.append((shown_entry, absolute_entry, _chain_into(chain, absolute_entry, rules)))
            elif entry.name.endswith(CHECKED_SUFFIXES) and _may_be_file(entry):
                if not rules.is_ignored(chain, absolute_entry, False):
                    yield Path(shown_entry)
        stack.extend(reversed(folders))  # depth-first, alphabetical


def _may_be_file(entry: os.DirEntry) -> bool:
    """A file, or a link whose target cannot be told (a loop: reading it says so)."""
    try:
        return entry.is_file()
    except OSError:
        return True


def _sorted_entries(folder: str) -> list[os.DirEntry]:
    with os.scandir(folder) as entries:
        return sorted(entries, key=lambda e: e.name)


def _initial_chain(root: str, rules: GitignoreRules) -> tuple[list[IgnorePattern], ...]:
    """The ignore files that apply to `root` itself: from the work-tree root down to it."""
    work_tree = git_work_tree(root)
    if work_tree is None:
        return _chain_into((), root, rules)
    chain: tuple[list[IgnorePattern], ...] = (rules.repository_excludes(work_tree),)
    relative = os.path.relpath(root, work_tree)
    folder = work_tree
    chain = _chain_into(chain, folder, rules)
    if relative != ".":
        for part in relative.split(os.sep):
            folder = os.path.join(folder, part)
            chain = _chain_into(chain, folder, rules)
    return chain


def _chain_into(chain: tuple, folder: str, rules: GitignoreRules) -> tuple:
    patterns = rules.patterns_in(folder)
    return chain + (patterns,) if patterns else chain


# -- reading -------------------------------------------------------------------------
MAX_FILE_BYTES = 5 * 1024 * 1024


class UnreadableFile(Exception):
    """A file that is skipped; the message says which, why, and what to do."""


def read_python_source(path: Path) -> str:
    """The text of a Python file, decoded as Python does (UTF-8 unless a BOM or a
    `# -*- coding: ... -*-` line says otherwise)."""
    return decode_python_source(read_checked_bytes(path, "list it in .gitignore if it is generated"), str(path))


def read_checked_bytes(path: Path, when_too_large: str) -> bytes:
    """The bytes of a file to check; `UnreadableFile` when it cannot be read or is larger
    than torch-lsp checks (the message ends with `when_too_large`, what to do then).  Only
    regular files are read: a named pipe would block, a device (`/dev/zero`) never end."""
    try:
        status = path.stat()
        if not stat.S_ISREG(status.st_mode):
            raise UnreadableFile(
                f"{path} was skipped because it is {_kind_of(status.st_mode)}, not a file; "
                "torch-lsp reads Python source files only."
            )
        size = status.st_size
        if size > MAX_FILE_BYTES:
            raise UnreadableFile(
                f"{path} was skipped because it is {size / 1_000_000:.1f} MB and torch-lsp checks files up to "
                f"{MAX_FILE_BYTES // (1024 * 1024)} MB; {when_too_large}."
            )
        with path.open("rb") as handle:
            return handle.read(MAX_FILE_BYTES + 1)  # a file that grew since: no more than the limit
    except OSError as error:
        if error.errno == errno.ELOOP:
            raise UnreadableFile(f"{path} was skipped because it is a symbolic link that leads back to itself; "
                                 "point it at a file or remove it.") from None
        raise UnreadableFile(
            f"{path} was skipped because it cannot be read ({error.strerror or error}); "
            "check that it exists and that you may read it."
        ) from None


def _kind_of(mode: int) -> str:
    kinds = ((stat.S_ISFIFO, "a named pipe"), (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
             (stat.S_ISSOCK, "a socket"), (stat.S_ISDIR, "a folder"))
    return next((name for test, name in kinds if test(mode)), "not a regular file")


# UTF-32 first: its little-endian mark starts with UTF-16's.
_WIDE_ENCODINGS = ((codecs.BOM_UTF32_LE, "UTF-32"), (codecs.BOM_UTF32_BE, "UTF-32"),
                   (codecs.BOM_UTF16_LE, "UTF-16"), (codecs.BOM_UTF16_BE, "UTF-16"))
_CODING_COMMENT = re.compile(rb"^[ \t\f]*#.*?coding[:=]", re.MULTILINE)


def decode_python_source(data: bytes, name: str) -> str:
    import io
    import tokenize

    for mark, encoding in _WIDE_ENCODINGS:
        if data.startswith(mark):
            raise UnreadableFile(f"{name} was skipped because it is saved as {encoding}; save it as UTF-8.")
    if b"\x00" in data:
        line = data[: data.index(b"\x00")].count(b"\n") + 1
        raise UnreadableFile(
            f"{name} was skipped because it contains NUL bytes (the first on line {line}), so it is not Python "
            "source: a binary file, or text saved as UTF-16 or UTF-32; save it as UTF-8 if it is source."
        )
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    except SyntaxError as error:
        if _CODING_COMMENT.search(b"\n".join(data.split(b"\n", 2)[:2])):
            raise UnreadableFile(
                f"{name} was skipped because its encoding declaration is invalid ({error}); "
                "save it as UTF-8 and remove the `coding:` comment."
            ) from None
        encoding = "utf-8"  # no declaration: its first lines are not UTF-8, said below
    try:
        return data.decode(encoding)
    except UnicodeDecodeError as error:
        line = data[: error.start].count(b"\n") + 1
        raise UnreadableFile(
            f"{name} was skipped because it is not valid {encoding.upper()} "
            f"(byte 0x{data[error.start]:02x} on line {line}); save it as UTF-8, or declare its real "
            "encoding with a `# -*- coding: <name> -*-` comment on its first line."
        ) from None
