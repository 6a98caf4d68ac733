"""Expressions in the Python config reader: what each expression evaluates to, as data.

Literals and containers, ``dict()/list()/tuple()``, arithmetic (within ``pybounds``), string and
boolean operations and comparisons on known values, f-strings, names (innermost scope first),
attributes and subscripts, comprehensions, the built-ins that are data (``len``, ``range``...),
methods that edit data in place (``.update() .append()``...), and calls to anything else as
``CallData``. What cannot be known raises ``Unknown`` and is kept by ``value`` as source.
"""

from __future__ import annotations

import ast
import copy
import math
from collections.abc import Callable
from typing import Any

from sweepgen.errors import ConfigError, Location
from sweepgen.readers.model import NotEvaluated, ReadResult, Ref
from sweepgen.readers.python.pybounds import binop_fits, bounded_sum, format_spec_fits, str_method_fits
from sweepgen.readers.python.pygiven import GivenArguments
from sweepgen.readers.python.pymlcollections import is_ml
from sweepgen.readers.python.pyvalues import (
    LOOP_LIMIT,
    SIZE_LIMIT,
    CallData,
    Function,
    ImportBase,
    KeptView,
    Unknown,
    compare,
    dotted,
    fits_work,
    hash_ordered,
    known,
    known_key,
    merge_into,
    normalised,
    raise_unknown,
    value_text,
)

# the float constants of the standard library and numpy, as Python reads them: `-math.nan` is a
# nan with its sign bit set and `math.inf` is `float("inf")`, so they are values, never references
# compared by their spelling (`-math.nan` against `float("-nan")` is one value to Python)
_MODULE_FLOATS = {
    **{f"math.{name}": float(getattr(math, name)) for name in ("inf", "nan", "pi", "e", "tau")},
    "numpy.inf": math.inf,
    "numpy.nan": math.nan,
    "numpy.pi": math.pi,
    "numpy.e": math.e,
    "numpy.euler_gamma": 0.5772156649015329,
}


def module_float(ref: Ref) -> Any:
    """The value of a reference to one of the constants above; any other reference as it is."""
    return _MODULE_FLOATS.get(ref, ref)


