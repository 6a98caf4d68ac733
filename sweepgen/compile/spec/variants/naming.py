"""How a variant is named from its parts: the spec's ``names:`` scheme, in one place.

``readable`` (what `sweepgen init` writes): the parts (named variant, each grid axis, each zip group,
the sample point, the ablation step) are joined with ``-`` and an axis' automatic label is its key
then its value, a number right after the key (``beta0.04``, ``seed1``) and any other value after a
``_`` (``loss_type_dr_grpo``): ``loss_type_dr_grpo-beta0.04-seed1``. A seed group is then the run's
name without its ``-seed1`` part (``loss_type_dr_grpo-beta0.04``).

``legacy`` (the default, so a sweep rendered before the key existed keeps every file and run name):
parts joined with ``_``, key and value run together (``loss_typedr_grpo_beta0.04_seed1``).

A render that would rename runs whose folders already exist is refused (``rename_guard``): the
scheme of a sweep with started runs never changes under it.
"""

from __future__ import annotations

from typing import Any

from sweepgen.compile.spec.model import Spec
from sweepgen.errors import Location, SpecError

READABLE = "readable"
LEGACY = "legacy"


def is_readable(spec: Spec) -> bool:
    return spec.model.names == READABLE


def separator(spec: Spec) -> str:
    """What joins a name's parts (and the axes of one grid point, zip step or sample point)."""
    return "-" if is_readable(spec) else "_"


def auto_label(leaf: str, value: Any, loc: Location, readable: bool) -> str:
    """An axis value's label from the last component of its path: ``beta0.04``, ``loss_type_grpo``
    (``loss_typegrpo`` in the legacy scheme)."""
    text = _value_text(value, loc)
    number = isinstance(value, (int, float)) and not isinstance(value, bool)
    return f"{leaf}{text}" if number or not readable else f"{leaf}_{text}"


def _value_text(value: Any, loc: Location) -> str:
    """A scalar as YAML writes it (true, null, 0.02); a list or mapping has no short form that
    would make a readable, unique name."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "null"
    if isinstance(value, float):
        return repr(value)  # shortest round-trip form: 0.02, 1e-05, inf
    if isinstance(value, (int, str)):
        return str(value)
    raise SpecError(
        f"cannot name a variant after a {type(value).__name__} value",
        location=loc,
        hint="give the axis as a mapping {label: value} to name its values",
    )
