"""A version the server stops serving must be freed at once by reference counting, not
left for a full garbage collection (which the server runs only when idle, so memory
grew with every keystroke), and a report someone still reads must keep working."""
from __future__ import annotations

import gc
import weakref
from pathlib import Path

import pytest

from torch_lsp.checker import check_source, collector_paused
from torch_lsp.documents import CheckCache, CheckedVersion, release_versions
from torch_lsp.shapes import infer_shapes, release_shapes

REPO = Path(__file__).resolve().parent.parent
SOURCES = (sorted((REPO / "examples").glob("*.py")) + sorted((REPO / "tests" / "shapes" / "models").glob("*.py"))
           + sorted((REPO / "tests" / "shapes" / "fixtures").glob("*.py")))


@pytest.fixture
def collector_off():
    gc.collect()
    with collector_paused():
        yield


def checked_with_shapes(path: Path):
    result = check_source(path.read_text(encoding="utf-8"), str(path))
    report = infer_shapes(result.analysis)
    report.inlay_hints()
    report.bindings  # noqa: B018 - builds the report's lazy tables, as hover and inlay hints do
    return result


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: p.name)
def test_a_released_version_is_freed_without_the_garbage_collector(path, collector_off):
    result = checked_with_shapes(path)
    analysis = weakref.ref(result.analysis)
    tree = weakref.ref(result.analysis.tree)

    assert release_shapes(result.analysis) is True
    del result

    assert analysis() is None, "the Analysis is still alive: a reference cycle holds it"
    assert tree() is None, "the syntax tree is still alive"


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: p.name)
def test_a_released_version_leaves_nothing_for_the_garbage_collector(path, collector_off):
    """Not only the analysis: every object of the check.  The server freezes each check's
    objects (`CheckScheduler._check`), so a cycle left here (a layer's origin holding its
    call site, whose environment holds the layer's output; `self.dataset = self`) would be
    kept until the next idle collection: about 2 MB per check of 2,000 lines, and the
    allocator's arenas pinned long after (226 MiB with 20 documents open, 108 without)."""
    result = checked_with_shapes(path)
    release_shapes(result.analysis)
    del result

    assert gc.collect() == 0


def test_a_report_still_being_read_is_left_intact(collector_off):
    result = checked_with_shapes(REPO / "tests" / "shapes" / "models" / "gpt_block.py")
    report = infer_shapes(result.analysis)  # a hover holding the report while the version is dropped

    assert release_shapes(result.analysis) is False
    assert report.bindings and report.inlay_hints()
    # The analysis no longer caches it: the next reader gets a report of its own.
    assert infer_shapes(result.analysis) is not report


def test_the_cache_keeps_one_analysis_per_document_and_hands_back_what_it_lightens(collector_off):
    cache = CheckCache()
    versions = [CheckedVersion(v, 0, checked_with_shapes(REPO / "examples" / "cifar10_cnn.py"), [f"d{v}"])
                for v in range(5)]
    released = []
    for checked in versions:
        released += cache.put("file:///a.py", checked)

    # Every version but the newest is released in full; the last two before it stay as diagnostics.
    assert [c.version for c in released] == [0, 1, 2, 3]
    assert cache.get("file:///a.py", 1, 0) is None and cache.get("file:///a.py", 4, 0) is versions[4]
    light = cache.get("file:///a.py", 3, 0)
    assert light.light and light.result is None and light.diagnostics == ["d3"]
    assert versions[3].result is not None, "a request still reading the full version keeps it"

    alive = [weakref.ref(c.result.analysis) for c in released]
    release_versions(released)
    del released, versions[:4]
    assert all(ref() is None for ref in alive)

    closed = cache.forget("file:///a.py")
    assert [c.version for c in closed] == [4]


def test_only_the_most_recently_active_documents_keep_their_analysis(collector_off, monkeypatch):
    path = REPO / "examples" / "cifar10_cnn.py"
    lines = len(path.read_text(encoding="utf-8").split("\n"))
    monkeypatch.setattr(CheckCache, "ANALYSED_LINES_KEPT", 2 * lines)
    cache = CheckCache()
    released = []
    for name in "abc":
        released += cache.put(f"file:///{name}.py", CheckedVersion(1, 0, checked_with_shapes(path), []))
    assert [c.light for c in (cache.latest(f"file:///{n}.py") for n in "abc")] == [True, False, False]
    assert len(released) == 1 and cache.analyses_kept() == 2

    # A hover in `a` makes it active again (once analysed again): `b` is lightened instead.
    released += cache.put("file:///a.py", CheckedVersion(1, 0, checked_with_shapes(path), []))
    assert [c.light for c in (cache.latest(f"file:///{n}.py") for n in "abc")] == [False, True, False]
    assert len(released) == 2


