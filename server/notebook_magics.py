"""IPython syntax in a notebook cell, masked so that the cell parses as Python.

A code cell may hold lines that are IPython's, not Python's: line magics (`%time`,
`%matplotlib inline`), shell escapes (`!pip install torch`, `files = !ls`), help
(`model?`, `?model`, `model??`), line magics without their `%`, which IPython's automagic
runs (`pip install torch`, `cd data`; only where the line is not Python) and, on its first
line, a cell magic (`%%capture`, `%%bash`).  `mask_magics` turns each such line into a Python comment by replacing one
character with `#`, so every line keeps its length and every other position in the
cell stays where it was.  Two cases keep their code: the body of a cell magic that
runs Python (`%%time`, `%%capture`, ...), and a simple statement after `%time` or
`%timeit` (`%time out = model(x)` still binds `out`; the magic's name becomes
`0;` and spaces, the same length).  Where commenting out would leave a block empty
(`elif tb:` then only `%load_ext tensorboard`), the cell's indented magics become `0#...`
instead, a statement of the same length.  The body of any other cell magic (`%%bash`,
`%%writefile`) is not Python and is masked whole.

A line counts as IPython's only where a statement starts: not inside brackets, a
string or a backslash continuation (`x = (a\\n % b)` is Python).  A masked line that
ends with a backslash continues the IPython command (`out = !python demo.py \\`), so
the lines it continues are masked with it.

A cell whose lines are all indented (code pasted from inside a block) runs in IPython,
which strips the first line's indentation from every line; where that first line is a
comment, it becomes an `if 1:` header of the same length, the cell's code its body.
"""
from __future__ import annotations

import ast
import functools
import re
from dataclasses import replace

from torch_lsp import memos
from torch_lsp.text import split_keeping_breaks

# Cell magics whose body is Python (IPython's own and the common ones that run the cell).
PYTHON_CELL_MAGICS = frozenset({"time", "timeit", "capture", "prun", "debug", "memit", "snakeviz", "profile"})
TIMED_LINE_MAGIC = re.compile(r"%(time|timeit)[ \t]+(?=[^\s-])")
ASSIGNED_MAGIC = re.compile(r"[\w.\s,()\[\]*]+=\s*[!%]")
CELL_MAGIC = re.compile(r"%%(\w+)")
# Line magics IPython runs without their `%` (automagic, on by default): `pip install torch`,
# `cd data`, `run train.py`.  Such a line is taken for IPython's only where it is not Python.
AUTOMAGICS = ("pip", "conda", "mamba", "micromamba", "uv", "cd", "pwd", "ls", "ll", "cat", "mkdir", "rmdir", "rm",
              "cp", "mv", "env", "set_env", "load_ext", "reload_ext", "matplotlib", "run", "time", "timeit",
              "who", "whos", "history", "reset", "pinfo", "psource", "writefile", "load", "tensorboard")
# The name, blanks, then what cannot go on a Python expression (`env = make(...`, `time (a,`
# are Python even where the first line alone does not parse).
_OPERATOR_CHARS = r"\s=(\[{,:;+*%<>!&|^@)\]}#"  # what may follow a name in Python (in a `[...]` class)
AUTOMAGIC = re.compile(r"(?:" + "|".join(AUTOMAGICS) + r")[ \t]+[^" + _OPERATOR_CHARS + "]")
# A line that starts with %, ! or ?, an assignment from ! or %, a ? before a line's end, or a
# line magic written without its % (`pip install`).
MAYBE_IPYTHON = re.compile(r"^[ \t]*(?:[%!?]|(?:" + "|".join(AUTOMAGICS) + r")[ \t]+\S)|=[ \t]*[!%]|\?[ \t]*(?:#.*)?$",
                           re.MULTILINE)
# A cell whose first line that is not blank is indented and only a comment (or a masked magic).
LEADING_INDENT = re.compile(r"\A(?:[ \t]*\r?\n)*([ \t]+#)")
BLOCK_HEADER = "if 1:"
# What the statement scanner stops at; everything else is skipped in one step.
_TOKEN_CHARS = re.compile(r"[\"'#()\[\]{}\\]")


@functools.lru_cache(maxsize=512)  # the server joins every cell again on each keystroke in one
def mask_magics(source: str) -> str:
    """`source` with IPython's lines masked: the same lines, each of the same length."""
    return _open_leading_indent(_masked_lines(source))


def _open_leading_indent(source: str) -> str:
    """A cell whose every line is indented (pasted code) runs in IPython, which strips the
    first line's indentation from each line.  Columns must stay, so when that first line
    is a comment it becomes an `if 1:` header of the same length and the indented lines
    its body; only for a cell that does not parse as it is and parses so."""
    match = LEADING_INDENT.match(source)
    if match is None or _parses(source):
        return source
    start = match.start(1)
    end = source.find("\n", start)
    end = len(source) if end < 0 else end
    width = len(source[start:end].rstrip("\r"))
    if width < len(BLOCK_HEADER):
        return source  # ` # x`: no room for the header
    header = BLOCK_HEADER if width == len(BLOCK_HEADER) else BLOCK_HEADER + "#"
    opened = source[:start] + header + source[start + len(header):]
    return opened if _parses(opened) else source


