"""The one Jinja environment for templates and constraints: sandboxed, strict, deterministic.

``ImmutableSandboxedEnvironment`` (a ``SandboxedEnvironment`` that also refuses to mutate lists and
dicts) because resolved configs share subtrees between variants: a template calling
``config.update(...)`` must not be able to change another variant's config. ``StrictUndefined``
because an undefined name must be an error, never an empty string in a config.

Filters for writing configs: ``to_yaml`` (block YAML that YAML 1.1 and 1.2 readers both type the
same way; ``compile.yamlfilter``), ``to_json`` (``compile.jsonfilter``) and ``pyrepr`` (a Python
literal; ``inf``/``nan`` as ``float("inf")``).
"""

from __future__ import annotations

import contextlib
import difflib
import functools
import math
import operator
import os
import re
import sys
import threading
import time
from collections.abc import Callable, Iterable, Iterator, MutableMapping
from typing import Any

import re2
from jinja2 import BaseLoader, StrictUndefined, Undefined, nodes
from jinja2.exceptions import TemplateRuntimeError, UndefinedError
from jinja2.runtime import LoopContext
from jinja2.sandbox import ImmutableSandboxedEnvironment
from jinja2.visitor import NodeTransformer

from sweepgen import escape
from sweepgen.compile.template import bounds
from sweepgen.compile.template.bounds import LimitExceeded
from sweepgen.compile.template.jsonfilter import to_json
from sweepgen.compile.template.yamlfilter import YamlWriter, yaml_scalar
from sweepgen.errors import Location, ValidationError

# Arithmetic bounds: a config needs neither a 3,000-digit integer nor a 10-million-item list, and
# without them `{{ (10**(10**8)) % 7 }}` spins for minutes and `{{ "x" * 10**10 }}` runs out of memory.
MAX_INT_BITS = 10_000  # about 3,000 decimal digits
MAX_SEQUENCE = 10_000_000  # characters of a string or items of a list made by `*`, `+` or `%`


class TimeLimitExceeded(TemplateRuntimeError):
    """An evaluation ran past its ``limits.eval_seconds``, or the spec's evaluations together past
    ``limits.total_seconds`` (``total``): a loop or macro bomb, or a runaway loop."""

    def __init__(self, seconds: float, total: bool = False, command: bool = False) -> None:
        super().__init__(f"ran longer than {seconds:g} s")
        self.seconds = seconds
        self.total = total
        self.command = command  # the whole command's budget (``command_budget``), not the spec's


class _Interrupted(TimeLimitExceeded):
    """What the watchdog raises inside a single call that ran past its deadline (see ``_interrupt``):
    an exception class Python instantiates with no arguments, so each interrupt makes a subclass
    holding its budget's seconds."""

    seconds_: float = 0.0
    total_: bool = False
    command_: bool = False
    where_: tuple[str, int] | None = None  # the template line running when it was raised

    def __init__(self) -> None:
        super().__init__(self.seconds_, self.total_, self.command_)


def interrupted_at(err: BaseException) -> tuple[str, int] | None:
    """The template (file name) and line the watchdog found running when it interrupted ``err``'s
    evaluation; None for an overrun a template step noticed itself (its traceback names the line)."""
    return err.where_ if isinstance(err, _Interrupted) else None


class _Budget:
    """The deadline of the evaluation in progress (its own, or the spec's total when that comes
    first), whether the watchdog found it passed, and the thread evaluating (to interrupt it)."""

    __slots__ = ("command", "deadline", "expired", "interrupted", "interrupts", "seconds", "thread", "total")

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.deadline = time.monotonic() + seconds
        self.expired = False
        self.interrupted = False
        self.interrupts = 1  # the next interrupt is due this many graces after the deadline
        self.thread = threading.get_ident()
        self.total = _total is not None and _total[0] < self.deadline
        self.command = False
        if self.total and _total is not None:
            self.deadline, self.seconds, self.command = _total