def test_building_quick_fixes_does_not_tie_the_version_into_a_cycle(collector_off):
    from torch_lsp.codeactions import build_fix, fix_offers_at

    result = checked_with_shapes(REPO / "examples" / "cifar10_cnn.py")
    built = 0
    for finding in result.findings:
        span = (finding.line, finding.col, finding.end_line, finding.end_col)
        titles = [offer.title for offer in fix_offers_at(result.analysis, result.findings, finding.code, span)]
        for title in titles:
            built += build_fix(result.analysis, result.findings, finding.code, span, title) is not None
    assert built, "the example should offer fixes"
    analysis = weakref.ref(result.analysis)

    release_shapes(result.analysis)
    del result

    assert analysis() is None


def test_the_server_keeps_no_future_of_a_finished_handler():
    """pygls keeps each running handler's future by message id (for `$/cancelRequest`) and
    dropped it only when answering a request: every didChange left one behind for the
    server's lifetime (one per keystroke).  After many notifications and requests, only
    what still runs may be kept."""
    import asyncio
    import io
    import json

    from pygls.io_ import StdoutWriter

    from torch_lsp.lsp import create_server

    server = create_server()
    protocol = server.protocol
    protocol.set_writer(StdoutWriter(io.BytesIO()))
    uri = "file:///workspace/model.py"
    text = "import torch\n\nx = torch.zeros(2, 3)\n"

    def send(method, params, request_id=None):
        message = {"jsonrpc": "2.0", "method": method, "params": params}
        if request_id is not None:
            message["id"] = request_id
        protocol.receive_body(json.dumps(message).encode("utf-8"))

    async def session():
        send("initialize", {"processId": None, "rootUri": None, "capabilities": {}}, request_id=0)
        send("initialized", {})
        send("textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": "python", "version": 1,
                                                       "text": text}})
        for version in range(2, 52):
            text_now = text + "y = 1\n" * (version % 2)
            send("textDocument/didChange", {"textDocument": {"uri": uri, "version": version},
                                            "contentChanges": [{"text": text_now}]})
            send("textDocument/hover", {"textDocument": {"uri": uri}, "position": {"line": 2, "character": 0}},
                 request_id=version)
            await asyncio.sleep(0)
        for _ in range(200):  # the last checks and hovers end (a safety net, never a timing)
            await asyncio.sleep(0.05)
            if all(future.done() for future in protocol._request_futures.values()):
                break
        send("textDocument/didSave", {"textDocument": {"uri": uri}})  # one more handler, after the others ended
        return len(protocol._request_futures)

    try:
        kept = asyncio.run(session())
    finally:
        server.shutdown()
    assert kept <= 1, f"{kept} handler futures kept after 100 messages"


def test_a_check_stopped_by_closing_its_document_keeps_nothing_of_it(monkeypatch):
    """The complete pass of a document closed while it ran stops (`Superseded`), and the
    parse it would hand to the next check of the document must not be kept: there is no
    next check, and each document opened and closed at once kept its whole tree and facts
    for the server's lifetime (21 such documents: 258 MB)."""
    import asyncio
    import io
    import json

    from pygls.io_ import StdoutWriter

    from torch_lsp import check_scheduler
    from torch_lsp.lsp import create_server
    from torch_lsp.shapes.limits import Superseded

    server = create_server()
    server.protocol.set_writer(StdoutWriter(io.BytesIO()))
    scheduler = server.scheduler
    path = REPO / "examples" / "cifar10_cnn.py"
    uri = path.as_uri()

    def closed_meanwhile(result, settings=None):
        # What the user does while the shape pass runs: the close handler's two steps.
        server.documents.close(uri)
        scheduler.closed(uri)
        raise Superseded()

    async def open_check_and_close():
        initialize = {"jsonrpc": "2.0", "id": 0, "method": "initialize",
                      "params": {"processId": None, "rootUri": REPO.as_uri(), "capabilities": {}}}
        server.protocol.receive_body(json.dumps(initialize).encode("utf-8"))
        await asyncio.sleep(0)
        document = server.documents.open(uri, 1, path.read_text(encoding="utf-8"))
        generation = server.settings.generation
        first_pass = scheduler._check(document, generation, shapes=False)
        monkeypatch.setattr(check_scheduler, "add_shape_findings", closed_meanwhile)
        return scheduler._check(document, generation, first_pass)

    try:
        assert asyncio.run(open_check_and_close()) is None
    finally:
        server.shutdown()
    assert uri not in scheduler._typed_past
    assert uri not in scheduler._unstoppable_seconds


