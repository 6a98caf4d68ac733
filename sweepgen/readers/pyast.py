"""Read a Python config file as data through a small safe evaluator over ``ast``: never imported, never run.

Config files (mmdetection/mmengine, detectron2 LazyConfig, ml_collections, dataclass-style) are
programs whose meaning is mostly data. The evaluator runs the parts that are data and keeps the
rest as ``NotEvaluated`` nodes (compared by their normalised source, reported with file:line):

* literals and containers, ``dict()/list()/tuple()``, arithmetic, string and boolean operations
  and comparisons on known values, f-strings, names bound earlier (Python's aliasing included:
  ``pipeline[0]['scale'] = 160`` changes every place that holds ``pipeline``);
* assignment to names, subscripts and attributes, ``+=``, and in-place mutation through
  ``.update() .append() .extend() .insert() .setdefault() .pop()``; comprehensions, ``for`` loops
  and ``if`` over known values; functions defined in the file, called with known arguments;
* ml_collections: a module ``get_config()`` is called and the file *is* what it returns;
  ``ConfigDict``, ``config_dict.create``, ``FieldReference`` and ``get_ref`` are data, a
  ``placeholder(int)`` is ``Ref("placeholder(int)")``;
* ``import``s bind ``Ref`` names ("torch.bfloat16" as a reference, never equal to the string);
  calls to anything else are ``CallData`` ``{"call", "args", "kwargs"}`` with evaluated arguments;
* relative imports (``from .base import *`` in ``with read_base():``, detectron2's
  ``from ..common.optim import SGD as optimizer``) are followed only when the caller passes
  ``import_base`` (``diff --resolve-bases``); otherwise they bind ``Ref`` names;
* docstrings and comments are no data; ``if`` on an unknown condition, or a call made for its side
  effect, is kept under ``__statements__``, and a name bound inside such an ``if`` becomes not
  evaluated.
"""

from __future__ import annotations

import ast
import copy
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

from sweepgen.errors import ConfigError, Location
from sweepgen.readers.model import NotEvaluated, ReadResult, Ref, tree_size
from sweepgen.readers.pybounds import binop_fits, format_spec_fits, str_method_fits
from sweepgen.readers.pybranch import overlay

__all__ = ["CallData", "NotEvaluated", "Ref", "is_call_or_expr", "load_python_config", "parse_python_config"]

ImportBase = Callable[[str, int, int], dict[str, Any]]  # (module, level, line) -> the base's names
_LOOP_LIMIT = 100_000
_SIZE_LIMIT = 1_000_000
_CALL_DEPTH = 50
_STEP_LIMIT = 300_000
_BRANCH_BUDGET = 2_000_000


class CallData(dict):  # type: ignore[type-arg]
    """A call to something the reader must not run: its name and evaluated arguments."""


class _Function:
    def __init__(self, node: ast.FunctionDef | ast.AsyncFunctionDef, source: NotEvaluated) -> None:
        self.node = node
        self.source = source

    def __deepcopy__(self, memo: dict[int, Any]) -> _Function:
        return self  # code, not data: a branch run on a copy of the state shares it


class _Return(Exception):
    def __init__(self, value: Any) -> None:
        self.value = value


class _Unknown(Exception):
    """An expression whose value cannot be known here."""


def load_python_config(
    path: str | Path, *, resolve_names: bool = True, import_base: ImportBase | None = None
) -> dict[str, Any]:
    return read_python_file(path, import_base=import_base).data  # type: ignore[no-any-return]


def read_python_file(
    path: str | Path, *, import_base: ImportBase | None = None, bases: dict[str, Any] | None = None
) -> ReadResult:
    path = Path(path)
    try:
        source = path.read_bytes()
    except OSError as err:
        raise ConfigError(f"cannot read Python config: {err.strerror}", location=Location(str(path))) from err
    return read_python(source, str(path), import_base=import_base, bases=bases)


def parse_python_config(
    source: str | bytes, filename: str = "<string>", *, resolve_names: bool = True
) -> dict[str, Any]:
    return read_python(source, filename).data  # type: ignore[no-any-return]


def read_python(
    source: str | bytes,
    filename: str = "<string>",
    *,
    import_base: ImportBase | None = None,
    bases: dict[str, Any] | None = None,
) -> ReadResult:
    """``bases``: the merged ``_base_`` files, so that ``_base_.a.b`` reads a copy of their value."""
    try:
        with warnings.catch_warnings():  # "invalid escape sequence" and the like: not ours to print
            warnings.simplefilter("ignore")
            tree = ast.parse(source, filename=filename)
    except SyntaxError as err:
        raise ConfigError(
            f"invalid Python syntax: {err.msg}",
            location=Location(filename, err.lineno or 0, err.offset or 0),
            hint="the file is parsed, never run; fix the syntax so that `python -m py_compile` accepts it",
        ) from err
    except (ValueError, RecursionError, MemoryError) as err:  # null bytes, absurd nesting
        raise ConfigError(f"cannot parse Python config: {err}", location=Location(filename)) from err
    result = ReadResult(filename, None)
    evaluator = _Evaluator(filename, import_base, result)
    evaluator.bases = bases
    try:
        result.data = evaluator.module(tree.body)
    except RecursionError as err:
        raise ConfigError("Python config is nested too deeply to read", location=Location(filename)) from err
    return result


