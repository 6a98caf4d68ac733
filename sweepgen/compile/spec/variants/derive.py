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
from dataclasses import replace
from typing import Any

from jinja2 import Environment, Template

from sweepgen import output_keys
from sweepgen.compile.spec import overrides
from sweepgen.compile.spec.model import MAX_NAME_BYTES, NAME_HINT, Spec, name_problem
from sweepgen.compile.spec.variants.context import context
from sweepgen.compile.spec.variants.expand import Expansion, Locs, Variant
from sweepgen.compile.spec.variants.plain_value import PLAIN_HINT, plain
from sweepgen.compile.template.sandbox import describe, fail_if_undefined, make_env, time_budget
from sweepgen.errors import Location, SpecError, TemplateError, ValidationError
from sweepgen.formats import yamlio
from sweepgen.fs.confine import names_git_folder

_SINGLE_EXPR = re.compile(r"^\s*\{\{(?P<expr>(?:(?!\{\{|\}\}).)*)\}\}\s*$", re.S)
LAYER = "derived"


Evaluate = Callable[[dict[str, Any]], Any]
_Derived = tuple[str, tuple[str, ...], Location, tuple[str, str], Evaluate]  # kind, path, loc, at, fn


def derive(expansion: Expansion, sweep: dict[str, Any]) -> Expansion:
    """A new expansion whose variants carry their run name and run dir, with ``derived`` applied."""
    spec = expansion.spec
    env = make_env()
    run_name_t = _compile(env, spec, ("run_name",), spec.model.run_name) if spec.model.run_name else None
    run_dir_t = _compile(env, spec, ("run_dir",), spec.model.run_dir) if spec.model.run_dir else None
    locs = dict(expansion.locs)
    derived = _derived(env, spec, locs)
    names = _RunNames(spec)
    seen_dirs: dict[str, tuple[str, str]] = {}
    implicit = set(expansion.implicit)
    variants = []
    for variant in expansion.variants:
        ctx = context(variant.config, variant.context_view(), sweep)
        run_name = _run(run_name_t.render, ctx, spec, ("run_name",), variant) if run_name_t else variant.name
        names.add(run_name, variant)
        ctx["variant"]["run_name"] = run_name
        run_dir = None
        if run_dir_t is not None:
            run_dir = _run_dir(_run(run_dir_t.render, ctx, spec, ("run_dir",), variant), spec, variant)
            _check_new_dir(spec, run_dir, variant, seen_dirs)
        variant = _with_run(variant, run_name, run_dir)
        if derived:
            ops = [
                overrides.Op(kind, path, _run(fn, ctx, spec, at, variant), loc, LAYER)
                for kind, path, loc, at, fn in derived
            ]
            overrides.check_types(variant.config, ops, "`derived`")
            variant = _applied(variant, ops)
            implicit.update(op.dotted for op in ops)
        variants.append(variant)
    return replace(expansion, variants=variants, implicit=frozenset(implicit), locs=locs)


def _check_new_dir(spec: Spec, run_dir: str, variant: Variant, seen_dirs: dict[str, tuple[str, str]]) -> None:
    """Each variant's run dir its own (``seen_dirs``: the earlier variants', then this one's), also
    when two spellings name one folder (``runs/a/``, ``runs/./a``) or differ only in case (one folder
    on macOS and Windows): two runs in one folder would overwrite each other, or one would be taken
    for the other's finished run."""
    key = output_keys.folder_key(run_dir)
    if key in seen_dirs:
        other, other_dir = seen_dirs[key]
        same = f"the same run_dir {run_dir!r}"
        if other_dir != run_dir:
            same = f"run_dirs {other_dir!r} and {run_dir!r}, which are one folder"
        raise ValidationError(
            f"variants {other!r} and {variant.name!r} have {same}",
            location=spec.loc(("run_dir",)),
            hint="include `{{ variant.run_name }}` in `run_dir`; folders that differ only in case are "
            "one folder on macOS and Windows",
        )
    seen_dirs[key] = (variant.name, run_dir)


def _derived(env: Environment, spec: Spec, locs: Locs) -> list[_Derived]:
    """The spec's ``derived`` entries compiled, each located (in ``locs``) where the spec wrote it."""
    derived: list[_Derived] = []
    for key, source in (spec.model.derived or {}).items():
        at = ("derived", key)
        loc = spec.loc(at, key=True)
        kind, path = overrides.split_key(key, loc)
        if kind == overrides.DELETE:
            raise SpecError("a derived value cannot delete a key", location=loc, hint="remove the `~`")
        match = _SINGLE_EXPR.match(source)
        if match:
            try:
                fn: Evaluate = env.compile_expression(match.group("expr"), undefined_to_none=False)
            except Exception as err:  # noqa: BLE001 - a Jinja syntax error in the spec
                raise SpecError(
                    f"derived `{key}` is not a valid expression: {err}",
                    location=spec.loc(at),
                    hint='write one Jinja expression, e.g. "{{ training.group }}"',
                ) from None
            derived.append((kind, path, loc, at, fn))
        else:
            derived.append((kind, path, loc, at, _compile(env, spec, at, source).render))
        locs[(LAYER, ".".join(path))] = loc
    return derived


