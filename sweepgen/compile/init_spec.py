"""`sweepgen init --from CONFIG`: a starting spec and template from a config the user already has.

The spec includes the config (YAML or JSON) as its base, or holds it inline (TOML, which the spec's
include does not read, and the literal keyword arguments of a Python file's one ``GRPOConfig(...)``
call: init_pycall); each run writes to ``runs/<sweep>/<run>`` (the config's ``output_dir`` set
per run when it has one, else the spec's ``run_dir``; any other output folder the config names,
such as verl's ``trainer.default_local_dir``, set to that run folder too); a first grid axis over
the seed when the config has one; and, with a schema class, that class exported to ``schemas/``
and named as the spec's schema, so `check` validates without importing it. The files are written
only if the spec they make renders: a config its own schema refuses is reported, and nothing is
left behind.
"""

from __future__ import annotations

import difflib
import json
import math
import os
import re
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from sweepgen import escape, output_keys, paths
from sweepgen.compile import init_pycall
from sweepgen.compile.spec import project
from sweepgen.errors import Location, UserError
from sweepgen.formats import yamlio
from sweepgen.formats.tomllines import error_place, key_place

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

INCLUDED = (".yaml", ".yml", ".json")
RUN_DIR = "runs/{{ sweep.name }}/{{ variant.run_name }}"
RUN_NAME = "{{ variant.run_name }}"
_HUB_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*(/[A-Za-z0-9][A-Za-z0-9._-]*)?")  # the Hub's repo ids


@dataclass(frozen=True)
class Starter:
    files: dict[str, str]  # path (as given, relative to the cwd) -> text
    spec: str  # the spec among them


def starter(
    config: str,
    *,
    name: str,
    specs_dir: str = "specs",
    templates_dir: str = "templates",
    schema_file: str | None = None,
    grid: Sequence[str] = (),
    seeds: int | None = None,
    schema_keys: Mapping[str, Any] | None = None,
) -> Starter:
    """The files of a starting spec for ``config`` (not written). ``grid``: ``PATH=V1,V2`` axes
    (`init --grid`); ``seeds``: that many seeds, the last axis, so a group's runs differ only there;
    ``schema_keys``: the schema's top-level keys and their defaults (`--schema`), which a grid may
    sweep where the config leaves them to their default (TRL's `seed`, `beta`...)."""
    suffix = os.path.splitext(config)[1].lower()
    if suffix not in (*INCLUDED, ".toml", ".py"):
        raise UserError(
            f"cannot start a spec from a {suffix or 'suffix-less'} file",
            location=Location(config),
            hint="give a YAML, JSON or TOML config, or a Python file calling GRPOConfig(...)",
        )
    data = _read(config, suffix)
    spec_path = os.path.join(specs_dir, f"{name}.yaml")
    out_ext = ".json" if suffix == ".json" else ".yaml"
    template_path = os.path.join(templates_dir, f"{name}{out_ext}.j2")
    rel = _rel_to(specs_dir)
    # a path is data in a comment too: a newline in it would start spec lines of its own
    shown, spec_shown = escape.line(escape.fs_name(config)), escape.line(escape.fs_name(spec_path))
    lines = [
        f"# A starting spec written by `sweepgen init --from {shown}`. Edit the grid (or add variants,",
        "# zip, sample, ablation: docs/SPEC.md), then",
        f"#   sweepgen render {spec_shown} && sweepgen check {spec_shown}",
        "sweepgen: 1",
        f"name: {json.dumps(name)}",
        f"description: {json.dumps(f'sweep over {config}')}",
        f"template: {json.dumps(rel(template_path))}",
        f'output: "{{{{ variant.name }}}}{out_ext}"',
        "names: readable   # beta0.04-seed1: `-` between axes (docs/SPEC.md, `names`)",
    ]
    if suffix in INCLUDED:
        lines += ["base:", f"  include: [{json.dumps(rel(config))}]"]
    else:  # TOML, a Python call's arguments: the spec's include reads YAML; the config is copied in
        lines += ["base: " + _flow(data, "", config)]
    keys = schema_keys or {}
    lines += _run_folder_lines(data, keys)
    lines += _grid_lines(data, parse_grid(grid, data, keys), seeds, config, keys)
    lines += [
        "# allow: [a.path.that.may.differ]      # beyond the grid's own paths",
        '# constraints: [{expr: "a == b", message: "why"}]',
    ]
    if schema_file is not None:
        lines += [f"schema: {json.dumps(rel(schema_file))}   # exported: checked without importing"]
    template = "{{ config | to_json }}\n" if out_ext == ".json" else "{{ config | to_yaml }}\n"
    return Starter({spec_path: "\n".join(lines) + "\n", template_path: template}, spec_path)


