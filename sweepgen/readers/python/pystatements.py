"""Statements in the Python config reader: module, class and function bodies, assignments (to names,
subscripts, attributes, ``_base_.x``), ``del``, imports, and ``if``/``for`` over known values; an
``if`` or ``for`` that cannot be decided is run on copies of the state and recorded under ``@when``
(``pybranch``); anything else is kept as source under ``__statements__``.
"""

from __future__ import annotations

import ast
import copy
import re
from typing import Any

from sweepgen.errors import ConfigError, Location
from sweepgen.readers.model import NotEvaluated, Ref, tree_size
from sweepgen.readers.python.pybranch import overlay
from sweepgen.readers.python.pyexpressions import Expressions
from sweepgen.readers.python.pymlcollections import file_config
from sweepgen.readers.python.pyrebind import rebinds_any
from sweepgen.readers.python.pyvalues import (
    LOOP_LIMIT,
    NO_DEFAULT,
    SIZE_LIMIT,
    CallData,
    Function,
    Return,
    Unknown,
    dotted,
    is_docstring,
    known,
    known_key,
    normalised,
)

_CALL_DEPTH = 50
_STEP_LIMIT = 300_000
_BRANCH_BUDGET = 2_000_000


class _Jump(Exception):
    """A ``break`` or ``continue`` inside a loop the reader runs item by item: ends the pass."""

    def __init__(self, stmt: ast.stmt) -> None:
        self.stmt = stmt


class _UncertainJump(Exception):
    """A ``break`` or ``continue`` under a condition that cannot be known: what the loop does
    from there on is not known."""


