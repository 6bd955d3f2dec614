"""Command line: `torch-lsp serve | check | shapes | rules`.

`check` runs the same core as the language server (`torch_lsp.checker`) and only
presents its findings; it never imports the server, pygls or lsprotocol, so it
starts fast.  `serve` imports the language server only when it is asked for.
"""
from __future__ import annotations

import argparse
import os
import sys
import time
import traceback
from pathlib import Path
from typing import TextIO

from torch_lsp import __version__

EXIT_CLEAN = 0
EXIT_FINDINGS = 1
EXIT_ERROR = 2
PROGRESS_MIN_FILES = 20  # below this a progress bar only flickers
STDIN = "-"
ISSUES_URL = "https://github.com/torch-lsp/torch-lsp/issues"

CHECK_EPILOG = """\
exit status:
  0  no problems found (or --exit-zero)
  1  problems found
  2  a usage error (an unknown option, rule code or path), an internal error,
     or nothing could be checked because every file was skipped

Files that cannot be checked (not valid UTF-8, unreadable, larger than 5 MB)
are named on standard error with what to do, and skipped; the others are still
checked and decide the exit status; a notebook that is not valid JSON is named
the same way and makes the exit status 2.  Folders are walked for *.py and
*.ipynb files, skipping hidden folders, virtual environments, __pycache__ and
whatever .gitignore files exclude; files named on the command line are always
checked.  A notebook's code cells are checked as one program, in order (IPython
magics and shell lines are skipped); its problems are shown as
path:cell N:line:col, N counting every cell from 1 and the line within the cell,
and --fix rewrites only the code cells it changes.
With --fix, safe fixes are applied and the files rewritten (line endings,
indentation and encoding kept); the problems left are reported and decide the
exit status.  --diff prints the same changes as a unified diff on standard
output, writes nothing, and reports what would remain on standard error.
Standard input with --fix prints the fixed text on standard output.
Settings come from the nearest pyproject.toml with a [tool.torch-lsp] table;
--select/--extend-select/--ignore apply on top of them.  Rules that are off by
default (TL409) are turned on only by their full code, never by a prefix.
"""


class UsageError(Exception):
    """A mistake on the command line: reported as one sentence, exit status 2."""


