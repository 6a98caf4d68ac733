"""Runs of one sweep whose trainer config names one output folder: refused before any run starts.

`load_sweep` already refuses two runs with one run folder. This is the rest of what a trainer
writes (``sweepgen.output_keys``: verl's ``trainer.default_local_dir``, a nested ``output_dir``,
``save_path``...): two runs holding one value there overwrite each other's checkpoints, and a
resume starts one run from the other's, a wrong result that looks right.

Read: a rendered YAML (as `run` reads it everywhere, with OmegaConf's node interpolations resolved,
so verl's ``checkpoints/${trainer.project_name}/${trainer.experiment_name}`` differs per run when
the experiment name does), JSON or TOML config, and a launch or sbatch script, read with the shell
reader `diff` uses (its variables evaluated where they are known; ``--save_path`` / ``--save-path``
flags and Hydra ``trainer.default_local_dir=...`` overrides both count), and a Python config, read
without importing it as `diff` reads it (a keyword argument ``Config(output_dir=...)``, a dict key or
a module-level name). A value left unresolved (a resolver call such as ``${oc.env:HOME}``, a
variable the script does not set, ``os.environ[...]`` in Python) is not compared: nothing is refused
on a guess. A search renders its trials one at a time: a trial naming an earlier trial's folder is
refused before it runs (told failed with this reason).
"""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

from sweepgen import output_keys
from sweepgen.errors import ConfigError, Location, UserError
from sweepgen.formats import yamlio
from sweepgen.readers.structured.omegayaml import resolve_interpolations

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

# a Hugging Face Trainer's `push_to_hub: true` pushes the run's model to the Hub repository
# `hub_model_id`: one id for two runs has the later push replace the earlier run's model there
_HUB = "hub_model_id"
# a Hugging Face Trainer config's `resume_from_checkpoint: FOLDER` (TRL's scripts pass it to
# `trainer.train`): two runs resuming one checkpoint both load its weights, its optimizer and
# scheduler (their learning rate, not the config's) and its random state, so the runs' names and
# the report compare learning rates and seeds the runs did not train with
_RESUME = "resume_from_checkpoint"
_SHELL_SUFFIXES = (".sh", ".bash", ".sbatch", ".slurm")  # as sweepgen.readers.configfile.KINDS
_DATA_SUFFIXES = (".yaml", ".yml", ".json", ".toml", ".py", *_SHELL_SUFFIXES)
# a flag spells a key with dashes too (--save-path): the bytes looked for before anything is parsed
_MENTIONS = tuple(
    k.encode() for key in (*output_keys.OUTPUT_KEYS, _HUB, _RESUME) for k in {key, key.replace("_", "-")}
)
_HINT = (
    'set it per run in the spec, e.g. derived: {{{key}: "runs/{{{{ sweep.name }}}}/'
    '{{{{ variant.run_name }}}}"}}, or make it depend on a value the runs differ in'
)


@dataclass
class OutputClaims:
    """The output folders the runs seen so far name, each with the run that named it first."""

    seen: dict[str, str] = field(default_factory=dict)  # folder -> run, whichever key names it

    def add(self, run: str, config_path: Path, data: bytes) -> None:
        """Record ``run``'s output folders; exit 2 when one is an earlier run's."""
        conflict = self.conflict(run, config_path, data)
        if conflict is not None:
            raise conflict

    def conflict(self, run: str, config_path: Path, data: bytes) -> ConfigError | None:
        """Record ``run``'s output folders; the error to raise when one is an earlier run's (the
        folders it names first are recorded all the same)."""
        where, places = _locations(config_path, data) or (None, [])
        shared = []
        for path, value in places:
            other = self.seen.setdefault(_claim(path, value), run)
            shared += [(path, value, other)] if other != run else []
        return _shared_error(run, shared[0], where, str(config_path)) if shared else None


def _claim(path: tuple[str, ...], value: str) -> str:
    """What two runs may not share: a folder (any spelling of it), or a Hub repository."""
    if path == (_HUB,):
        return f"hub:{value.strip().lower()}"
    return f"resume:{output_keys.folder_key(value)}" if path == (_RESUME,) else output_keys.folder_key(value)