class Expressions:
    """The evaluator's state and its expressions; ``pystatements.Evaluator`` adds the statements."""

    def __init__(self, filename: str, import_base: ImportBase | None, result: ReadResult) -> None:
        self.filename = filename
        self.import_base = import_base
        self.result = result
        self.scopes: list[dict[str, Any]] = []
        self.depth = 0
        self.in_read_base = False
        self.rendering: set[int] = set()  # the closures' scopes being written (a cell may hold its own)
        self.class_scopes: set[int] = set()
        self.bases: dict[str, Any] | None = None
        self.steps = 0
        self.copied = 0  # values copied to run undecided branches
        # names some `(x := ...)` of the file binds: the evaluator may not follow where it runs,
        # so such a name never reads as the builtin it shadows
        self.walrus: set[str] = set()
        self.statements: list[ast.stmt] = []  # the module's, where the views are looked for
        self.iterated_views: set[int] | None = None  # the dict views read as their items, once asked
        # containers a statement this reader could not follow may have changed (`a.sort(key=f)`),
        # by id, each kept alive so that its id is never another object's
        self.tainted: dict[int, Any] = {}
        self.taints = 0  # statements that tainted something, so far: a read after one is told apart
        self.import_bound: dict[str, Ref] = {}  # name -> the reference an import bound it to
        # module names a statement may have rebound (`from m import *`, `exec`): name -> (the value
        # it held then, kept alive so its identity is never another's; what reading it gives)
        self.rebound: dict[str, tuple[Any, NotEvaluated]] = {}
        self.rebound_writes: dict[str, int] = {}  # ... and how often it had been written then
        self.given = GivenArguments()  # what calls not followed were handed by a name, as then
        # each `if __name__ ...` branch kept as source: (its list, its index there, the values it reads)
        self.pending_script_only: list[tuple[list[Any], int, dict[str, str]]] = []

    def call_function(self, function: Function, args: list[Any], kwargs: dict[str, Any]) -> Any:
        raise NotImplementedError  # statements run a function's body: pystatements.Evaluator

    def run(
        self, statements: list[ast.stmt], scope: dict[str, Any], rest: list[Any], top: bool = False
    ) -> None:
        raise NotImplementedError  # pystatements.Evaluator

    def bind(self, scope: dict[str, Any], target: ast.expr, value: Any, stmt: ast.stmt) -> None:
        raise NotImplementedError  # pystatements.Evaluator

    def tick(self, node: ast.AST) -> None:
        raise NotImplementedError  # pystatements.Evaluator

    def opaque(self, node: ast.AST) -> NotEvaluated:
        return NotEvaluated(normalised(node), self.filename, getattr(node, "lineno", 0))

    def kept_reading(self, node: ast.AST) -> NotEvaluated:
        """An expression not evaluated: its source and the value now of each name it reads that the
        file binds (``list(map(str, a)) where a=[9, 2]``), so that a change to one, or moving it
        past the expression, shows."""
        kept = self.opaque(node)
        shown = self.reads_shown(node)
        if not shown:
            return kept
        return NotEvaluated(f"{kept.source} where {', '.join(shown)}", self.filename, kept.line)

    def reads_shown(self, node: ast.AST, *, imports: bool = True) -> list[str]:
        """``name=value`` for each name ``node`` reads that the file binds, with its value now (an
        import's reference too, unless ``imports`` is false)."""
        reads = [(name, self.lookup(name)) for name in self.names_read(node) if self.visible(name)]
        return [
            f"{name}={self.read_text(value)}"
            for name, value in reads
            if _shown_read(name, value) and (imports or not isinstance(value, Ref))
        ]

    def names_read(self, node: ast.AST) -> list[str]:
        """The names ``node`` reads; through ``globals()["lr"]`` or ``eval("lr")``, by a string: any."""
        names = _names_read(node)
        if _reads_every_name(node):
            names.update(n for scope in (self.scopes[0], self.scopes[-1]) for n in scope if n[:2] != "__")
        return sorted(names)

    def read_text(self, value: Any) -> str:
        """A value read by a part not evaluated; one a statement not followed may have changed is
        not what it held, so it is told apart by how many such statements came before the read."""
        if id(value) in self.tainted:
            return f"<changed by a statement not followed, after {self.taints}>"
        return value_text(value)

    def mark_rebound(self, stmt: ast.stmt) -> None:
        """After ``stmt`` (``from m import *``, ``exec(...)``), each module name bound so far may hold
        anything: read, it is not evaluated, kept as its name after that statement."""
        after = normalised(stmt)
        writes = getattr(self.scopes[0], "writes", {})
        for name, value in self.scopes[0].items():
            if not name.startswith("__"):
                kept = NotEvaluated(f"{name} after {after}", self.filename, stmt.lineno)
                self.rebound[name] = (value, kept)
                self.rebound_writes[name] = writes.get(name, 0)

    def still_rebound(self, scope: dict[str, Any]) -> list[str]:
        """The module names a statement may have rebound (``from m import *``) and the file never
        bound again after it, each as ``x after from m import *``: what such a name holds at the
        end may be the module's, so its place before that statement is part of the data."""
        writes = getattr(scope, "writes", {})
        return [
            self.rebound[name][1].source
            for name in scope
            if name in self.rebound and writes.get(name, 0) == self.rebound_writes.get(name)
        ]

    def taint_call(self, call: ast.Call) -> None:
        """A call not followed whose result is dropped is run for what it does: its receiver
        (``a.sort(key=f)``) and its arguments (``set_lr(cfg, 2)``) may hold other things after it."""
        receiver = [call.func.value] if isinstance(call.func, ast.Attribute) else []
        arguments = [*call.args, *(k.value for k in call.keywords)]
        if receiver and type(self.value(receiver[0])) in _METHODS:
            arguments = []  # a list's, dict's or string's own methods change no argument
        for node in [*receiver, *arguments]:
            self.taint(node)

    def taint(self, receiver: ast.expr) -> None:
        """What ``receiver`` holds (every container in it, through any name) is not known after."""
        try:
            found = self.expr(receiver)
        except (Unknown, ArithmeticError, ValueError, TypeError, IndexError, KeyError):
            return
        stack = [found]
        self.taints += 1
        while stack:
            item = stack.pop()
            if isinstance(item, (dict, list, set)) and id(item) not in self.tainted:
                self.tainted[id(item)] = item
                stack.extend([*item.values()] if isinstance(item, dict) else item)

    def visible(self, name: str) -> bool:
        """Is the plain ``name`` bound where this code runs (the scopes ``lookup`` reads)?"""
        return name in self.walrus or any(
            name in scope
            for depth, scope in enumerate(reversed(self.scopes))
            if not depth or id(scope) not in self.class_scopes
        )

    def lookup(self, name: str) -> Any:
        # innermost scope first; an enclosing class body is invisible to nested scopes, as in Python
        for depth, scope in enumerate(reversed(self.scopes)):
            if depth and id(scope) in self.class_scopes:
                continue
            if name in scope:
                mark = self.rebound.get(name) if scope is self.scopes[0] else None
                return mark[1] if mark is not None and mark[0] is scope[name] else scope[name]
        if name == "__name__":
            # a config is loaded as a module, never run as a script: `if __name__ == '__main__':`
            # blocks (mmpretrain's model printing) do not run, as under mmengine
            return "<config module>"
        return Ref(name)

    def value(self, node: ast.expr) -> Any:
        try:
            return self.expr(node)
        except (Unknown, ArithmeticError, ValueError, TypeError, IndexError, KeyError, MemoryError):
            return self.kept_reading(node)

    def expr(self, node: ast.expr) -> Any:  # noqa: C901, PLR0912, PLR0915 - one branch per ast.expr node type: a table to read, not to split
        if isinstance(node, ast.Constant):
            if node.value is Ellipsis:
                return self.opaque(node)
            return node.value
        if isinstance(node, ast.Name):
            bound = self.lookup(node.id)
            if isinstance(bound, Function):
                return bound.source
            if id(bound) in self.tainted:
                raise Unknown  # a method this reader does not follow may have changed it since
            return module_float(bound) if isinstance(bound, Ref) else bound
        if isinstance(node, ast.Attribute):
            spelled = dotted(node)
            if spelled is not None and spelled.startswith("_base_."):
                if self.bases is None:
                    return Ref(spelled)  # resolved later by sweepgen.readers.python.pyinherit, or kept
                node_value: Any = self.bases
                for segment in spelled.split(".")[1:]:
                    if not isinstance(node_value, dict) or segment not in node_value:
                        raise ConfigError(
                            f"`{spelled}` does not exist in the bases (no `{segment}`)",
                            location=Location(self.filename, node.lineno, node.col_offset + 1),
                            hint="name a key the `_base_` files define",
                        )
                    node_value = node_value[segment]
                return copy.deepcopy(node_value)  # mmengine hands the child a copy
            base = self.expr(node.value)
            if isinstance(base, CallData) and node.attr in base["kwargs"]:
                return base["kwargs"][node.attr]  # LazyCall / ConfigDict-like: attributes are kwargs
            if isinstance(base, Ref):
                return module_float(Ref(f"{base}.{node.attr}"))
            if isinstance(base, dict) and not isinstance(base, CallData) and node.attr in base:
                return base[node.attr]  # ConfigDict / mmengine Config attribute access
            raise Unknown
        if isinstance(node, ast.List):
            return self.sequence(node.elts, list)
        if isinstance(node, ast.Tuple):
            return tuple(self.sequence(node.elts, list))
        if isinstance(node, ast.Set):
            items = self.sequence(node.elts, list)
            if not known(items):
                raise Unknown
            return set(items)
        if isinstance(node, ast.Dict):
            return self.dict_literal(node)
        if isinstance(node, ast.Call):
            return self.call(node)
        if isinstance(node, ast.UnaryOp):
            operand = self.expr(node.operand)
            if not known(operand):
                raise Unknown
            if isinstance(node.op, ast.Not):
                return not operand
            if isinstance(node.op, ast.USub) and type(operand) in (int, float, complex):
                return -operand
            if isinstance(node.op, ast.UAdd) and type(operand) in (int, float, complex):
                return +operand
            if isinstance(node.op, ast.Invert) and type(operand) is int:
                return ~operand
            raise Unknown
        if isinstance(node, ast.BinOp):
            return self.binop(node.op, self.expr(node.left), self.expr(node.right), node)
        if isinstance(node, ast.BoolOp):
            result: Any = None
            for operand_node in node.values:
                result = self.expr(operand_node)
                if not known(result):
                    raise Unknown
                if isinstance(node.op, ast.And) and not result:
                    return result
                if isinstance(node.op, ast.Or) and result:
                    return result
            return result
        if isinstance(node, ast.Compare):
            left = self.expr(node.left)
            for op, right_node in zip(node.ops, node.comparators):
                right = self.expr(right_node)
                if not (known(left) and known(right)):
                    raise Unknown
                if not compare(op, left, right):
                    return False
                left = right
            return True
        if isinstance(node, ast.IfExp):
            test = self.expr(node.test)
            if not known(test):
                raise Unknown
            return self.expr(node.body if test else node.orelse)
        if isinstance(node, ast.JoinedStr):
            pieces: list[str] = []
            for part in node.values:
                if isinstance(part, ast.Constant):
                    pieces.append(str(part.value))
                elif isinstance(part, ast.FormattedValue):
                    value = self.expr(part.value)
                    spec = self.expr(part.format_spec) if part.format_spec is not None else ""
                    plain = known(value) and fits_work(value)  # `{c}` walks every shared list again
                    if not plain or hash_ordered(value) or part.conversion not in (-1, ord("r"), ord("s")):
                        raise Unknown
                    if part.conversion != -1:
                        value = repr(value) if part.conversion == ord("r") else str(value)
                    if not isinstance(spec, str) or not format_spec_fits(spec):
                        raise Unknown
                    pieces.append(format(value, spec))
            return "".join(pieces)
        if isinstance(node, ast.Subscript):
            base = self.expr(node.value)
            index = self.expr(node.slice)
            if type(base) in (dict, list, tuple, str) and known(index):
                return base[index]
            raise Unknown
        if isinstance(node, ast.Slice):
            parts3 = [None if p is None else self.expr(p) for p in (node.lower, node.upper, node.step)]
            if not all(p is None or type(p) is int for p in parts3):
                raise Unknown
            return slice(*parts3)
        if isinstance(node, ast.GeneratorExp) and id(node) not in self.views_iterated():
            return self.kept_generator(node)
        if isinstance(node, ast.Lambda):
            return self.kept_lambda(node)
        if isinstance(node, (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)):
            return self.comprehension(node)
        raise Unknown

    def kept_generator(self, node: ast.GeneratorExp) -> KeptView:
        """A generator expression kept (``g = (x for x in a)``) runs when it is read, over the object
        its first ``in`` gave then: live, as a view is (an item appended to that list later, even
        after ``a = []``, is in it); its other names are read when it is read."""
        first = self.expr(node.generators[0].iter)
        scopes = list(self.scopes)

        def text(held: Any) -> str:
            saved, self.scopes = self.scopes, scopes
            try:
                rest = [f"{name}={value}" for name, value in self.rest_read(node)]
            finally:
                self.scopes = saved
            return self.read_text(held) + (f" where {', '.join(rest)}" if rest else "")

        return KeptView(normalised(node), first, text, self.filename, node.lineno)

    def kept_lambda(self, node: ast.Lambda) -> NotEvaluated:
        """A lambda, with the values its body's names hold now (a call of it is kept as a record
        that never shows them); its defaults are the objects they were when it was made, live (a
        list edited later shows in them, also after its name is rebound)."""
        names = sorted(_names_in([node.body]) - _parameters(node.args))
        enclosing = self.enclosing_functions()
        cells = [n for n in names if any(n in scope for scope in enclosing)]
        if cells:
            return self.kept_closure(node, names, cells, enclosing)
        rest = [f"{n}={self.read_text(self.lookup(n))}" for n in names if self.visible(n)]
        where = f" where {', '.join(rest)}" if rest else ""
        defaults = [d for d in (*node.args.defaults, *node.args.kw_defaults) if d is not None]
        if not defaults:
            return NotEvaluated(normalised(node) + where, self.filename, node.lineno)
        held = self.sequence(defaults, list)
        return KeptView(
            normalised(node), held, lambda values: self.read_text(values) + where, self.filename, node.lineno
        )

    def kept_closure(
        self, node: ast.Lambda, names: list[str], cells: list[str], enclosing: list[dict[str, Any]]
    ) -> NotEvaluated:
        """A lambda made in a function, reading its names (cells) as that call leaves them, as
        Python's late binding does (``v = 0; f = lambda: v; v = a`` returns ``a``)."""
        shown = [f"{n}={self.read_text(self.lookup(n))}" for n in names if n not in cells and self.visible(n)]
        defaults = [d for d in (*node.args.defaults, *node.args.kw_defaults) if d is not None]
        text = self.def_writer(shown, cells)
        return KeptView(
            normalised(node), (self.sequence(defaults, list), enclosing), text, self.filename, node.lineno
        )

    def enclosing_functions(self) -> list[dict[str, Any]]:
        """The scopes of the function calls the code runs in (a closure reads them), class bodies aside."""
        return [scope for scope in self.scopes[1:] if id(scope) not in self.class_scopes]

    def kept_def(self, node: ast.FunctionDef | ast.AsyncFunctionDef, defaults: list[Any]) -> NotEvaluated:
        """A ``def``'s source with what Python fixes when the ``def`` runs, not when it is called: the
        values its decorators read then, its defaults (the objects, live, as a lambda's: ``lr = 1;
        def f(x=lr)`` then ``lr = 2`` still calls with 1), and the names its body reads from an
        enclosing function (a closure's cells, read from that call's scope as it ends)."""
        shown = sorted({read for decorator in node.decorator_list for read in self.reads_shown(decorator)})
        enclosing = self.enclosing_functions()
        cells = _cells(node, enclosing)
        if not [*defaults, *shown, *cells]:
            return self.opaque(node)
        text = self.def_writer(shown, cells)
        return KeptView(normalised(node), (defaults, enclosing), text, self.filename, node.lineno)

    def def_writer(self, shown: list[str], cells: list[str]) -> Callable[[Any], str]:
        """``def_text`` for one kept function, as a plain function: a branch deep-copies the views
        it holds, and a function is copied as itself (a bound method would copy this evaluator)."""

        def text(held: Any) -> str:
            return self.def_text(shown, cells, held)

        return text

    def def_text(
        self, shown: list[str], cells: list[str], held: tuple[list[Any], list[dict[str, Any]]]
    ) -> str:
        """A kept ``def``'s defaults and, after ``where``, its decorators' reads and its cells now."""
        parts = [*shown, *self.cell_texts(cells, held[1])]
        return self.read_text(held[0]) + (f" where {', '.join(parts)}" if parts else "")

    def cell_texts(self, cells: list[str], scopes: list[dict[str, Any]]) -> list[str]:
        values = [(name, _innermost(scopes, name)) for name in cells]
        if id(scopes) in self.rendering:
            return [f"{name}=..." for name, _ in values]  # a closure its own cell holds: written once
        self.rendering.add(id(scopes))
        try:
            return [f"{name}={self.cell_text(value)}" for name, value in values if value != Ref(name)]
        finally:
            self.rendering.discard(id(scopes))

    def cell_text(self, value: Any) -> str:
        """A cell's value written; a function as its source, with its own cells (a nested ``def``
        is in no data, unlike a module's)."""
        return value.source.source if isinstance(value, Function) else self.read_text(value)

    def rest_read(self, node: ast.GeneratorExp) -> list[tuple[str, str]]:
        """The names a generator expression reads past its first iterable, bound in the file, with
        their values now (its own loop variables aside)."""
        return [
            (name, self.read_text(self.lookup(name))) for name in _later_reads(node) if self.visible(name)
        ]

    def sequence(self, elts: list[ast.expr], kind: type) -> list[Any]:
        out: list[Any] = []
        for element in elts:
            if isinstance(element, ast.Starred):
                spread = self.expr(element.value)
                if not isinstance(spread, (list, tuple)):
                    raise Unknown
                out.extend(spread)
            else:
                out.append(self.value(element))
        return out

    def dict_literal(self, node: ast.Dict) -> dict[Any, Any]:
        result: dict[Any, Any] = {}
        written: set[Any] = set()  # keys spelled in this literal: `{**base, "lr": 3}` overrides legally
        for key_node, value_node in zip(node.keys, node.values):
            if key_node is None:  # `{**base, ...}`
                spread = self.expr(value_node)
                if not isinstance(spread, dict) or isinstance(spread, CallData):
                    raise Unknown
                result.update(spread)
                continue
            key = self.expr(key_node)
            if not known_key(key):
                raise Unknown
            if key in written:
                raise ConfigError(
                    f"duplicate key {key!r} in dict literal",
                    location=Location(self.filename, key_node.lineno, key_node.col_offset + 1),
                    hint="Python would keep only the last value silently; remove one of them",
                )
            written.add(key)
            result[key] = self.value(value_node)
        return result

    def keywords(self, keywords: list[ast.keyword]) -> dict[str, Any]:
        result: dict[str, Any] = {}
        for kw in keywords:
            if kw.arg is None:
                spread = self.value(kw.value)
                if _spreads_as_keywords(spread):
                    twice = next((k for k in spread if k in result), None)
                    if twice is not None:
                        # Python raises TypeError (multiple values for keyword argument): the
                        # config does not load, never the value one of them gives
                        raise ConfigError(
                            f"keyword argument `{twice}` given twice (once by `**{ast.unparse(kw.value)}`)",
                            location=Location(self.filename, kw.lineno, kw.col_offset + 1),
                            hint="Python refuses the call; remove one of them",
                        )
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
            if isinstance(receiver, NotEvaluated):
                raise Unknown  # kept whole, with the values its receiver reads (kept_reading)
            if type(receiver) is CallData and isinstance(node.func.value, ast.Call):
                # `globals().update(lr=2)`, `get_cfg().pop("lr")`: a method of what a call returned
                # works on an object the program may hold elsewhere, never on this call's record
                raise Unknown
            if type(receiver) in _METHODS:  # data, a LazyCall's CallData, a string
                return self.method(receiver, node.func.attr, node)
        kept = self.kept_iterator(node)
        if kept is not None:
            return kept
        name = dotted(node.func)
        args = self.sequence(node.args, list)
        kwargs = self.keywords(node.keywords)
        function = self.local_function(name)
        if function is not None:
            return self.call_function(function, args, dict(kwargs))
        return self.data_call(name, args, kwargs, node)

    def local_function(self, name: str | None) -> Function | None:
        """The function a plain name calls when the config defines it (in this scope or at module
        level); a dotted name never calls one."""
        if name is None or "." in name or (name not in self.scopes[-1] and name not in self.scopes[0]):
            return None
        bound = self.lookup(name)
        return bound if isinstance(bound, Function) else None

    def data_call(self, name: str | None, args: list[Any], kwargs: dict[str, Any], node: ast.Call) -> Any:
        """What a call the config does not define evaluates to: ``dict()``, ml_collections'
        constructors (by the import that bound the name), the builtins that are data, a copy;
        any other call is kept as ``CallData``."""
        found = self.builtin_call(name, args, kwargs)
        if found is not _NOT_BUILTIN:
            return found
        short = (name or "").rsplit(".", 1)[-1]
        if self.ml_constructor(name, short, args):
            return _ml_call(short, args, kwargs, node)
        imported = self.imported(name) or ""
        copier = _COPIES.get(imported)
        if copier is not None and len(args) == 1:
            return copier(args[0])  # copy.copy is shallow: its items stay shared, as in Python
        if imported == "dataclasses.replace" and len(args) == 1 and isinstance(args[0], CallData):
            return _replaced(args[0], kwargs)
        data = CallData()
        data["call"] = self.callee(name) if name is not None else ast.unparse(node.func)
        data["args"] = args
        data["kwargs"] = kwargs
        self.given.note(data, node)
        return data

    def callee(self, name: str) -> str:
        """A called name as spelled, or as the reference its root holds where an assignment bound
        it (``m = A; m.f()`` calls ``A.f``): the same spelling over another binding is another
        call."""
        root, dot, rest = name.partition(".")
        bound = self.lookup(root) if self.visible(root) else None
        if not isinstance(bound, Ref) or self.import_bound.get(root) is bound:
            return name  # an import's own name, or data (whose method calls read it: kept_reading)
        return f"{bound}{dot}{rest}"

    def builtin_call(self, name: str | None, args: list[Any], kwargs: dict[str, Any]) -> Any:
        """``dict()`` or a builtin that is data, called by its own name; ``_NOT_BUILTIN`` for a name
        the config binds itself (`max = min`, `from lib import dict`, a loop variable, a
        parameter): that binding is what runs, never the builtin."""
        if name is None or self.visible(name):
            return _NOT_BUILTIN
        if name in _NAME_TABLES:
            raise Unknown  # `eval("lr")`, `dict(globals())`: kept with every name's value (kept_reading)
        if name == "dict":
            return _dict_of(args, kwargs)
        builtin = _BUILTINS.get(name)
        return _NOT_BUILTIN if builtin is None else _call_builtin(builtin, args, kwargs)

    def ml_constructor(self, name: str | None, short: str, args: list[Any]) -> bool:
        """An ml_collections constructor, by the import that bound the name (``FieldReference``
        with no value is some other call)."""
        if short not in _ML_CALLS or (short == "FieldReference" and not args):
            return False
        return is_ml(self.imported(name))

    def views_iterated(self) -> set[int]:
        """The dict views read as their items (``iterated_views``), found the first time one is met."""
        if self.iterated_views is None:
            self.iterated_views = iterated_views(self.statements)
        return self.iterated_views

    def kept_iterator(self, node: ast.Call) -> KeptView | None:
        """``zip(a, b)``, ``enumerate(a)``, ``reversed(a)`` kept (not iterated where written): an
        iterator over the objects given, read when it is read (live, as a view is); None for one
        iterated where it is written (its items), or a name the file binds itself."""
        func = node.func
        if not isinstance(func, ast.Name) or func.id not in _LAZY or self.visible(func.id):
            return None
        if id(node) in self.views_iterated():
            return None
        held = self.sequence(node.args, list)
        return KeptView(normalised(node), held, self.read_text, self.filename, node.lineno)

    def method(self, receiver: Any, method: str, node: ast.Call) -> Any:
        if type(receiver) is dict and method in _VIEWS and id(node) not in self.views_iterated():
            # a view kept (`b = a.keys()`) is no list: not subscriptable, not JSON, and live (a key
            # added to `a` later shows in it, `a = {}` later leaves it on the old dict); only one
            # iterated where it is written is its items
            if node.args or node.keywords:
                raise Unknown  # a TypeError to Python: kept as source
            return KeptView(normalised(node), receiver, self.read_text, self.filename, node.lineno)
        args = self.sequence(node.args, list)
        kwargs = self.keywords(node.keywords)
        return _METHODS[type(receiver)](receiver, method, args, kwargs)

    def binop(self, op: ast.operator, left: Any, right: Any, node: ast.AST) -> Any:
        if _repeats(op, left, right):
            return left * right  # `[ShapeSpec(channels=256)] * 5`: repetition needs no known items
        function = _BINOPS.get(type(op))
        if _joins_containers(op, left, right) and binop_fits(op, left, right):
            # `hooks + [dict(type=EvalHook)]`, `cfg | {"a": torch.float16}`: joining containers
            # never looks at their items, so items holding references or calls join as they are
            return function(left, right)  # type: ignore[misc]
        if (
            function is None
            or not _computable(op, left, right)
            or (isinstance(left, str) and hash_ordered(right))
        ):
            # past a bound (pybounds) or not computable: kept as source
            return self.kept_reading(node) if isinstance(node, ast.stmt) else raise_unknown()
        return function(left, right)

    def augmented(self, op: ast.operator, current: Any, right: Any, node: ast.AugAssign) -> Any:
        """``x += y`` / ``x *= n`` / ``x |= y``: a list extended or repeated and a dict updated in
        place, as Python does (so
        every holder of ``x`` sees it, as with ``.extend``/``.update``); else ``x = x <op> y``."""
        if _updates_in_place(op, current, right):
            return _in_place(op, current, right)
        if type(current) is list and isinstance(op, ast.Mult) and type(right) is int:
            if not _repeats(op, current, right):  # past the size bound: every holder is unknown
                self.tainted[id(current)] = current
                return self.opaque(node)
            current[:] = current * right  # `x *= 2` repeats the list in place, as Python does
            return current
        try:
            result = self.binop(op, current, right, node)
        except (ArithmeticError, ValueError, TypeError, MemoryError):
            result = self.kept_reading(node)  # what Python refuses (`x = []; x += 0`) is kept as source
        if isinstance(result, NotEvaluated) and type(current) in (list, dict, set):
            # `l += "ab"`, `d |= pairs`, `l += f()`: Python changes the object itself, for every holder
            self.tainted[id(current)] = current
        return result

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
            if not known(out):
                raise Unknown
            return set(out)
        return out

    def _generate(self, node: Any, index: int, local: dict[str, Any], out: list[Any]) -> None:
        if index == len(node.generators):
            self._emit(node, out)
            return
        generator = node.generators[index]
        for item in self._items(generator):
            self.bind(local, generator.target, item, ast.Pass())
            if self._kept(generator):
                self._generate(node, index + 1, local, out)

    def _items(self, generator: ast.comprehension) -> list[Any]:
        """What a ``for`` of a comprehension iterates: a known container or range (never async)."""
        items = self.expr(generator.iter)
        if not isinstance(items, (list, tuple, str, dict, range)) or not known(items) or generator.is_async:
            raise Unknown
        return list(items)

    def _kept(self, generator: ast.comprehension) -> bool:
        """Whether the current item passes the ``if`` clauses, each known."""
        tests = [self.expr(test) for test in generator.ifs]
        if not known(tests):
            raise Unknown
        return all(tests)

    def _emit(self, node: Any, out: list[Any]) -> None:
        """The comprehension's item (a key and value for a dict), once every ``for`` is bound."""
        if isinstance(node, ast.DictComp):
            key = self.expr(node.key)
            if not known_key(key):
                raise Unknown
            out.append((key, self.value(node.value)))
        else:
            out.append(self.value(node.elt))
        if len(out) > LOOP_LIMIT:
            raise Unknown
        self.tick(node)


