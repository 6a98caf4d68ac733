"""``schema: trl:grpo`` (``trl:dpo``, ``trl:sft``, ...): exactly what ``trl <command> --config`` accepts.

A ``trl grpo`` config mixes the keys of several dataclasses: the script's arguments
(``dataset_name``, ``reward_funcs``), ``ModelConfig`` (``model_name_or_path``), the command's config
class (``GRPOConfig``) and ``DatasetMixtureConfig``, plus an ``env:`` mapping the parser turns into
environment variables, and the ``accelerate launch`` options (``num_processes``,
``accelerate_config``) the CLI hands every other key to (sweepgen.compile.schema.accelerate_launch).
TRL's own ``make_parser()`` names those classes, so the schema is the one the CLI parses with, never
a list of ours. Every class becomes one JSON Schema (sweepgen.compile.schema.
export: enums from the types and ``choices`` metadata only) and the properties are merged.

Importing trl takes a minute on a loaded machine, so the merged schema is kept in the user's cache
folder, keyed by trl's installed version (read from its metadata, without importing it): trl is
imported once per version, and an upgrade makes a new schema.
"""

from __future__ import annotations

import contextlib
import contextvars
import importlib
import importlib.metadata
import json
import os
import re
import time
from collections.abc import Iterator
from typing import Any

from sweepgen.compile.schema import accelerate_launch, code_choices, export, trl_raises
from sweepgen.errors import Location, SpecError
from sweepgen.fs import safefs

# `trl:grpo` names a command (lower case); `trl:GRPOConfig` names a class and stays a class schema
_COMMAND = re.compile(r"trl:([a-z][a-z0-9_]*)")
# the CLI's training commands (trl/scripts/<command>.py with make_parser); the rest start servers
COMMANDS = ("distillation", "dpo", "grpo", "kto", "reward", "rloo", "sft")
# popped by TrlParser before the dataclasses see the config: `env: {NAME: value}`
_ENV = {
    "type": "object",
    "additionalProperties": {"type": ["string", "number", "boolean"]},
    "description": "environment variables `trl` sets before training",
}
# raised whenever what a built schema says changes, so a cache from an older sweepgen is built again
# (2: fields a class converts between one value and a list take both; 3: fields mapped from
# constants, and the `accelerate launch` options; 4: string options the trainer's code closes;
# 5: tuples (prefixItems), and options closed under another field's value or through a class: allOf;
# 6: `Enum | str` fields the class casts to the enum take only its values; argparse `const`s;
# `report_to` held to transformers' trackers; `lora_target_modules` no comma list;
# 7: `lora_target_modules` not one layer's short name; `load_best_model_at_end`'s strategies;
# GRPO's and RLOO's generation batch; 8: list options closed item by item, DPO's `loss_type`;
# SFT's padding_free without packing; flags the trainer turns off, DPO's padding_free;
# 9: `resume_from_checkpoint: true`, which Trainer.train takes; 10: GRPO's and RLOO's own
# __post_init__ refusals by class, TrainingArguments._validate_args' under every class;
# 11: a *_steps above 1 that is no whole number)
CACHE_FORMAT = 11


def command_of(ref: str) -> str | None:
    """The TRL CLI command a schema reference names (``trl:grpo`` -> ``grpo``), else None."""
    match = _COMMAND.fullmatch(ref)
    return match.group(1) if match else None


def trl_version() -> str | None:
    return installed_version("trl")


def accelerate_version() -> str | None:
    """accelerate's installed version: the schema holds its launch options, so a cache is its too."""
    return installed_version("accelerate")


def installed_version(package: str) -> str | None:
    """The installed version of ``package`` (read from its metadata, never imported); None when it
    is not installed, or the name is no distribution name (a schema file's stamp is data)."""
    try:
        return importlib.metadata.version(package)
    except (importlib.metadata.PackageNotFoundError, ValueError):
        return None


def identity() -> str:
    """What the lock records for a ``trl:<command>`` schema: the installed release."""
    return f"trl=={trl_version()}"


def command_schema(command: str, loc: Location) -> dict[str, Any]:
    """The JSON Schema of a ``trl <command>`` config: from the cache, else built (imports trl)."""
    if command not in COMMANDS:
        raise SpecError(
            f"`trl:{command}` is not a training command of the TRL CLI",
            location=loc,
            hint=f"one of {', '.join('trl:' + c for c in COMMANDS)}, or a class such as trl:GRPOConfig",
        )
    version = trl_version()
    if version is None:
        raise SpecError(
            f"`trl:{command}` needs trl installed to read its config classes",
            location=loc,
            hint="pip install trl (or 'sweepgen[train]'), or export the schema once elsewhere with "
            f"`sweepgen schema --export trl:{command} -o schemas/{command}.json` and name that file",
        )
    path = os.path.join(_cache_dir(), f"trl-{version}", f"{command}.json")
    cached = _read_cached(path)
    if cached is not None:
        return cached
    started = time.monotonic()
    schema = _build(command, version, loc)
    built = _BUILT.get()
    if built is None:
        with contextlib.suppress(OSError):  # a read-only cache costs the next run the import, nothing else
            safefs.write_atomic(path, export.dumps(schema).encode("utf-8"))
    else:
        built.append((command, time.monotonic() - started))
    return schema


