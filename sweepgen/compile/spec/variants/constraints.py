"""Cross-field constraints: sandboxed Jinja expressions that must be true for every resolved variant."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from jinja2 import TemplateSyntaxError
from jinja2.sandbox import ImmutableSandboxedEnvironment

from sweepgen import paths
from sweepgen.compile.spec.model import Constraint
from sweepgen.compile.spec.variants.context import context
from sweepgen.compile.spec.variants.expand import Expansion, Variant
from sweepgen.compile.spec.variants.gate import layer_of
from sweepgen.compile.template.sandbox import describe, fail_if_undefined, make_env, time_budget
from sweepgen.errors import Location, SpecError, ValidationError

_NAME = re.compile(r"\b[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+")


def check_constraints(expansion: Expansion, sweep: dict[str, Any]) -> None:
    """Each constraint must evaluate to ``true`` for every variant, in the sandbox."""
    spec = expansion.spec
    if not spec.model.constraints:
        return
    env = make_env()
    seconds = spec.model.limits.eval_seconds
    compiled: list[tuple[Callable[..., Any], Constraint, Location]] = []
    for i, constraint in enumerate(spec.model.constraints):
        loc = spec.loc(("constraints", i, "expr"))
        compiled.append((_compiled(env, constraint.expr, loc), constraint, loc))
    for variant in expansion.variants:
        ctx = context(variant.config, variant.context_view(), sweep)
        for func, constraint, loc in compiled:
            _check_one(func, ctx, constraint, loc, variant, seconds)


def _compiled(env: ImmutableSandboxedEnvironment, expr: str, loc: Location) -> Callable[..., Any]:
    """A constraint's expression, compiled in the sandbox; one that does not compile is an error."""
    try:
        return env.compile_expression(expr, undefined_to_none=False)
    except TemplateSyntaxError as err:
        raise SpecError(
            f"constraint is not a valid expression: {err.message}",
            location=loc,
            hint="write a Jinja expression, e.g. `a.b == c.d`",
        ) from None
    except (RecursionError, MemoryError, SyntaxError) as err:
        raise SpecError(
            f"constraint is nested too deeply to compile ({type(err).__name__})",
            location=loc,
            hint="write a simpler expression",
        ) from None


def _check_one(
    func: Callable[..., Any],
    ctx: Any,
    constraint: Constraint,
    loc: Location,
    variant: Variant,
    seconds: float,
) -> None:
    """One constraint holds (is exactly true) for one variant."""
    try:
        with time_budget(seconds):
            result = func(ctx)  # Jinja copies the mapping into the expression's context
        fail_if_undefined(result)  # `x.missing` alone returns an undefined, not an error
    except Exception as err:  # noqa: BLE001 - any failure inside user expressions is user error
        raise ValidationError(
            f"constraint `{constraint.expr}` cannot be evaluated for variant {variant.name!r}: "
            f"{describe(err, variant.config)}",
            location=loc,
            hint="names are the config's top-level keys, `config`, `variant` and `sweep`",
        ) from None
    if result is True:
        return
    if result is not False:
        raise ValidationError(
            f"constraint `{constraint.expr}` gave {result!r} for variant {variant.name!r}, not true/false",
            location=loc,
            hint="write a comparison, e.g. `x == y`",
        )
    values = _values_in(constraint.expr, variant)
    raise ValidationError(
        f"constraint failed for variant {variant.name!r}: {constraint.message} "
        f"(`{constraint.expr}`{'; ' + values if values else ''})",
        location=loc,
        hint="fix the variant's overrides or the base so the rule holds",
    )


def _values_in(expr: str, variant: Variant) -> str:
    """``a.b = 4 (base), c.d = 8 (set by grid)`` for the dotted names an expression mentions."""
    shown = []
    for name in dict.fromkeys(_NAME.findall(expr)):
        value = paths.get(variant.config, name)
        if value is paths.MISSING:
            continue
        shown.append(f"{name} = {value!r} ({layer_of(variant, name)})")
    return ", ".join(shown)