# `reporting.FORMATS`' names (tests/test_cli.py keeps them equal): importing `reporting`
# here would load the whole checker before `serve` could answer its first request.
REPORT_FORMATS = ("text", "json", "sarif", "github")


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if getattr(args, "run", None) is None:
        parser.print_help(sys.stderr)
        return EXIT_ERROR
    try:
        return args.run(args)
    except UsageError as error:
        print(f"torch-lsp {args.command}: {error}", file=sys.stderr)
        return EXIT_ERROR
    except BrokenPipeError:
        # The reader went away (`torch-lsp check . | head`); stop quietly.
        # Output only breaks off when there was output, i.e. problems.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_FINDINGS
    except KeyboardInterrupt:
        return 130
    except Exception:  # noqa: BLE001 - the last resort: say what happened, never a bare crash
        print(
            f"torch-lsp {args.command} stopped on an internal error; please report it with the "
            f"traceback below at {ISSUES_URL}.\n{traceback.format_exc()}",
            file=sys.stderr,
        )
        return EXIT_ERROR


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="torch-lsp", description="Reviews PyTorch code: a language server and a command-line checker."
    )
    parser.add_argument("--version", action="version", version=f"torch-lsp {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")

    serve = commands.add_parser("serve", help="run the language server over stdio (for editors)")
    serve.add_argument(
        "--stdio", action="store_true", help="accepted for clients that pass it; stdio is the only transport"
    )
    serve.set_defaults(run=run_serve)

    check = commands.add_parser(
        "check",
        help="check files and folders, print the problems found",
        description="Check Python files for PyTorch mistakes and print what was found.",
        epilog=CHECK_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    check.add_argument(
        "paths", nargs="*", metavar="PATH",
        help="files, notebooks (.ipynb) or folders to check; '-' reads standard input (default: the current "
             "folder)",
    )
    check.add_argument("--format", choices=REPORT_FORMATS, default="text", help="output format (default: text)")
    add_probe_options(check)
    check.add_argument("--select", metavar="CODES", help="comma-separated codes or prefixes to check, e.g. TL1,TL301 "
                       "(replaces the configured selection)")
    check.add_argument("--extend-select", metavar="CODES", help="codes or prefixes to check in addition")
    check.add_argument("--ignore", metavar="CODES", help="codes or prefixes not to check")
    check.add_argument("--exit-zero", action="store_true",
                       help="exit with 0 even when problems are found (errors still exit with 2)")
    check.add_argument("--fix", action="store_true",
                       help="apply the safe fixes, rewrite the files, and report what remains")
    check.add_argument("--unsafe-fixes", action="store_true",
                       help="with --fix or --diff, also apply fixes that may change behaviour")
    check.add_argument("--diff", action="store_true",
                       help="print the fixes as a unified diff instead of writing them (implies --fix)")
    check.add_argument("--jobs", type=int, metavar="N",
                       help="check files in N processes at once (default: one per core; 1 checks in this process)")
    check.add_argument("--stdin-filename", metavar="NAME",
                       help="read the source from standard input and report it under NAME "
                            "(its folder's pyproject.toml applies)")
    check.set_defaults(run=run_check)

    shapes = commands.add_parser(
        "shapes", help="print the tensor shapes inferred for a file",
        description="Print the shape inferred statically for every tensor-valued name a file binds.",
    )
    shapes.add_argument("file", metavar="FILE", help="a Python file or a Jupyter notebook (.ipynb)")
    shapes.add_argument("--format", choices=["text", "json"], default="text", help="output format (default: text)")
    add_probe_options(shapes)
    shapes.set_defaults(run=run_shapes)

    rules = commands.add_parser("rules", help="list the rules, or show one rule's documentation")
    rules.add_argument("code", nargs="?", metavar="CODE", help="a rule code (TL301) or a prefix (TL3)")
    rules.add_argument("--format", choices=["text", "markdown"], default="text",
                       help="markdown prints the docs page (docs/rules.md)")
    rules.set_defaults(run=run_rules)
    return parser


# -- serve -------------------------------------------------------------------------------
def add_probe_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--probe", action="store_true",
                        help="also run each model on meta tensors in a separate process of your Python (the "
                             "shape probe), to confirm the inferred shapes; it runs the file's classes, never "
                             "its top-level side effects")
    parser.add_argument("--probe-python", metavar="PYTHON",
                        help="the interpreter the probe runs in (default: probe.python, the folder's .venv, "
                             "else this one); it needs torch")
    parser.add_argument("--probe-input", metavar="CLASS=SHAPE", action="append", default=[],
                        type=probe_input_argument,
                        help="the input shape to probe a module class with, where the file does not say it: "
                             "`Net=[B, 3, 32, 32]` (a leading name is the batch; several inputs separated by "
                             "`;`; `long [B, 16]` for token ids); repeat for several classes")


def probe_input_argument(text: str) -> tuple[str, list[dict]]:
    from torch_lsp.shapes.probe.given_inputs import InputShapeError, parse_input_shapes

    class_name, equals, shapes = text.partition("=")
    if not equals or not class_name.strip().isidentifier():
        raise argparse.ArgumentTypeError(f"`{text}` is not CLASS=SHAPE, for example `Net=[B, 3, 32, 32]`")
    try:
        return class_name.strip(), parse_input_shapes(shapes)
    except InputShapeError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


def run_serve(args: argparse.Namespace) -> int:
    from torch_lsp import startup  # only here: `check` and `rules` never load pygls

    return startup.serve_stdio()


