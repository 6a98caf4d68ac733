"""Read a trainer config file into a RunConfig; every problem names file:line:col and a fix.

YAML is read with sweepgen's YAML 1.2 reader (``1e-5`` is a float, duplicate keys are errors), and
pydantic's errors are mapped back onto the line of the offending key, with the closest valid key
suggested for a typo.
"""

from __future__ import annotations

import difflib
from pathlib import Path
from typing import Any

import pydantic

from sweepgen.errors import ConfigError, Location, SweepgenError
from sweepgen.formats import yamlio
from sweepgen_trainer.config import RunConfig


def load_config(path: str | Path) -> RunConfig:
    return load_config_doc(path)[0]


def load_config_doc(path: str | Path) -> tuple[RunConfig, yamlio.Doc]:
    """The config and the YAML document it came from (its marks locate later errors' keys)."""
    path = Path(path)
    if not path.is_file():
        raise ConfigError(
            f"config file {str(path)!r} does not exist", hint="pass the path of a trainer config YAML file"
        )
    try:
        doc = yamlio.load(str(path))
    except SweepgenError as err:
        raise ConfigError(err.message, location=err.location, key=err.key, hint=err.hint) from None
    return validate_config(doc.data, doc), doc


def locate(err: SweepgenError, doc: yamlio.Doc) -> SweepgenError:
    """``err`` pointing at the line of its key in the config file, when it names a key but no place
    (checks that run after loading, e.g. against the model or TRL, know the key, not the file)."""
    if err.location is not None and err.location.line:
        return err
    if err.key:
        parts = tuple(int(p) if p.isdigit() else p for p in err.key.split("."))
        err.location = doc.loc(parts, key=True)
    elif err.location is None:
        err.location = Location(doc.path)
    return err


def validate_config(data: Any, doc: yamlio.Doc | None = None, display: str = "<config>") -> RunConfig:
    """``data`` as a RunConfig, or a ConfigError about its first problem (all are listed)."""
    if not isinstance(data, dict):
        raise ConfigError(
            "a trainer config must be a mapping of sections", location=doc.loc() if doc else Location(display)
        )
    try:
        return RunConfig.model_validate(data)
    except pydantic.ValidationError as err:
        raise _to_config_error(err, data, doc, display) from None


def _to_config_error(
    err: pydantic.ValidationError, data: Any, doc: yamlio.Doc | None, display: str
) -> ConfigError:
    problems = err.errors(include_url=False)
    messages = [_describe(p, data) for p in problems]
    first = problems[0]
    loc_path = tuple(first["loc"])
    # A registry or rule error (e.g. an unknown reward parameter) knows its key inside the section.
    inner = getattr((first.get("ctx") or {}).get("error"), "key", None)
    if inner:
        loc_path += tuple(int(p) if p.isdigit() else p for p in inner.split("."))
    at_key = first["type"] == "extra_forbidden" or bool(inner)
    location = doc.loc(loc_path, key=at_key) if doc else Location(display)
    message = messages[0]
    if len(messages) > 1:
        message += f" (and {len(messages) - 1} more: " + "; ".join(messages[1:]) + ")"
    hint = _hint(first, data)
    return ConfigError(message, location=location, key=".".join(map(str, loc_path)) or None, hint=hint)


def _describe(problem: Any, data: Any) -> str:
    dotted = ".".join(map(str, problem["loc"]))
    kind = problem["type"]
    if kind == "extra_forbidden":
        return f"unknown key `{dotted}`"
    if kind == "missing":
        return f"missing required key `{dotted}`"
    msg = problem["msg"].removeprefix("Value error, ")
    return f"`{dotted}`: {msg}" if dotted else msg


def _hint(problem: Any, data: Any) -> str | None:
    if problem["type"] == "extra_forbidden":
        *parent, name = problem["loc"]
        known = _known_keys(tuple(parent))
        close = difflib.get_close_matches(str(name), known, n=1)
        if close:
            return f"did you mean `{close[0]}`? known keys here: {', '.join(known)}"
        return f"known keys here: {', '.join(known)}"
    if problem["type"] == "missing":
        return "add it; every trainer config needs run_name and output_dir"
    return None


def _known_keys(parent: tuple[str | int, ...]) -> list[str]:
    """Field names of the section at ``parent`` (walking RunConfig's nested models)."""
    model: Any = RunConfig
    for part in parent:
        field = getattr(model, "model_fields", {}).get(part)
        if field is None:
            return []
        model = _model_of(field.annotation)
    return list(getattr(model, "model_fields", {}))


def _model_of(annotation: Any) -> Any:
    if isinstance(annotation, type) and issubclass(annotation, pydantic.BaseModel):
        return annotation
    for arg in getattr(annotation, "__args__", ()):  # Optional[Section]
        if isinstance(arg, type) and issubclass(arg, pydantic.BaseModel):
            return arg
    return None