def _masked_lines(source: str) -> str:
    if not MAYBE_IPYTHON.search(source):
        return source  # most cells: nothing that could be IPython's
    pieces = split_keeping_breaks(source)
    lines = pieces[0::2]
    first = CELL_MAGIC.match(lines[0])
    if first is not None and first.group(1) not in PYTHON_CELL_MAGICS:
        for number in range(len(lines)):
            if lines[number].strip():
                _comment(lines, number)
    else:
        if first is not None:
            _comment(lines, 0)
        masked = _mask_line_magics(lines, start=1 if first is not None else 0)
        indented = [number for number in masked
                    if lines[number][:1] in (" ", "\t") and lines[number].lstrip()[:1] == "#"]
        if indented and not _parses("".join(_joined(pieces, lines))):
            # `elif logger == "TensorBoard":` whose body is only magics: commented out, the
            # block is empty.  Then each indented magic becomes the statement `0` and a comment.
            as_statements = list(lines)
            for number in indented:
                as_statements[number] = _as_statement(as_statements[number])
            if _parses("".join(_joined(pieces, as_statements))):
                lines = as_statements
    pieces[0::2] = lines
    return "".join(pieces)


memos.register(mask_magics.cache_clear)


def _joined(pieces: list[str], lines: list[str]) -> list[str]:
    joined = list(pieces)
    joined[0::2] = lines
    return joined


def _as_statement(commented: str) -> str:
    """`    #load_ext tensorboard` as `    0#oad_ext tensorboard`: a statement of the same length."""
    indent = len(commented) - len(commented.lstrip())
    code = commented[indent:]
    return commented[:indent] + "0" + ("#" + code[2:] if len(code) >= 2 else "")


def _mask_line_magics(lines: list[str], start: int) -> list[int]:
    """Mask IPython's lines from `start`; the numbers of the lines masked."""
    state = ScanState()
    masked = []
    continued = False  # the previous line was IPython's and ended with a backslash
    for number in range(start, len(lines)):
        line = lines[number]
        if continued:
            # IPython joins `!cmd \` and the lines it continues into one command.
            if line.strip():
                _comment(lines, number)
            continued = line.endswith("\\")
        elif state.at_statement_start and _is_ipython_line(line):
            _mask_line(lines, number)
            masked.append(number)
            continued = line.endswith("\\") and lines[number].lstrip().startswith("#")
        else:
            state.scan(line)
    return masked


def _is_ipython_line(line: str) -> bool:
    stripped = line.lstrip()
    if stripped[:1] in ("%", "!", "?"):
        return True
    if ("!" in stripped or "%" in stripped) and ASSIGNED_MAGIC.match(stripped):
        return not _parses(stripped)
    if AUTOMAGIC.match(stripped):
        return not _parses(stripped)  # `pip install x`, not `cd / path` (a division)
    if "?" not in stripped:
        return False
    code = line[: ScanState().scan(line)].rstrip()
    return code.endswith("?")


def _mask_line(lines: list[str], number: int) -> None:
    line = lines[number]
    indent = len(line) - len(line.lstrip())
    timed = TIMED_LINE_MAGIC.match(line, indent)
    if timed is not None and _is_simple_statement(line[timed.end():]):
        width = timed.end() - indent
        lines[number] = line[:indent] + "0;".ljust(width) + line[timed.end():]
    else:
        _comment(lines, number)


def _comment(lines: list[str], number: int) -> None:
    line = lines[number]
    indent = len(line) - len(line.lstrip())
    lines[number] = line[:indent] + "#" + line[indent + 1:]


def _parses(code: str) -> bool:
    try:
        ast.parse(code)
    except SyntaxError:
        return False
    return True


def _is_simple_statement(code: str) -> bool:
    try:
        body = ast.parse(code).body
    except SyntaxError:
        return False
    compound = (ast.If, ast.For, ast.While, ast.With, ast.Try, ast.FunctionDef, ast.ClassDef, ast.AsyncFor,
                ast.AsyncWith, ast.AsyncFunctionDef)
    return len(body) == 1 and not isinstance(body[0], compound)


def unmask_line(original: str, masked: str, fixed: str) -> str:
    """The fixed text of a line that was masked, with IPython's characters put back.

    A fix may rewrite the code after a mask (`0;    out = model(x)`) or re-indent the
    line; the mask itself, the first characters after the indentation, is what it
    never touches."""
    masked_code, fixed_code = masked.lstrip(), fixed.lstrip()
    original_code = original.lstrip()
    width = _mask_width(original_code, masked_code)
    if width and fixed_code[:width] == masked_code[:width]:
        return fixed[: len(fixed) - len(fixed_code)] + original_code[:width] + fixed_code[width:]
    return fixed


