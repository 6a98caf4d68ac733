"""The spec's ``limits:`` and who may raise them: the spec lowers, the person running sweepgen raises.

A spec comes with the pull request nobody has reviewed yet, so its own ``limits:`` may lower any
bound and raise it only up to a ceiling. Past the ceiling only the person running sweepgen decides:
``--limit KEY=VALUE`` on the command line (wins) or ``limits = {KEY = VALUE}`` under
``[tool.sweepgen]`` in their pyproject.toml. Such a value becomes that key's ceiling, and its value
where the spec says nothing. ``variants`` has a hard maximum nobody raises (memory, not time).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field, StrictFloat, StrictInt

from sweepgen.compile.spec import project
from sweepgen.errors import Location, SpecError, UserError
from sweepgen.formats import yamlio

if TYPE_CHECKING:
    from sweepgen.compile.template.sandbox import total_budget

MIB = 1 << 20
MAX_VARIANTS = 10_000_000  # a raised `limits.variants` still ends in exit 2, never out of memory at 10^10
EVAL_SECONDS = 5  # no real template, constraint or name takes a tenth of that for one variant
TOTAL_SECONDS = 120  # every evaluation of one spec together: 100,000 variants render in about 30 s
# Every evaluation of one `check` or `render` together, all its specs: a pull request that adds many
# specs would otherwise add up their budgets. Set by the command line alone (`--limit
# command_seconds=N`): a spec or the checkout's pyproject.toml is the pull request's own.
COMMAND_SECONDS = 600


class Limits(BaseModel):
    """Bounds on what one spec may cost; a spec may lower them, and raise them up to a ceiling."""

    model_config = ConfigDict(extra="forbid", strict=True)
    variants: StrictInt = Field(
        default=100_000,
        ge=1,
        le=MAX_VARIANTS,
        description=f"variants after expansion (at most {MAX_VARIANTS:,}: each costs memory)",
    )
    output_bytes: StrictInt = Field(default=16 * MIB, ge=1, description="bytes per rendered file")
    yaml_nodes: StrictInt = Field(
        default=yamlio.MAX_NODES, ge=1, description="YAML nodes per file, aliases expanded"
    )
    input_bytes: StrictInt = Field(
        default=project.INPUT_BYTES,
        ge=1,
        description="bytes per file read: included configs, templates, schema files "
        "(checked from the size, before reading)",
    )
    eval_seconds: StrictFloat | StrictInt = Field(
        default=EVAL_SECONDS,
        gt=0,
        description="wall-clock seconds for one evaluation: the template, `output`, `run_name`, "
        "`run_dir`, a `derived` value or a constraint, for one variant",
    )
    total_seconds: StrictFloat | StrictInt = Field(
        default=TOTAL_SECONDS,
        gt=0,
        description="wall-clock seconds for every evaluation of the spec together, all variants",
    )


DEFAULTS = Limits()
# The most a spec may give itself: a few times the default, enough for a large real sweep.
CEILINGS: dict[str, int | float] = {
    "variants": 1_000_000,
    "output_bytes": 64 * MIB,
    "yaml_nodes": 10 * yamlio.MAX_NODES,
    "input_bytes": 64 * MIB,
    "eval_seconds": 30,
    "total_seconds": 600,
}
# The most a pyproject.toml may raise a ceiling to. It sits in the checkout, so under CI it is the
# pull request's own: past these only the command line (`--limit`) goes. Time no further than a spec
# may go itself (a loop in a template would otherwise run as long as the pull request says); sizes
# four times a spec's ceiling (memory, bounded).
FILE_MAXIMUMS: dict[str, int | float] = {
    "variants": MAX_VARIANTS,
    "output_bytes": 4 * CEILINGS["output_bytes"],
    "yaml_nodes": 4 * CEILINGS["yaml_nodes"],
    "input_bytes": 4 * CEILINGS["input_bytes"],
    "eval_seconds": CEILINGS["eval_seconds"],
    "total_seconds": CEILINGS["total_seconds"],
}
KEYS = tuple(Limits.model_fields)
RUNNER_ONLY: dict[str, int | float] = {"command_seconds": COMMAND_SECONDS}  # the command line's alone
_SECONDS = frozenset({"eval_seconds", "total_seconds", "command_seconds"})


@dataclass(frozen=True)
class Ceiling:
    value: int | float
    source: str  # who set it, as the error says it
    runner: bool = False  # set by the person running sweepgen (else sweepgen's own ceiling)


_command_line: dict[str, int | float] = {}  # this command's `--limit` values (the CLI sets them)


def set_command_line(values: Mapping[str, int | float]) -> None:
    """The ``--limit`` values of the command being run, for the rest of the process."""
    global _command_line
    _command_line = dict(values)


def parse_pair(text: str) -> tuple[str, int | float]:
    """``KEY=VALUE`` of ``--limit``; a UserError naming the key when either is wrong."""
    key, sep, raw = text.partition("=")
    key = key.strip()
    if not sep:
        raise UserError(f"--limit {text!r} is not KEY=VALUE", location=Location("--limit"), hint=_KEYS_HINT)
    return key, runner_value(key, raw.strip(), Location("--limit"))


def runner_value(key: str, raw: Any, at: Location) -> int | float:
    """A ceiling the person running sweepgen sets: a known key, a positive number of the key's type."""
    if key not in CEILINGS and key not in RUNNER_ONLY:
        raise UserError(f"unknown limit {key!r}", location=at, key=key, hint=_KEYS_HINT)
    value = _number(raw, key in _SECONDS)
    if value is None or value <= 0:
        raise UserError(
            f"limit {key} must be a positive {'number' if key in _SECONDS else 'integer'}, not {raw!r}",
            location=at,
            key=key,
            hint=f"e.g. --limit {key}={_example(key)}",
        )
    if key == "variants" and value > MAX_VARIANTS:
        raise UserError(
            f"limit variants={value:,} is above the hard maximum of {MAX_VARIANTS:,}",
            location=at,
            key=key,
            hint="split the sweep into several specs",
        )
    return value