class _Evaluator:
    def __init__(self, filename: str, import_base: ImportBase | None, result: ReadResult) -> None:
        self.filename = filename
        self.import_base = import_base
        self.result = result
        self.scopes: list[dict[str, Any]] = []
        self.depth = 0
        self.in_read_base = False
        self.class_scopes: set[int] = set()
        self.bases: dict[str, Any] | None = None
        self.steps = 0
        self.copied = 0  # values copied to run undecided branches

    # module, class and function bodies ---------------------------------------------------------

    def module(self, statements: list[ast.stmt]) -> dict[str, Any]:
        scope: dict[str, Any] = {}
        rest: list[Any] = []
        self.scopes.append(scope)
        self.run(statements, scope, rest, top=True)
        getter = scope.get("get_config")
        if isinstance(getter, _Function):
            try:
                config = self.call_function(getter, [], {})
            except _Unknown:
                config = getter.source
            helpers = {
                k: v.source for k, v in scope.items() if isinstance(v, _Function) and k != "get_config"
            }
            if isinstance(config, dict) and not helpers:
                return config
            if isinstance(config, dict) and "@functions" not in config:
                # other functions (a big_vision `get_hyper` sweep, helpers) are part of what the
                # file means: kept as source so that a change in them is never silently lost
                return {**config, "@functions": helpers}
            return {"get_config": config, "@functions": helpers}
        out = {k: (v.source if isinstance(v, _Function) else v) for k, v in scope.items()}
        if rest:
            out["__statements__"] = rest
        return out

    def class_body(self, node: ast.ClassDef) -> dict[str, Any]:
        scope: dict[str, Any] = {}
        rest: list[Any] = []
        self.scopes.append(scope)
        self.class_scopes.add(id(scope))
        try:
            self.run(node.body, scope, rest)
        finally:
            self.scopes.pop()
            self.class_scopes.discard(id(scope))
        mapping = {k: (v.source if isinstance(v, _Function) else v) for k, v in scope.items()}
        if rest:
            mapping["__statements__"] = rest
        if node.bases:
            mapping["__bases__"] = [self.value(base) for base in node.bases]
        if node.keywords:
            mapping["__keywords__"] = self.keywords(node.keywords)
        if node.decorator_list:
            mapping["__decorators__"] = [self.value(dec) for dec in node.decorator_list]
        return mapping

    def call_function(self, function: _Function, args: list[Any], kwargs: dict[str, Any]) -> Any:
        if self.depth >= _CALL_DEPTH:
            raise _Unknown
        node = function.node
        local: dict[str, Any] = {}
        params = node.args
        positional = [*params.posonlyargs, *params.args]
        defaults: list[ast.expr | None] = [None] * (len(positional) - len(params.defaults)) + list(
            params.defaults
        )
        if len(args) > len(positional) or params.vararg or params.kwarg:
            raise _Unknown
        for index, (param, default) in enumerate(zip(positional, defaults)):
            if index < len(args):
                local[param.arg] = args[index]
            elif param.arg in kwargs:
                local[param.arg] = kwargs.pop(param.arg)
            elif default is not None:
                local[param.arg] = self.value(default)
            else:
                raise _Unknown
        for param, kw_default in zip(params.kwonlyargs, params.kw_defaults):
            if param.arg in kwargs:
                local[param.arg] = kwargs.pop(param.arg)
            elif kw_default is not None:
                local[param.arg] = self.value(kw_default)
            else:
                raise _Unknown
        if kwargs:
            raise _Unknown
        self.depth += 1
        self.scopes.append(local)
        try:
            rest: list[Any] = []
            self.run(node.body, local, rest)
            if rest:  # a statement we could not follow may have changed what is returned
                raise _Unknown
        except _Return as done:
            return done.value
        finally:
            self.scopes.pop()
            self.depth -= 1
        return None

    # statements --------------------------------------------------------------------------------

    def tick(self, node: ast.AST) -> None:
        """Count evaluation steps: loops and comprehensions over known values are bounded in total."""
        self.steps += 1
        if self.steps > _STEP_LIMIT:
            raise ConfigError(
                f"evaluating this config takes more than {_STEP_LIMIT:,} steps",
                location=Location(
                    self.filename, getattr(node, "lineno", 0), getattr(node, "col_offset", -1) + 1
                ),
                hint="sweepgen reads configs, it does not run programs; simplify the loops",
            )

    def run(
        self, statements: list[ast.stmt], scope: dict[str, Any], rest: list[Any], top: bool = False
    ) -> None:
        for index, stmt in enumerate(statements):
            if index == 0 and _is_docstring(stmt):
                continue  # a docstring is documentation, not data
            if top and isinstance(stmt, (ast.Assign, ast.AnnAssign, ast.FunctionDef, ast.ClassDef)):
                for name in _bound_names(stmt):
                    self.result.lines.setdefault((name,), stmt.lineno)
            self.statement(stmt, scope, rest)

    def statement(self, stmt: ast.stmt, scope: dict[str, Any], rest: list[Any]) -> None:
        self.tick(stmt)
        if isinstance(stmt, ast.Assign):
            value = self.value(stmt.value)
            for target in stmt.targets:
                self.bind(scope, target, value, stmt)
        elif isinstance(stmt, ast.AnnAssign):
            scope.setdefault("__annotations__", {})[ast.unparse(stmt.target)] = self.value(stmt.annotation)
            if stmt.value is not None:
                self.bind(scope, stmt.target, self.value(stmt.value), stmt)
        elif isinstance(stmt, ast.AugAssign):
            current = self.value(_load(stmt.target))
            self.bind(scope, stmt.target, self.binop(stmt.op, current, self.value(stmt.value), stmt), stmt)
        elif isinstance(stmt, ast.Import):
            for alias in stmt.names:
                bound = alias.asname or alias.name.split(".")[0]
                scope[bound] = Ref(alias.name if alias.asname else bound)
                if not alias.asname and "." in alias.name:
                    scope.setdefault("__imports__", []).append(Ref(alias.name))
        elif isinstance(stmt, ast.ImportFrom):
            self.import_from(stmt, scope, rest)
        elif isinstance(stmt, ast.ClassDef):
            scope[stmt.name] = self.class_body(stmt)
        elif isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
            scope[stmt.name] = _Function(stmt, self.opaque(stmt))
        elif isinstance(stmt, ast.Delete):
            for target in stmt.targets:
                self.unbind(scope, target, rest, stmt)
        elif isinstance(stmt, ast.Return):
            raise _Return(None if stmt.value is None else self.value(stmt.value))
        elif isinstance(stmt, ast.Pass):
            return
        elif isinstance(stmt, ast.Expr):
            if isinstance(stmt.value, ast.Constant):
                return  # a bare string is a comment
            value = self.value(stmt.value)
            evaluated = isinstance(stmt.value, (ast.Call, ast.ListComp, ast.SetComp, ast.GeneratorExp))
            if (
                not evaluated
                or isinstance(value, (CallData, NotEvaluated))
                or any(
                    isinstance(v, (CallData, NotEvaluated))
                    for v in (value if isinstance(value, list) else [])
                )
            ):
                rest.append(self.opaque(stmt))
        elif isinstance(stmt, ast.If):
            test = self.value(stmt.test)
            if _known(test):
                self.run_block(stmt.body if test else stmt.orelse, scope, rest)
            else:
                condition = _normalised(stmt.test)
                branches = [(condition, stmt.body)]
                if stmt.orelse:
                    branches.append((f"not ({condition})", stmt.orelse))
                self.undecided(stmt, branches, scope, rest)
        elif isinstance(stmt, ast.For) and not stmt.orelse:
            items = self.value(stmt.iter)
            if isinstance(items, (list, tuple, str, dict)) and _known(items) and len(items) <= _LOOP_LIMIT:
                for item in list(items):
                    self.bind(scope, stmt.target, item, stmt)
                    self.run_block(stmt.body, scope, rest)
            else:
                head = f"for {_normalised(stmt.target)} in {_normalised(stmt.iter)}"
                self.undecided(stmt, [(head, stmt.body)], scope, rest, loop=stmt)
        elif isinstance(stmt, ast.With) and self.import_base is not None and _is_read_base(stmt):
            self.in_read_base = True
            try:
                self.run_block(stmt.body, scope, rest)
            finally:
                self.in_read_base = False
        else:
            self.unknown_block(stmt, scope, rest)

    def run_block(self, body: list[ast.stmt], scope: dict[str, Any], rest: list[Any]) -> None:
        for stmt in body:
            self.statement(stmt, scope, rest)

    def undecided(
        self,
        stmt: ast.stmt,
        branches: list[tuple[str, list[ast.stmt]]],
        scope: dict[str, Any],
        rest: list[Any],
        loop: ast.For | None = None,
    ) -> None:
        """An ``if`` whose condition (or a ``for`` whose items) cannot be known: each branch runs on
        a copy of the state, and what it changes is recorded there under its condition
        (``sweepgen.readers.pybranch``); the state before it stays as it was."""
        size = tree_size(self.scopes, _BRANCH_BUDGET)
        self.copied += size
        if self.copied > _BRANCH_BUDGET:  # copying the state per branch is bounded in total
            self.unknown_block(stmt, scope, rest)
            return
        saved = self.scopes
        runs: list[tuple[str, list[dict[str, Any]], list[Any]]] = []
        try:
            for condition, body in branches:
                self.scopes = copy.deepcopy(saved)
                trial_rest: list[Any] = []
                if loop is not None:  # one pass with the loop variable not evaluated
                    self.bind(self.scopes[-1], loop.target, self.opaque(loop.iter), stmt)
                self.run_block(body, self.scopes[-1], trial_rest)
                runs.append((condition, self.scopes, trial_rest))
        except (_Return, _Unknown):
            self.scopes = saved
            self.unknown_block(stmt, scope, rest)
            return
        finally:
            self.scopes = saved
        seen: set[int] = set()
        for level, original in enumerate(saved):
            overlay(original, [(condition, copies[level]) for condition, copies, _ in runs], seen)
        for condition, _, kept in runs:
            rest.extend({"@when": condition, "@source": item} for item in kept)

    def unknown_block(self, stmt: ast.stmt, scope: dict[str, Any], rest: list[Any]) -> None:
        """A statement that cannot be followed: kept as source, and what it binds is unknown."""
        kept = self.opaque(stmt)
        rest.append(kept)
        for name in _assigned_anywhere(stmt):
            scope[name] = kept

    def import_from(self, stmt: ast.ImportFrom, scope: dict[str, Any], rest: list[Any]) -> None:
        module = "." * stmt.level + (stmt.module or "")
        if stmt.level and self.import_base is not None:
            names = self.import_base(stmt.module or "", stmt.level, stmt.lineno)
            for alias in stmt.names:
                if alias.name == "*":
                    scope.update({k: v for k, v in names.items() if not k.startswith("_")})
                elif alias.name in names:
                    scope[alias.asname or alias.name] = names[alias.name]
                else:
                    raise ConfigError(
                        f"`{module}` has no name `{alias.name}`",
                        location=Location(self.filename, stmt.lineno, stmt.col_offset + 1),
                        hint="the base file must bind that name at module level",
                    )
            return
        for alias in stmt.names:
            sep = "" if module.endswith(".") else "."
            if alias.name == "*":
                rest.append(self.opaque(stmt))
            else:
                scope[alias.asname or alias.name] = Ref(f"{module}{sep}{alias.name}")

    def bind(self, scope: dict[str, Any], target: ast.expr, value: Any, stmt: ast.stmt) -> None:
        dotted = _dotted(target)
        if dotted is not None and dotted.startswith("_base_."):
            scope[dotted] = value  # writes into the bases: applied by sweepgen.readers.pyinherit
            return
        if isinstance(target, ast.Name):
            scope[target.id] = value
            return
        if isinstance(target, (ast.Tuple, ast.List)):
            if (
                isinstance(value, (list, tuple))
                and len(value) == len(target.elts)
                and not any(isinstance(e, ast.Starred) for e in target.elts)
            ):
                for sub, item in zip(target.elts, value):
                    self.bind(scope, sub, item, stmt)
                return
            for sub in target.elts:
                self.bind(scope, sub.value if isinstance(sub, ast.Starred) else sub, self.opaque(stmt), stmt)
            return
        if isinstance(target, (ast.Attribute, ast.Subscript)):
            container = self.value(target.value)
            key: Any = target.attr if isinstance(target, ast.Attribute) else self.value(target.slice)
            path = _literal_path(target)
            if path is not None and len(self.scopes) == 1:
                self.result.lines[path] = stmt.lineno  # `model.backbone.depth = 101` is written here
            if isinstance(container, dict) and not isinstance(container, CallData) and _known_key(key):
                container[key] = value
                return
            if isinstance(container, CallData) and isinstance(target, ast.Attribute):
                container["kwargs"][key] = value  # detectron2: `model.backbone.depth = 101`
                return
            if isinstance(container, list) and type(key) is int and -len(container) <= key < len(container):
                container[key] = value
                return
        # an assignment we cannot place: keep it, keyed by its target's source, so it is never lost
        scope[ast.unparse(target)] = value

    def unbind(self, scope: dict[str, Any], target: ast.expr, rest: list[Any], stmt: ast.stmt) -> None:
        if isinstance(target, ast.Name) and target.id in scope:
            del scope[target.id]
            return
        if isinstance(target, (ast.Attribute, ast.Subscript)):
            container = self.value(target.value)
            key = target.attr if isinstance(target, ast.Attribute) else self.value(target.slice)
            if (
                isinstance(container, dict)
                and not isinstance(container, CallData)
                and _known_key(key)
                and key in container
            ):
                del container[key]
                return
            if (
                isinstance(container, CallData)
                and isinstance(target, ast.Attribute)
                and key in container["kwargs"]
            ):
                del container["kwargs"][key]
                return
        rest.append(self.opaque(stmt))

    # expressions -------------------------------------------------------------------------------

    def opaque(self, node: ast.AST) -> NotEvaluated:
        return NotEvaluated(_normalised(node), self.filename, getattr(node, "lineno", 0))

    def lookup(self, name: str) -> Any:
        # innermost scope first; an enclosing class body is invisible to nested scopes, as in Python
        for depth, scope in enumerate(reversed(self.scopes)):
            if depth and id(scope) in self.class_scopes:
                continue
            if name in scope:
                return scope[name]
        if name == "__name__":
            # a config is loaded as a module, never run as a script: `if __name__ == '__main__':`
            # blocks (mmpretrain's model printing) do not run, as under mmengine
            return "<config module>"
        return Ref(name)

    def value(self, node: ast.expr) -> Any:
        try:
            return self.expr(node)
        except _Unknown:
            return self.opaque(node)
        except (ArithmeticError, ValueError, TypeError, IndexError, KeyError, MemoryError):
            return self.opaque(node)

    def expr(self, node: ast.expr) -> Any:
        if isinstance(node, ast.Constant):
            if node.value is Ellipsis:
                return self.opaque(node)
            return node.value
        if isinstance(node, ast.Name):
            bound = self.lookup(node.id)
            if isinstance(bound, _Function):
                return bound.source
            return bound
        if isinstance(node, ast.Attribute):
            dotted = _dotted(node)
            if dotted is not None and dotted.startswith("_base_."):
                if self.bases is None:
                    return Ref(dotted)  # resolved later by sweepgen.readers.pyinherit, or kept
                node_value: Any = self.bases
                for segment in dotted.split(".")[1:]:
                    if not isinstance(node_value, dict) or segment not in node_value:
                        raise ConfigError(
                            f"`{dotted}` does not exist in the bases (no `{segment}`)",
                            location=Location(self.filename, node.lineno, node.col_offset + 1),
                            hint="name a key the `_base_` files define",
                        )
                    node_value = node_value[segment]
                return copy.deepcopy(node_value)  # mmengine hands the child a copy
            base = self.expr(node.value)
            if isinstance(base, CallData) and node.attr in base["kwargs"]:
                return base["kwargs"][node.attr]  # LazyCall / ConfigDict-like: attributes are kwargs
            if isinstance(base, Ref):
                return Ref(f"{base}.{node.attr}")
            if isinstance(base, dict) and not isinstance(base, CallData) and node.attr in base:
                return base[node.attr]  # ConfigDict / mmengine Config attribute access
            raise _Unknown
        if isinstance(node, ast.List):
            return self.sequence(node.elts, list)
        if isinstance(node, ast.Tuple):
            return tuple(self.sequence(node.elts, list))
        if isinstance(node, ast.Set):
            items = self.sequence(node.elts, list)
            if not _known(items):
                raise _Unknown
            return set(items)
        if isinstance(node, ast.Dict):
            return self.dict_literal(node)
        if isinstance(node, ast.Call):
            return self.call(node)
        if isinstance(node, ast.UnaryOp):
            operand = self.expr(node.operand)
            if not _known(operand):
                raise _Unknown
            if isinstance(node.op, ast.Not):
                return not operand
            if isinstance(node.op, ast.USub) and type(operand) in (int, float, complex):
                return -operand
            if isinstance(node.op, ast.UAdd) and type(operand) in (int, float, complex):
                return +operand
            if isinstance(node.op, ast.Invert) and type(operand) is int:
                return ~operand
            raise _Unknown
        if isinstance(node, ast.BinOp):
            return self.binop(node.op, self.expr(node.left), self.expr(node.right), node)
        if isinstance(node, ast.BoolOp):
            result: Any = None
            for operand_node in node.values:
                result = self.expr(operand_node)
                if not _known(result):
                    raise _Unknown
                if isinstance(node.op, ast.And) and not result:
                    return result
                if isinstance(node.op, ast.Or) and result:
                    return result
            return result
        if isinstance(node, ast.Compare):
            left = self.expr(node.left)
            for op, right_node in zip(node.ops, node.comparators):
                right = self.expr(right_node)
                if not (_known(left) and _known(right)):
                    raise _Unknown
                if not _compare(op, left, right):
                    return False
                left = right
            return True
        if isinstance(node, ast.IfExp):
            test = self.expr(node.test)
            if not _known(test):
                raise _Unknown
            return self.expr(node.body if test else node.orelse)
        if isinstance(node, ast.JoinedStr):
            pieces: list[str] = []
            for part in node.values:
                if isinstance(part, ast.Constant):
                    pieces.append(str(part.value))
                elif isinstance(part, ast.FormattedValue):
                    value = self.expr(part.value)
                    spec = self.expr(part.format_spec) if part.format_spec is not None else ""
                    if not _known(value) or part.conversion not in (-1, ord("r"), ord("s")):
                        raise _Unknown
                    if part.conversion != -1:
                        value = repr(value) if part.conversion == ord("r") else str(value)
                    if not isinstance(spec, str) or not format_spec_fits(spec):
                        raise _Unknown
                    pieces.append(format(value, spec))
            return "".join(pieces)
        if isinstance(node, ast.Subscript):
            base = self.expr(node.value)
            index = self.expr(node.slice)
            if type(base) in (dict, list, tuple, str) and _known(index):
                return base[index]
            raise _Unknown
        if isinstance(node, ast.Slice):
            parts3 = [None if p is None else self.expr(p) for p in (node.lower, node.upper, node.step)]
            if not all(p is None or type(p) is int for p in parts3):
                raise _Unknown
            return slice(*parts3)
        if isinstance(node, (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)):
            return self.comprehension(node)
        raise _Unknown

    def sequence(self, elts: list[ast.expr], kind: type) -> list[Any]:
        out: list[Any] = []
        for element in elts:
            if isinstance(element, ast.Starred):
                spread = self.expr(element.value)
                if not isinstance(spread, (list, tuple)):
                    raise _Unknown
                out.extend(spread)
            else:
                out.append(self.value(element))
        return out

    def dict_literal(self, node: ast.Dict) -> dict[Any, Any]:
        result: dict[Any, Any] = {}
        for key_node, value_node in zip(node.keys, node.values):
            if key_node is None:  # `{**base, ...}`
                spread = self.expr(value_node)
                if not isinstance(spread, dict) or isinstance(spread, CallData):
                    raise _Unknown
                result.update(spread)
                continue
            key = self.expr(key_node)
            if not _known_key(key):
                raise _Unknown
            if key in result:
                raise ConfigError(
                    f"duplicate key {key!r} in dict literal",
                    location=Location(self.filename, key_node.lineno, key_node.col_offset + 1),
                    hint="Python would keep only the last value silently; remove one of them",
                )
            result[key] = self.value(value_node)
        return result

    def keywords(self, keywords: list[ast.keyword]) -> dict[str, Any]:
        result: dict[str, Any] = {}
        for kw in keywords:
            if kw.arg is None:
                spread = self.value(kw.value)
                if (
                    isinstance(spread, dict)
                    and not isinstance(spread, CallData)
                    and all(isinstance(k, str) for k in spread)
                ):
                    result.update(spread)
                else:
                    result["**" + ast.unparse(kw.value)] = spread
                continue
            if kw.arg in result:
                raise ConfigError(
                    f"keyword argument `{kw.arg}` repeated",
                    location=Location(self.filename, kw.lineno, kw.col_offset + 1),
                    hint="remove one of them",
                )
            result[kw.arg] = self.value(kw.value)
        return result

    def imported(self, name: str | None) -> str | None:
        """``ml_collections.ConfigDict`` for ``mlc.ConfigDict`` after ``import ml_collections as mlc``;
        None when the name's root was never imported (then it is no known constructor)."""
        if name is None:
            return None
        root, _, rest = name.partition(".")
        if not any(root in scope for scope in self.scopes):
            return None
        bound = self.lookup(root)
        return f"{bound}{'.' + rest if rest else ''}" if isinstance(bound, Ref) else None

    def call(self, node: ast.Call) -> Any:
        if isinstance(node.func, ast.Attribute):
            receiver = self.value(node.func.value)
            method = node.func.attr
            if _is_data(receiver) or type(receiver) is CallData or type(receiver) is str:
                return self.method(receiver, method, node)
        name = _dotted(node.func)
        args = self.sequence(node.args, list)
        kwargs = self.keywords(node.keywords)
        short = (name or "").rsplit(".", 1)[-1]
        if name is not None and name.split(".")[0] in self.scopes[-1] | self.scopes[0]:
            bound = self.lookup(name.split(".")[0])
            if isinstance(bound, _Function) and "." not in name:
                return self.call_function(bound, args, dict(kwargs))
        imported = self.imported(name)  # what the name means, by the import that bound it
        if name == "dict" or short in ("ConfigDict", "FrozenConfigDict", "create") and _ml(imported):
            if (
                len(args) > 1
                or (args and not isinstance(args[0], dict))
                or any(k.startswith("**") for k in kwargs)
            ):
                raise _Unknown
            base = dict(args[0]) if args else {}
            base.update(kwargs)
            return base
        if name in (
            "list",
            "tuple",
            "set",
            "sorted",
            "len",
            "min",
            "max",
            "sum",
            "abs",
            "round",
            "int",
            "float",
            "str",
            "bool",
            "range",
            "reversed",
            "zip",
            "enumerate",
        ):
            if kwargs or not _known(args):
                raise _Unknown
            return _BUILTINS[name](*args)
        if short == "placeholder" and _ml(imported):
            return Ref(f"placeholder({', '.join(ast.unparse(a) for a in node.args)})")
        if short == "FieldReference" and _ml(imported) and args:
            return args[0]
        if name in ("copy.deepcopy", "deepcopy", "copy.copy") and len(args) == 1:
            return copy.deepcopy(args[0])
        data = CallData()
        data["call"] = name if name is not None else ast.unparse(node.func)
        data["args"] = args
        data["kwargs"] = kwargs
        return data

    def method(self, receiver: Any, method: str, node: ast.Call) -> Any:
        args = self.sequence(node.args, list)
        kwargs = self.keywords(node.keywords)
        if isinstance(receiver, CallData):
            # detectron2's LazyCall is a mapping of its keyword arguments: update/pop edit them
            target = receiver["kwargs"]
            if method == "update" and len(args) <= 1 and all(isinstance(a, dict) for a in args):
                target.update(*args, **kwargs)
                return None
            if method == "pop" and 1 <= len(args) <= 2 and not kwargs:
                return target.pop(*args)
            raise _Unknown
        if isinstance(receiver, dict) and method == "merge" and len(args) == 1 and isinstance(args[0], dict):
            _merge_into(receiver, args[0])  # mmengine ConfigDict.merge: recursive, `_delete_` replaces
            return None
        if isinstance(receiver, dict):
            if method == "update" and len(args) <= 1:
                receiver.update(*args, **kwargs)
                return None
            if method == "get_ref" and len(args) == 1:
                return receiver[args[0]]
            if method in ("get", "setdefault", "pop", "copy", "keys", "values", "items") and not kwargs:
                result = getattr(receiver, method)(*args)
                return list(result) if method in ("keys", "values", "items") else result
        if (
            isinstance(receiver, list)
            and method in ("append", "extend", "insert", "pop", "copy", "index", "count", "remove")
            and not kwargs
        ):
            return getattr(receiver, method)(*args)
        if (
            isinstance(receiver, str)
            and method in _STR_METHODS
            and _known(args)
            and _known(kwargs)
            and str_method_fits(receiver, method, args, kwargs)
        ):
            result = getattr(receiver, method)(*args, **kwargs)
            if isinstance(result, str) and len(result) > _SIZE_LIMIT:
                raise _Unknown
            return result
        raise _Unknown

    def binop(self, op: ast.operator, left: Any, right: Any, node: ast.AST) -> Any:
        if (
            isinstance(op, ast.Mult)
            and type(left) in (list, tuple)
            and type(right) is int
            and len(left) * max(right, 0) <= _SIZE_LIMIT
        ):
            return left * right  # `[ShapeSpec(channels=256)] * 5`: repetition needs no known items
        function = _BINOPS.get(type(op))
        if not (_known(left) and _known(right)) or function is None or not binop_fits(op, left, right):
            # past a bound (pybounds) or not computable: kept as source
            return self.opaque(node) if isinstance(node, ast.stmt) else _raise()
        return function(left, right)

    def comprehension(self, node: ast.ListComp | ast.SetComp | ast.DictComp | ast.GeneratorExp) -> Any:
        local: dict[str, Any] = {}
        self.scopes.append(local)
        out: list[Any] = []
        try:
            self._generate(node, 0, local, out)
        finally:
            self.scopes.pop()
        if isinstance(node, ast.DictComp):
            return dict(out)
        if isinstance(node, ast.SetComp):
            if not _known(out):
                raise _Unknown
            return set(out)
        return out

    def _generate(self, node: Any, index: int, local: dict[str, Any], out: list[Any]) -> None:
        if index == len(node.generators):
            if isinstance(node, ast.DictComp):
                key = self.expr(node.key)
                if not _known_key(key):
                    raise _Unknown
                out.append((key, self.value(node.value)))
            else:
                out.append(self.value(node.elt))
            if len(out) > _LOOP_LIMIT:
                raise _Unknown
            self.tick(node)
            return
        generator = node.generators[index]
        items = self.expr(generator.iter)
        if not isinstance(items, (list, tuple, str, dict, range)) or not _known(items) or generator.is_async:
            raise _Unknown
        for item in list(items):
            self.bind(local, generator.target, item, ast.Pass())
            tests = [self.expr(test) for test in generator.ifs]
            if not _known(tests):
                raise _Unknown
            if all(tests):
                self._generate(node, index + 1, local, out)