def trl_command_of(config: str) -> str | None:
    """The ``trl`` command whose config class a Python ``config``'s one call builds (init_pycall);
    None for another file (its command is guessed from its keys)."""
    if os.path.splitext(config)[1].lower() != ".py":
        return None
    raw = project.read_regular(config, what="config", loc=Location(config))
    return init_pycall.command_of(config, yamlio.decode_utf8(raw, config))


def _run_name_lines(data: dict[str, Any], schema_keys: Mapping[str, Any]) -> list[str]:
    """``run_name`` as the run's name; a ``hub_model_id`` pushed to (``push_to_hub: true``) as its
    own repository per run (``<id>-<run>``): one id would have every run push over the others'.
    Pushed without an id (the schema has the key), the Hub repository would be the run folder's
    last part, ``seed1``, which every sweep's runs share: ``<sweep>-<run>`` is added instead."""
    lines = [f'  run_name: "{RUN_NAME}"'] if isinstance(data.get("run_name"), str) else []
    hub = data.get("hub_model_id")
    if data.get("push_to_hub") is not True:
        return lines
    if isinstance(hub, str) and _HUB_ID.fullmatch(hub):
        lines.append(f'  hub_model_id: "{hub}-{RUN_NAME}"')
    elif hub is None and "hub_model_id" in schema_keys:
        key = "hub_model_id" if "hub_model_id" in data else "+hub_model_id"
        lines.append(f'  {key}: "{{{{ sweep.name }}}}-{RUN_NAME}"')
    return lines


def _run_folder_lines(data: dict[str, Any], schema_keys: Mapping[str, Any]) -> list[str]:
    """One folder per run: the config's top-level ``output_dir``, also where the config leaves it
    to its schema's default (a Hugging Face Trainer given none writes every run to
    ``trainer_output``), else the spec's ``run_dir``; and every other output key the config sets
    (verl's ``trainer.default_local_dir``...: ``sweepgen.output_keys``) pointed at that folder too,
    or the runs would share it (`run` refuses that). A top-level ``run_name`` (the HF Trainer's: the
    W&B run's name, over the ``WANDB_NAME`` `run` gives) becomes the run's own name, or every run of
    the sweep would have the config's one name in W&B; a Hub repository pushed to, the run's own."""
    top = _run_folder_key(data, schema_keys)
    keys = [".".join(path) for path, _ in output_keys.locations(data) if path != ("output_dir",)]
    keys = [top, *keys] if top else keys
    lines = [f'  {key}: "{RUN_DIR}"' for key in keys] + _run_name_lines(data, schema_keys)
    derived = ["derived:   # one folder (and name) per run", *lines]
    return ([] if top else [f'run_dir: "{RUN_DIR}"']) + (derived if lines else [])


def _run_folder_key(data: dict[str, Any], schema_keys: Mapping[str, Any]) -> str | None:
    """How the spec names the top-level ``output_dir`` it sets per run (``+output_dir`` where the
    config leaves it out: added on purpose); None when the config and its schema have none. Without
    a schema, a config that reads as a ``trl`` command's (TRL's documented configs name no
    output_dir) has TRL's: `run` refuses runs all left to transformers' one default folder."""
    if isinstance(data.get("output_dir"), str) or "output_dir" in schema_keys:
        return "output_dir" if "output_dir" in data else "+output_dir"
    if not schema_keys and "output_dir" not in data and "output_dir" in _trl_fields("output_dir", [], data):
        return "+output_dir"
    return None