def _known(value: Any) -> Any:
    return raise_unknown() if value is None else value


def _call_builtin(builtin: Callable[..., Any], args: list[Any], kwargs: dict[str, Any]) -> Any:
    """A builtin called on known positional values, within the work bound; anything else is unknown."""
    if kwargs or not known(args) or not fits_work(args):
        raise Unknown
    if builtin not in _ORDER_FREE and hash_ordered(args):
        raise Unknown  # list(s), str(s) of a set of strings: another order in the running program
    return builtin(*args)


_NOT_BUILTIN = object()  # builtin_call's answer for a call that is no builtin's
_ORDER_FREE = {sorted, len, min, max, set, bool}
_ITERABLE_DATA = (
    list,
    tuple,
    str,
    dict,
    set,
    frozenset,
)  # exact types: what `.extend` may take  # builtins whose result no iteration order changes


def _shallow_copy(value: Any) -> Any:
    """``copy.copy``: an object's attributes are its own in the copy (a call's record gets its own
    keywords, so ``a.b = 5`` after ``c = copy.copy(a)`` never reaches ``c``); their values stay
    shared, as in Python."""
    return _own_record(value) if isinstance(value, CallData) else copy.copy(value)


def _own_record(value: CallData) -> CallData:
    """A call's record with its own argument list and keywords (their values shared)."""
    twin = CallData(value)
    twin["args"], twin["kwargs"] = list(value["args"]), dict(value["kwargs"])
    return twin