def _merge_into(base: dict[Any, Any], update: dict[Any, Any]) -> None:
    for key, value in update.items():
        if key == "_delete_":
            continue
        current = base.get(key)
        if type(value) is dict and type(current) is dict and value.get("_delete_") is not True:
            _merge_into(current, value)
        else:
            base[key] = {k: v for k, v in value.items() if k != "_delete_"} if type(value) is dict else value


def _literal_path(target: ast.expr) -> tuple[Any, ...] | None:
    """``a.b['c'][0]`` -> ``('a', 'b', 'c', 0)``; None if any part is computed."""
    parts: list[Any] = []
    node: ast.expr = target
    while isinstance(node, (ast.Attribute, ast.Subscript)):
        if isinstance(node, ast.Attribute):
            parts.append(node.attr)
        elif isinstance(node.slice, ast.Constant) and type(node.slice.value) in (str, int):
            parts.append(node.slice.value)
        else:
            return None
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    parts.append(node.id)
    return tuple(reversed(parts))


def _raise() -> Any:
    raise _Unknown


def _ml(name: str | None) -> bool:
    """An ml_collections (or mmengine Config) constructor, however it was imported."""
    return name is not None and (
        name.split(".")[0] in ("ml_collections", "config_dict", "mmengine")
        or name in ("ConfigDict", "FrozenConfigDict", "placeholder", "FieldReference")
    )