def _mask_width(original_code: str, masked_code: str) -> int:
    """How many leading characters the mask replaced."""
    width = 0
    for position, (was, now) in enumerate(zip(original_code, masked_code)):
        if was != now:
            width = position + 1
    return width


class ScanState:
    """Just enough of Python's tokenizer to know where statements start: open
    brackets, open triple-quoted strings and backslash continuations."""

    def __init__(self) -> None:
        self.depth = 0
        self.string: str | None = None  # the open triple quote
        self.continued = False

    @property
    def at_statement_start(self) -> bool:
        return self.depth == 0 and self.string is None and not self.continued

    def scan(self, line: str) -> int:
        """Advance over one line; returns where its comment starts (its length if none)."""
        i, n = 0, len(line)
        self.continued = False
        while i < n:
            if self.string is not None:
                i = self._in_string(line, i)
                continue
            match = _TOKEN_CHARS.search(line, i)
            if match is None:
                break
            i, char = match.start(), match.group()
            if char == "#":
                return i
            if char in "\"'":
                quote = line[i:i + 3] if line[i:i + 3] in ('"""', "'''") else char
                self.string = quote
                i += len(quote)
                continue
            if char in "([{":
                self.depth += 1
            elif char in ")]}":
                self.depth = max(0, self.depth - 1)
            elif i == n - 1:  # a backslash ending the line
                self.continued = True
            i += 1
        if self.string is not None and len(self.string) == 1:
            self.string = None  # an unterminated short string ends with its line
        return n

    def _in_string(self, line: str, i: int) -> int:
        """Past the end of the open string, or to the end of the line if it goes on."""
        quote = self.string
        while True:
            escape, end = line.find("\\", i), line.find(quote, i)
            if escape != -1 and (end == -1 or escape < end):
                if escape == len(line) - 1:
                    self.continued = True
                    return len(line)
                i = escape + 2
                continue
            if end == -1:
                return len(line)
            self.string = None
            return end + len(quote)


# Programs a notebook runs only with `!` in front (or in a `%%bash` cell): not Python names a
# line would start with, and not IPython's automagics (those run without `!`, `AUTOMAGICS`).
SHELL_COMMANDS = ("git", "wget", "curl", "unzip", "tar", "gzip", "gunzip", "zip", "unrar", "7z", "nvidia-smi",
                  "apt", "apt-get", "sudo", "python", "python3", "bash", "sh", "echo", "export", "source", "gdown",
                  "kaggle", "huggingface-cli", "torchrun", "accelerate", "deepspeed", "nvcc", "chmod", "touch",
                  "head", "tail", "du", "df", "free", "which", "make", "cmake", "pip3", "ln", "find", "grep", "sed",
                  "awk", "tensorboard", "jupyter", "nproc", "lscpu", "yes")
# The command, blanks, then what cannot go on in a Python expression (as `AUTOMAGIC`, nor `.`).
SHELL_COMMAND = re.compile(r"[ \t]*((?:" + "|".join(map(re.escape, SHELL_COMMANDS)) + r")[ \t]+"
                           + "[^" + _OPERATOR_CHARS + r".][^\r\n]*?)[ \t]*$")
SHOWN_COMMAND = 60  # characters of the command a message quotes


def told_as_shell_commands(issues: list, line_text, separator: str) -> list:
    """A notebook program's syntax errors (`SyntaxIssue`s, `line_text(n)` the program's line n,
    `separator` the line between cells), those on a shell command typed without its `!` told
    so, once per cell: IPython refuses the whole cell at its first such line, and "invalid
    syntax" on `wget https://...` does not say what to write instead."""
    told: list = []
    cell_of_first: dict[int, int] = {}  # cell -> index in `told` of its first shell command
    others: dict[int, list[int]] = {}  # cell -> lines of its other shell commands
    cell, counted_to = 0, 0
    for issue in sorted(issues, key=lambda issue: issue.line):
        while counted_to < issue.line - 1:  # cells start after each separator line
            counted_to += 1
            if line_text(counted_to).strip() == separator:
                cell += 1
        text = line_text(issue.line)
        command = SHELL_COMMAND.fullmatch(text)
        if command is None or _parses(text.strip()):
            told.append(issue)
            continue
        if cell in cell_of_first:
            others.setdefault(cell, []).append(issue.line)
            continue
        cell_of_first[cell] = len(told)
        shown = command.group(1)
        shown = shown if len(shown) <= SHOWN_COMMAND else shown[:SHOWN_COMMAND - 3] + "..."
        indent = len(text) - len(text.lstrip())
        told.append(replace(issue, col=indent, end_col=len(text.rstrip().encode("utf-8")), message=(
            f"Syntax error: this line is a shell command (`{shown.split()[0]}`), which a notebook cell runs only "
            f"with `!` in front (`!{shown}`) or in a cell that starts with `%%bash`.")))
    for cell, lines in others.items():
        first = told[cell_of_first[cell]]
        told[cell_of_first[cell]] = replace(first, message=first.message + (
            " So do the cell's other shell commands (" + ", ".join(f"line {line}" for line in lines) + ")."))
    return told