class _RunNames:
    """Run names, checked as they are made: safe folder names, unique even case-folded."""

    def __init__(self, spec: Spec) -> None:
        self.spec = spec
        self.seen: dict[str, tuple[str, str]] = {}  # lower-cased run name -> (variant, run name)

    def add(self, run_name: str, variant: Variant) -> None:
        problem = name_problem(run_name)
        if problem:
            raise ValidationError(
                f"run name {run_name!r} of variant {variant.name!r} {problem}",
                location=self.spec.loc(("run_name",)),
                hint=f"run names become folder names: {NAME_HINT}",
            )
        if run_name.lower() in self.seen:
            other, other_name = self.seen[run_name.lower()]
            same = (
                f"the same run name {run_name!r}"
                if other_name == run_name
                else f"run names {other_name!r} and {run_name!r} that differ only in case"
            )
            raise ValidationError(
                f"variants {other!r} and {variant.name!r} have {same}",
                location=self.spec.loc(("run_name",)),
                hint="include every varying value (or `{{ variant.name }}`) in `run_name`; "
                "run folders that differ only in case collide on macOS and Windows",
            )
        self.seen[run_name.lower()] = (variant.name, run_name)


def _relative_below(value: str, parts: list[str]) -> bool:
    """A relative path that never climbs (no ``..``) and holds no line break."""
    return bool(value.strip()) and not value.startswith("/") and ".." not in parts and "\n" not in value


def _run_dir(value: str, spec: Spec, variant: Variant) -> str:
    """A run directory is relative to where `sweepgen run` is called and stays below it."""
    parts = value.replace("\\", "/").split("/")
    if not _relative_below(value, parts):
        raise ValidationError(
            f"run_dir {value!r} of variant {variant.name!r} is not a relative path below the "
            "working directory",
            location=spec.loc(("run_dir",)),
            hint='e.g. run_dir: "runs/{{ sweep.name }}/{{ variant.run_name }}"',
        )
    if names_git_folder(value):
        raise ValidationError(
            f"run_dir {value!r} of variant {variant.name!r} lies in git's own .git folder",
            location=spec.loc(("run_dir",)),
            hint="git runs what its folder holds (hooks, config); e.g. "
            'run_dir: "runs/{{ sweep.name }}/{{ variant.run_name }}"',
        )
    if not plain(value):
        # refused here, at the spec's line, rather than only by `run`: the value would otherwise
        # reach generated/ and the lock, which `run --command` pastes into a command line
        raise ValidationError(
            f"run_dir {value!r} of variant {variant.name!r} holds characters a command would act on "
            "(a shell's `$`, quotes, spaces, `;`, a leading `-`...)",
            location=spec.loc(("run_dir",)),
            hint=PLAIN_HINT,
        )
    long = next((p for p in parts if len(p) > MAX_NAME_BYTES), None)  # plain: one byte a character
    if long is not None:
        # every run would fail creating its folder (ENAMETOOLONG): said once, here, at the spec
        raise ValidationError(
            f"run_dir {value!r} of variant {variant.name!r} has a folder name of {len(long)} bytes",
            location=spec.loc(("run_dir",)),
            hint=f"folder names stop at 255 bytes on most file systems; keep each under {MAX_NAME_BYTES}",
        )
    return value


def _with_run(v: Variant, run_name: str, run_dir: str | None) -> Variant:
    # the constructor, not dataclasses.replace: replace costs ~15 us a call, 1.5 s at 100,000 variants
    return Variant(
        name=v.name,
        config=v.config,
        layers=v.layers,
        overrides=v.overrides,
        axes=v.axes,
        step=v.step,
        touched=v.touched,
        parts=v.parts,
        run_name=run_name,
        run_dir=run_dir,
    )


def _applied(variant: Variant, ops: list[overrides.Op]) -> Variant:
    config, layers = overrides.apply_all(
        variant.config, ops, variant.layers, where=f"variant `{variant.name}`"
    )
    return replace(
        variant,
        config=config,
        layers=layers,
        overrides={**variant.overrides, **{op.dotted: op.value for op in ops}},
        touched=variant.touched + tuple(op.path for op in ops),
    )


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
