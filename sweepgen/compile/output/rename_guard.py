"""A change of the spec's ``names:`` scheme never renames runs that have started.

Run folders are named after runs (``runs/<sweep>/<run>``) and `sweepgen run` knows a run by its
folder: renamed, a finished run would look new and run again, and its folder would be left behind.
So a render whose scheme differs from the one the sweep's lock records is refused while any run the
lock names, and the new render does not, already has a folder. With no such folder (nothing has run
yet) the new scheme simply applies: nothing is lost and the spec says so in one line.
"""

from __future__ import annotations

import os

from sweepgen.compile.output.lockfile import lock
from sweepgen.compile.spec.variants import naming
from sweepgen.compile.spec.variants.expand import Expansion
from sweepgen.errors import SpecError, UserError

SHOWN = 3  # run folders named in the error


def check(expansion: Expansion, sweep_dir: str, project: str, shown_dir: str) -> None:
    """Refuse (exit 2, at the spec's ``names:``) a scheme change that renames a started run."""
    spec = expansion.spec
    try:
        old = lock.read(sweep_dir, shown_dir)
    except UserError:
        return  # a damaged lock is replaced by this render, as before; it names no run to keep
    if old is None:
        return
    before = str((old.report or {}).get("names", naming.LEGACY))
    if before == spec.model.names:
        return
    started = _started(old, expansion, project)
    if not started:
        return
    shown = ", ".join(started[:SHOWN]) + (f" and {len(started) - SHOWN} more" if len(started) > SHOWN else "")
    written = "names" in spec.doc.data
    change = f"`names: {spec.model.names}`" if written else "leaving `names:` out (legacy names)"
    raise SpecError(
        f"{change} would rename {len(started)} run(s) of sweep {spec.name!r} that "
        f"have started (their folders exist: {shown}); renamed, they would look new and run again",
        location=spec.loc(("names",) if written else ("name",), key=not written),
        hint=f"keep `names: {before}` in this spec (its runs keep their names), or give the sweep a "
        "new `name:` to start it afresh under the new names",
    )


def _started(old: lock.Lock, expansion: Expansion, project: str) -> list[str]:
    """Run folders the lock names, the new render drops, and that exist: the runs a rename would lose."""
    kept = {v.run_name or v.name for v in expansion.variants}
    return [
        e.run_dir
        for e in old.files
        if e.run_name not in kept and e.run_dir and os.path.lexists(os.path.join(project, e.run_dir))
    ]