# Templates cost time only where they repeat something: a loop iteration, a call (macros,
# `caller()`, a recursive `loop(...)`), an include or import, an operator, a filter or test, an
# output. Each of these ticks, and a tick reads one flag; a watchdog thread reads the clock every
# `_WATCH_SECONDS` and raises the flag. So a deadline overruns by at most one such step (each bounded
# by the size limits above) plus the watch interval, and a fast loop pays no system call per step.
#
# One step can still be long: a filter or method that loops in Python over a large (bounded) value
# (`unique`, `groupby`, `batch`, `dictsort`, `urlize` of megabytes) ticks nowhere inside. A budget
# still running `_GRACE_SECONDS` after its deadline is therefore interrupted: the watchdog raises
# TimeLimitExceeded in the evaluating thread (PyThreadState_SetAsyncExc), which Python delivers at
# its next bytecode, inside the call. `_switch` orders it with the end of the evaluation: the
# exception is set only while that budget is the active one, and a budget that ends clears any not
# yet delivered, so it lands inside the evaluation or, at worst, as its `with time_budget` block
# exits (every caller catches the evaluation's errors around that block). A single C call (sorting
# ten million items) ends before the exception is delivered; its size is bounded per call (bounds).
# The interrupt is raised again after each further grace, as code inside may catch it and go on
# (Jinja's constant folding catches every error).
_GRACE_SECONDS = 0.05
_switch = threading.Lock()


def _new_switch() -> None:
    global _switch
    _switch = threading.Lock()  # a render worker forked while the parent's watchdog held it


os.register_at_fork(after_in_child=_new_switch)
_WATCH_SECONDS = 0.01
_IDLE_POLLS = 100  # the watchdog ends after a second without an evaluation; the next one restarts it
_active: _Budget | None = None  # one evaluation at a time per process (render workers are forked)
# the spec's (or the command's, when it comes first) deadline for all its evaluations, its seconds,
# and whether it is the command's
_total: tuple[float, float, bool] | None = None
_watchdog_pid: int | None = None


def _watch() -> None:
    global _watchdog_pid
    idle = 0
    while True:
        time.sleep(_WATCH_SECONDS)
        budget = _active
        if budget is None:
            idle += 1
            if idle < _IDLE_POLLS:
                continue
            # Leave: say so first, then look once more. `time_budget` sets its budget first, then
            # looks for a watchdog, so one of the two always sees the other: no budget goes unwatched.
            _watchdog_pid = None
            if _active is None:
                return
            _watchdog_pid = os.getpid()
            budget = _active
        idle = 0
        if budget is not None and time.monotonic() > budget.deadline:
            budget.expired = True
            if time.monotonic() > budget.deadline + budget.interrupts * _GRACE_SECONDS:
                _interrupt(budget)  # again after each grace: code inside may catch and go on


def _set_async_exc(thread: int, exc: type[BaseException] | None) -> None:
    import ctypes  # noqa: PLC0415 - only when an evaluation overruns

    ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(thread), ctypes.py_object(exc) if exc else None)


def _interrupt(budget: _Budget) -> None:
    """Raise TimeLimitExceeded inside ``budget``'s evaluation, if it is still the one running and its
    thread is inside template code. Outside it (sweepgen collecting the output between two chunks,
    Jinja unwinding the first interrupt) the next template step ticks and raises by itself; an
    exception raised there would name no template line, or land in code that does not expect it."""
    with _switch:
        budget.interrupts += 1
        budget.interrupted = True  # first: an evaluation ending after this line sees it (__exit__)
        if _active is not budget:
            return
        at = _running_template_line(budget.thread)
        if at is None:
            return
        raised = type(
            "TimeLimitExceeded",
            (_Interrupted,),
            {"seconds_": budget.seconds, "total_": budget.total, "command_": budget.command, "where_": at},
        )
        _set_async_exc(budget.thread, raised)


def _running_template_line(thread: int) -> tuple[str, int] | None:
    """The innermost template line ``thread`` is running (Jinja's compiled code keeps its template in
    ``__jinja_template__``, as Jinja's own traceback rewriting reads it); None outside templates."""
    frame = sys._current_frames().get(thread)
    while frame is not None:
        template = frame.f_globals.get("__jinja_template__")
        if template is not None:
            return template.filename or "<template>", template.get_corresponding_lineno(frame.f_lineno)
        frame = frame.f_back
    return None


def _start_watchdog() -> None:
    global _watchdog_pid
    if _watchdog_pid != os.getpid():  # none yet, or this is a forked worker (threads do not fork)
        _watchdog_pid = os.getpid()
        threading.Thread(target=_watch, name="sweepgen-time-budget", daemon=True).start()


