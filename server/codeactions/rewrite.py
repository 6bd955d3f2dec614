"""One fix as changes to libcst nodes, rendered group by group and diffed into text edits.

A fixer says what to change in `ast` terms (the statement, the call) and `Rewrite`
finds the libcst nodes (`concrete`), applies the changes in one bottom-up pass over
each touched group, renders only those groups, checks that each still parses, and
diffs old and new text into minimal `TextEdit`s.  Any step that cannot be done
exactly (a half-typed group, a statement sharing its line, trees that do not line up)
makes `edits()` answer None: no fix rather than a wrong one.

Two kinds of change:
- *node changes* replace one node with one node (a call gets `dim=-1`, a function a
  decorator); the surrounding block keeps its shape;
- *block changes* insert, remove, move or wrap statements of one block, by their index
  in it, so that blank lines and comments go where a person would put them: an
  inserted statement goes after the comments above its anchor (`take_comments`), a
  moved statement takes the comment lines directly above it, and the blank lines of a
  removed statement are handed to the next one.

New code comes from small templates written with four-space indents and `\\n`, and is
converted to the group's own indentation unit and line break (tabs and CRLF survive).
"""
from __future__ import annotations

import ast
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Callable, Sequence

import libcst as cst

from torch_lsp.codeactions.concrete import ParsedGroup, StatementRef, concrete_source
from torch_lsp.codeactions.edits import TextEdit, diff_edits, merge_touching, without_leading_form_feeds
from torch_lsp.parsing import BYTE_ORDER_MARK

if TYPE_CHECKING:
    from torch_lsp.analysis import Analysis


class CannotRewrite(Exception):
    """The change cannot be made exactly here; the fix is not offered."""


@dataclass
class _Insertion:
    nodes: list[cst.CSTNode]
    take_comments: bool = False


@dataclass
class _BlockChanges:
    """Changes to the children of one block (`.body` of a Module, IndentedBlock or line)."""

    original_length: int
    before: dict[int, list[_Insertion]] = field(default_factory=dict)
    after: dict[int, list[cst.CSTNode]] = field(default_factory=dict)
    removed: dict[int, int] = field(default_factory=dict)  # index -> its last leading lines that go with it
    wraps: dict[int, tuple[int, Callable[[list[cst.CSTNode]], cst.CSTNode]]] = field(default_factory=dict)
    unwrapped: set[int] = field(default_factory=set)  # compound statements replaced by their body

    def apply(self, block: cst.CSTNode) -> cst.CSTNode:
        children = list(block.body)
        if len(children) != self.original_length:
            raise CannotRewrite("a block changed shape under another change")
        result: list[cst.CSTNode] = []
        handed_down: list[cst.EmptyLine] = []
        removed_before = False
        index = 0
        while index < len(children):
            last = index
            if index in self.wraps:
                last, make = self.wraps[index]
                child = make(children[index:last + 1])
            else:
                child = children[index]
            before = list(self.before.get(index, []))
            if index in self.removed:
                handed_down += _leading(child)[: len(_leading(child)) - self.removed[index]]
                result += [node for insertion in before for node in insertion.nodes]
                result += self.after.get(last, [])
                removed_before = True
                index = last + 1
                continue
            if (handed_down or removed_before) and hasattr(child, "leading_lines"):
                lines = [*handed_down, *child.leading_lines]
                if not result:  # now first in its block: no blank lines above it
                    while lines and lines[0].comment is None:
                        lines.pop(0)
                child = child.with_changes(leading_lines=lines)
                handed_down, removed_before = [], False
            for insertion in before:
                nodes = list(insertion.nodes)
                if insertion.take_comments and nodes and _leading(child):
                    nodes[0] = nodes[0].with_changes(leading_lines=[*_leading(child), *_leading(nodes[0])])
                    child = child.with_changes(leading_lines=[])
                result += nodes
            if index in self.unwrapped:
                inner = list(child.body.body)
                if not inner or child.body.footer:
                    raise CannotRewrite("the block to unwrap is empty or ends with comments")
                inner[0] = inner[0].with_changes(leading_lines=[*_leading(child), *_leading(inner[0])])
                result += inner
            else:
                result.append(child)
            result += self.after.get(last, [])
            index = last + 1
        if isinstance(block, (cst.SimpleStatementLine, cst.SimpleStatementSuite)):
            result = _fix_semicolons(result, removed_last=self.original_length - 1 in self.removed)
        return block.with_changes(body=result)