class Evaluator(Expressions):
    """A config file's statements, run as far as they are data."""

    loops = 0  # loops run item by item around the statement now running, in this body

    # module, class and function bodies ---------------------------------------------------------

    def module(self, statements: list[ast.stmt]) -> dict[str, Any]:
        scope: dict[str, Any] = ModuleScope()
        rest: list[Any] = []
        self.walrus = {n.target.id for s in statements for n in ast.walk(s) if isinstance(n, ast.NamedExpr)}
        self.statements, self.iterated_views = statements, None
        self.scopes.append(scope)
        self.run(statements, scope, rest, top=True)
        getter = scope.get("get_config")
        if isinstance(getter, Function):
            config = self.get_config(getter, scope)
            self.given.settle()
            return config
        self.given.settle()
        self.settle_script_only()
        out = _scope_data(scope, rest)
        rebound = self.still_rebound(scope)
        if rebound:
            out["__rebound__"] = rebound
        changed = self.changed_by_calls(scope) if self.tainted else []
        if changed:
            out["__changed_by_calls__"] = changed
        return out

    def changed_by_calls(self, scope: dict[str, Any]) -> list[str]:
        """The module names whose value holds a container a call not followed was given (``set_lr(
        cfg, 2)``): their values as shown are the ones before that call, so which names share
        what it was given (``cfg = base`` or ``cfg = copy.deepcopy(base)``) is part of the data."""
        return [n for n, v in scope.items() if not n.startswith("__") and _holds(v, self.tainted)]

    def get_config(self, getter: Function, scope: dict[str, Any]) -> dict[str, Any]:
        """An ml_collections config file is what its ``get_config()`` returns (its source when that
        cannot be followed), with the module's other functions as helpers."""
        try:
            config = self.call_function(getter, [], {})
        except Unknown:
            config = getter.source
        helpers = {k: v.source for k, v in scope.items() if isinstance(v, Function) and k != "get_config"}
        return file_config(config, helpers)

    def class_body(self, node: ast.ClassDef) -> dict[str, Any]:
        scope: dict[str, Any] = {}
        rest: list[Any] = []
        self.scopes.append(scope)
        self.class_scopes.add(id(scope))
        loops, self.loops = self.loops, 0  # a `break` in a class body is not the enclosing loop's
        try:
            self.run(node.body, scope, rest)
        finally:
            self.scopes.pop()
            self.class_scopes.discard(id(scope))
            self.loops = loops
        mapping = _scope_data(scope, rest)
        annotated = scope.get("__annotations__")
        if isinstance(annotated, dict) and len(annotated) > 1:
            # a dataclass's (NamedTuple's, attrs') fields are its annotations in order, and
            # positional arguments bind by it: `C(3.0)` sets another field once two are swapped
            mapping["__field_order__"] = list(annotated)
        if _is_enum(node):
            # an Enum's members are in order: `list(E)`, its first member, and `auto()` (1, 2, ...)
            # follow it, so swapping two members changes what the program reads
            mapping["__member_order__"] = [k for k, v in scope.items() if _member(k, v)]
        mapping.update(self.class_header(node))
        return mapping

    def class_header(self, node: ast.ClassDef) -> dict[str, Any]:
        """What a class statement says besides its body: bases, keywords and decorators, if any."""
        mapping: dict[str, Any] = {}
        if node.bases:
            mapping["__bases__"] = [self.value(base) for base in node.bases]
        if node.keywords:
            mapping["__keywords__"] = self.keywords(node.keywords)
        if node.decorator_list:
            mapping["__decorators__"] = [self.value(dec) for dec in node.decorator_list]
        return mapping

    def define(self, stmt: ast.FunctionDef | ast.AsyncFunctionDef) -> Function:
        """A ``def``: its defaults evaluated now, in the scope that defines it, as Python does."""
        params = stmt.args
        defaults = [self.value(d) for d in params.defaults]
        kw_defaults = [NO_DEFAULT if d is None else self.value(d) for d in params.kw_defaults]
        given = [*defaults, *(d for d in kw_defaults if d is not NO_DEFAULT)]
        return Function(stmt, self.kept_def(stmt, given), defaults, kw_defaults)

    def call_function(self, function: Function, args: list[Any], kwargs: dict[str, Any]) -> Any:  # noqa: C901, PLR0912 - binds Python's argument kinds one after another, as the interpreter does
        if self.depth >= _CALL_DEPTH:
            raise Unknown
        node = function.node
        local: dict[str, Any] = {}
        params = node.args
        positional = [*params.posonlyargs, *params.args]
        defaults = [NO_DEFAULT] * (len(positional) - len(function.defaults)) + function.defaults
        if len(args) > len(positional) or params.vararg or params.kwarg:
            raise Unknown
        if any(param.arg in kwargs for param in params.posonlyargs):
            raise Unknown  # a positional-only parameter given by keyword: a TypeError to Python
        for index, (param, default) in enumerate(zip(positional, defaults)):
            if index < len(args):
                local[param.arg] = args[index]
            elif param.arg in kwargs:
                local[param.arg] = kwargs.pop(param.arg)
            elif default is not NO_DEFAULT:
                local[param.arg] = default  # the one object, as Python shares it between calls
            else:
                raise Unknown
        for param, kw_default in zip(params.kwonlyargs, function.kw_defaults):
            if param.arg in kwargs:
                local[param.arg] = kwargs.pop(param.arg)
            elif kw_default is not NO_DEFAULT:
                local[param.arg] = kw_default
            else:
                raise Unknown
        if kwargs:
            raise Unknown
        self.depth += 1
        self.scopes.append(local)
        loops, self.loops = self.loops, 0  # the caller's loop is not the body's
        try:
            rest: list[Any] = []
            self.run(node.body, local, rest)
            if rest:  # a statement we could not follow may have changed what is returned
                raise Unknown
        except Return as done:
            return done.value
        finally:
            self.scopes.pop()
            self.depth -= 1
            self.loops = loops
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
            if index == 0 and is_docstring(stmt):
                continue  # a docstring is documentation, not data
            if top and isinstance(stmt, _BINDING):
                for name in _bound_names(stmt):
                    self.result.lines.setdefault((name,), stmt.lineno)
            self.statement(stmt, scope, rest)

    def statement(self, stmt: ast.stmt, scope: dict[str, Any], rest: list[Any]) -> None:
        self.one_statement(stmt, scope, rest)
        if rebinds_any(stmt):
            self.mark_rebound(stmt)

    def one_statement(self, stmt: ast.stmt, scope: dict[str, Any], rest: list[Any]) -> None:  # noqa: C901, PLR0912, PLR0915 - one branch per ast.stmt node type: a table to read, not to split
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
            updated = self.augmented(stmt.op, current, self.value(stmt.value), stmt)
            self.bind(scope, stmt.target, updated, stmt)
        elif isinstance(stmt, ast.Import):
            for alias in stmt.names:
                bound = alias.asname or alias.name.split(".")[0]
                scope[bound] = self.import_bound[bound] = Ref(alias.name if alias.asname else bound)
                if not alias.asname and "." in alias.name:
                    scope.setdefault("__imports__", []).append(Ref(alias.name))
        elif isinstance(stmt, ast.ImportFrom):
            self.import_from(stmt, scope, rest)
        elif isinstance(stmt, ast.ClassDef):
            scope[stmt.name] = self.class_body(stmt)
        elif isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
            scope[stmt.name] = self.define(stmt)
        elif isinstance(stmt, ast.Delete):
            for target in stmt.targets:
                self.unbind(scope, target, rest, stmt)
        elif isinstance(stmt, ast.Return):
            raise Return(None if stmt.value is None else self.value(stmt.value))
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
                if isinstance(stmt.value, ast.Call):
                    self.taint_call(stmt.value)
        elif isinstance(stmt, ast.If):
            test = self.value(stmt.test)
            if known(test):
                self.run_block(stmt.body if test else stmt.orelse, scope, rest)
                skipped = _script_only_branch(stmt, bool(test))
                if skipped is not None:
                    self.script_only(skipped, rest)
            else:
                condition = normalised(stmt.test)
                branches = [(condition, stmt.body)]
                if stmt.orelse:
                    branches.append((f"not ({condition})", stmt.orelse))
                self.undecided(stmt, branches, scope, rest)
        elif isinstance(stmt, (ast.Break, ast.Continue)) and self.loops:
            raise _Jump(stmt)
        elif isinstance(stmt, ast.For):
            items = self.value(stmt.iter)
            if isinstance(items, (list, tuple, str, dict)) and known(items) and len(items) <= LOOP_LIMIT:
                self.known_loop(stmt, list(items), scope, rest)
            elif not stmt.orelse:
                head = f"for {normalised(stmt.target)} in {normalised(stmt.iter)}"
                self.undecided(stmt, [(head, stmt.body)], scope, rest, loop=stmt)
            else:
                self.unknown_block(stmt, scope, rest)
        elif isinstance(stmt, ast.With) and self.import_base is not None and _is_read_base(stmt):
            self.in_read_base = True
            try:
                self.run_block(stmt.body, scope, rest)
            finally:
                self.in_read_base = False
        else:
            self.unknown_block(stmt, scope, rest)

    def known_loop(self, stmt: ast.For, items: list[Any], scope: dict[str, Any], rest: list[Any]) -> None:
        """A ``for`` over known items, as Python runs it: ``continue`` ends the pass, ``break`` the
        loop (and skips its ``else``). A jump under a condition that cannot be known leaves what
        the loop binds not known."""
        self.loops += 1
        try:
            for item in items:
                self.bind(scope, stmt.target, item, stmt)
                try:
                    self.run_block(stmt.body, scope, rest)
                except _Jump as jump:
                    if isinstance(jump.stmt, ast.Break):
                        return
        except _UncertainJump:
            self.unknown_block(stmt, scope, rest)
            return
        finally:
            self.loops -= 1
        self.run_block(stmt.orelse, scope, rest)

    def script_only(self, branch: ast.If, rest: list[Any]) -> None:
        """Keep ``branch`` (run only as a script) as its source, with the values it reads now: the
        ones a later statement changes are told at the end (``settle_script_only``)."""
        reads = {
            name: self.read_text(self.lookup(name)) for name in self.names_read(branch) if self.visible(name)
        }
        self.pending_script_only.append((rest, len(rest), reads))
        rest.append(self.opaque(branch))

    def settle_script_only(self) -> None:
        """Add to each kept ``__main__`` branch the names it reads that hold another value at the end
        of the file (``lr = 2`` moved past the block is a change; a value changed before it shows
        where it is bound, not twice)."""
        for rest, at, reads in self.pending_script_only:
            moved = [f"{n}={then}" for n, then in reads.items() if self.read_text(self.lookup(n)) != then]
            if moved:
                kept = rest[at]
                rest[at] = NotEvaluated(f"{kept.source} where {', '.join(moved)}", kept.where, kept.line)

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
        (``sweepgen.readers.python.pybranch``); the state before it stays as it was."""
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
        except (Return, Unknown):
            self.scopes = saved
            self.unknown_block(stmt, scope, rest)
            return
        except _Jump:
            self.scopes = saved
            raise _UncertainJump from None
        finally:
            self.scopes = saved
        _record(saved, runs, rest)

    def unknown_block(self, stmt: ast.stmt, scope: dict[str, Any], rest: list[Any]) -> None:
        """A statement that cannot be followed: kept as source, and what it binds is unknown."""
        kept = self.kept_reading(stmt)  # with the values it reads: it runs with them
        rest.append(kept)
        for name in _assigned_anywhere(stmt):
            self.taint(ast.Name(id=name, ctx=ast.Load()))  # `a.append(1)` in it: every holder of a
            scope[name] = kept

    def import_from(self, stmt: ast.ImportFrom, scope: dict[str, Any], rest: list[Any]) -> None:
        module = "." * stmt.level + (stmt.module or "")
        if stmt.level and self.import_base is not None:
            names = self.import_base(stmt.module or "", stmt.level, stmt.lineno)
            self.bind_imported(stmt, module, names, scope)
            return
        self.refer(stmt, module, scope, rest)

    def refer(self, stmt: ast.ImportFrom, module: str, scope: dict[str, Any], rest: list[Any]) -> None:
        """``from m import x`` of a module the reader does not read: each name a reference to
        ``m.x``; ``import *`` (which names, is not known) kept as source."""
        sep = "" if module.endswith(".") else "."
        for alias in stmt.names:
            if alias.name == "*":
                rest.append(self.opaque(stmt))
                self.mark_rebound(stmt)  # the module may bind any name, those bound before it too
            else:
                name = alias.asname or alias.name
                scope[name] = self.import_bound[name] = Ref(f"{module}{sep}{alias.name}")

    def bind_imported(
        self, stmt: ast.ImportFrom, module: str, names: dict[str, Any], scope: dict[str, Any]
    ) -> None:
        """``from .base import x`` in an mmengine config: the names the base file binds, read."""
        for alias in stmt.names:
            if alias.name == "*":
                scope.update(self.star_imported(stmt, module, names))
            elif alias.name in names:
                scope[alias.asname or alias.name] = names[alias.name]
            else:
                raise ConfigError(
                    f"`{module}` has no name `{alias.name}`",
                    location=Location(self.filename, stmt.lineno, stmt.col_offset + 1),
                    hint="the base file must bind that name at module level",
                )

    def star_imported(self, stmt: ast.ImportFrom, module: str, names: dict[str, Any]) -> dict[str, Any]:
        """The names ``from .base import *`` binds: in ``with read_base():`` every name the base's
        config holds (mmengine's lazy import copies all but dunders, ``_x`` and ``__all__`` aside);
        elsewhere Python's: those ``__all__`` lists, else those not starting with ``_``."""
        if self.in_read_base:
            return _without(names, "__")
        listed = names.get("__all__")
        if listed is None:
            return _without(names, "_")
        if not _names_bound(listed, names):
            raise ConfigError(
                f"`{module}`'s `__all__` is not a list of the names it binds, so `import *` cannot be read",
                location=Location(self.filename, stmt.lineno, stmt.col_offset + 1),
                hint="list in `__all__` names the base file binds at module level, or import them by name",
            )
        return {n: names[n] for n in listed}

    def bind(self, scope: dict[str, Any], target: ast.expr, value: Any, stmt: ast.stmt) -> None:
        spelled = dotted(target)
        if spelled is not None and spelled.startswith("_base_."):
            scope[spelled] = value  # writes into the bases: applied by sweepgen.readers.python.pyinherit
            return
        if isinstance(target, ast.Name):
            scope[target.id] = value
            return
        if isinstance(target, (ast.Tuple, ast.List)):
            self._bind_unpacked(scope, target, value, stmt)
            return
        if isinstance(target, (ast.Attribute, ast.Subscript)) and self.bind_item(target, value, stmt):
            return
        self.keep_unplaced(scope, target, value)

    def keep_unplaced(self, scope: dict[str, Any], target: ast.expr, value: Any) -> None:
        """An assignment this reader cannot place: kept, keyed by its target's source (numbered when
        it repeats: `a[i:j] = v` twice is not once), so it is never lost; what it writes into is
        not known after it."""
        if isinstance(target, (ast.Attribute, ast.Subscript)):
            # what it writes into is what the names it reads hold now: `t.rollout.n = 16` before
            # `t = T(lr=2)` writes into another object than after it (an import's object is named
            # by the target itself: `model.backbone.depth = 101` into a base not followed)
            shown = self.reads_shown(target, imports=False)
            if shown:
                into = NotEvaluated(", ".join(shown), self.filename, target.lineno)
                value = {"@value": value, "@into": into}
            self.taint(target.value)
        spelled, count = ast.unparse(target), 1
        key = spelled
        while key in scope:
            count += 1
            key = f"{spelled} #{count}"
        scope[key] = value

    def bind_item(self, target: ast.Attribute | ast.Subscript, value: Any, stmt: ast.stmt) -> bool:
        """``a.b = v`` / ``a[k] = v`` written into the mapping, LazyCall or list it names; False
        when there is no such place."""
        container = self.value(target.value)
        key: Any = target.attr if isinstance(target, ast.Attribute) else self.value(target.slice)
        path = _literal_path(target)
        if path is not None and len(self.scopes) == 1:
            self.result.lines[path] = stmt.lineno  # `model.backbone.depth = 101` is written here
        if type(key) is slice:
            return _assign_slice(container, key, value)
        holder = _mapping_holder(container, key, target)
        if holder is None and _in_list(container, key):
            holder = container
        if holder is None:
            return False
        holder[key] = value
        return True

    def _bind_unpacked(
        self, scope: dict[str, Any], target: ast.Tuple | ast.List, value: Any, stmt: ast.stmt
    ) -> None:
        """``a, b = value``: item by item when the lengths match and nothing is starred, else every
        name bound to the statement kept as source."""
        if _unpacks(value, target):
            for sub, item in zip(target.elts, value):
                self.bind(scope, sub, item, stmt)
            return
        kept = self.kept_reading(stmt)  # with the value it unpacks
        for sub in target.elts:
            self.bind(scope, sub.value if isinstance(sub, ast.Starred) else sub, kept, stmt)

    def unbind(self, scope: dict[str, Any], target: ast.expr, rest: list[Any], stmt: ast.stmt) -> None:
        if isinstance(target, ast.Name) and target.id in scope:
            del scope[target.id]
            return
        if isinstance(target, (ast.Attribute, ast.Subscript)) and self.delete_item(target):
            return
        rest.append(self.kept_reading(stmt))
        if isinstance(target, (ast.Attribute, ast.Subscript)):
            self.taint(target.value)  # what it deletes from is not known after it

    def delete_item(self, target: ast.Attribute | ast.Subscript) -> bool:
        """``del d["k"]`` / ``del a[0]`` / ``del a[1:]`` done in place (every holder sees it, as in
        Python); False where there is no such item."""
        container = self.value(target.value)
        key = target.attr if isinstance(target, ast.Attribute) else self.value(target.slice)
        holder = _mapping_holder(container, key, target)
        if holder is None and (_in_list(container, key) or (type(container) is list and type(key) is slice)):
            holder = container
        elif holder is not None and key not in holder:
            holder = None
        if holder is None:
            return False
        del holder[key]
        return True


def _unpacks(value: Any, target: ast.Tuple | ast.List) -> bool:
    """A sequence of the target's length, and no starred name to take a variable share."""
    if not isinstance(value, (list, tuple)) or len(value) != len(target.elts):
        return False
    return not any(isinstance(e, ast.Starred) for e in target.elts)


def _mapping_holder(container: Any, key: Any, target: ast.Attribute | ast.Subscript) -> Any:
    """The mapping ``target`` writes into or deletes from: a plain mapping under a known key, or a
    LazyCall's keyword arguments (detectron2's ``model.backbone.depth = 101``); else None."""
    if isinstance(container, CallData):
        return container["kwargs"] if isinstance(target, ast.Attribute) else None
    if isinstance(container, dict) and known_key(key):
        return container
    return None


def _assign_slice(container: Any, key: slice, value: Any) -> bool:
    """``a[1:2] = [5, 6]``: the list's slice replaced in place, as Python does (False where Python
    refuses it, or past the size bound)."""
    if type(container) is not list or not isinstance(value, (list, tuple)):
        return False
    if len(container) + len(value) > SIZE_LIMIT:
        return False
    try:
        container[key] = list(value)
    except ValueError:  # an extended slice of another length
        return False
    return True


def _in_list(container: Any, key: Any) -> bool:
    return isinstance(container, list) and type(key) is int and -len(container) <= key < len(container)


def _record(
    saved: list[dict[str, Any]], runs: list[tuple[str, list[dict[str, Any]], list[Any]]], rest: list[Any]
) -> None:
    """Each branch's changes written into the state before it under its condition, scope by scope,
    and the statements it could not follow kept under that condition."""
    seen: set[int] = set()
    for level, original in enumerate(saved):
        overlay(original, [(condition, copies[level]) for condition, copies, _ in runs], seen)
    for condition, _, kept in runs:
        rest.extend({"@when": condition, "@source": item} for item in kept)


_ENUM_BASE = re.compile(r"(Enum|Flag)$")  # enum.Enum, IntEnum, StrEnum, Flag, IntFlag, by its spelling


def _is_enum(node: ast.ClassDef) -> bool:
    return any(_ENUM_BASE.search(ast.unparse(base)) for base in node.bases)


def _member(name: str, value: Any) -> bool:
    return name[:1] != "_" and not isinstance(value, Function)


def _holds(value: Any, tainted: dict[int, Any]) -> bool:
    """Does ``value`` hold (or is it) one of the ``tainted`` containers?"""
    stack, seen = [value], set()
    while stack:
        item = stack.pop()
        if id(item) in tainted:
            return True
        if isinstance(item, (dict, list, tuple)) and id(item) not in seen:
            seen.add(id(item))
            stack.extend(item.values() if isinstance(item, dict) else item)
    return False


class ModuleScope(dict):  # type: ignore[type-arg]
    """A module's names, counting the writes to each: after ``from m import *`` (or ``exec``) a name
    bound before it and never bound again may hold what the module bound, whatever value it held
    (``x = 1; from m import *`` is not ``from m import *; x = 1``, even where ``x = 1`` is bound
    again to the same object)."""

    def __init__(self) -> None:
        super().__init__()
        self.writes: dict[str, int] = {}

    def __setitem__(self, key: str, value: Any) -> None:
        self.writes[key] = self.writes.get(key, 0) + 1
        super().__setitem__(key, value)

    def __delitem__(self, key: str) -> None:
        self.writes[key] = self.writes.get(key, 0) + 1
        super().__delitem__(key)

    def update(self, *args: Any, **kwargs: Any) -> None:
        for key, value in dict(*args, **kwargs).items():
            self[key] = value

    def setdefault(self, key: str, default: Any = None) -> Any:
        if key not in self:
            self[key] = default
        return self[key]


def _scope_data(scope: dict[str, Any], rest: list[Any]) -> dict[str, Any]:
    """A module's or class's names as data (a function as its source), and the statements that
    could not be followed under ``__statements__``."""
    out = {k: _function_source(v) for k, v in scope.items()}
    if rest:
        out["__statements__"] = rest
    return out


def _function_source(value: Any) -> Any:
    """A function as its source, also where a branch the reader could not decide recorded it
    (``{"@value": f, "@when": {cond: f'}}``: a call there changed its defaults)."""
    if isinstance(value, Function):
        return value.source
    if (
        isinstance(value, dict)
        and "@when" in value
        and any(isinstance(v, Function) for v in _recorded(value))
    ):
        return {k: (_function_source(v) if k == "@value" else _branch_sources(v)) for k, v in value.items()}
    return value


def _recorded(value: dict[str, Any]) -> list[Any]:
    return [value.get("@value"), *value["@when"].values()]


def _branch_sources(when: dict[str, Any]) -> dict[str, Any]:
    return {cond: _function_source(v) for cond, v in when.items()}


def _without(names: dict[str, Any], prefix: str) -> dict[str, Any]:
    return {k: v for k, v in names.items() if not k.startswith(prefix)}


def _names_bound(listed: Any, names: dict[str, Any]) -> bool:
    """Is a base's ``__all__`` a list (or tuple) of names it binds?"""
    return isinstance(listed, (list, tuple)) and all(isinstance(n, str) and n in names for n in listed)


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


def _load(target: ast.expr) -> ast.expr:
    return target


def _script_only_branch(stmt: ast.If, taken: bool) -> ast.If | None:
    """The branch of an ``if`` on ``__name__`` that does not run when the config is loaded as a
    module but runs when the file is run as a script (``python train.py``): kept as its source,
    so an edit there (``train(lr=2e-5)`` under ``if __name__ == '__main__':``) is a change."""
    skipped = stmt.orelse if taken else stmt.body
    if not skipped or not any(isinstance(n, ast.Name) and n.id == "__name__" for n in ast.walk(stmt.test)):
        return None
    test = ast.UnaryOp(op=ast.Not(), operand=stmt.test) if taken else stmt.test
    return ast.copy_location(ast.If(test=test, body=skipped, orelse=[]), stmt)


def _is_read_base(stmt: ast.With) -> bool:
    return (
        len(stmt.items) == 1
        and isinstance(stmt.items[0].context_expr, ast.Call)
        and (dotted(stmt.items[0].context_expr.func) or "").endswith("read_base")
    )


_BINDING = (
    ast.Assign,
    ast.AnnAssign,
    ast.AugAssign,
    ast.FunctionDef,
    ast.ClassDef,
    ast.Import,
    ast.ImportFrom,
)


def _bound_names(stmt: ast.stmt) -> list[str]:
    if isinstance(stmt, (ast.FunctionDef, ast.ClassDef)):
        return [stmt.name]
    if isinstance(stmt, (ast.Import, ast.ImportFrom)):
        return _imported_names(stmt)
    return [n.id for t in _targets(stmt) for n in ast.walk(t) if isinstance(n, ast.Name)][:1]


def _imported_names(stmt: ast.Import | ast.ImportFrom) -> list[str]:
    """`import a.b` binds `a`; `from m import x as y` binds `y`; a star binds names not known here."""
    return [alias.asname or alias.name.split(".")[0] for alias in stmt.names if alias.name != "*"]


def _targets(stmt: ast.stmt) -> list[ast.expr]:
    if isinstance(stmt, ast.Assign):
        return stmt.targets
    if isinstance(stmt, (ast.AnnAssign, ast.AugAssign)):
        return [stmt.target]
    return []


def _assigned_anywhere(stmt: ast.stmt) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(stmt):
        name = _assigned_name(node)
        if name is not None:
            names.add(name)
    return names


_MUTATORS = (
    "update", "append", "extend", "insert", "pop", "setdefault", "remove", "clear", "reverse", "sort"
)  # fmt: skip


def _assigned_name(node: ast.AST) -> str | None:
    """The name a node binds or changes: an assignment's target (the root of ``a.b[0] = x``), a
    function or class, the receiver of a method that edits it in place (``a.b.update(...)``)."""
    if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
        return node.id
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return node.name
    if isinstance(node, (ast.Attribute, ast.Subscript)) and isinstance(node.ctx, ast.Store):
        return _root_name(node)
    if isinstance(node, ast.Call):
        return _mutated_root(node)
    return None


def _mutated_root(call: ast.Call) -> str | None:
    """The root of the receiver of ``a.b.update(...)`` and the other methods that edit it in place."""
    if isinstance(call.func, ast.Attribute) and call.func.attr in _MUTATORS:
        return _root_name(call.func.value)
    return None


def _root_name(node: ast.AST) -> str | None:
    """``a`` of ``a.b[0].c``; None when the chain starts at something other than a name."""
    while isinstance(node, (ast.Attribute, ast.Subscript)):
        node = node.value
    return node.id if isinstance(node, ast.Name) else None