class time_budget:  # lower case: a context manager, named as the function it replaced
    """Bound every sandboxed evaluation inside the block to ``seconds`` of wall-clock time; on
    overrun the template code raises ``TimeLimitExceeded`` at the line it is running. A class, not a
    generator: entered three times per variant (its output path, its file, the constraints)."""

    __slots__ = ("_outer", "_seconds")

    def __init__(self, seconds: float) -> None:
        self._seconds = seconds
        self._outer: _Budget | None = None

    def __enter__(self) -> None:
        global _active
        self._outer, _active = _active, _Budget(self._seconds)
        _start_watchdog()  # after the budget is set: see _watch

    def __exit__(self, *exc: object) -> None:
        global _active
        ending, _active = _active, self._outer
        # Lock-free on the common path. The watchdog marks a budget interrupted before it looks at
        # _active (both under _switch): when the mark is not seen here, its look comes after the
        # line above and finds the budget ended; when it is, wait for its interrupt and clear it.
        if ending is not None and ending.interrupted:
            with _switch:
                _set_async_exc(ending.thread, None)


class total_budget:
    """Bound every evaluation inside the block together to ``seconds`` (``limits.total_seconds``, or
    with ``command`` the command's ``command_seconds`` around all its specs): each ``time_budget``
    and ``total_budget`` inside ends at this deadline when it comes first. Render workers forked
    inside inherit it (the monotonic clock is the machine's)."""

    __slots__ = ("_command", "_outer", "_seconds")

    def __init__(self, seconds: float, command: bool = False) -> None:
        self._seconds = seconds
        self._command = command
        self._outer: tuple[float, float, bool] | None = None

    def __enter__(self) -> None:
        global _total
        self._outer = _total
        mine = (time.monotonic() + self._seconds, self._seconds, self._command)
        _total = mine if _total is None or mine[0] < _total[0] else _total  # nested: never extended

    def __exit__(self, *exc: object) -> None:
        global _total
        _total = self._outer


def check_total() -> None:
    """Raise TimeLimitExceeded once the spec's (or the command's) total budget has passed: for work in
    Python between evaluations that no template step ticks in (the allowed-diff gate)."""
    total = _total
    if total is not None and time.monotonic() > total[0]:
        raise TimeLimitExceeded(total[1], True, total[2])


@contextlib.contextmanager
def total_bounded(what: str, location: Location, hint: str) -> Iterator[None]:
    """The block's ``check_total`` overrun as exit 2 at ``location``: "``what`` stopped: ..."."""
    try:
        yield
    except TimeLimitExceeded as err:
        raise ValidationError(f"{what} stopped: {describe(err, {})}", location=location, hint=hint) from None


def _tick() -> None:
    budget = _active
    if budget is not None and budget.expired:
        raise TimeLimitExceeded(budget.seconds, budget.total, budget.command)


def _ticking(func: Callable[..., Any]) -> Callable[..., Any]:
    """A filter or test that ticks first (``functools.wraps`` keeps Jinja's pass_context marks)."""

    @functools.wraps(func)
    def ticked(*args: Any, **kwargs: Any) -> Any:
        _tick()
        return func(*args, **kwargs)

    return ticked


def _counted(iterable: Iterable[Any]) -> Iterator[Any]:
    """What a template's ``{% for %}`` iterates: the same items, each one a tick."""
    for item in iterable:
        _tick()
        yield item


_LOOP_FILTER = "__sweepgen_counted"  # not a name a template can write as a filter (leading `__`)


class _NamedUndefinedError(UndefinedError):
    """An undefined name was used; keeps the object it was looked up on and the missing name, so the
    error can say which config path is missing and suggest the closest key."""

    def __init__(self, message: str | None = None, *, obj: Any = None, name: str | None = None) -> None:
        super().__init__(message)
        self.obj = obj
        self.name = name