def _number(raw: Any, seconds: bool) -> int | float | None:
    """A limit's value as a number of seconds (a float) or a count (an int); None if it is not one."""
    if isinstance(raw, bool):
        return None
    if isinstance(raw, str):
        raw = _from_text(raw, seconds)
    return _seconds(raw) if seconds else _count(raw)


def _from_text(text: str, seconds: bool) -> int | float | None:
    try:
        return float(text) if seconds else int(text.replace("_", ""))
    except ValueError:
        try:  # `1e6` for a count: an integer written as a float
            return float(text)
        except ValueError:
            return None


def _seconds(raw: Any) -> float | None:
    if isinstance(raw, int):
        try:  # a deadline is a float: 10**400 seconds would overflow it
            raw = float(raw)
        except OverflowError:
            return None
    return raw if isinstance(raw, float) and math.isfinite(raw) else None


def _count(raw: Any) -> int | None:
    if isinstance(raw, float):  # a whole float is the integer
        return int(raw) if math.isfinite(raw) and raw.is_integer() else None
    return raw if isinstance(raw, int) else None


def ceilings(pyproject: Mapping[str, Any], where: Callable[..., Location]) -> dict[str, Ceiling]:
    """Each key's ceiling: the command line, else the pyproject's ``[tool.sweepgen] limits``, else
    ours. ``where("limits", KEY)`` is where the pyproject.toml writes a limit."""
    out = {key: Ceiling(value, "the most a spec may set itself") for key, value in CEILINGS.items()}
    for key, raw in pyproject.items():
        at = where("limits", key)
        out[key] = Ceiling(_file_value(key, raw, at), f"[tool.sweepgen] limits in {at.path}", runner=True)
    for key, value in _command_line.items():
        out[key] = Ceiling(value, "--limit", runner=True)
    return out