def _shared_error(run: str, shared: tuple[tuple[str, ...], str, str], where: Any, shown: str) -> ConfigError:
    """The refusal of ``run``'s folder at ``shared`` (path, value, the earlier run), at its line:
    ``where`` is the YAML document, or a function giving a script's or Python config's line."""
    path, value, other = shared
    key = ".".join(path)
    location = (
        where.loc(path) if isinstance(where, yamlio.Doc) else Location(shown, where(path) if where else 0)
    )
    if path == (_HUB,):
        return ConfigError(
            f"runs {other!r} and {run!r} would both push to the Hub repository {value!r} "
            "(push_to_hub: true): the later push replaces the earlier run's model there",
            location=location,
            key=key,
            hint='give each run its own, e.g. derived: {hub_model_id: "ORG/NAME-{{ variant.run_name }}"}, '
            "or push_to_hub: false",
        )
    if path == (_RESUME,):
        return ConfigError(
            f"runs {other!r} and {run!r} would both resume from the checkpoint {value!r}: each loads "
            "its weights, its optimizer and scheduler (their learning rate, not the config's) and its "
            "random state (not the run's seed)",
            location=location,
            key=key,
            hint="to start the runs from one trained model, name its folder in model_name_or_path "
            "(weights only) and drop resume_from_checkpoint",
        )
    return ConfigError(
        f"runs {other!r} and {run!r} would both write to {value!r}: one run would "
        "overwrite the other's checkpoints, and a resume would start from them",
        location=location,
        key=key,
        hint=_HINT.format(key=key),
    )


def _locations(config_path: Path, data: bytes) -> tuple[Any, list[tuple[tuple[str, ...], str]]] | None:
    """(the YAML document or the reader's result, for line numbers; the output folders the file
    names); None for a file that is no data config, names no output key, or does not parse (its own
    checks say why)."""
    suffix = config_path.suffix.lower()
    if suffix not in _DATA_SUFFIXES or not any(k in data for k in _MENTIONS):
        return None
    try:
        doc, config = _parsed(suffix, data.decode("utf-8"), str(config_path))
    except (UnicodeDecodeError, ValueError, UserError, RecursionError):
        return None
    resolved = resolve_interpolations(config, str(config_path))
    places = [*output_keys.locations(resolved), *_hub_repo(resolved), *_resumed(resolved)]
    return doc, [(p, v) for p, v in places if "${" not in v]


def _hub_repo(config: Any) -> list[tuple[tuple[str, ...], str]]:
    """The Hub repository a Hugging Face Trainer config pushes to (top-level ``push_to_hub: true``
    and ``hub_model_id``); none where it does not push or names no repository."""
    if not isinstance(config, dict) or config.get("push_to_hub") is not True:
        return []
    repo = config.get(_HUB)
    return [((_HUB,), repo)] if isinstance(repo, str) and repo.strip() else []


def _resumed(config: Any) -> list[tuple[tuple[str, ...], str]]:
    """The checkpoint folder a Hugging Face Trainer config resumes from (top-level
    ``resume_from_checkpoint``); none for ``true`` (each run's own last checkpoint) or no folder."""
    repo = config.get(_RESUME) if isinstance(config, dict) else None
    return [((_RESUME,), repo)] if isinstance(repo, str) and repo.strip() else []


def _parsed(suffix: str, text: str, shown: str) -> tuple[Any, Any]:
    """(the YAML document, a function from a key path to its line, or None; the data) of a config as
    its trainer reads it."""
    if suffix == ".json":
        return None, json.loads(text)
    if suffix == ".toml":
        return None, tomllib.loads(text)
    if suffix == ".py":
        from sweepgen.readers.python.pyast import read_python  # noqa: PLC0415 - loaded for Python configs only

        result = read_python(text, shown)
        return result.line_of, _calls_as_mappings(result.data)
    if suffix in _SHELL_SUFFIXES:
        from sweepgen.readers.shell.shellconfig import read_shell  # noqa: PLC0415 - a bash grammar: loaded for scripts only

        script = read_shell(text, shown)
        return partial(_script_line, script), _flags_as_keys(script.data.get("commands"))
    doc = yamlio.loads(text, shown)
    return doc, doc.data


def _script_line(script: Any, path: tuple[str, ...]) -> int:
    """The line of the flag at ``path`` (a key as `_flags_as_keys` spells it) in a read script, or
    of its command."""
    command, key = ("commands", *path[:-1]), path[-1]
    spelled = [(*command, k) for k in (f"--{key}", f"--{key.replace('_', '-')}", f"-{key}", key)]
    return next((script.lines[p] for p in spelled if p in script.lines), 0) or script.line_of(command)


def _flags_as_keys(node: Any) -> Any:
    """A script's commands with each ``--flag-name`` spelled as the key ``flag_name``."""
    if not isinstance(node, dict):
        return node
    return {_key(k): _flags_as_keys(v) for k, v in node.items()}


def _calls_as_mappings(node: Any) -> Any:
    """A Python config with each call ``Config(output_dir=...)`` read as its keyword arguments (the
    Python reader gives ``{"call": "Config", "args": [...], "kwargs": {...}}``)."""
    if not isinstance(node, dict):
        return node
    if {"call", "kwargs"} <= node.keys() and isinstance(node["kwargs"], dict):
        node = node["kwargs"]
    return {k: _calls_as_mappings(v) for k, v in node.items()}


def _key(name: Any) -> Any:
    return name.lstrip("-").replace("-", "_") if isinstance(name, str) and name.startswith("-") else name