def parse_grid(
    texts: Sequence[str], data: dict[str, Any], schema_keys: Mapping[str, Any] | None = None
) -> list[tuple[str, list[Any]]]:
    """``--grid PATH=V1,V2`` as (path, values); each value read as a YAML 1.2 scalar (``0.04`` a
    number, ``dr_grpo`` a string). A path the config does not set but its schema has at the top is
    added (``+path``: the spec's way to add a key on purpose), as is, without a schema, a field of the
    ``trl`` command the config reads as (``--grid beta=0.0,0.04`` on a GRPO config leaving ``beta`` to
    TRL's default: ``trl grpo --beta 0.04`` takes it so); any other is refused with a did-you-mean."""
    out: list[tuple[str, list[Any]]] = []
    known = list(paths.all_paths(data))
    added = [k for k in schema_keys or {} if k not in known]
    for text in texts:
        path, values = _grid_parts(text)
        _check_known(
            path,
            known,
            added or _trl_fields(path, known, data),
            "its schema" if added else "the TRL command's fields",
        )
        if path in {p.lstrip("+") for p, _ in out}:
            raise UserError(f"--grid {path} is given twice", hint="list every value once: --grid k=a,b,c")
        out.append(_grid_axis(path, values, data, known))
    return out


def _grid_axis(path: str, values: str, data: dict[str, Any], known: list[str]) -> tuple[str, list[Any]]:
    """One ``--grid`` axis as the spec writes it: ``+path`` where the config does not set it."""
    spelled = path if path in known else f"+{path}"
    existing = paths.get(data, path, None) if path in known else None
    return spelled, [_grid_value(path, v.strip(), existing) for v in values.split(",")]


def _grid_parts(text: str) -> tuple[str, str]:
    """``PATH=V1,V2`` as its path and its values' text; refused where either is empty."""
    path, _, values = text.partition("=")
    path = path.strip()
    if not path or not values.strip():  # no `=` leaves the values empty
        raise UserError(f"--grid {text!r} is not PATH=V1,V2", hint="e.g. --grid beta=0,0.04")
    if any(c in values for c in "[]{}"):  # split at its commas, `[1.0,0.2],[1.0,0.5]` is no two lists
        raise UserError(
            f"--grid {path}: {values.strip()!r} holds a list or mapping, but --grid values are single "
            "values split at commas",
            location=Location("--grid"),
            hint=f"init without this --grid, then write the axis in the spec's grid: "
            f"{path}: [[1.0, 0.2], [1.0, 0.5]]",
        )
    return path, values


def _grid_value(path: str, text: str, existing: Any) -> Any:
    """One ``--grid`` value: a YAML 1.2 scalar, of the type the config's own value has. Where the
    config holds a string (``shard: "001"``) the text stays that string (never the number 1); an
    int for a float key is fine, as in a spec; any other change of type is refused, since no value
    may change its type without a word."""
    value = yamlio.loads(text, "--grid").data
    if isinstance(existing, str):
        return text if not isinstance(value, str) else value
    kind = _scalar_kind(existing)
    # an int for a float key is fine, as in a spec (`lr: 1` means 1.0)
    if kind is None or kind == _scalar_kind(value) or (kind, _scalar_kind(value)) == ("float", "int"):
        return value
    read = _scalar_kind(value) or "null"
    raise UserError(
        f"--grid {path}: the config's value is {kind} ({existing!r}), but {text!r} reads as {read}",
        location=Location("--grid"),
        hint=f"give {kind} values for {path}, or change the config first",
    )


def _scalar_kind(value: Any) -> str | None:
    """``bool``, ``int``, ``float`` or ``str`` for a scalar; None for null and containers."""
    for kind in (bool, int, float, str):
        if isinstance(value, kind):
            return kind.__name__
    return None