def _leading(node: cst.CSTNode) -> list[cst.EmptyLine]:
    return list(getattr(node, "leading_lines", ()) or ())


def _fix_semicolons(smalls: list[cst.CSTNode], removed_last: bool) -> list[cst.CSTNode]:
    if smalls and removed_last:
        smalls[-1] = smalls[-1].with_changes(semicolon=cst.MaybeSentinel.DEFAULT)
    return smalls


class _Apply(cst.CSTTransformer):
    def __init__(self, node_changes: dict[int, list[Callable]], block_changes: dict[int, _BlockChanges]) -> None:
        self.node_changes = node_changes
        self.block_changes = block_changes

    def on_leave(self, original_node, updated_node):
        for change in self.node_changes.get(id(original_node), ()):
            updated_node = change(updated_node)
        blocks = self.block_changes.get(id(original_node))
        if blocks is not None:
            updated_node = blocks.apply(updated_node)
        return updated_node


class Rewrite:
    """Changes for one fix; `edits()` renders them."""

    def __init__(self, analysis: "Analysis") -> None:
        self.analysis = analysis
        self.source = concrete_source(analysis)
        self._groups: dict[int, ParsedGroup] = {}
        self._node_changes: dict[int, dict[int, list[Callable]]] = {}
        self._block_changes: dict[int, dict[int, _BlockChanges]] = {}

    # ---------------------------------------------------------------- lookups
    def ref(self, stmt: ast.stmt) -> StatementRef:
        ref = self.source.statement(stmt)
        if ref is None:
            raise CannotRewrite(f"line {stmt.lineno} is not in a part of the file that libcst parses")
        return ref

    def call(self, call: ast.Call) -> tuple[StatementRef, cst.Call]:
        found = self.source.call(call)
        if found is None:
            raise CannotRewrite(f"the call on line {call.lineno} could not be matched")
        return found

    # -------------------------------------------------------------- templates
    def statements(self, group: ParsedGroup, code: str) -> list[cst.CSTNode]:
        """Statements parsed from `code` (4-space indents, `\\n`), in the group's style."""
        module = cst.parse_module(code)
        return [_conform(statement, group) for statement in module.body]

    def expression(self, code: str) -> cst.BaseExpression:
        return cst.parse_expression(code)

    # ------------------------------------------------------------ node changes
    def change_node(self, group: ParsedGroup, node: cst.CSTNode, change: Callable[[cst.CSTNode], cst.CSTNode]) -> None:
        self._groups[group.index] = group
        self._node_changes.setdefault(group.index, {}).setdefault(id(node), []).append(change)

    def change_call(self, call: ast.Call, change: Callable[[cst.Call], cst.BaseExpression]) -> None:
        ref, node = self.call(call)
        self.change_node(ref.group, node, change)

    def change_statement(self, stmt: ast.stmt, change: Callable[[cst.CSTNode], cst.CSTNode]) -> None:
        """Replace the statement (small or compound) with one node of the same kind of place."""
        ref = self.ref(stmt)
        self.change_node(ref.group, ref.node, change)

    # ----------------------------------------------------------- block changes
    def _block(self, group: ParsedGroup, block: cst.CSTNode) -> _BlockChanges:
        self._groups[group.index] = group
        blocks = self._block_changes.setdefault(group.index, {})
        if id(block) not in blocks:
            blocks[id(block)] = _BlockChanges(len(block.body))
        return blocks[id(block)]

    def insert_before(self, stmt: ast.stmt, code: str, take_comments: bool = True) -> None:
        """New statements just before `stmt` (after the comments above it when `take_comments`)."""
        ref = self.ref(stmt)
        nodes = self.statements(ref.group, code)
        if ref.unit is not None and ref.block is not None:
            self._block(ref.group, ref.block).before.setdefault(ref.index, []).append(_Insertion(nodes, take_comments))
        else:
            _require_line(ref)
            smalls = _small_statements(nodes)
            self._block(ref.group, ref.line).before.setdefault(ref.small_index, []).append(_Insertion(smalls))

    def insert_after(self, stmt: ast.stmt, code: str) -> None:
        ref = self.ref(stmt)
        nodes = self.statements(ref.group, code)
        if ref.unit is not None and ref.block is not None:
            self._block(ref.group, ref.block).after.setdefault(ref.index, []).extend(nodes)
        else:
            _require_line(ref)
            self._block(ref.group, ref.line).after.setdefault(ref.small_index, []).extend(_small_statements(nodes))

    def insert_first(self, compound: ast.stmt, code: str) -> None:
        """New statements at the top of a compound statement's body (comments there stay put)."""
        ref = self.ref(compound)
        body = ref.node.body
        nodes = self.statements(ref.group, code)
        if isinstance(body, cst.SimpleStatementSuite):
            nodes = _small_statements(nodes)
        self._block(ref.group, body).before.setdefault(0, []).append(_Insertion(nodes))

    def remove(self, stmt: ast.stmt) -> None:
        """Delete a statement with the comment lines directly above it (they are about it)."""
        ref = self.ref(stmt)
        if ref.unit is not None and ref.block is not None:
            self._block(ref.group, ref.block).removed[ref.index] = len(_attached_comments(ref.unit))
        elif isinstance(ref.line, cst.SimpleStatementSuite) and len(ref.line.body) == 1:
            self.change_node(ref.group, ref.node, lambda node: cst.Pass())
        else:
            _require_line(ref)
            self._block(ref.group, ref.line).removed[ref.small_index] = 0

    def move(self, stmt: ast.stmt, anchor: ast.stmt, where: str) -> None:
        """Move a whole-line statement, with the comment lines directly above it, before or
        after `anchor` (which must not contain it)."""
        ref, target = self.ref(stmt), self.ref(anchor)
        if ref.unit is None or ref.block is None or target.unit is None or target.block is None:
            raise CannotRewrite("only statements on lines of their own can be moved")
        carried = _attached_comments(ref.unit)
        moved = ref.unit.with_changes(leading_lines=carried)
        self._block(ref.group, ref.block).removed[ref.index] = len(carried)
        changes = self._block(target.group, target.block)
        if where == "before":
            changes.before.setdefault(target.index, []).append(_Insertion([moved]))
        else:
            changes.after.setdefault(target.index, []).append(moved)

    def unwrap(self, stmt: ast.stmt) -> None:
        """Replace a `with` (or other compound statement with an indented body) by its body."""
        ref = self.ref(stmt)
        if ref.block is None or not isinstance(getattr(ref.node, "body", None), cst.IndentedBlock):
            raise CannotRewrite("only a statement with an indented body can be unwrapped")
        self._block(ref.group, ref.block).unwrapped.add(ref.index)

    def wrap(self, stmts: Sequence[ast.stmt], header: str) -> None:
        """Put consecutive whole-line statements of one block into `header:` (e.g. `with torch.no_grad()`)."""
        refs = [self.ref(s) for s in stmts]
        first = refs[0]
        if any(r.unit is None or r.block is not first.block for r in refs) or first.block is None:
            raise CannotRewrite("only whole-line statements of one block can be wrapped")
        indexes = [r.index for r in refs]
        if indexes != list(range(indexes[0], indexes[0] + len(indexes))):
            raise CannotRewrite("the statements to wrap are not consecutive")
        template = self.statements(first.group, f"{header}:\n    pass\n")[0]

        def make(members: list[cst.CSTNode]) -> cst.CSTNode:
            body = [members[0].with_changes(leading_lines=[]), *members[1:]]
            return template.with_changes(
                body=template.body.with_changes(body=body), leading_lines=_leading(members[0])
            )

        self._block(first.group, first.block).wraps[indexes[0]] = (indexes[-1], make)

    # ---------------------------------------------------------------- result
    def edits(self) -> list[TextEdit] | None:
        """The text edits of every change, or None when they cannot be made exactly."""
        edits: list[TextEdit] = []
        try:
            for index, group in sorted(self._groups.items()):
                transformer = _Apply(self._node_changes.get(index, {}), self._block_changes.get(index, {}))
                new_module = group.module.visit(transformer)
                new_text = new_module.code if new_module.body or new_module.header or new_module.footer else ""
                new_text = _with_what_libcst_drops(group.text, new_text)
                ast.parse(new_text.removeprefix(BYTE_ORDER_MARK))
                edits += diff_edits(group.text, new_text, group.start)
        except (CannotRewrite, SyntaxError, ValueError, TypeError, cst.CSTValidationError):
            return None
        return merge_touching(edits) or None


