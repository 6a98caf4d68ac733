"""After expansion: each variant's run name, then the spec's ``derived:`` values.

``derived`` maps an override key to a Jinja template evaluated per variant, for values that follow
from others, e.g. ``output_dir: "runs/{{ sweep.name }}/{{ variant.run_name }}"`` or keeping two
fields equal by construction (``streamer.rollouts: "{{ training.group }}"``). A value that is a
single ``{{ expression }}`` keeps the expression's type (an int stays an int); anything else is
rendered as text. Derived paths follow the override rules (the path must exist, ``+path`` adds) and
may differ between variants without `allow`, since they are computed from the variant itself.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from jinja2 import Environment, Template

from sweepgen import yamlio
from sweepgen.compile import overrides
from sweepgen.compile.context import context
from sweepgen.compile.expand import Expansion, Variant
from sweepgen.compile.sandbox import describe, fail_if_undefined, make_env, time_budget
from sweepgen.compile.spec import NAME_HINT, Spec, name_problem
from sweepgen.errors import Location, SpecError, TemplateError, ValidationError

if TYPE_CHECKING:
    from jinja2 import Environment, Template

_SINGLE_EXPR = re.compile(r"^\s*\{\{(?P<expr>(?:(?!\{\{|\}\}).)*)\}\}\s*$", re.S)
LAYER = "derived"


def finalize(expansion: Expansion, sweep: dict[str, Any]) -> None:
    """Set ``run_name`` on every variant, then apply ``derived`` (in place on the expansion)."""
    spec = expansion.spec
    env = make_env()
    run_name_t = _compile(env, spec, ("run_name",), spec.model.run_name) if spec.model.run_name else None
    run_dir_t = _compile(env, spec, ("run_dir",), spec.model.run_dir) if spec.model.run_dir else None
    seen_dirs: dict[str, str] = {}
    derived: list[
        tuple[str, tuple[str, ...], Location, tuple[str, str], Callable[[dict[str, Any]], Any]]
    ] = []
    for key, source in (spec.model.derived or {}).items():
        at = ("derived", key)
        loc = spec.loc(at, key=True)
        kind, path = overrides.split_key(key, loc)
        if kind == overrides.DELETE:
            raise SpecError("a derived value cannot delete a key", location=loc, hint="remove the `~`")
        match = _SINGLE_EXPR.match(source)
        if match:
            try:
                fn: Callable[[dict[str, Any]], Any] = env.compile_expression(
                    match.group("expr"), undefined_to_none=False
                )
            except Exception as err:  # noqa: BLE001 - a Jinja syntax error in the spec
                raise SpecError(
                    f"derived `{key}` is not a valid expression: {err}",
                    location=spec.loc(at),
                    hint='write one Jinja expression, e.g. "{{ training.group }}"',
                ) from None
            derived.append((kind, path, loc, at, fn))
        else:
            derived.append((kind, path, loc, at, _compile(env, spec, at, source).render))
        spec.op_locs[(LAYER, ".".join(path))] = loc
    seen: dict[str, tuple[str, str]] = {}  # lower-cased run name -> (variant, run name)
    implicit = set(expansion.implicit)
    for variant in expansion.variants:
        view = variant.context_view()
        ctx = context(variant.config, view, sweep)
        run_name = _run(run_name_t.render, ctx, spec, ("run_name",), variant) if run_name_t else variant.name
        problem = name_problem(run_name)
        if problem:
            raise ValidationError(
                f"run name {run_name!r} of variant {variant.name!r} {problem}",
                location=spec.loc(("run_name",)),
                hint=f"run names become folder names: {NAME_HINT}",
            )
        if run_name.lower() in seen:
            other, other_name = seen[run_name.lower()]
            same = (
                f"the same run name {run_name!r}"
                if other_name == run_name
                else f"run names {other_name!r} and {run_name!r} that differ only in case"
            )
            raise ValidationError(
                f"variants {other!r} and {variant.name!r} have {same}",
                location=spec.loc(("run_name",)),
                hint="include every varying value (or `{{ variant.name }}`) in `run_name`; "
                "run folders that differ only in case collide on macOS and Windows",
            )
        seen[run_name.lower()] = (variant.name, run_name)
        variant.run_name = run_name
        if run_dir_t is not None:
            ctx["variant"]["run_name"] = run_name
            rendered = _run(run_dir_t.render, ctx, spec, ("run_dir",), variant)
            variant.run_dir = _run_dir(rendered, spec, variant)
            if variant.run_dir in seen_dirs:
                raise ValidationError(
                    f"variants {seen_dirs[variant.run_dir]!r} and {variant.name!r} have the same run_dir "
                    f"{variant.run_dir!r}",
                    location=spec.loc(("run_dir",)),
                    hint="include `{{ variant.run_name }}` in `run_dir`",
                )
            seen_dirs[variant.run_dir] = variant.name
        if not derived:
            continue
        ctx["variant"]["run_name"] = run_name
        ops = []
        for kind, path, loc, at, evaluate in derived:
            value = _run(evaluate, ctx, spec, at, variant)
            ops.append(overrides.Op(kind, path, value, loc, LAYER))
        overrides.check_types(variant.config, ops, "`derived`")
        _apply(variant, ops)
        implicit.update(op.dotted for op in ops)
    expansion.implicit = frozenset(implicit)


def _run_dir(value: str, spec: Spec, variant: Variant) -> str:
    """A run directory is relative to where `sweepgen run` is called and stays below it."""
    parts = value.replace("\\", "/").split("/")
    if not value.strip() or value.startswith("/") or ".." in parts or "\n" in value:
        raise ValidationError(
            f"run_dir {value!r} of variant {variant.name!r} is not a relative path below the "
            "working directory",
            location=spec.loc(("run_dir",)),
            hint='e.g. run_dir: "runs/{{ sweep.name }}/{{ variant.run_name }}"',
        )
    return value


def _apply(variant: Variant, ops: list[overrides.Op]) -> None:
    variant.config, variant.layers = overrides.apply_all(
        variant.config, ops, variant.layers, where=f"variant `{variant.name}`"
    )
    variant.overrides = dict(variant.overrides)
    variant.overrides.update((op.dotted, op.value) for op in ops)
    variant.touched = variant.touched + tuple(op.path for op in ops)


def _compile(env: Environment, spec: Spec, at: tuple[Any, ...], source: str) -> Template:
    try:
        return env.from_string(source)
    except Exception as err:  # noqa: BLE001 - a Jinja syntax error in the spec
        raise SpecError(
            f"`{'.'.join(map(str, at))}` is not a valid template: {err}",
            location=spec.loc(at),
            hint='e.g. "{{ variant.name }}"',
        ) from None


def _run(
    fn: Callable[[dict[str, Any]], Any],
    ctx: dict[str, Any],
    spec: Spec,
    at: tuple[Any, ...],
    variant: Variant,
) -> Any:
    where = ".".join(map(str, at))
    try:
        with time_budget(spec.model.limits.eval_seconds):
            value = fn(ctx)  # Template.render and compiled expressions both take the context mapping
        # An expression may return an undefined instead of raising, or hide one in a literal
        # (`{{ [training.typo] }}`): either is an undefined-name error, never data.
        fail_if_undefined(value)
    except Exception as err:  # noqa: BLE001 - user template code
        raise TemplateError(
            f"`{where}` fails for variant {variant.name!r}: {describe(err, variant.config)}",
            location=spec.loc(at),
            hint="names are the config's top-level keys, `config`, `variant` and `sweep`",
        ) from None
    if not _plain(value, 0):
        raise TemplateError(
            f"`{where}` gives a {type(value).__name__} for variant {variant.name!r}, not plain data",
            location=spec.loc(at),
            hint="derive strings, numbers, booleans, lists or mappings, "
            f"at most {yamlio.MAX_DEPTH} levels deep",
        )
    return value


def _plain(value: Any, depth: int) -> bool:
    """Plain data no deeper than the YAML reader allows (deeper data would overflow later walks)."""
    if value is None or type(value) in (bool, int, float, str):
        return True
    if depth >= yamlio.MAX_DEPTH:
        return False
    if type(value) is list:
        return all(_plain(v, depth + 1) for v in value)
    if type(value) is dict:
        return all(type(k) is str and _plain(v, depth + 1) for k, v in value.items())
    return False