def test_parts_kept_for_the_next_version_hold_no_released_analysis_and_go_with_the_document(collector_off):
    """The shape pass keeps each open document's parts for its next version
    (`torch_lsp.shapes.components`), but not the analysis they were read with: a version the
    server lightens is freed, and closing the document frees the parts."""
    from bench.generate import generate_source
    from torch_lsp.shapes.components import forget_parts, keeping_parts

    text = generate_source(600, variant=3)
    at = text.index("return ", len(text) // 2) + len("return")
    with keeping_parts("file:///kept.py"):
        first = check_source(text, "kept.py")
        infer_shapes(first.analysis)
        second = check_source(text[:at] + " " + text[at:], "kept.py", previous=first.analysis.parsed)
        report = infer_shapes(second.analysis)
    assert len(report.engine.runs) >= 4
    analyses = [weakref.ref(first.analysis), weakref.ref(second.analysis)]
    del report
    assert release_shapes(first.analysis) and release_shapes(second.analysis)
    del first, second
    assert [alive() for alive in analyses] == [None, None]
    # Garbage that is not this document's (the server threads of the tests before may still
    # be winding down) is collected first: what closing the document leaves is what counts.
    gc.collect()
    forget_parts("file:///kept.py")
    assert gc.collect() == 0


def test_a_check_stopped_after_its_shape_pass_hands_its_parts_back():
    """A document's first shape pass in parts goes on though the user types (its parts are every
    later version's); when the shape rules then stop, no result holds the report: its parts
    must be handed back at once (kept ones for the next version), not left, cycles and all, for
    a full collection (the server's scenario peaked 20 MiB higher)."""
    from bench.generate import generate_source
    from torch_lsp.checker import add_shape_findings
    from torch_lsp.shapes import shapes_if_inferred
    from torch_lsp.shapes.components import _latest, forget_parts, keeping_parts
    from torch_lsp.shapes.limits import Superseded, stopping_when

    asked = []
    with keeping_parts("file:///stopped.py"):
        first = check_source(generate_source(600, variant=5), "stopped.py", shapes=False)
        with stopping_when(lambda: asked.append(True) or len(asked) > 1), pytest.raises(Superseded):
            add_shape_findings(first)  # the first shape rule runs the pass, the next question stops
        kept = list(_latest["file:///stopped.py"].runs)
    try:
        assert shapes_if_inferred(first.analysis) is None
        assert kept and all(run.reports == 0 and run.kept and not run.released for run in kept)
    finally:
        forget_parts("file:///stopped.py")
    assert all(run.released for run in kept)


def test_a_version_typed_past_after_its_first_step_is_freed_without_the_garbage_collector(collector_off):
    """The server checks an edited version in two steps, the rules that read the shape pass
    second, and a further edit may stop it in between: what the first step ran part by part
    (`torch_lsp.rule_parts`) must not tie the version into a cycle (a part's analysis holds
    the whole file's), or every version typed past stays until an idle collection."""
    from bench.generate import generate_source
    from torch_lsp.checker import add_shape_findings
    from torch_lsp.rule_parts import forget_rule_parts
    from torch_lsp.shapes.components import forget_parts, keeping_parts

    text = generate_source(600, variant=5)
    at = text.index("return ", len(text) // 2) + len("return")
    with keeping_parts("file:///typed.py"):
        first = add_shape_findings(check_source(text, "typed.py", shapes=False))
        second = check_source(text[:at] + " " + text[at:], "typed.py", shapes=False, previous=first.analysis.parsed)
    typed_past = weakref.ref(second.analysis)
    release_shapes(first.analysis)
    del second
    try:
        assert typed_past() is None, "the version is still alive: a reference cycle holds it"
    finally:
        forget_parts("file:///typed.py")
        forget_rule_parts("file:///typed.py")


def test_comparing_expressions_leaves_nothing_for_the_garbage_collector(collector_off):
    """Rules compare receivers and tests by shape (`node_key`); `ast.dump`, which they used,
    leaves a reference cycle per call (its nested `_format` refers to itself)."""
    import ast

    from torch_lsp.syntax_nodes import node_key

    first, second, other = (ast.parse(text).body[0].value for text in ("m.load(x[1])", "m.load( x[1] )", "m.load(x[True])"))
    assert node_key(first) == node_key(second) and node_key(first) != node_key(other)
    assert gc.collect() == 0