def _trl_fields(path: str, known: list[str], data: dict[str, Any]) -> list[str]:
    """The fields of the ``trl`` command ``data`` reads as best (trl_guess, from TRL's source), read
    only for a ``path`` the config does not set; none where it reads as no TRL command's."""
    if path in known:
        return []
    from sweepgen.compile.schema import trl_guess  # noqa: PLC0415 - TRL's source, read for a TRL config alone

    commands, _ = trl_guess.commands_for(data)
    return sorted(trl_guess.script_fields(commands[0]).names) if commands else []


def _check_known(path: str, known: list[str], added: list[str], whose: str) -> None:
    """A ``--grid`` path is one the config sets or ``added`` has (``whose``: its schema's, or the
    fields of the ``trl`` command the config reads as); else refused with a did-you-mean."""
    if path not in known and path not in added:
        close = difflib.get_close_matches(path, known + added, n=1)
        raise UserError(
            f"--grid {path}: the config has no such key" + (f", nor {whose}" if added else ""),
            hint=(f"did you mean `{close[0]}`?" if close else "name a key the config sets")
            + " (a dotted path for nested keys: training.lr)",
        )


def _grid_lines(
    data: dict[str, Any],
    axes: list[tuple[str, list[Any]]],
    seeds: int | None,
    config: str,
    schema_keys: Mapping[str, Any],
) -> list[str]:
    seed_path = _seed_path(data)
    seeds = _seed_count(seeds, axes, seed_path)
    if seed_path is None and type(schema_keys.get("seed")) is int:  # the schema's default seed
        seed_path = "+seed"
    if seeds is not None:
        axes = [*axes, _seed_axis(data, axes, seeds, seed_path, config, schema_keys)]
    if not axes:
        return ["# grid:", "#   training.learning_rate: [1.0e-5, 3.0e-5]"]
    return ["grid:", *(f"  {path}: {json.dumps(values, ensure_ascii=False)}" for path, values in axes)]


def _seed_count(seeds: int | None, axes: list[tuple[str, list[Any]]], seed_path: str | None) -> int | None:
    """How many seeds the grid gets: ``--seeds`` (at least 1), else 3 where the config sets a seed
    and no ``--grid`` axis is given (the first axis a sweep usually has), else none."""
    if seeds is not None and seeds < 1:
        raise UserError(f"--seeds {seeds}", hint="at least 1")
    if seeds is None and not axes and seed_path is not None:
        return 3
    return seeds


def _seed_axis(
    data: dict[str, Any],
    axes: list[tuple[str, list[Any]]],
    seeds: int,
    seed_path: str | None,
    config: str,
    schema_keys: Mapping[str, Any],
) -> tuple[str, list[Any]]:
    """``--seeds N``: N seeds from the config's own (or, where it sets none, from its schema's
    default, so the first seed is the run the config alone would make), on that seed key."""
    if any(p.lstrip("+") == (seed_path or "seed").lstrip("+") for p, _ in axes):
        raise UserError("--seeds and --grid on the seed", hint="give one of them")
    if seed_path is None:
        raise UserError(
            f"--seeds: {config} sets no seed",
            location=Location(config),
            hint="add `seed: 1` to the config (where its trainer reads it), or leave --seeds out"
            + ("" if schema_keys else _schema_seed(data, config)),
        )
    first = schema_keys["seed"] if seed_path == "+seed" else paths.get(data, seed_path)
    return (seed_path, list(range(first, first + seeds)))


def _schema_seed(data: dict[str, Any], config: str) -> str:
    """How a schema gives the seed a config without one starts from: TRL's, for a TRL config."""
    from sweepgen.compile.schema import trl_guess  # noqa: PLC0415 - TRL's source, read for a TRL config alone

    commands, _ = trl_guess.commands_for(data, os.path.basename(config).lower())
    if commands:
        return (
            f"; this reads as a `trl {commands[0]}` config: with --schema trl:{commands[0]}, TRL's `seed` "
            "default is used (and the spec checked as TRL parses it)"
        )
    return "; with --schema, a schema's `seed` default is used"


def _rel_to(folder: str) -> Callable[[str], str]:
    def rel(path: str) -> str:
        return os.path.relpath(path, folder).replace(os.sep, "/")

    return rel