# -- rules -------------------------------------------------------------------------------
def run_rules(args: argparse.Namespace) -> int:
    from torch_lsp import reporting
    from torch_lsp.diagnostics import all_rules

    rules = all_rules()
    if args.code is None:
        text = reporting.rules_markdown(rules) if args.format == "markdown" else reporting.rules_table(rules.values())
        sys.stdout.write(text)
        return EXIT_CLEAN
    code = args.code.strip().upper()
    if code in rules:
        rule = rules[code]
        page = reporting.rule_markdown(rule) if args.format == "markdown" else reporting.rule_page(rule)
        sys.stdout.write(page)
        return EXIT_CLEAN
    family = [rule for name, rule in rules.items() if name.startswith(code)]
    if family and len(code) >= 2:
        sys.stdout.write(reporting.rules_table(family))
        return EXIT_CLEAN
    from torch_lsp.settings import selector_hint

    raise UsageError(f'"{args.code}" is not a torch-lsp rule code or prefix. {selector_hint()}')


# -- shapes ------------------------------------------------------------------------------
def run_shapes(args: argparse.Namespace) -> int:
    from torch_lsp.analysis import analyze
    from torch_lsp.files import UnreadableFile
    from torch_lsp.notebook_files import read_checked_source
    from torch_lsp.shapes import WorkspaceResolver, infer_shapes
    from torch_lsp.shapes.listing import shapes_json, shapes_text

    path = Path(args.file)
    if not path.is_file():
        raise UsageError(f"no such file: {args.file}. Give the path of one Python file or notebook.")
    try:
        source, program = read_checked_source(path)
    except UnreadableFile as error:
        raise UsageError(str(error)) from None
    analysis = analyze(source, str(path))
    report = infer_shapes(analysis, WorkspaceResolver([os.getcwd()]))
    probed = None
    if args.probe:
        from torch_lsp.settings import load_project_settings

        settings, _, _ = load_project_settings(path.parent)
        session = probe_session(args)
        probed = session.probe(analysis, report, probe_options(args, settings), [os.getcwd(), str(path.parent)])
        session.close()
        for note in probed.notes:
            print(f"torch-lsp shapes: {note}", file=sys.stderr)
    if args.format == "json":
        text = shapes_json(analysis, report, probed, program)
    else:
        text = shapes_text(analysis, report, str(path), probed, program)
    sys.stdout.write(text)
    return EXIT_CLEAN


def probe_session(args: argparse.Namespace):
    from torch_lsp.shapes.probe.session import FixedInputs, ProbeSession

    return ProbeSession(os.getcwd(), editor_python=sys.executable, given=FixedInputs(dict(args.probe_input)))


def probe_options(args: argparse.Namespace, settings):
    """The probe's options: the pyproject's, with the interpreter from the command line."""
    from dataclasses import replace

    return replace(settings.probe, python=args.probe_python) if args.probe_python else settings.probe


# -- check -------------------------------------------------------------------------------
def run_check(args: argparse.Namespace) -> int:
    from torch_lsp.settings import Selection
    from torch_lsp.shapes import WorkspaceResolver, set_default_resolver

    # TL501 follows imported model classes (`from model import GPT`) into files beside the
    # importer and under the current folder.
    set_default_resolver(WorkspaceResolver([os.getcwd()]))

    layer = Selection(
        select=_codes_option("--select", args.select),
        extend_select=_codes_option("--extend-select", args.extend_select) or (),
        ignore=_codes_option("--ignore", args.ignore) or (),
    )
    if args.unsafe_fixes and not (args.fix or args.diff):
        raise UsageError("--unsafe-fixes only applies with --fix or --diff; add one of them.")
    if args.probe and (args.fix or args.diff):
        raise UsageError("--probe reports what the model does when run; it does not combine with --fix or --diff.")
    run = FixRun(layer, sys.stderr, args.unsafe_fixes, args.diff) if args.fix or args.diff else CheckRun(layer, sys.stderr)
    if args.probe:
        run.probe = (probe_session(args), args)
    run.jobs = args.jobs
    if _reads_stdin(args):
        run.check_stdin(args.stdin_filename)
    else:
        run.check_paths(_existing_paths(args.paths or ["."]))
    run.report_where_raised()
    from torch_lsp import reporting
    from torch_lsp.diagnostics import all_rules

    report = run.report_stream
    report.write(reporting.FORMATS[args.format](run.problems, all_rules()))
    report.flush()
    if args.format == "text":
        run.print_summary()
    if run.probe:
        run.probe[0].close()
    return run.exit_status(args.exit_zero)


