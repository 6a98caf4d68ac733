"""Read a Python config file as data through ``ast``: it is parsed, never imported or executed.

Config files in the mmdetection / Flink style are programs whose meaning is mostly literal: module
assignments of nested ``dict(...)`` calls, call trees such as ``Sweep(config=Config(...))``, class
bodies of fields. This module turns such a file into a plain mapping so ``diff`` can compare two of
them. The rule that governs every choice here: no difference between two files may be silently
lost. What cannot be represented as data becomes ``{"expr": "<normalised source>"}``, so a change
in it still shows up as a changed string.

The mapping, in short:

* module-level ``name = value`` becomes ``{name: value}`` (the last assignment wins, as in Python);
  ``import x`` / ``from x import y as z`` bind names too and become ``Ref`` values ("x", "x.y");
* ``Call`` becomes ``{"call": dotted_name, "args": [...], "kwargs": {...}}``, except ``dict(k=v)``
  with keyword arguments only, which is a plain mapping (mmdetection writes dict literals that way);
* names and attributes (``torch.bfloat16``) become ``Ref("torch.bfloat16")``: a ``str`` subclass,
  so it prints as the dotted string but never compares type-equal to the string "torch.bfloat16";
* ``class C(Base): ...`` becomes a mapping of its body, with ``__bases__`` / ``__decorators__``
  when present; annotations go to ``__annotations__`` as Python keeps them;
* the module docstring is ``__doc__``; statements that bind nothing (``if``, ``for``, bare calls)
  are kept in order as ``{"expr": source}`` under ``__statements__``. ``import a.b`` binds ``a``
  and records the module ``a.b`` in order under ``__imports__``.
"""

from __future__ import annotations

import ast
import copy
from pathlib import Path
from typing import Any

from sweepgen.errors import ConfigError, Location

_UNBOUND = object()


class Ref(str):
    """A reference to a Python name or dotted attribute (``torch.bfloat16``), not a string literal."""

    __slots__ = ()

    def __repr__(self) -> str:
        return str(self)


def load_python_config(path: str | Path, *, resolve_names: bool = False) -> dict[str, Any]:
    """Parse the file at ``path`` into a mapping; a syntax error is a ``ConfigError`` with its place."""
    path = Path(path)
    try:
        source = path.read_bytes()
    except OSError as err:
        raise ConfigError(f"cannot read Python config: {err.strerror}", location=Location(str(path))) from err
    return parse_python_config(source, str(path), resolve_names=resolve_names)


def parse_python_config(
    source: str | bytes, filename: str = "<string>", *, resolve_names: bool = False
) -> dict[str, Any]:
    """Parse Python ``source`` (str, or bytes honouring a coding cookie) into a mapping.

    With ``resolve_names``, a bare name that an earlier statement of the file bound to data is
    replaced by a copy of that data, as running the file would (mmengine evaluates configs so:
    ``type=dataset_type`` becomes ``type='CocoDataset'``). Names bound by imports, or not bound in
    the file, stay ``Ref``s.
    """
    try:
        tree = ast.parse(source, filename=filename)
    except SyntaxError as err:
        raise ConfigError(
            f"invalid Python syntax: {err.msg}",
            location=Location(filename, err.lineno or 0, err.offset or 0),
            hint="the file is parsed, never run; fix the syntax so that `python -m py_compile` accepts it",
        ) from err
    except (ValueError, RecursionError) as err:  # null bytes, absurd nesting
        raise ConfigError(f"cannot parse Python config: {err}", location=Location(filename)) from err
    try:
        return _Reader(filename, resolve_names).body(tree.body)
    except RecursionError as err:
        raise ConfigError("Python config is nested too deeply to read", location=Location(filename)) from err


