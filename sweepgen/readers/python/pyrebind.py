"""Statements that may rebind any module-level name of a Python config: ``from m import *`` of a
module the reader does not read, ``exec(...)``, ``globals()``/``vars()``/``locals()`` written
through, ``sys.modules[__name__]``. After one, a name bound before it may hold anything: where it is
read it is not evaluated (its own value still shows where it is bound)."""

from __future__ import annotations

import ast

_REBINDERS = frozenset(("exec", "globals", "vars", "locals"))
_NESTED = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)


def rebinds_any(stmt: ast.stmt) -> bool:
    """Does running ``stmt`` (a function or class definition runs no body) call ``exec``,
    ``globals``, ``vars`` or ``locals``, or reach ``sys.modules``?"""
    if isinstance(stmt, _NESTED):
        return False
    return any(_rebinder(node) for node in _walk(stmt))


def _walk(node: ast.AST) -> list[ast.AST]:
    """The nodes of ``node`` outside the bodies of functions, classes and lambdas it defines."""
    out: list[ast.AST] = []
    stack = [node]
    while stack:
        current = stack.pop()
        out.append(current)
        stack.extend(child for child in ast.iter_child_nodes(current) if not isinstance(child, _NESTED))
    return out


def _rebinder(node: ast.AST) -> bool:
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
        return node.func.id in _REBINDERS
    return (
        isinstance(node, ast.Attribute)
        and node.attr == "modules"
        and isinstance(node.value, ast.Name)
        and node.value.id == "sys"
    )