def _codes_option(option: str, value: str | None) -> tuple[str, ...] | None:
    if value is None:
        return None
    from torch_lsp.settings import selector_hint, unknown_selectors

    codes = [part.strip().upper() for part in value.split(",") if part.strip()]
    unknown = unknown_selectors(codes)
    if unknown:
        listed = ", ".join(f'"{code}"' for code in unknown)
        verb = "matches" if len(unknown) == 1 else "match"
        raise UsageError(f"{option} names {listed}, which {verb} no torch-lsp rule. {selector_hint()}")
    return tuple(codes)


def _reads_stdin(args: argparse.Namespace) -> bool:
    if STDIN in args.paths:
        if len(args.paths) > 1:
            raise UsageError("'-' (standard input) cannot be mixed with other paths; check them in separate runs.")
        return True
    if args.stdin_filename is not None and args.paths:
        raise UsageError("--stdin-filename names the text read from standard input; give it with '-' or no path.")
    return args.stdin_filename is not None


def _existing_paths(paths: list[str]) -> list[Path]:
    missing = [p for p in paths if not os.path.exists(p)]
    if missing:
        listed = ", ".join(missing)
        raise UsageError(f"no such file or folder: {listed}. Check the spelling, or run from the project folder.")
    return [Path(p) for p in paths]


