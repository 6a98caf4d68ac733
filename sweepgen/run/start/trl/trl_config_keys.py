"""``trl grpo --config {config}`` with a config key that neither the script nor ``accelerate launch``
takes (``num_generatons: 4``): refused before any run starts.

TRL's CLI sets the config's keys as its script's dataclass defaults and hands every key no dataclass
has to ``accelerate launch`` as ``--key value`` (``num_processes: 2``, ``accelerate_config: zero2``:
trl/cli/commands/training.py); accelerate's parser refuses one it does not take by its whole name (it
takes no abbreviations), so every run fails at its start. The script's fields and accelerate's options are
read from the installed sources (trl_options), only where the command's ``trl`` is installed
beside sweepgen. TRL's script run any other way (``python -m trl.scripts.grpo``) leaves such a key
aside: not judged here (a schema, ``schema: trl:grpo``, refuses it at ``check``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from sweepgen.errors import ConfigError
from sweepgen.run.core.base import RunTask
from sweepgen.run.start.config_where import key_location
from sweepgen.run.start.trl import trl_options

_TRL_OWN = frozenset({"env", "accelerate_config"})  # TrlParser pops env; the CLI reads accelerate_config


def judge(
    sweep_dir: Path, task: RunTask, config: Mapping[str, Any], script: str, command: Sequence[str]
) -> None:
    """Exit 2 when the run's rendered ``config``, run by ``trl SCRIPT``, holds a key neither its
    script nor ``accelerate launch`` takes."""
    options, launch = trl_options.known(command, script)  # accelerate's: for `trl SCRIPT` alone
    unknown = _unknown(config, options, launch) if options and launch else None
    if unknown is None:
        return
    key, problem = unknown
    flag = f"--{key}"
    raise ConfigError(
        f"run {task.name!r}'s config sets `{key}`, which `trl {script}` does not take: its CLI hands it "
        f"to `accelerate launch` as `{flag}`, which refuses it ({problem}), so every run would fail at "
        "its start",
        location=key_location(sweep_dir, task, key),
        key=key,
        hint=trl_options.did_you_mean(flag, options | launch)
        + f"fix the key's name (`trl {script} --help` lists the script's), or add `schema: trl:{script}` "
        "to the spec so that `check` names it",
    )


def _unknown(
    config: Mapping[str, Any], options: frozenset[str], launch: frozenset[str]
) -> tuple[str, str] | None:
    """(the first key neither the script nor accelerate takes, why accelerate refuses it)."""
    known = options | launch  # the script's by its dataclasses' names; accelerate's by whole names alone
    key = next(
        (k for k in config if isinstance(k, str) and k not in _TRL_OWN and f"--{k}" not in known), None
    )
    return (key, "unrecognized arguments") if key is not None else None