class _Undefined(StrictUndefined):
    """StrictUndefined that also fails when printed inside a literal: ``{{ [a.typo] }}`` renders the
    list with ``repr`` of its items, which plain StrictUndefined answers with "Undefined"."""

    __slots__ = ()

    def __init__(
        self, hint: str | None = None, obj: Any = None, name: str | None = None, exc: Any = UndefinedError
    ) -> None:
        if exc is UndefinedError:  # a missing name; a SecurityError (unsafe attribute) stays itself
            exc = functools.partial(_NamedUndefinedError, obj=obj, name=name)
        super().__init__(hint, obj, name, exc)

    __repr__ = StrictUndefined._fail_with_undefined_error


def fail_if_undefined(value: Any, depth: int = 0) -> None:
    """Raise the undefined error of the first undefined inside ``value`` (lists, tuples, dicts)."""
    if isinstance(value, Undefined):
        value._fail_with_undefined_error()
    if depth > 100:  # configs are shallow; a deeper value is refused elsewhere
        return
    if isinstance(value, (list, tuple)):
        for item in value:
            fail_if_undefined(item, depth + 1)
    elif isinstance(value, dict):
        for key, item in value.items():
            fail_if_undefined(key, depth + 1)
            fail_if_undefined(item, depth + 1)


def _finalize(value: Any) -> Any:
    """Every ``{{ }}`` output passes here: an undefined hidden in a literal is an error too, and so
    is a string with a NUL or another C0 control, which would land raw in the file."""
    _tick()
    if type(value) is str and not value.isprintable() and (bad := escape.first_c0(value)) is not None:
        raise LimitExceeded(
            f"`{{{{ }}}}` would write control character U+{ord(bad):04X} raw into the file; "
            "write the value through `| to_yaml`, `| to_json` or `| pyrepr`, which escape it"
        )
    if isinstance(value, (list, tuple, dict, Undefined)):
        fail_if_undefined(value)
    return value


def undefined_message(err: BaseException, config: dict[str, Any]) -> str | None:
    """``training.sede is undefined (did you mean `training.seed`?)`` for an undefined-name error
    raised while rendering against ``config``; None when ``err`` is not one."""
    if not isinstance(err, _NamedUndefinedError) or err.name is None:
        return None
    name, obj = str(err.name), err.obj
    if obj is None or isinstance(obj, Undefined):
        return _undefined_name(name, config)
    if isinstance(obj, dict):
        return _undefined_key(name, obj, config)
    return None


def _undefined_name(name: str, config: dict[str, Any]) -> str:
    """A top-level name: a config key or one of the template's own names, if close."""
    keys = [*config, "config", "variant", "sweep"]
    close = difflib.get_close_matches(name, [str(k) for k in keys], n=1)
    return f"`{name}` is undefined" + (f" (did you mean `{close[0]}`?)" if close else "")


def _undefined_key(name: str, obj: dict[Any, Any], config: dict[str, Any]) -> str:
    """A key of a mapping, named with the mapping's path in ``config`` where it has one."""
    where = _path_of(obj, config)
    full = f"{where}.{name}" if where else name
    close = difflib.get_close_matches(name, [str(k) for k in obj], n=1)
    if not close:
        return f"`{full}` is undefined"
    suggestion = f"{where}.{close[0]}" if where else close[0]
    return f"`{full}` is undefined (did you mean `{suggestion}`?)"


def describe(err: BaseException, config: dict[str, Any]) -> str:
    """``Type: message`` for a template failure; an undefined name as its config path."""
    if isinstance(err, TimeLimitExceeded) and err.command:
        return (
            f"this command's evaluations, every spec's together, ran longer than {err.seconds:g} s: "
            "too many specs, or templates too slow for them? Check fewer specs at once, or raise "
            "the command's budget on the command line: `--limit command_seconds=N`"
        )
    if isinstance(err, TimeLimitExceeded) and err.total:
        return (
            f"the spec's evaluations together ran longer than {err.seconds:g} s "
            "(`limits.total_seconds`): too many variants, or a template too slow for them?"
        )
    if isinstance(err, TimeLimitExceeded):
        return (
            f"ran longer than {err.seconds:g} s (`limits.eval_seconds`): a loop or macro that "
            "repeats too often?"
        )
    named = undefined_message(err, config)
    return named if named is not None else f"{type(err).__name__}: {err}"