_BUILTINS: dict[str, Callable[..., Any]] = {
    "list": list, "tuple": tuple, "set": set, "sorted": sorted, "len": len, "min": min, "max": max,
    "sum": sum, "abs": abs, "round": round, "int": int, "float": float, "str": str, "bool": bool,
    "range": lambda *a: list(range(*a)) if len(range(*a)) <= _LOOP_LIMIT else _raise(),
    "reversed": lambda x: list(reversed(x)), "zip": lambda *a: [tuple(t) for t in zip(*a)],
    "enumerate": lambda x, start=0: list(enumerate(x, start)),
}  # fmt: skip
_STR_METHODS = {"format", "join", "upper", "lower", "replace", "split", "strip", "lstrip", "rstrip",
                "startswith", "endswith", "title", "capitalize", "zfill"}  # fmt: skip
_BINOPS: dict[type, Callable[[Any, Any], Any]] = {
    ast.Add: lambda a, b: a + b, ast.Sub: lambda a, b: a - b, ast.Mult: lambda a, b: a * b,
    ast.Div: lambda a, b: a / b, ast.FloorDiv: lambda a, b: a // b, ast.Mod: lambda a, b: a % b,
    ast.Pow: lambda a, b: a**b, ast.BitOr: lambda a, b: a | b, ast.BitAnd: lambda a, b: a & b,
    ast.BitXor: lambda a, b: a ^ b, ast.LShift: lambda a, b: a << b, ast.RShift: lambda a, b: a >> b,
}  # fmt: skip