class CheckRun:
    """One `torch-lsp check`: checks files (on every core when there are many) and keeps
    what it found."""

    checks_in_workers = True  # False where checking a file does more than find problems

    def __init__(self, selection, messages: TextIO) -> None:
        self.selection = selection
        self.messages = messages
        self.problems: list = []
        self.checked = 0
        self.skipped = 0
        self.internal_errors = 0
        self.broken_notebooks = 0
        self.checked_files: list[str] = []  # as shown, in order
        self._settings_by_folder: dict[str, object] = {}
        self._reported_settings_errors: set[str] = set()
        self._progress: ProgressBar | None = None
        self.probe = None  # (ProbeSession, args) with --probe
        self.jobs: int | None = None  # --jobs: worker processes at most (None: one per core)

    # -- inputs ------------------------------------------------------------------------
    def check_stdin(self, stdin_filename: str | None) -> None:
        from torch_lsp.files import UnreadableFile, decode_python_source
        from torch_lsp.notebook_files import InvalidNotebook, is_notebook, parse_notebook

        shown = stdin_filename or STDIN
        data = sys.stdin.buffer.read()
        try:
            if stdin_filename is not None and is_notebook(stdin_filename):
                notebook = parse_notebook(data, shown)
                self.check_text(notebook.program.source, shown, stdin_filename, notebook)
                return
            source = decode_python_source(data, "standard input")
        except InvalidNotebook as error:
            self.broken_notebooks += 1
            self.skip(str(error))
            return
        except UnreadableFile as error:
            self.skip(str(error))
            return
        self.check_text(source, shown, stdin_filename)

    def check_paths(self, paths: list[Path]) -> None:
        from torch_lsp.files import python_files

        files = list(python_files(paths, unreadable_folder=self.skip))
        if not files:
            self.note(f"torch-lsp check: no Python files found under {', '.join(map(str, paths))}.")
            return
        if self.messages.isatty() and len(files) > PROGRESS_MIN_FILES:
            self._progress = ProgressBar(len(files), self.messages)
        if self.checks_in_workers and not self.probe:
            self.check_in_workers(files)
        else:
            self.check_one_by_one(files)
        if self._progress:
            self._progress.close()

    def check_one_by_one(self, files: list[Path]) -> None:
        from torch_lsp.files import UnreadableFile, read_python_source
        from torch_lsp.notebook_files import is_notebook

        for done, file in enumerate(files):
            if self._progress:
                self._progress.show(done, str(file))
            if is_notebook(file):
                self.check_notebook(file)
                continue
            try:
                source = read_python_source(file)
            except UnreadableFile as error:
                self.skip(str(error))
                continue
            self.check_text(source, str(file), str(file))

    def check_in_workers(self, files: list[Path]) -> None:
        """Check the files on every core (`check_pool`; in this process when they are few)."""
        from torch_lsp.check_pool import check_files, worker_count

        settings = [(file, self.settings_for(str(file))) for file in files]
        for done, outcome in enumerate(check_files(settings, worker_count(len(files), self.jobs))):
            if self._progress:
                self._progress.show(done, outcome.shown)
            if outcome.skipped is not None:
                self.broken_notebooks += outcome.broken_notebook  # never "no problems" for those
                self.skip(outcome.skipped)
            elif outcome.internal_error is not None:
                self.internal_error(outcome.shown, outcome.internal_error)
            else:
                self.add_problems(outcome.problems, outcome.shown)

    def check_notebook(self, file: Path) -> None:
        """A `.ipynb` file: its code cells checked as one program (`torch_lsp.notebooks`)."""
        from torch_lsp.files import UnreadableFile
        from torch_lsp.notebook_files import InvalidNotebook, read_notebook

        try:
            notebook = read_notebook(file)
        except InvalidNotebook as error:
            self.broken_notebooks += 1  # never "no problems" for a notebook nobody could read
            self.skip(str(error))
            return
        except UnreadableFile as error:
            self.skip(str(error))
            return
        self.check_text(notebook.program.source, str(file), str(file), notebook)

    report_stream = sys.stdout  # where the problems are reported

    def check_text(self, source: str, shown: str, path: str | None, notebook=None) -> None:
        from torch_lsp.reporting import problems_of

        try:
            result = self.result_for(source, shown, path, notebook)
            problems = problems_of(result, shown, notebook.program if notebook is not None else None)
        except Exception:  # noqa: BLE001 - one bad file must not hide the others' results
            self.internal_error(shown, traceback.format_exc())
            return
        self.add_problems(problems, shown)

    def add_problems(self, problems: list, shown: str) -> None:
        self.checked += 1
        self.checked_files.append(shown)
        self.problems.extend(problems)

    @property
    def files_with_problems(self) -> int:
        return len({problem.path for problem in self.problems})

    def report_where_raised(self) -> None:
        """An error a call proves in another checked file is reported once, at the line that
        raises (`reporting.reported_where_raised`)."""
        from torch_lsp.reporting import reported_where_raised

        self.problems = reported_where_raised(self.problems, self.checked_files)

    def internal_error(self, shown: str, trace: str) -> None:
        self.internal_errors += 1
        self.note(
            f"torch-lsp check stopped on an internal error in {shown}; the other files are still checked. "
            f"Please report it with this traceback at {ISSUES_URL}.\n{trace}"
        )

    def result_for(self, source: str, shown: str, path: str | None, notebook=None):
        """The `CheckResult` whose findings are reported for this text (a notebook's program)."""
        from torch_lsp.checker import check_source

        result = check_source(source, path, self.settings_for(path))
        return self.probed(result) if self.probe else result

    def probed(self, result):
        """`result` completed with TL502, after running the file's models in the probe."""
        from torch_lsp.checker import add_probe_findings
        from torch_lsp.shapes import infer_shapes

        session, args = self.probe
        analysis = result.analysis
        settings = self.settings_for(analysis.path)
        folders = [os.getcwd()] + ([os.path.dirname(os.path.abspath(analysis.path))] if analysis.path else [])
        report = session.probe(analysis, infer_shapes(analysis), probe_options(args, settings), folders)
        for note in report.notes:
            self.note(f"torch-lsp check: {note}")
        return add_probe_findings(result, settings)

    # -- settings ----------------------------------------------------------------------
    def settings_for(self, path: str | None):
        """Settings of the nearest pyproject.toml (one lookup per folder) plus the options;
        text from standard input without a name gets those of the current folder."""
        from torch_lsp.settings import load_project_settings

        folder = os.path.dirname(os.path.abspath(path)) if path else os.getcwd()
        if folder not in self._settings_by_folder:
            settings, errors, _ = load_project_settings(folder)
            for error in errors:
                if error not in self._reported_settings_errors:
                    self._reported_settings_errors.add(error)
                    self.note(f"torch-lsp: {error}")
            self._settings_by_folder[folder] = settings.with_selection(self.selection)
        return self._settings_by_folder[folder]

    # -- messages and result -----------------------------------------------------------
    def note(self, message: str) -> None:
        if self._progress:
            self._progress.clear()
        print(message, file=self.messages, flush=True)

    def skip(self, message: str) -> None:
        self.skipped += 1
        self.note(f"torch-lsp: {message}")

    def print_summary(self) -> None:
        files = self.checked + self.skipped
        if not files:
            return
        checked = f"{self.checked} file{'s' if self.checked != 1 else ''}"
        if not self.checked:
            summary = "Nothing was checked."
        elif self.problems:
            count = len(self.problems)
            summary = (f"Found {count} problem{'s' if count != 1 else ''} in {self.files_with_problems} "
                       f"of {checked} checked.")
        else:
            summary = f"No problems found in {checked} checked."
        if self.skipped:
            summary += f" {self.skipped} file{'s were' if self.skipped != 1 else ' was'} skipped (see above)."
        self.note(summary)

    def exit_status(self, exit_zero: bool) -> int:
        if self.internal_errors or self.broken_notebooks or (self.skipped and not self.checked):
            return EXIT_ERROR
        if self.problems and not exit_zero:
            return EXIT_FINDINGS
        return EXIT_CLEAN


