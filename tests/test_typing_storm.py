"""What the check scheduler does while the user types faster than a check runs: the checks
of the typed-past versions stop, and the next check still starts from their work (the
server is driven in process, on its own analysis call, so that the edit can land inside a
check).  Without that, in a storm of edits right after opening, every check parsed the
whole file again and the first one after the storm ran the whole shape pass: 340 ms after
the last edit of a 2,000-line file instead of 170 (`python -m bench --only storm`)."""
from __future__ import annotations

import asyncio
import io
import json
from pathlib import Path

from pygls.io_ import StdoutWriter

from torch_lsp import checker
from torch_lsp.lsp import create_server

REPO = Path(__file__).resolve().parents[1]
SCRIPT = REPO / "examples" / "cifar10_cnn.py"


def _serving(server) -> None:
    initialize = {"jsonrpc": "2.0", "id": 0, "method": "initialize",
                  "params": {"processId": None, "rootUri": REPO.as_uri(), "capabilities": {}}}
    server.protocol.receive_body(json.dumps(initialize).encode("utf-8"))


def _typed(text: str, at: int, typed: str) -> str:
    return text[:at] + typed + text[at:]


def test_a_check_typed_past_in_its_rules_hands_its_parse_to_the_next_check(monkeypatch):
    server = create_server()
    server.protocol.set_writer(StdoutWriter(io.BytesIO()))
    scheduler = server.scheduler
    uri = SCRIPT.as_uri()
    opened = SCRIPT.read_text(encoding="utf-8")
    at = opened.index("return ", len(opened) // 2) + len("return")
    second, third = _typed(opened, at, " "), _typed(opened, at, "  ")
    run_rules = checker.run_rules_in_parts

    def typed_on_meanwhile(analysis, **options):
        server.documents.open(uri, 3, third)  # the next keystroke, while this version's rules run
        return run_rules(analysis, **options)

    async def storm():
        _serving(server)
        await asyncio.sleep(0)
        generation = server.settings.generation
        scheduler._check(server.documents.open(uri, 1, opened), generation, shapes=False)
        # The open parsed the whole file: what an edit's parse costs is not known yet, and the
        # next edit is checked at once instead of after the debounce delay.
        after_open = scheduler._unstoppable_seconds[uri]
        monkeypatch.setattr(checker, "run_rules_in_parts", typed_on_meanwhile)
        stopped = scheduler._check(server.documents.open(uri, 2, second), generation, shapes=False)
        handed_over = scheduler._typed_past.get(uri)
        monkeypatch.setattr(checker, "run_rules_in_parts", run_rules)
        checked = scheduler._check(server.documents.get(uri), generation, shapes=False)
        return after_open, stopped, handed_over, checked

    try:
        after_open, stopped, handed_over, checked = asyncio.run(storm())
    finally:
        server.shutdown()
    assert after_open == 0.0
    assert stopped is None
    assert handed_over is not None and handed_over.source == second
    # The third version was parsed as an edit of the second: their untouched statements are
    # the same objects.
    tree = checked.result.analysis.tree
    assert checked.version == 3 and tree.body[0] is handed_over.tree.body[0]
    assert scheduler._unstoppable_seconds[uri] == checked.result.analysed_in > 0.0
