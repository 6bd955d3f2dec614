"""torch-lsp: reviews PyTorch code while it is typed.

This folder installs as the import package `torch_lsp`.  Data flows one way:

    text --> analysis --> diagnostics, shapes --> lsp (server) / cli (command line)
                                  \\--> codeactions (edits for a finding) --/

Where things are, and where a new one goes:

- **Text and facts.**  `text.py` is the one position model (`LineIndex`: LSP line breaks,
  `ast` byte columns, client columns, character offsets).  `parsing.py` parses, recovering
  from syntax errors; `incremental_parse.py` parses an edited version by parsing again only
  the top-level statements the edit touched, sharing the others' nodes with the previous
  version, and `statement_facts.py` keeps facts of single top-level statements across
  versions that share them (`statement_walk.py`: the parents and calls of one statement's
  subtree, which the analysis walk merges).  `analysis.py` builds an `Analysis` once per document version: scopes,
  loops, calls and the facts several rules share ("which loops train", "which calls
  evaluate a model", "does this loop rebind a name"); `roles.py` says what names are
  (models, losses, optimizers, tensors); `syntax_nodes.py` holds pure AST helpers (the leaf
  module everything may import); `fact_cache.py` is the one typed cache for facts computed
  on first use (`analysis.facts`), freed with the version; `memos.py` empties the
  module-level memos (registered where they are defined) once no document is open.  A fact a second rule needs goes
  here, public and named, never into a rule module.
- **Diagnostics.**  `diagnostics/` is the rule registry (`run_rules`); one package per family
  (`training` TL1xx, `correctness` TL2xx, `memory` TL3xx, `performance` TL4xx, `shapes`
  TL5xx) and one file per rule named after its code: a new rule is
  `diagnostics/<family>/tlNNN_<name>.py` (docstring with What it does / Why is this bad /
  Example / Use instead / Fix safety, the class, its private helpers), imported by its
  family's `__init__`, with `tests/rules/fixtures/TLNNN.py` and its pinned `TLNNN.txt`.
  `checker.py` is the single core both front ends call (`check_source`).
- **Fixes.**  `codeactions/` builds edits with libcst: the machinery (`registry`, `edits`,
  `fix_all`, `locate`, `rewrite`, `names`, `imports`, `concrete`, `noqa`) and one file per
  rule that has a fix, `codeactions/fixes/tlNNN_<what_it_does>.py`, with golden
  `tests/fixes/golden/TLNNN_*.in.py` / `.out.py` pairs.  A fix reads facts from `analysis`
  and `roles`, never a rule's internals.
- **Shapes.**  `shapes/` is the static shape engine: `dims` (symbolic sizes), `values`,
  op tables in `functions/` (by family: view, reductions, matmul, factories, cat_stack,
  nn_functional, ...) and `layers/` (linear, conv_pool, norm, recurrent, attention,
  containers, losses, ...), each op registered under its literal name; the abstract
  interpreter (`interpret`, `frame`, `expressions`, `calls`); what front ends read
  (`report`, `listing`).  `shapes/probe/` runs a module on meta tensors in the user's own
  interpreter to check what the engine believes.  A new op goes into the family file of
  its table.
- **Front ends.**  `cli.py` (`check`, `shapes`, `rules`, `serve`) and `reporting.py` (text,
  JSON, SARIF, GitHub formats) never import the language server.  `lsp.py` holds the LSP
  handlers only; `startup.py` answers `initialize` (from `initialize_result.py`, plain
  JSON equal to pygls' answer) while the server imports, then hands the stream over;
  `message_framing.py` reads and cuts the client's byte stream (lenient framing that
  resynchronises), `message_stream.py` feeds it to pygls (the JSON-RPC errors pygls would
  drop, exit codes); `protocol.py`
  converts to and from lsprotocol types; `check_scheduler.py`
  runs the check pipeline (debounce, first pass, complete pass, publish, release);
  `documents.py` keeps open documents and checked versions (an analysis only for the
  newest version of recently active documents, diagnostics for the rest);
  `workspace_diagnostics.py` answers `workspace/diagnostic` for files not open, in the
  background, as diagnostics only; `check_pool.py` spreads `check` over every core;
  `settings.py` merges defaults, pyproject and editor settings; `files.py` walks folders
  for the CLI; `notebooks.py`, `notebook_magics.py`, `notebook_files.py` and
  `notebook_sync.py` turn Jupyter notebooks into one program and back (CLI and LSP
  notebook sync); `jupyter_lsp_spec.py` tells JupyterLab (jupyter-lsp) how to start the
  server.
"""

__version__ = "0.1.0"
DOCS_URL = "https://github.com/torch-lsp/torch-lsp/blob/main/docs/rules.md"