def _path_of(target: dict[Any, Any], config: dict[str, Any]) -> str | None:
    """The dotted path of the mapping ``target`` inside ``config``, found by identity (error path only)."""
    if target is config:
        return "config"
    todo: list[tuple[str, Any]] = [(str(k), v) for k, v in config.items()]
    while todo:
        path, node = todo.pop()
        if node is target:
            return path
        if isinstance(node, dict):
            todo.extend((f"{path}.{k}", v) for k, v in node.items())
    return None


def _int_bits(value: Any) -> int:
    return value.bit_length() if type(value) is int else 0


def _size(value: Any) -> int:
    return len(value) if isinstance(value, (str, list, tuple)) else 0


def _check_shared(op: str, left: Any, right: Any) -> None:
    """``[x] * n`` of a big ``x``, ``ns.a + ns.a`` doubling a shared value: weighed (``bounds``)."""
    if op == "*":
        if type(right) is int and isinstance(left, (list, tuple)):
            bounds.check_repeat(left, right)
        elif type(left) is int and isinstance(right, (list, tuple)):
            bounds.check_repeat(right, left)
    elif op == "+" and isinstance(left, (list, tuple)) and isinstance(right, (list, tuple)):
        bounds.check_weight("`+`", left, right)


def _check_binop(op: str, left: Any, right: Any) -> None:
    """Refuse an operation whose result would be out of bounds, before computing it."""
    check = _BINOP_CHECKS.get(op)
    if check is not None:
        check(left, right)


def _check_pow(left: Any, right: Any) -> None:
    """`**` of two integers bounded in bits (from the base's bits and the exponent)."""
    if (
        type(left) is int
        and type(right) is int
        and abs(left) > 1
        and right * (left.bit_length() - 1) > MAX_INT_BITS
    ):
        raise LimitExceeded(
            f"`**` would give an integer of more than {MAX_INT_BITS} bits "
            f"({left.bit_length()}-bit base, exponent {right})"
        )


def _check_add(left: Any, right: Any) -> None:
    if _size(left) + _size(right) > MAX_SEQUENCE:
        raise LimitExceeded(f"`+` would build a sequence of more than {MAX_SEQUENCE:,} items")


def _check_percent(left: Any, right: Any) -> None:
    """`%` formatting of a string: no width or precision above MAX_SEQUENCE, and no result past the
    size bound (`('%(a)s' * 1000000) % {'a': s}`)."""
    if not isinstance(left, str):
        return
    specs = re.findall(r"%[-#0 +]*([0-9]*)(?:\.([0-9]*))?", left)
    if any(len(n) > 7 for spec in specs for n in spec):  # 10,000,000 has 8 digits
        raise LimitExceeded(f"a `%` format width above {MAX_SEQUENCE:,} characters")
    bounds.check_percent_format(left, right)


def _check_mul(left: Any, right: Any) -> None:
    """`*` of two integers bounded in bits; of a sequence and a count, in items."""
    if type(left) is int and type(right) is int:
        if _int_bits(left) + _int_bits(right) > MAX_INT_BITS:
            raise LimitExceeded(f"`*` would give an integer of more than {MAX_INT_BITS} bits")
        return
    _check_repeat(left, right)


def _check_repeat(left: Any, right: Any) -> None:
    """`*` of a sequence and a count, bounded in items."""
    count = right if type(right) is int else left if type(left) is int else None
    length = _size(left) or _size(right)
    if count is not None and length and count * length > MAX_SEQUENCE:
        raise LimitExceeded(
            f"`*` would build a sequence of {count * length:,} items, more than {MAX_SEQUENCE:,}"
        )


_BINOP_CHECKS: dict[str, Callable[[Any, Any], None]] = {
    "**": _check_pow,
    "*": _check_mul,
    "+": _check_add,
    "%": _check_percent,
}

_BINOPS = {
    "+": operator.add,
    "-": operator.sub,
    "*": operator.mul,
    "/": operator.truediv,
    "//": operator.floordiv,
    "**": operator.pow,
    "%": operator.mod,
}


_DICT_ATTRS = frozenset(dir(dict))