def _compare(op: ast.cmpop, a: Any, b: Any) -> bool:
    table: dict[type, Callable[[Any, Any], bool]] = {
        ast.Eq: lambda x, y: x == y, ast.NotEq: lambda x, y: x != y, ast.Lt: lambda x, y: x < y,
        ast.LtE: lambda x, y: x <= y, ast.Gt: lambda x, y: x > y, ast.GtE: lambda x, y: x >= y,
        ast.In: lambda x, y: x in y, ast.NotIn: lambda x, y: x not in y,
        ast.Is: lambda x, y: x is y, ast.IsNot: lambda x, y: x is not y,
    }  # fmt: skip
    return bool(table[type(op)](a, b))


def _known(value: Any) -> bool:
    """Plain data all the way down: no reference, call, or not-evaluated part."""
    kind = type(value)
    if kind in (int, float, str, bool, complex, bytes, type(None), range, slice):
        return True
    if kind in (list, tuple, set, frozenset):
        return all(_known(v) for v in value)
    if kind is dict:
        return all(_known(k) and _known(v) for k, v in value.items())
    return False


def _known_key(value: Any) -> bool:
    if type(value) is tuple:
        return all(_known_key(item) for item in value)
    return type(value) in (str, bytes, int, float, complex, bool, type(None))


