"""libcst edits of one call: add or change an argument, rename the method, chain a method.

Arguments are added the way the call is laid out: on one line, `, name=value` before
the closing parenthesis; in a call with one argument per line (with or without a
trailing comma), a new line at the same indentation, keeping the trailing comma and
the line the closing parenthesis sits on.
"""
from __future__ import annotations

import libcst as cst

_NO_SPACE = cst.SimpleWhitespace("")
_BRACKETED = (cst.Name, cst.Attribute, cst.Call, cst.Subscript, cst.List, cst.Dict, cst.Set, cst.ListComp,
              cst.SetComp, cst.DictComp, cst.GeneratorExp)


def keyword_arg(name: str, value: str) -> cst.Arg:
    return cst.Arg(
        keyword=cst.Name(name),
        value=cst.parse_expression(value),
        equal=cst.AssignEqual(whitespace_before=_NO_SPACE, whitespace_after=_NO_SPACE),
    )


def add_keyword(call: cst.Call, name: str, value: str) -> cst.Call:
    """`f(a)` -> `f(a, name=value)`, following the call's layout."""
    return append_argument(call, keyword_arg(name, value))


def append_argument(call: cst.Call, new: cst.Arg) -> cst.Call:
    args = list(call.args)
    if not args:
        return call.with_changes(args=[new])
    last = args[-1]
    separator = _separator(call)
    if isinstance(last.comma, cst.Comma):
        after = last.comma.whitespace_after
        if _spans_lines(after) and _spans_lines(separator):
            # `f(\n    a,  # note\n)`: `a` keeps its comma and comment, the new argument gets
            # its own line and the line break before `)`.
            args[-1] = last.with_changes(comma=last.comma.with_changes(whitespace_after=_continued(after, separator)))
            new = new.with_changes(comma=cst.Comma(whitespace_before=_NO_SPACE, whitespace_after=_closing(after)))
        else:
            args[-1] = last.with_changes(comma=cst.Comma(whitespace_before=_NO_SPACE, whitespace_after=separator))
            new = new.with_changes(comma=last.comma)
    elif _spans_lines(last.whitespace_after_arg):
        # `f(\n    a\n)`: the line break before `)` moves after the new argument.
        after = last.whitespace_after_arg
        continued = _continued(after, separator) if _spans_lines(separator) else separator
        args[-1] = last.with_changes(
            whitespace_after_arg=_NO_SPACE,
            comma=cst.Comma(whitespace_before=_NO_SPACE, whitespace_after=continued),
        )
        new = new.with_changes(whitespace_after_arg=_closing(after))
    return call.with_changes(args=[*args, new])


def _continued(after: cst.ParenthesizedWhitespace, separator: cst.ParenthesizedWhitespace) -> cst.ParenthesizedWhitespace:
    """The end of a line (its comment kept) followed by the indentation of an argument line."""
    return after.with_changes(indent=separator.indent, last_line=separator.last_line)


def _closing(after: cst.ParenthesizedWhitespace) -> cst.ParenthesizedWhitespace:
    """A plain line break followed by the indentation the closing parenthesis had."""
    return after.with_changes(first_line=cst.TrailingWhitespace(), empty_lines=[])


def _separator(call: cst.Call):
    """The whitespace the call puts between arguments (or after its opening parenthesis)."""
    args = call.args
    if len(args) >= 2 and isinstance(args[-2].comma, cst.Comma):
        return args[-2].comma.whitespace_after
    if _spans_lines(call.whitespace_before_args):
        return call.whitespace_before_args
    return cst.SimpleWhitespace(" ")


def _spans_lines(whitespace) -> bool:
    return isinstance(whitespace, cst.ParenthesizedWhitespace)


def find_argument(call: cst.Call, position: int | None, name: str | None) -> int | None:
    """Index in `call.args` of the argument passed as `name=` or at `position`."""
    positional = 0
    for index, arg in enumerate(call.args):
        if arg.keyword is not None:
            if name is not None and arg.keyword.value == name:
                return index
        elif not arg.star:
            if position is not None and positional == position:
                return index
            positional += 1
    return None


def set_argument(call: cst.Call, position: int | None, name: str | None, value: str) -> cst.Call:
    """Replace the value passed at `position` or as `name=` (the call must pass it)."""
    index = find_argument(call, position, name)
    if index is None:
        raise ValueError("the call does not pass that argument")
    args = list(call.args)
    args[index] = args[index].with_changes(value=cst.parse_expression(value))
    return call.with_changes(args=args)


def set_keyword(call: cst.Call, name: str, value: str) -> cst.Call:
    return set_argument(call, None, name, value)


def set_or_add_keyword(call: cst.Call, position: int | None, name: str, value: str) -> cst.Call:
    if find_argument(call, position, name) is not None:
        return set_argument(call, position, name, value)
    return add_keyword(call, name, value)


def rename_method(call: cst.Call, name: str) -> cst.Call:
    return call.with_changes(func=call.func.with_changes(attr=cst.Name(name)))


def cuda_to_device(call: cst.Call, device: str) -> cst.Call:
    """`x.cuda()`, `x.cuda(0)`, `x.cuda(non_blocking=True)` -> `x.to(device, ...)`."""
    keywords = [arg for arg in call.args if arg.keyword is not None]
    first = cst.Arg(value=cst.parse_expression(device))
    if keywords:
        first = first.with_changes(comma=cst.Comma(whitespace_before=_NO_SPACE, whitespace_after=cst.SimpleWhitespace(" ")))
    return rename_method(call, "to").with_changes(args=[first, *keywords])


def chained(expr: cst.BaseExpression, *methods: str, module: cst.Module | None = None) -> cst.BaseExpression:
    """`expr.m1().m2()`, parenthesising `expr` when it is not a bracketed or dotted atom."""
    value = parenthesized(expr, module)
    for method in methods:
        value = cst.Call(func=cst.Attribute(value=value, attr=cst.Name(method)))
    return value


def parenthesized(expr: cst.BaseExpression, module: cst.Module | None = None) -> cst.BaseExpression:
    if expr.lpar:
        return expr
    # A line break inside `a\n.b` was legal only inside the brackets the expression came from.
    multiline = module is not None and any(c in module.code_for_node(expr) for c in "\r\n")
    if isinstance(expr, _BRACKETED) and not multiline:
        return expr
    return expr.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])


def stripped(expr: cst.BaseExpression) -> cst.BaseExpression:
    """The expression without the parentheses around it."""
    return expr.with_changes(lpar=[], rpar=[])