class _BoundedSandbox(ImmutableSandboxedEnvironment):
    """The immutable sandbox with arithmetic that cannot build unbounded values."""

    intercepted_binops = frozenset({"**", "*", "+", "%"})

    def is_safe_attribute(self, obj: Any, attr: str, value: Any) -> bool:
        # every size check is made for text: bytes would pass them all (`'x'.encode() * 10**9`,
        # `.center(999999999)` built a gigabyte), and a config is written as text anyway
        if isinstance(obj, str) and attr == "encode":
            return False
        return bool(super().is_safe_attribute(obj, attr, value))

    def getattr(self, obj: Any, attribute: str) -> Any:
        # Jinja looks `a.b` up as an attribute first and, on AttributeError, as an item: for a dict
        # key that is a raised exception per lookup (1.5 million in a 150-leaf template at 10,000
        # variants). A key that is no dict attribute cannot be found by the attribute lookup, so it is
        # looked up as an item directly: the same result without the exception. Keys named like dict
        # methods (`items`, `keys`, ...) and everything else take Jinja's own path, sandbox included.
        if type(obj) is dict and attribute not in _DICT_ATTRS:
            try:
                return obj[attribute]
            except KeyError:
                pass
        return super().getattr(obj, attribute)

    def make_globals(self, d: MutableMapping[str, Any] | None) -> MutableMapping[str, Any]:
        # Jinja chains a template's globals over the environment's (a ChainMap, so a later change to
        # the environment's globals shows), and every render flattens that chain again: a third of a
        # to_yaml render's context set-up. Ours are set in make_env, before any template loads.
        return {**self.globals, **(d or {})}

    def _parse(self, source: str, name: str | None, filename: str | None) -> nodes.Template:
        # Every `{% for %}` iterates through `_counted`, so a loop that prints nothing still ticks.
        tree = super()._parse(source, name, filename)
        for loop in tree.find_all(nodes.For):
            loop.iter = nodes.Filter(loop.iter, _LOOP_FILTER, [], [], None, None, lineno=loop.lineno)
        _WeighLiterals().visit(tree)
        return tree

    def get_template(self, *args: Any, **kwargs: Any) -> Any:
        _tick()  # `{% include %}`, `{% import %}` and `{% extends %}` run this each time they execute
        return super().get_template(*args, **kwargs)

    def select_template(self, *args: Any, **kwargs: Any) -> Any:
        _tick()
        return super().select_template(*args, **kwargs)

    def get_or_select_template(self, *args: Any, **kwargs: Any) -> Any:
        _tick()
        return super().get_or_select_template(*args, **kwargs)

    def call_binop(self, context: Any, operator: str, left: Any, right: Any) -> Any:
        _tick()
        _check_binop(operator, left, right)
        _check_shared(operator, left, right)
        return _BINOPS[operator](left, right)

    def call(__self, __context: Any, __obj: Any, *args: Any, **kwargs: Any) -> Any:
        _tick()
        if isinstance(__obj, LoopContext) and args:  # `loop(children)` of a recursive for: counted too
            args = (_counted(args[0]), *args[1:])
        method = getattr(__obj, "__wrapped__", __obj)  # the sandbox wraps str.format at attribute access
        if isinstance(getattr(method, "__self__", None), str):
            args = _checked_str_call(getattr(method, "__name__", ""), method.__self__, args, kwargs)
        return super().call(__context, __obj, *args, **kwargs)


