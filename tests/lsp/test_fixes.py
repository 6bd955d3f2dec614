"""Rule fixes as code actions, applied the way a client applies them.

VS Code and Neovim declare `codeAction/resolve`: fixes arrive without edits and are
resolved when picked.  The Emacs profile does not: fixes arrive with their edits.
"""
from __future__ import annotations

import pytest
from lsprotocol import types as lsp

from tests.lsp.lsp_session import PROFILES, session

pytestmark = pytest.mark.asyncio(loop_scope="module")

EVALUATE = """import torch


def evaluate(model, loader):
    model.eval()
    total = 0
    for x, y in loader:
        # batches are small
        out = model(x)
        total += (out.argmax(-1) == y).sum().item()
    return total
"""

EVALUATE_FIXED = """import torch


def evaluate(model, loader):
    model.eval()
    total = 0
    with torch.no_grad():
        for x, y in loader:
            # batches are small
            out = model(x)
            total += (out.argmax(-1) == y).sum().item()
    return total
"""

TRAIN = """import torch
import torch.nn.functional as F


def train(model, loader, optimizer):
    losses = []
    for x, y in loader:
        optimizer.zero_grad()
        loss = F.mse_loss(model(x), y)
        loss.backward()
        optimizer.step()
        losses.append(loss)
    return losses
"""


async def resolved(editor, action: lsp.CodeAction) -> lsp.CodeAction:
    if action.edit is None:
        action = await editor.client.code_action_resolve_async(action)
    assert action.edit is not None, action
    return action


def by_title(actions, title: str) -> lsp.CodeAction:
    matching = [a for a in actions if a.title == title]
    assert matching, [a.title for a in actions]
    return matching[0]


@pytest.mark.parametrize("profile", PROFILES + ["emacs"])
async def test_wrap_evaluation_loop_in_no_grad(profile, tmp_path):
    async with session(profile, tmp_path) as editor:
        document = editor.open("evaluate.py", EVALUATE)
        (diagnostic,) = [d for d in await editor.diagnostics(document) if d.code == "TL302"]
        actions = await editor.code_actions(document, diagnostic.range, [diagnostic])
        # The whole function evaluates: decorating it is the preferred fix, wrapping the loop the other.
        decorate = by_title(actions, "Decorate `evaluate()` with `@torch.no_grad()`")
        assert decorate.kind == lsp.CodeActionKind.QuickFix and decorate.is_preferred
        assert editor.applied(document, await resolved(editor, decorate)) == EVALUATE.replace(
            "\ndef evaluate", "\n@torch.no_grad()\ndef evaluate")
        fix = by_title(actions, "Wrap evaluation loop in `torch.no_grad()`")
        assert fix.kind == lsp.CodeActionKind.QuickFix and not fix.is_preferred
        assert (fix.edit is None) == (profile != "emacs")  # lazily built where the client resolves
        quickfixes = [a.title for a in actions if a.kind == lsp.CodeActionKind.QuickFix]
        assert quickfixes[-1] == "Disable TL302 for this line"  # rule fixes first
        fixed = editor.applied(document, await resolved(editor, fix))
        assert fixed == EVALUATE_FIXED
        editor.change(document, fixed)
        assert [d.code for d in await editor.diagnostics(document)] == []


@pytest.mark.parametrize("profile", PROFILES)
async def test_detach_append_and_explicit_item_alternative(profile, tmp_path):
    async with session(profile, tmp_path) as editor:
        document = editor.open("train.py", TRAIN)
        (diagnostic,) = [d for d in await editor.diagnostics(document) if d.code == "TL301"]
        diagnostic.data = None  # clients may drop it: the fix is recomputed from the range
        actions = await editor.code_actions(document, diagnostic.range, [diagnostic])
        titles = [a.title for a in actions]
        assert titles[0] == "Detach `loss` before appending"
        detach = await resolved(editor, actions[0])
        assert editor.applied(document, detach) == TRAIN.replace("losses.append(loss)", "losses.append(loss.detach())")
        item = await resolved(editor, by_title(actions, "Append `loss.item()` instead"))
        assert editor.applied(document, item) == TRAIN.replace("losses.append(loss)", "losses.append(loss.item())")


@pytest.mark.parametrize("profile", PROFILES + ["emacs"])
async def test_fix_all_applies_every_safe_fix(profile, tmp_path):
    # The caller builds a torch.optim optimizer: `zero_grad` is known to exist, so that fix is safe.
    caller = ("\n\ndef main(model, loader):\n    optimizer = torch.optim.SGD(model.parameters())\n"
              "    for epoch in range(3):\n        train(model, loader, optimizer)\n        evaluate(model, loader)\n")
    text = TRAIN.replace("        optimizer.zero_grad()\n", "") + caller + "\n\n" + EVALUATE.split("\n", 2)[2]
    async with session(profile, tmp_path) as editor:
        document = editor.open("both.py", text)
        codes = sorted(d.code for d in await editor.diagnostics(document))
        assert codes == ["TL101", "TL102", "TL301", "TL302"]
        start = lsp.Position(line=0, character=0)
        actions = await editor.code_actions(document, lsp.Range(start=start, end=start), [],
                                            only=["source.fixAll.torch-lsp"])
        (fix_all,) = actions
        assert fix_all.kind == "source.fixAll.torch-lsp" and fix_all.edit is not None
        fixed = editor.applied(document, fix_all)
        assert "optimizer.zero_grad(set_to_none=True)" in fixed and "model.train()" in fixed
        assert "losses.append(loss.detach())" in fixed and "@torch.no_grad()\ndef evaluate" in fixed
        editor.change(document, fixed)
        assert await editor.diagnostics(document) == []
        # Nothing left to fix: no fix-all action.
        assert not await editor.code_actions(document, lsp.Range(start=start, end=start), [],
                                             only=["source.fixAll.torch-lsp"])


async def test_quickfix_filter_excludes_fix_all_and_stale_resolve_is_harmless(tmp_path):
    async with session("visual-studio-code", tmp_path) as editor:
        document = editor.open("stale.py", EVALUATE)
        (diagnostic,) = await editor.diagnostics(document)
        actions = await editor.code_actions(document, diagnostic.range, [diagnostic], only=["quickfix"])
        assert all(a.kind == lsp.CodeActionKind.QuickFix for a in actions)
        fix = by_title(actions, "Wrap evaluation loop in `torch.no_grad()`")
        editor.change(document, EVALUATE + "\n")  # the document moves on before the user picks
        assert (await editor.client.code_action_resolve_async(fix)).edit is None