def _replaced(record: CallData, changes: dict[str, Any]) -> CallData:
    """``dataclasses.replace(obj, **changes)``: a new object of obj's class, built from its fields
    then (an attribute set on obj afterwards never reaches it) with ``changes`` over them. A record
    with positional arguments (which fields they bind the class knows) is the copy given to a
    ``replace`` call, kept as one."""
    if record["args"]:
        return CallData(call="dataclasses.replace", args=[_own_record(record)], kwargs=changes)
    twin = _own_record(record)
    twin["kwargs"].update(changes)
    return twin


_COPIES: dict[str, Callable[[Any], Any]] = {"copy.deepcopy": copy.deepcopy, "copy.copy": _shallow_copy}
_BUILTINS: dict[str, Callable[..., Any]] = {
    "list": list, "tuple": tuple, "set": set, "sorted": sorted, "len": len, "min": min, "max": max,
    "sum": lambda *a: _known(bounded_sum(*a)), "abs": abs, "round": round, "int": int, "float": float,
    "str": str, "bool": bool,
    "range": lambda *a: list(range(*a)) if len(range(*a)) <= LOOP_LIMIT else raise_unknown(),
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


# a set's augmented operators change it in place (every holder sees it); each returns the set
_SET_IN_PLACE = {ast.BitOr: "__ior__", ast.BitAnd: "__iand__", ast.Sub: "__isub__", ast.BitXor: "__ixor__"}


def _updates_in_place(op: ast.operator, current: Any, right: Any) -> bool:
    """``a_list += items``, ``a_dict |= a_dict``, ``a_set |= a_set`` (``&= -= ^=``): the object
    itself changes, as Python does it, so every holder sees it."""
    if type(current) is dict:
        return isinstance(op, ast.BitOr) and type(right) is dict
    if type(current) is set:
        return type(op) in _SET_IN_PLACE and type(right) in (set, frozenset)
    return _extends(op, current, right)


def _in_place(op: ast.operator, current: Any, right: Any) -> Any:
    if type(current) is list:
        current.extend(right)
        return current
    if type(current) is dict:
        current.update(right)
        return current
    return getattr(current, _SET_IN_PLACE[type(op)])(right)


def _repeats(op: ast.operator, left: Any, right: Any) -> bool:
    """``[x] * n`` / ``(x,) * n`` within the size bound."""
    if not isinstance(op, ast.Mult) or type(left) not in (list, tuple) or type(right) is not int:
        return False
    return len(left) * max(right, 0) <= SIZE_LIMIT


def _extends(op: ast.operator, current: Any, right: Any) -> bool:
    """``a_list += a_list_or_tuple`` within the size bound."""
    if type(current) is not list or not isinstance(op, ast.Add) or type(right) not in (list, tuple):
        return False
    return binop_fits(op, current, right)


def _computable(op: ast.operator, left: Any, right: Any) -> bool:
    """Both operands known, and the result within the bounds (pybounds)."""
    return known(left) and known(right) and binop_fits(op, left, right)


def _names_read(node: ast.AST) -> set[str]:
    """The plain names an expression names: what it reads (``x += 1`` reads x too); one it binds
    (``(n := 3)``) adds a value, never hides one."""
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}


