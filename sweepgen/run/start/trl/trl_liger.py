"""``use_liger_kernel: true`` (or ``--use_liger_kernel``) for a run whose environment has no Liger
kernels: refused before any run starts.

Every TRL config class has transformers' ``use_liger_kernel``; transformers' Trainer applies the
kernels when training starts (``apply_liger_kernel``, transformers 5.x), which raises "You have set
`use_liger_kernel` to `True` but liger-kernel >= 0.3.0 is not available" where ``liger_kernel`` is not
installed: each run fails at its start, after the model and dataset loaded. The package is looked up
as transformers looks it up (an installed ``liger_kernel``, never imported; an installed one older
than 0.3.0 is not judged), and only where the command's program is installed beside sweepgen
(installed_source.same_environment): another environment may hold it.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from sweepgen.errors import ConfigError
from sweepgen.run.core.base import RunTask
from sweepgen.run.start import command_overrides, installed_source
from sweepgen.run.start.config_where import value_location

_KEY = "use_liger_kernel"


def judge(
    sweep_dir: Path,
    task: RunTask,
    config: Mapping[str, Any],
    command: Sequence[str],
    flags: Mapping[str, str | None],
) -> None:
    """Exit 2 when the run (its config, the command line's ``flags`` over it: a bare
    ``--use_liger_kernel`` is true) sets ``use_liger_kernel`` and the run's environment (this one)
    has no ``liger_kernel``."""
    from_command = _KEY in flags
    wanted = command_overrides.flag_bool(flags[_KEY]) is True if from_command else config.get(_KEY) is True
    if not wanted or liger_installed() or not installed_source.same_environment(command):
        return
    refusal = ConfigError(
        "use_liger_kernel is true but liger-kernel is not installed in the runs' environment: "
        "transformers' Trainer raises \"liger-kernel >= 0.3.0 is not available\" at each run's start",
        location=value_location(sweep_dir, task, _KEY, from_command),
        key=_KEY,
        hint="install it (`pip install liger-kernel`), or drop use_liger_kernel",
    )
    refusal.reads = frozenset({_KEY})
    raise refusal


def liger_installed() -> bool:
    """Whether this interpreter's environment has ``liger_kernel`` (transformers'
    is_liger_kernel_available's lookup, without its version)."""
    return importlib.util.find_spec("liger_kernel") is not None