def _checked_str_call(name: str, text: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[Any, ...]:
    """A string method's call refused when its result would pass the size bound, before it is built
    (in C, where no deadline stops it): those that pad to a width (`'x'.center(10**9)`, `ljust`,
    `zfill`, `expandtabs`, format specs like `'{:>999999999}'`), repeat a value (`format`,
    `format_map`, `translate`) or a separator (`join`, whose parts are counted as they are joined:
    the arguments to call it with)."""
    if name == "replace":
        bounds.check_replace(text, *args, **kwargs)
    elif name in _PADDING_METHODS:
        _check_widths(name, args, kwargs)
        if name == "expandtabs":
            bounds.check_expandtabs(text, *args, **kwargs)
    elif name in ("format", "format_map"):
        _check_format_call(name, text, args, kwargs)
    elif name == "translate" and args:
        bounds.check_translate(text, args[0])
    elif name == "join" and args:
        return (bounds.joined(args[0], text), *args[1:])
    return args


def _check_format_call(name: str, text: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
    _check_format_spec(text)
    nested = bool(_NESTED_SPEC.search(text))
    if nested:  # a width given as an argument: `{:>{}}`
        _check_widths(name, args, kwargs)
    values = [*args, *kwargs.values()]
    if name == "format_map" and args and isinstance(args[0], dict):
        values = list(args[0].values())
    bounds.check_str_format(name, text, values, nested)


class _WeighLiterals(NodeTransformer):
    """A list, tuple or dict written in a template (``[ns.a, ns.a]``) is weighed when it is built
    (``bounds``): repeated in a loop it could double a shared value's weight at every step."""

    def _weighed(self, node: nodes.Expr) -> nodes.Node:
        self.generic_visit(node)
        try:
            node.as_const()
            return node  # all constants: its size is what the template's text says
        except nodes.Impossible:
            return nodes.Filter(node, _WEIGH_FILTER, [], [], None, None, lineno=node.lineno)

    def visit_List(self, node: nodes.List) -> nodes.Node:
        return self._weighed(node)

    def visit_Dict(self, node: nodes.Dict) -> nodes.Node:
        return self._weighed(node)

    def visit_Tuple(self, node: nodes.Tuple) -> nodes.Node:
        return self._weighed(node) if node.ctx == "load" else node  # not `{% set a, b = ... %}`

    def visit_Concat(self, node: nodes.Concat) -> nodes.Node:
        # `a ~ b` joins its parts' text in C (Jinja's str_join), past every operator check: doubled
        # in a loop (`ns.s = ns.s ~ ns.s`), two gigabytes in 31 steps
        self.generic_visit(node)
        first, *rest = node.nodes
        return nodes.Filter(first, _CONCAT_FILTER, list(rest), [], None, None, lineno=node.lineno)


def _weighed(value: Any) -> Any:
    bounds.check_weight("a list or mapping written in the template", value)
    return value


_WEIGH_FILTER = "__sweepgen_weighed"
_CONCAT_FILTER = "__sweepgen_concat"


def _concat(*parts: Any) -> str:
    """``a ~ b ~ ...`` as Jinja writes it (each part's text), refused past the sequence bound."""
    texts = [str(part) for part in parts]
    if sum(map(len, texts)) > MAX_SEQUENCE:
        raise LimitExceeded(f"`~` would build a string of more than {MAX_SEQUENCE:,} characters")
    return "".join(texts)


def _check_widths(name: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
    for value in (*args, *kwargs.values()):
        if type(value) is int and value > MAX_SEQUENCE:
            raise LimitExceeded(f"`{name}` with width {value:,}, more than {MAX_SEQUENCE:,} characters")


_PADDING_METHODS = frozenset({"center", "ljust", "rjust", "zfill", "expandtabs"})
# RE2, linear in the text: Python's engine tried every colon of a field with no end (quadratic:
# `("{" ~ ":" * 300000).format()` held `check` for minutes, inside one C call no deadline stops)
_NESTED_SPEC = re2.compile(r"\{[^{}]*:[^{}]*\{")
_FORMAT_WIDTH = re2.compile(r"\{[^{}]*:[^{}]*?([0-9]{8,})")


def _check_format_spec(text: str) -> None:
    if _FORMAT_WIDTH.search(text):
        raise LimitExceeded(f"a format width above {MAX_SEQUENCE:,} characters")


def _bounded_filter(
    name: str, check: Callable[..., None], original: Callable[..., Any]
) -> Callable[..., Any]:
    @functools.wraps(original)
    def bounded(*args: Any, **kwargs: Any) -> Any:
        check(name, args, kwargs)
        return original(*args, **kwargs)

    return bounded


def _check_format_filter(name: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
    if args and isinstance(args[0], str):  # `value | format(*args)` is `value % (kwargs or args)`
        _check_binop("%", args[0], kwargs or tuple(args[1:]))
    _check_widths(name, args[1:], kwargs)


def _check_center_filter(name: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
    _check_widths(name, args[1:], kwargs)  # args[0] is the value being centred, not a width


def _check_indent_filter(name: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
    text, width = (args[0] if args else ""), (args[1] if len(args) > 1 else kwargs.get("width", 4))
    lines = str(text).count("\n") + 1 if not isinstance(text, Undefined) else 1
    size = width if isinstance(width, str) else (width if type(width) is int else 0)
    size = len(size) if isinstance(size, str) else size
    if size * lines > MAX_SEQUENCE:
        raise LimitExceeded(f"`indent` would add {size * lines:,} characters, more than {MAX_SEQUENCE:,}")


def pyrepr(value: Any) -> str:
    """A Python literal for plain data (dict order kept)."""
    if type(value) in (str, int, bool) or value is None:  # the per-leaf case, first
        return repr(value)
    if isinstance(value, float):
        return _float_repr(value)
    if isinstance(value, dict):
        return "{" + ", ".join(f"{pyrepr(k)}: {pyrepr(v)}" for k, v in value.items()) + "}"
    if isinstance(value, (list, tuple)):
        return _sequence_repr(value)
    if isinstance(value, (int, str)):  # a subclass (bool, an enum): its own repr
        return repr(value)
    if isinstance(value, Undefined):
        value._fail_with_undefined_error()
    raise TypeError(f"pyrepr cannot write a {type(value).__name__}")


def _float_repr(value: float) -> str:
    """A float as Python reads it back: ``float("nan")``, ``float("inf")`` where no literal exists."""
    if not math.isfinite(value):
        return f'float("{value}")'
    return float.__repr__(value) if type(value) is float else repr(value)


def _sequence_repr(value: list[Any] | tuple[Any, ...]) -> str:
    inside = ", ".join(pyrepr(v) for v in value)
    if isinstance(value, list):
        return "[" + inside + "]"
    return "(" + inside + ("," if len(value) == 1 else "") + ")"


def make_env(loader: BaseLoader | None = None) -> ImmutableSandboxedEnvironment:
    env = _BoundedSandbox(
        loader=loader,
        undefined=_Undefined,
        finalize=_finalize,
        keep_trailing_newline=True,
        autoescape=False,
        auto_reload=False,
    )
    # tojson is Jinja's name for the same filter; ours writes plain JSON (Jinja's escapes for HTML)
    env.filters.update(
        to_yaml=YamlWriter(), to_json=to_json, tojson=to_json, pyrepr=pyrepr, yaml_scalar=yaml_scalar
    )
    env.filters = {name: _ticking(f) for name, f in env.filters.items()}
    env.tests = {name: _ticking(test) for name, test in env.tests.items()}  # type: ignore[arg-type]
    env.filters[_LOOP_FILTER] = _counted
    env.filters[_WEIGH_FILTER] = _weighed
    env.filters[_CONCAT_FILTER] = _concat
    env.filters["sum"] = _ticking(bounds.sum_filter)
    lipsum = env.globals["lipsum"]
    assert callable(lipsum)  # Jinja's default global
    env.globals["lipsum"] = _checked_first(bounds.check_lipsum, lipsum)
    # Jinja's own filters that grow a string by a number argument, bounded like the methods above
    for name, check in (
        ("center", _check_center_filter),
        ("format", _check_format_filter),
        ("indent", _check_indent_filter),
        ("wordwrap", lambda _name, args, kwargs: bounds.check_wrap(*args[1:3], *kwargs.values())),
        ("replace", lambda _name, args, kwargs: bounds.check_replace(*args[1:], *kwargs.values())),
        ("slice", lambda _name, args, kwargs: bounds.check_slices(*args[1:3], *kwargs.values())),
        ("batch", lambda _name, args, kwargs: bounds.check_batch(*args[1:], **kwargs)),
    ):
        env.filters[name] = _bounded_filter(name, check, env.filters[name])
    env.filters["join"] = _joining(env.filters["join"])
    return env


def _joining(original: Callable[..., Any]) -> Callable[..., Any]:
    """The `join` filter, its parts counted as they are joined (``bounds.joined``)."""

    @functools.wraps(original)  # keeps Jinja's pass_eval_context mark
    def join(eval_ctx: Any, value: Any, d: Any = "", attribute: Any = None) -> Any:
        return original(eval_ctx, bounds.joined(value, d), d, attribute)

    return join


def _checked_first(check: Callable[..., None], original: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(original)
    def checked(*args: Any, **kwargs: Any) -> Any:
        check(*args, **kwargs)
        return original(*args, **kwargs)

    return checked