def build_edits(analysis: "Analysis", plan: Callable[[Rewrite], None]) -> list[TextEdit] | None:
    """Run `plan` on a fresh `Rewrite` and render it; None when any step cannot be done."""
    rewrite = Rewrite(analysis)
    try:
        plan(rewrite)
    except (CannotRewrite, cst.ParserSyntaxError):
        return None
    return rewrite.edits()


# ------------------------------------------------------------------ helpers
def _with_what_libcst_drops(old: str, new: str) -> str:
    """`new` (libcst's rendering of the group `old`) with what libcst leaves out of any
    rendering put back: a leading byte-order mark, and the final line break when it is a
    lone `\\r` (else the next line would be joined to this one).  Form feeds that start
    lines are taken out (libcst copies them onto the lines below, even between spaces of
    an indentation, where they reset the column count); `diff_edits` puts back those of
    the lines it keeps."""
    new = without_leading_form_feeds(new)
    if old.startswith(BYTE_ORDER_MARK) and new and not new.startswith(BYTE_ORDER_MARK):
        new = BYTE_ORDER_MARK + new
    if old.endswith("\r") and new and not new.endswith(("\r", "\n")):
        new += "\r"
    return new


def _require_line(ref: StatementRef) -> None:
    if ref.line is None:
        raise CannotRewrite("an `elif` cannot have statements put around it")