_NAME_TABLES = frozenset(("globals", "vars", "locals", "eval", "dir"))


def _reads_every_name(node: ast.AST) -> bool:
    """Does ``node`` call a builtin that reads names by a string (``globals()``, ``eval(...)``), or
    reach the module through ``sys.modules``?"""
    return any(
        (isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id in _NAME_TABLES)
        or (isinstance(n, ast.Attribute) and n.attr == "modules")  # sys.modules[__name__].lr
        for n in ast.walk(node)
    )


def _shown_read(name: str, value: Any) -> bool:
    """A function shows where it is defined, a plain import (``os``) is its own name."""
    return not isinstance(value, Function) and not (isinstance(value, Ref) and value == name)


def _joins_containers(op: ast.operator, left: Any, right: Any) -> bool:
    """``list + list``, ``tuple + tuple``, ``dict | dict``: plain containers, of one type."""
    if isinstance(op, ast.Add):
        return type(left) is type(right) and type(left) in (list, tuple)
    return isinstance(op, ast.BitOr) and type(left) is dict and type(right) is dict


def _spreads_as_keywords(spread: Any) -> bool:
    """``**mapping`` of a plain mapping with string keys: its items are keywords; anything else is
    kept whole under its source."""
    if not isinstance(spread, dict) or isinstance(spread, CallData):
        return False
    return all(isinstance(k, str) for k in spread)


