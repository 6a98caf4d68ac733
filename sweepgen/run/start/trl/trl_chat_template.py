"""A ``chat_template_path`` (SFT, reward) TRL cannot read: refused before any run starts here or on
Slurm (whose jobs start in the same working folder).

TRL 1.16's SFTTrainer and RewardTrainer read ``chat_template_path`` as a Jinja template only where it
is a file ending in ``.jinja`` or ``.j2`` (``os.path.isfile`` and ``endswith``); anything else goes to
``clone_chat_template``, which loads it as a tokenizer (``AutoTokenizer.from_pretrained``): a folder,
or a Hub id. So a template file that is not there (``templates/chat.jinja``, mistyped), or one named
otherwise (``chat_template.txt``, ``chat.jinja2``), fails at each run's start, after the model
loaded, and so does a path-only name (``./tok``) that is no folder. Only names inside the working
folder are looked at (trl_dataset.inside_here).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from sweepgen.errors import ConfigError
from sweepgen.run.core.base import RunTask
from sweepgen.run.start.config_where import value_location
from sweepgen.run.start.trl.trl_dataset import inside_here, is_path

_KEY = "chat_template_path"
_TEMPLATE = (".jinja", ".j2")  # trl.trainer.sft_trainer / reward_trainer: a template file's endings


def judge(sweep_dir: Path, task: RunTask, config: Mapping[str, Any], *, from_command: bool = False) -> None:
    """Exit 2 when the run's ``chat_template_path`` is neither a template file TRL reads nor a
    tokenizer folder or Hub id it may load."""
    value = config.get(_KEY)
    problem = _problem(str(value)) if _looked_at(value) else None
    if problem is None:
        return
    refusal = ConfigError(
        f"{_KEY} {value!r} {problem}: TRL then loads it as a tokenizer to clone its template from "
        "(AutoTokenizer.from_pretrained), which fails at each run's start",
        location=value_location(sweep_dir, task, _KEY, from_command),
        key=_KEY,
        hint="name a Jinja template file ending in .jinja or .j2 (a path from the folder you run "
        "`sweepgen run` in), a tokenizer's folder, or a Hub model id",
    )
    refusal.reads = frozenset({_KEY})
    raise refusal


def _looked_at(value: object) -> bool:
    return isinstance(value, str) and bool(value) and inside_here(value)


def _problem(value: str) -> str | None:
    if os.path.isdir(value):
        return None  # a tokenizer's folder, cloned
    if os.path.isfile(value):
        return None if value.endswith(_TEMPLATE) else "is a file whose name ends in neither .jinja nor .j2"
    return "is no file here" if value.endswith(_TEMPLATE) else _no_folder(value)


def _no_folder(value: str) -> str | None:
    return "is no folder here and cannot be a Hub id" if is_path(value) else None
