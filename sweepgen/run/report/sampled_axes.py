"""Which parameters a `sample:` sweep drew on a log scale: its ``log_uniform`` axes, read from the spec
the sweep's lock names, so the page draws them on log axes whatever their span (a search's own
``log_uniform`` axes come from its spec the same way, in sweepgen.run.report.make).

The spec is read as YAML data only (never rendered or imported), from inside the project (the
lock's ``spec`` path is relative to the output root's parent, read without following a link).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from sweepgen.compile.run_api import LOCK_NAME
from sweepgen.errors import UserError
from sweepgen.formats import yamlio
from sweepgen.fs.outtree import read_inside
from sweepgen.run.core.plan.tasks import read_lock


def log_axes(sweep_dir: Path) -> tuple[set[str], str | None]:
    """(the sample block's log_uniform paths, a note when a sample sweep's spec cannot be read);
    (set(), None) for a folder without a lock or a sweep without ``sample:``."""
    if not (sweep_dir / LOCK_NAME).is_file():
        return set(), None
    lock = read_lock(sweep_dir)
    if "digits" not in (lock.report or {}):  # the lock records `digits` for every sample sweep
        return set(), None
    project = sweep_dir.resolve().parent.parent
    try:
        raw = read_inside(str(project), lock.spec)
        if raw is None:
            raise FileNotFoundError(lock.spec)
        data = yamlio.loads(raw.decode("utf-8"), str(project / lock.spec)).data
    except (OSError, UnicodeDecodeError, UserError) as err:
        why = err.message if isinstance(err, UserError) else f"{type(err).__name__}: {err}"
        return set(), f"sampled axes drawn by their span only: the spec {lock.spec} cannot be read ({why})"
    return _log_uniform_paths(data), None


def _log_uniform_paths(spec: Any) -> set[str]:
    """The paths of the spec's ``sample.axes`` drawn log_uniform (none in a spec of another shape)."""
    sample = spec.get("sample") if isinstance(spec, dict) else None
    axes = sample.get("axes") if isinstance(sample, dict) else None
    if not isinstance(axes, dict):
        return set()
    return {str(p) for p, d in axes.items() if isinstance(d, dict) and "log_uniform" in d}