def _small_statements(nodes: list[cst.CSTNode]) -> list[cst.CSTNode]:
    smalls = []
    for node in nodes:
        if not isinstance(node, cst.SimpleStatementLine):
            raise CannotRewrite("a compound statement cannot join a one-line suite")
        smalls += [small.with_changes(semicolon=cst.MaybeSentinel.DEFAULT) for small in node.body]
    return smalls


def _attached_comments(unit: cst.CSTNode) -> list[cst.EmptyLine]:
    """The comment lines directly above a statement (after the last blank line)."""
    lines = _leading(unit)
    carried: list[cst.EmptyLine] = []
    for line in reversed(lines):
        if line.comment is None:
            break
        carried.insert(0, line)
    return carried


class _Conform(cst.CSTTransformer):
    """Template code in the group's style: its indentation unit and line break."""

    def __init__(self, group: ParsedGroup) -> None:
        self.indent = None if group.indent == group.module.default_indent else group.indent
        self.newline = None if group.newline == group.module.default_newline else group.newline

    def leave_IndentedBlock(self, original_node, updated_node):
        return updated_node.with_changes(indent=self.indent) if updated_node.indent is None else updated_node

    def leave_Newline(self, original_node, updated_node):
        return updated_node.with_changes(value=self.newline) if updated_node.value is None else updated_node


def _conform(node: cst.CSTNode, group: ParsedGroup) -> cst.CSTNode:
    return node.visit(_Conform(group))