def _dict_of(args: list[Any], kwargs: dict[str, Any]) -> dict[str, Any]:
    """``dict(...)`` (or ml_collections' ConfigDict) of known arguments: at most one mapping, then
    keywords; anything else is not known without running it."""
    if len(args) > 1 or (args and not isinstance(args[0], dict)) or any(k.startswith("**") for k in kwargs):
        raise Unknown
    base = dict(args[0]) if args else {}
    base.update(kwargs)
    return base


def _ml_call(short: str, args: list[Any], kwargs: dict[str, Any], node: ast.Call) -> Any:
    """ml_collections' constructors: ``placeholder`` is a reference left to fill, ``FieldReference(x)``
    is x, ``ConfigDict``/``FrozenConfigDict``/``create`` build a dict."""
    if short == "placeholder":
        return Ref(f"placeholder({', '.join(ast.unparse(a) for a in node.args)})")
    if short == "FieldReference":
        return args[0]
    return _dict_of(args, kwargs)


_ML_CALLS = {"ConfigDict", "FrozenConfigDict", "create", "placeholder", "FieldReference"}


def _call_data_method(receiver: CallData, method: str, args: list[Any], kwargs: dict[str, Any]) -> Any:
    """detectron2's LazyCall is a mapping of its keyword arguments: update/pop edit them."""
    target = receiver["kwargs"]
    if method == "update" and len(args) <= 1 and all(isinstance(a, dict) for a in args):
        target.update(*args, **kwargs)
        return None
    if method == "pop" and 1 <= len(args) <= 2 and not kwargs:
        return target.pop(*args)
    raise Unknown