class _Reader:
    """Turns statements and expressions into data; ``filename`` only serves error locations."""

    def __init__(self, filename: str, resolve_names: bool = False) -> None:
        self.filename = filename
        self.resolve_names = resolve_names
        self.scopes: list[dict[str, Any]] = []  # module scope, then enclosing class bodies

    # statements ---------------------------------------------------------------------------------

    def body(self, statements: list[ast.stmt]) -> dict[str, Any]:
        scope: dict[str, Any] = {}
        rest: list[Any] = []
        self.scopes.append(scope)
        try:
            self._statements(statements, scope, rest)
        finally:
            self.scopes.pop()
        if rest:
            scope["__statements__"] = rest
        return scope

    def _statements(self, statements: list[ast.stmt], scope: dict[str, Any], rest: list[Any]) -> None:
        for index, stmt in enumerate(statements):
            if index == 0 and _is_docstring(stmt):
                scope["__doc__"] = stmt.value.value  # type: ignore[attr-defined]
            elif isinstance(stmt, ast.Assign):
                value = self.value(stmt.value)
                for target in stmt.targets:
                    self.bind(scope, target, value, stmt.value)
            elif isinstance(stmt, ast.AnnAssign):
                scope.setdefault("__annotations__", {})[_source(stmt.target)] = self.value(stmt.annotation)
                if stmt.value is not None:
                    self.bind(scope, stmt.target, self.value(stmt.value), stmt.value)
            elif isinstance(stmt, ast.AugAssign):
                # `x += 1`: keep what x was and what was added, never a folded guess.
                name = _source(stmt.target)
                scope[name] = {
                    "augassign": _OPS.get(type(stmt.op), type(stmt.op).__name__),
                    "target": scope.get(name, {"expr": name}),
                    "value": self.value(stmt.value),
                }
            elif isinstance(stmt, ast.Import):
                for alias in stmt.names:
                    bound = alias.asname or alias.name.split(".")[0]
                    scope[bound] = Ref(alias.name if alias.asname else bound)
                    if not alias.asname and "." in alias.name:
                        # `import torch.nn` binds only `torch`: keep the full module so that
                        # `import torch.nn` and `import torch.optim` differ
                        scope.setdefault("__imports__", []).append(Ref(alias.name))
            elif isinstance(stmt, ast.ImportFrom):
                module = "." * stmt.level + (stmt.module or "")
                for alias in stmt.names:
                    sep = "" if module.endswith(".") else "."
                    if alias.name == "*":
                        rest.append({"expr": _source(stmt)})
                    else:
                        scope[alias.asname or alias.name] = Ref(f"{module}{sep}{alias.name}")
            elif isinstance(stmt, ast.ClassDef):
                scope[stmt.name] = self.class_body(stmt)
            elif isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
                scope[stmt.name] = {"expr": _source(stmt)}
            elif isinstance(stmt, ast.Delete):
                for target in stmt.targets:  # `del tmp` unbinds, as running the file would
                    self.unbind(scope, target, rest)
            else:
                rest.append({"expr": _source(stmt)})

    def class_body(self, node: ast.ClassDef) -> dict[str, Any]:
        mapping = self.body(node.body)
        if node.bases:
            mapping["__bases__"] = [self.value(base) for base in node.bases]
        if node.keywords:
            mapping["__keywords__"] = self.keywords(node.keywords, node)
        if node.decorator_list:
            mapping["__decorators__"] = [self.value(dec) for dec in node.decorator_list]
        return mapping

    def bind(self, scope: dict[str, Any], target: ast.expr, value: Any, value_node: ast.expr) -> None:
        """Assign ``value`` to ``target`` in ``scope`` the way Python would, where it is literal."""
        if isinstance(target, ast.Name):
            scope[target.id] = value
            return
        if isinstance(target, (ast.Tuple, ast.List)) and isinstance(value_node, (ast.Tuple, ast.List)):
            if len(target.elts) == len(value_node.elts) and not any(
                isinstance(e, ast.Starred) for e in (*target.elts, *value_node.elts)
            ):
                for sub_target, sub_node in zip(target.elts, value_node.elts):
                    self.bind(scope, sub_target, self.value(sub_node), sub_node)
                return
        container, key = self._nested_slot(scope, target)
        if container is not None:
            container[key] = value
        else:
            # `a, b = f()` or `obj.x = 1` on something that is not a literal mapping: keep the
            # target's source text as the key so the assignment is never dropped.
            scope[_source(target)] = value

    def unbind(self, scope: dict[str, Any], target: ast.expr, rest: list[Any]) -> None:
        if isinstance(target, ast.Name) and target.id in scope:
            del scope[target.id]
            return
        container, key = self._nested_slot(scope, target)
        if container is not None and key in container:
            del container[key]
        else:  # deleting something we do not hold as data: keep the statement
            rest.append({"expr": f"del {_source(target)}"})

    def _nested_slot(self, scope: dict[str, Any], target: ast.expr) -> tuple[dict | None, Any]:
        """For ``a.b.c`` or ``a["b"]["c"]`` naming a plain mapping in scope: (that mapping, key)."""
        if isinstance(target, ast.Attribute):
            parent, key = target.value, target.attr
        elif isinstance(target, ast.Subscript) and isinstance(target.slice, ast.Constant):
            parent, key = target.value, target.slice.value
        else:
            return None, None
        if isinstance(parent, ast.Name):
            container = scope.get(parent.id)
        else:
            outer, outer_key = self._nested_slot(scope, parent)
            container = None if outer is None else outer.get(outer_key)
        if isinstance(container, dict) and not is_call_or_expr(container):
            return container, key
        return None, None

    def keywords(self, keywords: list[ast.keyword], node: ast.AST) -> dict[str, Any]:
        result: dict[str, Any] = {}
        for kw in keywords:
            # `**extra` has no name: key it by its source text so two spreads stay distinct.
            key = kw.arg if kw.arg is not None else "**" + _source(kw.value)
            if key in result:
                raise self.error(f"keyword argument `{key}` repeated", kw, "remove one of them")
            result[key] = self.value(kw.value)
        return result

    # expressions --------------------------------------------------------------------------------

    def value(self, node: ast.expr) -> Any:
        if isinstance(node, ast.Constant):
            if node.value is Ellipsis:
                return {"expr": "..."}
            return node.value
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
            operand = self.value(node.operand)
            if type(operand) in (int, float, complex):
                return -operand if isinstance(node.op, ast.USub) else operand
            return {"expr": _source(node)}
        if isinstance(node, ast.JoinedStr):
            if all(isinstance(part, ast.Constant) for part in node.values):
                return "".join(part.value for part in node.values)  # type: ignore[attr-defined]
            return {"expr": _source(node)}
        if isinstance(node, ast.Name) and self.resolve_names:
            # innermost scope first: a class body sees its own earlier names, then the module's
            for scope in (self.scopes[-1], self.scopes[0]):
                bound = scope.get(node.id, _UNBOUND)
                if bound is not _UNBOUND and not isinstance(bound, Ref):
                    return copy.deepcopy(bound)
        if isinstance(node, (ast.Name, ast.Attribute)):
            dotted = _dotted(node)
            return Ref(dotted) if dotted is not None else {"expr": _source(node)}
        if isinstance(node, ast.List):
            return [self.element(e) for e in node.elts]
        if isinstance(node, ast.Tuple):
            return tuple(self.element(e) for e in node.elts)
        if isinstance(node, ast.Set):
            items = [self.element(e) for e in node.elts]
            try:
                return set(items)
            except TypeError:  # an unhashable element: Python itself would fail here
                return {"expr": _source(node)}
        if isinstance(node, ast.Dict):
            return self.dict_literal(node)
        if isinstance(node, ast.Call):
            return self.call(node)
        return {"expr": _source(node)}

    def element(self, node: ast.expr) -> Any:
        return {"expr": _source(node)} if isinstance(node, ast.Starred) else self.value(node)

    def dict_literal(self, node: ast.Dict) -> Any:
        result: dict[Any, Any] = {}
        for key_node, value_node in zip(node.keys, node.values):
            if key_node is None:  # `{**base, ...}`
                key: Any = "**" + _source(value_node)
            else:
                key = self.value(key_node)
                if not _literal_key(key):
                    # A computed key (`{Strategy.A: 1}`) would hash like its dotted string and so
                    # hide a difference from `{"Strategy.A": 1}`: keep the literal as source.
                    return {"expr": _source(node)}
            if key in result:
                raise self.error(
                    f"duplicate key {key!r} in dict literal",
                    key_node or value_node,
                    "Python would keep only the last value silently; remove one of them",
                )
            result[key] = self.value(value_node)
        return result

    def call(self, node: ast.Call) -> Any:
        name = _dotted(node.func)
        kwargs = self.keywords(node.keywords, node)
        if name == "dict" and not node.args and not any(kw.arg is None for kw in node.keywords):
            return kwargs  # mmdetection's dict(type=..., ...) is a mapping literal
        return {
            "call": name if name is not None else _source(node.func),
            "args": [self.element(arg) for arg in node.args],
            "kwargs": kwargs,
        }

    def error(self, message: str, node: ast.AST, hint: str) -> ConfigError:
        where = Location(self.filename, getattr(node, "lineno", 0), getattr(node, "col_offset", -1) + 1)
        return ConfigError(message, location=where, hint=hint)