class FixRun(CheckRun):
    """`check --fix` / `--diff`: fixes each file (`codeactions.fix_all`), writes it or
    prints its diff, and reports what remains."""

    checks_in_workers = False  # files are rewritten one by one

    def __init__(self, selection, messages: TextIO, unsafe: bool, diff: bool) -> None:
        super().__init__(selection, messages)
        self.unsafe = unsafe
        self.diff = diff
        self.fixed: dict[str, int] = {}
        self.files_fixed = 0
        self.unsafe_left = 0
        self._stdin_text: str | None = None
        self.report_stream = sys.stderr if diff else sys.stdout

    def check_stdin(self, stdin_filename: str | None) -> None:
        self._stdin_text = ""  # fixed text goes to standard output, so the report goes to stderr
        self.report_stream = sys.stderr
        super().check_stdin(stdin_filename)

    def result_for(self, source: str, shown: str, path: str | None, notebook=None):
        from torch_lsp.codeactions import fix_all

        result = fix_all(source, path, self.settings_for(path), unsafe=self.unsafe)
        if notebook is not None:
            return self._fixed_notebook(result, notebook, shown, path)
        self._count_fixes(result)
        if self.diff:
            sys.stdout.write(unified_diff(source, result.source, shown))
        elif self._stdin_text is not None:
            sys.stdout.write(result.source)
        elif result.changed:
            write_fixed(Path(path), result.source)
        return self._remaining(result)

    def _fixed_notebook(self, result, notebook, shown: str, path: str | None):
        """Write (or print, or diff) a notebook whose program `result` fixed: only the
        sources of the cells that changed are rewritten."""
        cells = notebook.program.cells_of(result.source) if result.changed else [c.text for c in notebook.cells]
        if cells is None:
            self.note(f"torch-lsp check: the fixes for {shown} could not be split back into its cells, so it "
                      f"was left unchanged; please report it at {ISSUES_URL}.")
            return super().result_for(notebook.program.source, shown, path)
        fixed_text = notebook.rewritten(cells)
        self._count_fixes(result)
        if self.diff:
            sys.stdout.write(unified_diff(notebook.text, fixed_text, shown))
        elif self._stdin_text is not None:
            sys.stdout.write(fixed_text)
        elif result.changed:
            write_fixed_notebook(Path(path), notebook, cells)
        return self._remaining(result)

    def _count_fixes(self, result) -> None:
        for finding in result.fixed:
            self.fixed[finding.code] = self.fixed.get(finding.code, 0) + 1
        self.files_fixed += result.changed

    def _remaining(self, result):
        from torch_lsp.codeactions import main_fix

        if not self.unsafe:
            remaining = result.remaining
            self.unsafe_left += sum(main_fix(remaining.analysis, f, unsafe=True) is not None for f in remaining.findings)
        return result.remaining

    def print_summary(self) -> None:
        count = sum(self.fixed.values())
        verb = "Would fix" if self.diff else "Fixed"
        if count:
            codes = ", ".join(f"{code} ×{n}" if n > 1 else code for code, n in sorted(self.fixed.items()))
            files = f"{self.files_fixed} file{'s' if self.files_fixed != 1 else ''}"
            self.note(f"{verb} {count} problem{'s' if count != 1 else ''} ({codes}) in {files}.")
        elif self.checked:
            self.note("No problem could be fixed automatically." if self.problems else "Nothing to fix.")
        if self.unsafe_left:
            more = self.unsafe_left
            self.note(f"{more} more problem{'s' if more != 1 else ''} can be fixed with --unsafe-fixes "
                      "(fixes that may change behaviour; review them).")
        super().print_summary()