def _dict_method(receiver: dict[Any, Any], method: str, args: list[Any], kwargs: dict[str, Any]) -> Any:
    """mmengine's recursive ``merge`` (``_delete_`` replaces), ``update``, ml_collections'
    ``get_ref``, and the methods that read (``keys()`` and the like as lists)."""
    if method == "merge" and len(args) == 1 and isinstance(args[0], dict):
        merge_into(receiver, args[0])
        return None
    if method == "update" and len(args) <= 1:
        if args and type(args[0]) not in (dict, list, tuple):
            raise Unknown  # a call's record (a dict subclass) is no mapping of the program's
        receiver.update(*args, **kwargs)
        return None
    if method == "get_ref" and len(args) == 1:
        return receiver[args[0]]
    return _dict_positional(receiver, method, args, kwargs)


def _dict_positional(receiver: dict[Any, Any], method: str, args: list[Any], kwargs: dict[str, Any]) -> Any:
    """``get``/``setdefault``/``pop``/``copy`` and the views (as lists: a view is no data, its
    items are), called with positional arguments only."""
    if kwargs or method not in ("get", "setdefault", "pop", "copy", "keys", "values", "items", "clear"):
        raise Unknown
    result = getattr(receiver, method)(*args)
    return list(result) if method in ("keys", "values", "items") else result


