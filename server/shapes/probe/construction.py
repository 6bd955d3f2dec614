"""How the file builds a module class, as one expression the probe can evaluate.

`GPT()` needs nothing; `GPT(config)` needs `config`.  The probe never runs the file's
top-level or `main()` code, so the arguments are rebuilt from the source: a literal, a
name the probed program keeps (a module-level constant or `config = GPTConfig(...)`, see
`program.candidate_statements`), or a name assigned exactly once in the function that
builds the model, inlined (`GPT(GPTConfig(n_layer=2, n_embd=64))`).  Every call left in
the expression must be to a class or function of the file or a known pure constructor,
so building the model runs only the code the user's own construction would.

Anything less certain (`GPT(args.n_layer)`, a config changed after it is built, two
different constructions) gives None: the probe would not be running what the user runs.
"""
from __future__ import annotations

import ast
import copy

from torch_lsp.shapes.probe.program import BUILTIN_NAMES, candidate_statements, is_pure_value

MAX_INLINING_DEPTH = 3
MAX_EXPRESSION_CHARS = 400


def construction_expression(class_name: str, analysis) -> str | None:
    """The one expression that builds `class_name` the way the file does, or None."""
    sites = [call for call in analysis.calls
             if isinstance(call.func, ast.Name) and call.func.id == class_name]
    if not sites:
        return None
    tree = analysis.tree
    kept_names = set(candidate_statements(tree))
    definitions = {s.name for s in tree.body if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))}
    mutated = names_mutated_after_binding(tree)
    rendered = set()
    for call in sites:
        expression = Inliner(analysis, call, kept_names, definitions, mutated).rebuild(call)
        if expression is None:
            return None
        rendered.add(ast.unparse(expression))
    if len(rendered) != 1:
        return None
    text = rendered.pop()
    return text if len(text) <= MAX_EXPRESSION_CHARS else None


def names_mutated_after_binding(tree: ast.Module) -> set[str]:
    """Names whose object the file changes in place (`config.vocab_size = 50304`,
    `config.update(...)` is not seen, so a method call on the name also counts)."""
    mutated: set[str] = set()
    for node in ast.walk(tree):
        targets = node.targets if isinstance(node, ast.Assign) else (
            [node.target] if isinstance(node, (ast.AugAssign, ast.AnnAssign)) else [])
        for target in targets:
            root = target
            while isinstance(root, (ast.Attribute, ast.Subscript)):
                root = root.value
            if root is not target and isinstance(root, ast.Name):
                mutated.add(root.id)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and isinstance(node.func.value, ast.Name):
            mutated.add(node.func.value.id)
    return mutated


class Inliner:
    """Rebuilds one construction call with its local names replaced by their values."""

    def __init__(self, analysis, site: ast.Call, kept_names: set[str], definitions: set[str], mutated: set[str]):
        self.analysis = analysis
        self.function = analysis.context(site).function
        self.kept_names = kept_names
        self.definitions = definitions
        self.mutated = mutated

    def rebuild(self, call: ast.Call) -> ast.expr | None:
        if any(isinstance(a, ast.Starred) for a in call.args) or any(k.arg is None for k in call.keywords):
            return None
        return self.inline(copy.deepcopy(call), depth=0)

    def inline(self, node: ast.expr, depth: int) -> ast.expr | None:
        if not is_pure_value(node, self.definitions):
            return None
        for name in [n for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)]:
            if name.id in self.definitions or name.id in BUILTIN_NAMES:
                continue
            if name.id in self.mutated:
                return None
            if self.function.is_module:
                if name.id not in self.kept_names:
                    return None
                continue
            value = self.single_local_value(name.id)
            if value is None:
                if name.id in self.kept_names and not self.bound_locally(name.id):
                    continue  # a module-level name the probed program keeps
                return None
            if depth >= MAX_INLINING_DEPTH:
                return None
            replacement = self.inline(copy.deepcopy(value), depth + 1)
            if replacement is None:
                return None
            node = replace_name(node, name, replacement)
        return node

    def single_local_value(self, name: str) -> ast.expr | None:
        values = [stmt.value for stmt in self.function.statements
                  if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1
                  and isinstance(stmt.targets[0], ast.Name) and stmt.targets[0].id == name]
        return values[0] if len(values) == 1 and not self.rebound_otherwise(name) else None

    def bound_locally(self, name: str) -> bool:
        function = self.function.node
        arguments = function.args
        parameters = {a.arg for a in arguments.posonlyargs + arguments.args + arguments.kwonlyargs}
        parameters |= {a.arg for a in (arguments.vararg, arguments.kwarg) if a is not None}
        return name in parameters or any(
            isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store) and n.id == name
            for stmt in self.function.statements for n in ast.walk(stmt))

    def rebound_otherwise(self, name: str) -> bool:
        """Bound by something other than one plain assignment: a loop, `with`, a parameter, ..."""
        function = self.function.node
        arguments = function.args
        if name in {a.arg for a in arguments.posonlyargs + arguments.args + arguments.kwonlyargs}:
            return True
        stores = [n for stmt in self.function.statements for n in ast.walk(stmt)
                  if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store) and n.id == name]
        return len(stores) != 1


def replace_name(tree: ast.expr, target: ast.Name, replacement: ast.expr) -> ast.expr:
    if tree is target:
        return replacement
    for parent in ast.walk(tree):
        for field_name, value in ast.iter_fields(parent):
            if value is target:
                setattr(parent, field_name, replacement)
            elif isinstance(value, list):
                for index, item in enumerate(value):
                    if item is target:
                        value[index] = replacement
    return tree