def _read(config: str, suffix: str) -> dict[str, Any]:
    # a FIFO or device would block `open` or `read` for ever; a huge file is refused from its size
    if not os.path.lexists(config):  # `--from` is the user's own path, not one a spec names
        raise UserError(
            f"config not found: {config}",
            location=Location(config),
            hint="--from is relative to the folder you run sweepgen in",
        )
    raw = project.read_regular(config, what="config", loc=Location(config))
    text = yamlio.decode_utf8(raw, config)
    if suffix == ".py":  # read through ast, never imported or run
        return init_pycall.config_call(config, text)
    if suffix == ".toml":
        try:
            data: Any = tomllib.loads(text)
        except RecursionError:
            raise UserError(
                f"{config} is nested too deeply", location=Location(config), hint=_TOML_HINT
            ) from None
        except ValueError as err:  # TOMLDecodeError, an over-long integer
            message, line, col = error_place(str(err), text)
            raise UserError(
                f"{config} is not valid TOML: {message}",
                location=Location(config, line, col),
                hint=_TOML_HINT,
            ) from None
    else:
        data = yamlio.loads(text, config).data
    if not isinstance(data, dict):
        raise UserError("a config must be a mapping at the top", location=Location(config, 1, 1))
    return data


_TOML_HINT = "fix the file (UTF-8 TOML: https://toml.io), or start from a YAML or JSON config"


def _flow(value: Any, key: str, config: str) -> str:
    """A TOML value as one line of YAML flow that reads back as the same types: NaN and infinities
    as YAML's ``.nan``/``.inf`` (JSON has neither: they became strings), dates refused."""
    try:
        return _flow_value(value, key, config)
    except RecursionError:
        raise UserError(
            f"{config} is nested too deeply", location=Location(config), hint=_TOML_HINT
        ) from None


def _flow_value(value: Any, key: str, config: str) -> str:
    if isinstance(value, bool) or value is None:
        return json.dumps(value)
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return _flow_float(value)
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, list):
        return _flow_list(value, key, config)
    if isinstance(value, dict):
        return _flow_mapping(value, key, config)
    raise UserError(  # TOML's dates and times: YAML would read them back as strings or timestamps
        f"{config}: `{key}` is a TOML {type(value).__name__}, which a spec cannot carry as the same type",
        location=_toml_location(config, key),
        key=key,
        hint='write it as a string in the config (e.g. when = "1979-05-27T07:32:00Z"), then init again',
    )


def _flow_list(value: list[Any], key: str, config: str) -> str:
    """A TOML array as a YAML flow sequence."""
    return "[" + ", ".join(_flow_value(v, f"{key}[{i}]", config) for i, v in enumerate(value)) + "]"


def _flow_mapping(value: dict[Any, Any], key: str, config: str) -> str:
    """A TOML table as a YAML flow mapping."""
    items = (
        f"{json.dumps(str(k), ensure_ascii=False)}: {_flow_value(v, _join(key, k), config)}"
        for k, v in value.items()
    )
    return "{" + ", ".join(items) + "}"


def _toml_location(config: str, key: str) -> Location:
    """Where the TOML file ``config`` writes ``key`` (``a.b[2]``: the line of ``a.b``)."""
    with open(config, "rb") as fh:  # read once already: a regular file within the size limit
        text = fh.read().decode("utf-8")
    return Location(config, *key_place(text, tuple(k for k in re.split(r"\.|\[\d+\]", key) if k)))


def _flow_float(value: float) -> str:
    if math.isnan(value):
        return ".nan"
    if math.isinf(value):
        return ".inf" if value > 0 else "-.inf"
    return repr(value)


def _join(key: str, name: object) -> str:
    return f"{key}.{name}" if key else str(name)


def _seed_path(data: dict[str, Any]) -> str | None:
    """The config's seed (``seed``, ``training.seed``...), the usual first axis, when it is an int."""
    for path in paths.all_paths(data):
        if path.rsplit(".", 1)[-1] == "seed" and type(paths.get(data, path)) is int:
            return path
    return None