def _is_data(value: Any) -> bool:
    return type(value) in (dict, list)


def _dotted(node: ast.AST) -> str | None:
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    parts.append(node.id)
    return ".".join(reversed(parts))


def _load(target: ast.expr) -> ast.expr:
    return target


def _normalised(node: ast.AST) -> str:
    # ast.unparse normalises layout, quoting and comments away; docstrings are dropped first
    node = copy.deepcopy(node)
    for sub in ast.walk(node):
        body = getattr(sub, "body", None)
        if isinstance(body, list) and body and _is_docstring(body[0]) and len(body) > 1:
            sub.body = body[1:]  # type: ignore[attr-defined]
    return ast.unparse(node)


def _is_docstring(stmt: ast.stmt) -> bool:
    return (
        isinstance(stmt, ast.Expr)
        and isinstance(stmt.value, ast.Constant)
        and isinstance(stmt.value.value, str)
    )


def _is_read_base(stmt: ast.With) -> bool:
    return (
        len(stmt.items) == 1
        and isinstance(stmt.items[0].context_expr, ast.Call)
        and (_dotted(stmt.items[0].context_expr.func) or "").endswith("read_base")
    )


def _bound_names(stmt: ast.stmt) -> list[str]:
    if isinstance(stmt, (ast.FunctionDef, ast.ClassDef)):
        return [stmt.name]
    targets = (
        stmt.targets
        if isinstance(stmt, ast.Assign)
        else [stmt.target]
        if isinstance(stmt, ast.AnnAssign)
        else []
    )
    return [n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)][:1] or []


def _assigned_anywhere(stmt: ast.stmt) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(stmt):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Attribute, ast.Subscript)) and isinstance(node.ctx, ast.Store):
            root: ast.AST = node
            while isinstance(root, (ast.Attribute, ast.Subscript)):
                root = root.value
            if isinstance(root, ast.Name):
                names.add(root.id)
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            root = node.func.value
            while isinstance(root, (ast.Attribute, ast.Subscript)):
                root = root.value
            if isinstance(root, ast.Name) and node.func.attr in (
                "update",
                "append",
                "extend",
                "insert",
                "pop",
                "setdefault",
                "remove",
            ):
                names.add(root.id)
    return names


def is_call_or_expr(mapping: Any) -> bool:
    """A value that stands for a call or an unevaluated expression, never merged into."""
    return isinstance(mapping, (CallData, NotEvaluated))