_VIEWS = ("keys", "values", "items")
# the builtins that return an iterator over what they are given, read when it is read
_LAZY = frozenset({"zip", "enumerate", "reversed"})
_ITERATING_METHODS = frozenset({"join", "extend", "update"})
# the builtins that only iterate what they are given (so a dict view there reads as its items)
_ITERATING = {"list", "tuple", "sorted", "set", "frozenset", "len", "sum", "min", "max", "any", "all", "dict"}


def iterated_views(statements: list[ast.stmt]) -> set[int]:
    """The ``d.keys()``/``values()``/``items()`` calls of a file (by id) that are iterated where
    they are written: a ``for`` or comprehension's iterable, a ``*`` unpacking, an ``in`` test, the
    argument of a builtin that iterates it (``list(d.items())``)."""
    places = [place for stmt in statements for node in ast.walk(stmt) for place in _iterated_places(node)]
    return {id(place) for place in places if _is_lazy(place)}


def _later_reads(node: ast.GeneratorExp) -> list[str]:
    """The names a generator expression reads when it runs: past its first iterable, its own loop
    variables aside."""
    own = _names_in([g.target for g in node.generators])
    conditions = [c for g in node.generators for c in g.ifs]
    return sorted(_names_in([node.elt, *(g.iter for g in node.generators[1:]), *conditions]) - own)


def _cells(node: ast.FunctionDef | ast.AsyncFunctionDef, enclosing: list[dict[str, Any]]) -> list[str]:
    """The names a nested ``def``'s body reads that an enclosing function binds: its closure."""
    body = _names_read(ast.Module(body=node.body, type_ignores=[])) - _parameters(node.args)
    return sorted(name for name in body if any(name in scope for scope in enclosing))


def _innermost(scopes: list[dict[str, Any]], name: str) -> Any:
    return next(scope[name] for scope in reversed(scopes) if name in scope)


def _parameters(args: ast.arguments) -> set[str]:
    every = [*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg]
    return {a.arg for a in every if a is not None}


def _names_in(parts: list[ast.expr]) -> set[str]:
    return {n.id for part in parts for n in ast.walk(part) if isinstance(n, ast.Name)}


def _is_lazy(place: ast.expr) -> bool:
    """A dict view, ``zip``/``enumerate``/``reversed`` or a generator expression: what Python
    iterates when it is read, not where it is made."""
    if isinstance(place, ast.GeneratorExp):
        return True
    if not isinstance(place, ast.Call):
        return False
    return _is_view(place.func) or (isinstance(place.func, ast.Name) and place.func.id in _LAZY)


def _is_view(func: ast.expr) -> bool:
    return isinstance(func, ast.Attribute) and func.attr in _VIEWS


def _iterated_places(node: ast.AST) -> list[ast.expr]:
    """The expressions ``node`` iterates where they are written."""
    places = _PLACES.get(type(node))
    return places(node) if places is not None else []


def _membership(node: ast.Compare) -> list[ast.expr]:
    return node.comparators if all(type(op) in (ast.In, ast.NotIn) for op in node.ops) else []


def _iterating_call(node: ast.Call) -> list[ast.expr]:
    if isinstance(node.func, ast.Attribute) and node.func.attr in _ITERATING_METHODS:
        return node.args[:1]  # `", ".join(x for x in a)`, `cbs.extend(...)`
    if not isinstance(node.func, ast.Name):
        return []
    if node.func.id in _LAZY:
        return []  # itself lazy: its arguments are iterated where it is
    return node.args[:1] if node.func.id in _ITERATING else []


_PLACES: dict[type, Callable[[Any], list[ast.expr]]] = {
    ast.For: lambda node: [node.iter],
    ast.comprehension: lambda node: [node.iter],
    ast.Starred: lambda node: [node.value],
    ast.Compare: _membership,
    ast.Call: _iterating_call,
}


_LIST_METHODS = ("append", "extend", "insert", "pop", "copy", "index", "count", "remove", "clear", "reverse")


def _list_method(receiver: list[Any], method: str, args: list[Any], kwargs: dict[str, Any]) -> Any:
    if method == "extend" and (not args or type(args[0]) not in _ITERABLE_DATA or hash_ordered(args[0])):
        # only data iterates as Python iterates it: a call's record or a reference is no list of
        # items (extending by one would add its keys or letters), and a set of strings has no order
        raise Unknown
    if method in _LIST_METHODS and not kwargs:
        return getattr(receiver, method)(*args)
    if method == "sort" and not args and _sorts(receiver, kwargs):
        return receiver.sort(**kwargs)
    raise Unknown


def _sorts(receiver: list[Any], kwargs: dict[str, Any]) -> bool:
    """``a.sort()`` (or ``reverse=True``) over numbers only or strings only: Python's order."""
    if kwargs not in ({}, {"reverse": True}, {"reverse": False}):
        return False
    kinds = {_SORT_KIND.get(type(item)) for item in receiver}
    return len(kinds) <= 1 and None not in kinds


_SORT_KIND = {int: float, float: float, str: str}  # bool is no number here: True sorts as 1


def _str_method(receiver: str, method: str, args: list[Any], kwargs: dict[str, Any]) -> Any:
    """A string method on known arguments, within the bounds (pybounds) on work and size."""
    if method not in _STR_METHODS or not (known(args) and known(kwargs)) or hash_ordered([args, kwargs]):
        raise Unknown
    if not str_method_fits(receiver, method, args, kwargs):
        raise Unknown
    result = getattr(receiver, method)(*args, **kwargs)
    if isinstance(result, str) and len(result) > SIZE_LIMIT:
        raise Unknown
    return result


# the receivers whose methods are evaluated, by exact type (what `is_data` reads as data, a LazyCall,
# a string): a subclass of them is some other object
_METHODS: dict[type, Callable[[Any, str, list[Any], dict[str, Any]], Any]] = {
    CallData: _call_data_method,
    dict: _dict_method,
    list: _list_method,
    str: _str_method,
}
