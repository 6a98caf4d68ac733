"""Whether what is installed here is the run's: a start check reads an installed package's source
(sweepgen.formats.pysource: a TRL script's registry, a config class's defaults) only where the command's
program lives beside sweepgen's interpreter: another environment may hold another release."""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Sequence


def same_environment(command: Sequence[str]) -> bool:
    """Whether the command's program is installed beside sweepgen's interpreter (one venv)."""
    program = shutil.which(command[0]) if command else None
    here = os.path.dirname(os.path.abspath(sys.executable))
    return program is not None and os.path.dirname(os.path.abspath(program)) == here
