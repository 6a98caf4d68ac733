"""Where a run's rendered config sets a top-level key: the line and column a refusal names."""

from __future__ import annotations

from pathlib import Path

from sweepgen import yamlio
from sweepgen.errors import Location, UserError
from sweepgen.outtree import read_inside
from sweepgen.run.core.base import RunTask


def key_location(sweep_dir: Path, task: RunTask, key: str) -> Location:
    """The line of ``key`` in the run's rendered YAML config; the file itself otherwise (another
    kind, or a file that does not read: its own checks say why)."""
    shown = str(task.config_path)
    try:  # read as `run` reads the lock's files: never through a link (outtree.read_inside)
        data = read_inside(str(sweep_dir), Path(task.config_path).relative_to(sweep_dir).as_posix())
        doc = yamlio.loads((data or b"").decode("utf-8"), shown)
    except (ValueError, UnicodeDecodeError, UserError, RecursionError):
        return Location(shown)
    return doc.loc((key,), key=True) if isinstance(doc.data, dict) else Location(shown)