_OPS = {
    ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/", ast.FloorDiv: "//", ast.Mod: "%",
    ast.Pow: "**", ast.BitOr: "|", ast.BitAnd: "&", ast.BitXor: "^", ast.LShift: "<<",
    ast.RShift: ">>", ast.MatMult: "@",
}  # fmt: skip


def _literal_key(value: Any) -> bool:
    """A key spelled as a literal (``-1``, ``"a"``, ``(1, 2)``), never a reference or a call."""
    if type(value) is tuple:
        return all(_literal_key(item) for item in value)
    return type(value) in (str, bytes, int, float, complex, bool, type(None))


def _dotted(node: ast.AST) -> str | None:
    """``a.b.c`` for a chain of attribute accesses on a name, else None."""
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    parts.append(node.id)
    return ".".join(reversed(parts))


def _source(node: ast.AST) -> str:
    # ast.unparse normalises layout and quoting, so reformatting a file is not reported as a change.
    return ast.unparse(node)


def _is_docstring(stmt: ast.stmt) -> bool:
    return (
        isinstance(stmt, ast.Expr)
        and isinstance(stmt.value, ast.Constant)
        and isinstance(stmt.value.value, str)
    )


def is_call_or_expr(mapping: dict) -> bool:
    """A mapping that stands for a call or an opaque expression, not for a dict literal."""
    return set(mapping) in ({"call", "args", "kwargs"}, {"expr"}) or "augassign" in mapping
