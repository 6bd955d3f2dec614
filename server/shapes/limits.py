"""Work caps of the shape pass: one pathological file must not freeze the editor, and a
pass whose check is no longer wanted stops."""
from __future__ import annotations

from contextlib import contextmanager
from contextvars import ContextVar
from typing import Callable, Iterator

MAX_CALL_DEPTH = 12
MAX_CONTEXTS = 8  # call contexts per function and instance; more calls share its standalone run
MAX_FUNCTION_CONTEXTS = 64  # call contexts per function over all instances (the blocks of a ResNet)
MAX_UNROLL = 16
MAX_STEPS = 200_000  # statements and calls per file: a cap, so one pathological file stays responsive
MAX_TEXT = 48
# How often, in steps, a pass run under `stopping_when` asks whether its check is still wanted:
# a step takes about 16 microseconds (8,575 steps in 140 ms for a generated 2,000-line file),
# so a stale pass stops within about 4 ms; the question is a dict lookup.
STOP_CHECK_STEPS = 250


class Budget(Exception):
    """The per-file work cap was reached."""


class Superseded(BaseException):
    """The check this pass belongs to is no longer wanted (its document was edited again): the
    pass stops and leaves no result.  A BaseException, so that the pass's guard against its own
    bugs (`except Exception`, which keeps what was found) lets it through."""

    # Set when it stopped the rules of a check: that version's parse (an `incremental_parse.
    # ParsedVersion`), from which the next version parses its edit.
    parsed = None


_stop_requested: ContextVar[Callable[[], bool] | None] = ContextVar("stop_requested", default=None)
_closed: ContextVar[Callable[[], bool] | None] = ContextVar("closed", default=None)


@contextmanager
def stopping_when(stop_requested: Callable[[], bool], closed: Callable[[], bool] | None = None) -> Iterator[None]:
    """Shape passes started in this block (on this thread) raise `Superseded` soon after
    `stop_requested()` turns true: a language server stops the complete pass of a version the
    user has typed past instead of finishing it before checking the newest one.  `closed()`
    turns true only when nothing will check the document again (see `close_request`)."""
    token, closed_token = _stop_requested.set(stop_requested), _closed.set(closed)
    try:
        yield
    finally:
        _stop_requested.reset(token)
        _closed.reset(closed_token)


def close_request() -> Callable[[], bool] | None:
    """What a pass that goes on though typed past (a document's first pass in parts, whose
    parts later versions take over) asks to know whether its document was closed: then nothing
    would take them over."""
    return _closed.get()


def stop_request() -> Callable[[], bool] | None:
    """What the pass starting now asks to know whether to stop, if anything (see `stopping_when`)."""
    return _stop_requested.get()
