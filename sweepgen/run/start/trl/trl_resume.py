"""``resume_from_checkpoint`` naming no checkpoint there is: refused before any run starts.

TRL's scripts hand ``resume_from_checkpoint`` to ``trainer.train`` (TRL 1.16, every script), and
its TrlParser keeps a config's ``true`` a bool: transformers' Trainer then resumes from the last
``checkpoint-N`` folder of ``output_dir`` and raises "No valid checkpoint found in output directory"
where there is none (a sweep's first start), or, given a folder, reads its ``trainer_state.json``
and fails where that folder is no checkpoint ("Can't find a valid checkpoint at ..."). Each run
then fails at its start, after the model loaded. Judged for runs started here or on Slurm (whose
jobs start in the same working folder, shared with the nodes), where a folder's
name stays inside the working folder (nothing outside is looked at: SECURITY.md).
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from sweepgen.errors import ConfigError
from sweepgen.fs import runfs
from sweepgen.run.core.base import RunTask
from sweepgen.run.start import command_overrides
from sweepgen.run.start.config_where import value_location
from sweepgen.run.start.trl.trl_dataset import inside_here

_CHECKPOINT = re.compile(r"^checkpoint-(\d+)$")  # transformers.trainer_utils._re_checkpoint
_KEY = "resume_from_checkpoint"
MAX_LISTED = 10_000  # entries of an output_dir looked through (a real one holds tens)


def judge(sweep_dir: Path, task: RunTask, config: Mapping[str, Any], flags: Mapping[str, str | None]) -> None:
    """Exit 2 when the run resumes (its config, the command line's ``--resume_from_checkpoint`` over
    it) from a checkpoint that is not there."""
    from_command = _KEY in flags
    value = flags[_KEY] if from_command else config.get(_KEY)  # a flag's value: a string, as TrlParser's
    output_dir = flags.get("output_dir") or config.get("output_dir")
    problem = _last_missing(output_dir) if value is True else _folder_missing(value)
    if problem is None:
        return
    refusal = ConfigError(
        f"{_KEY} is {'true' if value is True else repr(value)}, but {problem}: transformers' Trainer "
        "raises at each run's start",
        location=value_location(sweep_dir, task, _KEY, from_command),
        key=_KEY,
        hint="drop resume_from_checkpoint for a first start, and set it once the runs have saved "
        "checkpoints; or name a checkpoint-N folder that holds trainer_state.json",
    )
    refusal.reads = frozenset({_KEY, "output_dir"})
    raise refusal


def _last_missing(output_dir: object) -> str | None:
    """``true``: what is missing where transformers looks (get_last_checkpoint of ``output_dir``)."""
    if not isinstance(output_dir, str) or not inside_here(output_dir) or _has_checkpoint(output_dir):
        return None
    return f"output_dir {output_dir!r} holds no checkpoint-N folder to resume from"


def _has_checkpoint(folder: str) -> bool:
    """Whether ``folder`` holds a ``checkpoint-N`` folder; True (not judged) past MAX_LISTED entries."""
    names = _checkpoint_names(folder)
    return names is None or any(os.path.isdir(os.path.join(folder, n)) for n in names)


def _checkpoint_names(folder: str) -> list[str] | None:
    """The ``checkpoint-N`` names in ``folder`` (none where it cannot be listed); None where it holds
    more than MAX_LISTED entries: never listed whole."""
    try:
        names = runfs.first_names(folder, MAX_LISTED)
    except OSError:
        return []
    return None if names is None else [n for n in names if _CHECKPOINT.match(n)]


def unlisted(config: Mapping[str, Any], flags: Mapping[str, str | None], *, over: bool) -> str | None:
    """What was not checked where the run's ``output_dir`` (looked in when the run resumes from its
    last checkpoint, or, ``over``, when it may start over beside an earlier attempt's) holds more
    than MAX_LISTED entries: never listed whole, so neither ``judge`` nor ``started_over`` can say
    anything of it. None where it was listed (or is not looked in)."""
    value = flags[_KEY] if _KEY in flags else config.get(_KEY)
    output_dir = flags.get("output_dir") or config.get("output_dir")
    if not _looked_in(value, over) or not _listed_too_long(output_dir):
        return None
    looked_for = (
        "a checkpoint-N folder to resume from (resume_from_checkpoint: true)"
        if value is True
        else "an earlier attempt's checkpoints, which this run would train over from step 0"
    )
    return (
        f"output_dir {output_dir!r} holds more than {MAX_LISTED:,} entries (never listed whole), so "
        f"whether it holds {looked_for} was not checked before the runs"
    )


def _looked_in(value: object, over: bool) -> bool:
    """Whether output_dir is looked in for the run's ``resume_from_checkpoint`` ``value``."""
    return value is True or (over and value in (None, False, ""))


def _listed_too_long(output_dir: object) -> bool:
    """An output_dir inside the working folder that holds more than MAX_LISTED entries."""
    return isinstance(output_dir, str) and inside_here(output_dir) and _checkpoint_names(output_dir) is None


def _folder_missing(value: object) -> str | None:
    """A folder: what is missing in it (its ``trainer_state.json``, which transformers reads)."""
    if not isinstance(value, str) or not value.strip() or not inside_here(value):
        return None
    if os.path.isfile(os.path.join(value, "trainer_state.json")):
        return None
    return f"{value!r} is no checkpoint folder (no trainer_state.json in it)"


def started_over(config: Mapping[str, Any], flags: Mapping[str, str | None]) -> str | None:
    """The last ``checkpoint-N`` folder (holding trainer_state.json) an earlier attempt left in the
    run's ``output_dir`` when the run sets no ``resume_from_checkpoint`` (its config, the command
    line's flag over it): TRL's scripts then train from step 0 again, saving over those folders as
    they reach them; None otherwise (nothing there, or the run resumes)."""
    value = flags[_KEY] if _KEY in flags else config.get(_KEY)
    output_dir = flags.get("output_dir") or config.get("output_dir")
    if value in (None, False, "") and isinstance(output_dir, str) and inside_here(output_dir):
        return _last_checkpoint(output_dir)
    return None


def model_only(config: Mapping[str, Any], flags: Mapping[str, str | None]) -> bool:
    """Whether the run saves its checkpoints with ``save_only_model`` (its config, the command line's
    flag over it): weights alone, no optimizer, scheduler or random state to resume."""
    if "save_only_model" in flags:
        return command_overrides.flag_bool(flags["save_only_model"]) is True
    return config.get("save_only_model") is True


def _last_checkpoint(folder: str) -> str | None:
    """``folder``'s ``checkpoint-N`` of the highest N that holds trainer_state.json."""
    steps = [int(name.split("-", 1)[1]) for name in _checkpoint_names(folder) or ()]  # more: not judged
    held = [s for s in steps if os.path.isfile(os.path.join(folder, f"checkpoint-{s}", "trainer_state.json"))]
    return os.path.join(folder, f"checkpoint-{max(held)}") if held else None