def _file_value(key: str, raw: Any, at: Location) -> int | float:
    """A ceiling from ``[tool.sweepgen] limits``: as ``--limit`` takes it, up to ``FILE_MAXIMUMS``;
    a TOML string is refused, never read as the number it spells (``variants = "3"``)."""
    if key in RUNNER_ONLY:
        raise UserError(
            f"[tool.sweepgen] limits.{key} is set on the command line only",
            location=at,
            key=f"limits.{key}",
            hint=f"pyproject.toml comes with the checkout (a pull request's own in CI): remove it "
            f"and pass `--limit {key}=N` (default {RUNNER_ONLY[key]:,})",
        )
    if isinstance(raw, str) and key in CEILINGS:
        raise UserError(
            f"[tool.sweepgen] limits.{key} must be a number, not the string {raw!r}",
            location=at,
            key=f"limits.{key}",
            hint=f"write it without quotes, e.g. {key} = {_example(key)}",
        )
    value = runner_value(key, raw, at)
    most = FILE_MAXIMUMS[key]
    if value > most:
        raise UserError(
            f"[tool.sweepgen] limits.{key} = {value:,} is above the most a pyproject.toml may set ({most:,})",
            location=at,
            key=f"limits.{key}",
            hint=f"pyproject.toml comes with the checkout (a pull request's own in CI); past {most:,} "
            f"only the command line raises it: `--limit {key}={value}`",
        )
    return value


def command_budget() -> total_budget:
    """The budget of every evaluation of this command together (``check``, ``render``: all their
    specs), ``--limit command_seconds`` or its default; each spec's own ``total_seconds`` inside."""
    from sweepgen.compile.template.sandbox import total_budget  # noqa: PLC0415 - jinja2: not for `diff --limit`

    return total_budget(_command_line.get("command_seconds", COMMAND_SECONDS), command=True)


def effective(spec_limits: Limits, doc: yamlio.Doc, ceiling: Mapping[str, Ceiling]) -> Limits:
    """The spec's limits within the ceilings: a value the spec raised past its ceiling is an error at
    that key; a key the spec left alone takes the runner's value when they set one, else the default."""
    values: dict[str, Any] = {}
    for key in KEYS:
        cap = ceiling[key]
        if key in spec_limits.model_fields_set:
            value = getattr(spec_limits, key)
            if value > cap.value:
                raise SpecError(
                    f"`limits.{key}: {value:,}` is above the ceiling of {cap.value:,} ({cap.source})",
                    location=doc.loc(("limits", key)),
                    key=f"limits.{key}",
                    hint=f"lower it; only the person running sweepgen raises a ceiling: "
                    f"`--limit {key}={value}` or `limits = {{{key} = {value}}}` under "
                    "[tool.sweepgen] in their pyproject.toml",
                )
            values[key] = value
        else:
            values[key] = cap.value if cap.runner else getattr(DEFAULTS, key)
    return Limits.model_validate(values)


def node_limit(doc_limits: Any, ceiling: Mapping[str, Ceiling]) -> int:
    """The YAML node limit to read the spec itself with, before its model is validated: the spec's
    own ``limits.yaml_nodes`` when it is a valid number, never above its ceiling."""
    value = doc_limits.get("yaml_nodes") if isinstance(doc_limits, dict) else None
    cap = ceiling["yaml_nodes"]
    if type(value) is int and value >= 1:
        return min(value, int(cap.value))
    return int(cap.value) if cap.runner else DEFAULTS.yaml_nodes


def raise_hint(key: str) -> str:
    """How to raise ``key`` when a spec ran into it."""
    return (
        f"raise it in the spec (`limits: {{{key}: N}}`, up to its ceiling of {CEILINGS[key]:,}); "
        f"past that, the person running sweepgen passes `--limit {key}=N`"
    )


def _example(key: str) -> str:
    return str(CEILINGS[key] * 2)


_KEYS_HINT = "keys: " + ", ".join([*CEILINGS, *RUNNER_ONLY]) + " (e.g. --limit variants=2000000)"
