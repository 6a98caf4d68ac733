"""The start checks' paths outside the working folder, said: a dataset, model, chat template or
checkpoint named outside the folder ``sweepgen run`` runs in (an absolute path, ``..``, ``~``), or
reached through a link out of it (``data -> /scratch/data``), is not looked at (trl_dataset.inside_here:
a pull request's link must not make ``run`` read a private folder), so whether TRL can read it there is
not judged. One warning per key names what was not checked: never a silent pass."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from sweepgen.run.core.base import RunTask
from sweepgen.run.start.config_where import value_location
from sweepgen.run.start.trl.trl_dataset import Warn, inside_here, is_path

# the keys whose paths the start checks look at (trl_dataset, trl_dataset_config, trl_chat_template,
# trl_resume); output_dir only where the run resumes from it
_KEYS = ("dataset_name", "model_name_or_path", "chat_template_path", "resume_from_checkpoint")


def judge(
    sweep_dir: Path, task: RunTask, config: Mapping[str, Any], given: Mapping[str, Any], warn: Warn
) -> None:
    """Warn (once per key) where one of the run's paths lies outside the working folder."""
    keys = (*_KEYS, "output_dir") if config.get("resume_from_checkpoint") is True else _KEYS
    for key in keys:
        value = config.get(key)
        if isinstance(value, str) and value and outside(value):
            warn(
                value_location(sweep_dir, task, key, key in given),
                f"{key} lies outside the folder you run `sweepgen run` in (or is reached through a link "
                "out of it), so whether TRL can read it there was not checked before the runs (sweepgen "
                "looks only inside that folder); if it cannot, each run fails at its start",
            )


def outside(value: str) -> bool:
    """Whether ``value`` names a path out of the working folder (a Hub id such as ``org/name`` does not)."""
    if value.startswith("~"):
        return True
    if "\0" in value:
        return False  # no path at all: TRL's own check says so
    if inside_here(value):
        return False
    return is_path(value) or os.path.lexists(value.partition("/")[0])  # reached through a link out