# `check` (and the pre-commit hook) is a reading command: it writes nothing, the user's cache
# folder included (strace's oracle); it reads a cache `render`, `init` or `schema` left, and
# without one imports trl for every look (each such build is listed, so `check` can say how to
# keep it: ``built_note``)
_BUILT: contextvars.ContextVar[list[tuple[str, float]] | None] = contextvars.ContextVar(
    "sweepgen_trl_built_uncached", default=None
)


@contextlib.contextmanager
def no_cache_writes() -> Iterator[list[tuple[str, float]]]:
    """Within this block, a schema built is not kept in the user's cache folder; the list yielded
    gets each command whose schema was built (trl imported) and the seconds it took."""
    built: list[tuple[str, float]] = []
    token = _BUILT.set(built)
    try:
        yield built
    finally:
        _BUILT.reset(token)


def built_note(built: list[tuple[str, float]]) -> str | None:
    """What a reading command says when it had to import trl for a schema no writer had kept."""
    if not built:
        return None
    names = ", ".join(f"trl:{c}" for c, _ in built)
    seconds = sum(s for _, s in built)
    first = built[0][0]
    return (
        f"note: imported trl to build the schema of {names} ({seconds:.1f} s), as every `check` does "
        f"until a writer keeps it: `sweepgen schema --export trl:{first} > /dev/null` (or any `render`) "
        f"keeps it in {_cache_dir()}, which `check` only reads"
    )


def _cache_dir() -> str:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "sweepgen", "schemas")


def _read_cached(path: str) -> dict[str, Any] | None:
    """The cached schema; None when absent or unreadable (then it is built again, never trusted)."""
    try:
        with open(path, encoding="utf-8") as fh:
            data = json.load(fh)
    except (OSError, ValueError):
        return None
    ok = isinstance(data, dict) and isinstance(data.get("properties"), dict)
    stamp = data.get(export.STAMP, {}) if ok else {}
    current = (_source(path), CACHE_FORMAT, accelerate_version(), installed_version("transformers"))
    seen = (stamp.get("source"), stamp.get("format"), stamp.get("accelerate"), stamp.get("transformers"))
    return data if seen == current else None


def _source(path: str) -> str:
    return "trl:" + os.path.splitext(os.path.basename(path))[0]


def _build(command: str, version: str, loc: Location) -> dict[str, Any]:
    try:
        script = importlib.import_module(f"trl.scripts.{command}")
        classes = tuple(script.make_parser().dataclass_types)
    except Exception as err:  # noqa: BLE001 - whatever importing trl's script raises, named
        raise SpecError(
            f"cannot read the config classes of `trl {command}`: {type(err).__name__}: {err}",
            location=loc,
            hint="check that trl imports in this environment (python -c 'import trl')",
        ) from None
    props, required = _class_fields(classes)
    guarded = [
        *code_choices.close_strings(props, [c.__module__ for c in classes]),
        *trl_raises.refused(props, trl_raises.lineage(*classes)),
    ]
    taken = set(props)
    for name, prop in _launch_options(command, loc).items():
        if name.replace("-", "_") not in taken:  # a key the classes take never reaches accelerate
            props[name] = prop
    return {
        **({"required": required} if required else {}),
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": f"trl {command} --config",
        "type": "object",
        "properties": props,
        "additionalProperties": False,
        **({"allOf": guarded} if guarded else {}),
        export.STAMP: {
            "source": f"trl:{command}",
            "format": CACHE_FORMAT,
            "package": "trl",
            "version": version,
            "accelerate": accelerate_version(),
            # TrainingArguments' fields are transformers': an upgrade of it alone changes the schema
            "transformers": installed_version("transformers"),
            "classes": [f"{c.__module__}.{c.__qualname__}" for c in classes],
        },
    }


def _class_fields(classes: tuple[type, ...]) -> tuple[dict[str, Any], list[str]]:
    """The properties and required keys of all the script's config classes, as one object: its
    --config file is one mapping that HfArgumentParser splits among them."""
    props: dict[str, Any] = {"env": _ENV}
    required: list[str] = []
    for cls in classes:
        part = export.export(f"{cls.__module__}:{cls.__qualname__}", cls)
        for name, prop in part["properties"].items():
            props.setdefault(name, prop)  # HfArgumentParser refuses a field two classes share
        required += part.get("required", [])
    return props, required


def _launch_options(command: str, loc: Location) -> dict[str, Any]:
    try:
        return accelerate_launch.launch_properties()
    except Exception as err:  # noqa: BLE001 - whatever importing accelerate's launcher raises, named
        raise SpecError(
            f"cannot read the `accelerate launch` options `trl {command}` passes config keys to: "
            f"{type(err).__name__}: {err}",
            location=loc,
            hint="check that accelerate imports in this environment (python -c 'import accelerate')",
        ) from None
