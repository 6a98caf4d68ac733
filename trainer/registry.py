"""The one mechanism behind the trainer's three registries (rewards, debate shaping strategies, hack
detectors): a name maps to an entry whose parameters are a strict pydantic model, and
:func:`resolve_params` checks a config's parameters against it, returning them with every default
written out (so the resolved config in the run directory shows the whole truth). Errors list what
exists: the known names, or the entry's parameters. Pure Python (no torch)."""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping
from typing import Any

import pydantic

STRICT_PARAMS = pydantic.ConfigDict(extra="forbid", strict=True, allow_inf_nan=False)


class KeyedValueError(ValueError):
    """A config rule's error that names the key it is about, relative to the section whose validator
    raises it (the whole config for RunConfig's cross-section rules), so the loader points at its line
    instead of at the section, or at line 1."""

    def __init__(self, message: str, key: str | None = None) -> None:
        super().__init__(message)
        self.key = key


def params_model_of(name: str, fn: Callable[..., Any]) -> type[pydantic.BaseModel]:
    """A strict pydantic model of ``fn``'s keyword-only parameters (annotation, default)."""
    fields: dict[str, Any] = {}
    # eval_str: the annotations are strings (``from __future__ import annotations``) in fn's module
    for param in inspect.signature(fn, eval_str=True).parameters.values():
        if param.kind is inspect.Parameter.KEYWORD_ONLY:
            default = ... if param.default is inspect.Parameter.empty else param.default
            fields[param.name] = (param.annotation, default)
    model: type[pydantic.BaseModel] = pydantic.create_model(
        f"{name}_params", __config__=STRICT_PARAMS, **fields
    )
    return model


def lookup(
    kind: str, plural: str, entries: Mapping[str, Any], name: str, error: Callable[..., Exception]
) -> Any:
    """The entry called ``name``, or ``error`` listing the known names."""
    if name not in entries:
        raise error(f"unknown {kind} `{name}`; known {plural}: {', '.join(sorted(entries))}", key="name")
    return entries[name]


def resolve_params(
    kind: str,
    plural: str,
    entries: Mapping[str, Any],
    name: str,
    params: Mapping[str, Any] | None,
    error: Callable[..., Exception],
) -> dict[str, Any]:
    """Validate ``params`` for entry ``name`` (strict); return them with every default filled in.

    ``error(message, key=...)`` builds the exception; ``key`` is the offending path inside the
    section (``name``, ``params.cap``), so the config loader can point at its line."""
    entry = lookup(kind, plural, entries, name, error)
    model = entry.params_model
    params = dict(params or {})
    allowed = list(model.model_fields)
    unknown = sorted(set(params) - set(allowed))
    if unknown:
        raise error(
            f"unknown parameter(s) {', '.join(map(repr, unknown))} for {kind} `{name}`; "
            f"its parameters are: {', '.join(allowed) or '(none)'}",
            key=f"params.{unknown[0]}",
        )
    try:
        validated = model.model_validate(params)
    except pydantic.ValidationError as err:
        problems = "; ".join(f"{'.'.join(map(str, e['loc'])) or name}: {e['msg']}" for e in err.errors())
        first = err.errors()[0]["loc"]
        raise error(
            f"bad parameters for {kind} `{name}`: {problems}",
            key="params." + str(first[0]) if first else "params",
        ) from None
    dumped: dict[str, Any] = validated.model_dump()
    return dumped