def unified_diff(old: str, new: str, shown: str) -> str:
    """`--- a/x.py` / `+++ b/x.py` diff of one file ('' when unchanged); line endings kept."""
    import difflib

    from torch_lsp.codeactions.edits import line_pieces

    if old == new:
        return ""
    lines = difflib.unified_diff(_ended(line_pieces(old)), _ended(line_pieces(new)),
                                 fromfile=f"a/{shown}", tofile=f"b/{shown}")
    return "".join(line if line.endswith(("\n", "\r")) else line + "\n" for line in lines)


def _ended(lines: list[str]) -> list[str]:
    """Mark a last line without a line break the way `diff` does."""
    if lines and not lines[-1].endswith(("\n", "\r")):
        lines[-1] += "\n\\ No newline at end of file\n"
    return lines


def write_fixed_notebook(path: Path, notebook, cells: list[str]) -> None:
    """Rewrite a notebook with its fixed code cells, every other byte kept (`notebook_files`)."""
    import shutil

    temporary = path.with_name(f".{path.name}.torch-lsp-fix")
    temporary.write_bytes(notebook.rewritten_bytes(cells, path.read_bytes()))
    shutil.copymode(path, temporary)
    os.replace(temporary, path)


def write_fixed(path: Path, text: str) -> None:
    """Rewrite a file in its own encoding (a UTF-8 BOM kept), replacing it in one step."""
    import io
    import shutil
    import tokenize

    encoding, _ = tokenize.detect_encoding(io.BytesIO(path.read_bytes()).readline)
    temporary = path.with_name(f".{path.name}.torch-lsp-fix")
    temporary.write_bytes(text.encode(encoding))
    shutil.copymode(path, temporary)
    os.replace(temporary, path)


class ProgressBar:
    """`[#####.....] 12/40 path` on a terminal's standard error, redrawn in place."""

    WIDTH = 30

    def __init__(self, total: int, stream: TextIO) -> None:
        self.total = total
        self.stream = stream
        self._last_draw = 0.0
        self._shown = False

    def show(self, done: int, current: str) -> None:
        now = time.monotonic()
        if self._shown and now - self._last_draw < 0.05 and done + 1 < self.total:
            return  # redraw at most 20 times a second
        self._last_draw = now
        filled = self.WIDTH * done // self.total
        columns = _terminal_columns()
        line = f"[{'#' * filled}{'.' * (self.WIDTH - filled)}] {done}/{self.total} {current}"
        self.stream.write("\r\x1b[K" + line[: columns - 1])
        self.stream.flush()
        self._shown = True

    def clear(self) -> None:
        if self._shown:
            self.stream.write("\r\x1b[K")
            self.stream.flush()
            self._shown = False

    def close(self) -> None:
        self.clear()


def _terminal_columns() -> int:
    try:
        return os.get_terminal_size(sys.stderr.fileno()).columns or 80
    except (OSError, ValueError):
        return 80
