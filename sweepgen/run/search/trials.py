"""One asked point of a search, rendered through the compile pipeline into the sweep folder.

Each trial is a variant like any other: derived values, the allowed-diff gate, the constraints and
the schema, the template, a name (``t0007``), a file in the sweep folder and an entry in its lock.
A point the constraints or the schema refuse is never written and never run: the caller tells it to
the study as failed, with the reason. Rendering a trial again gives the same bytes, so a resumed
trial (its controller killed between the ask and the start) is rendered again, not renumbered.

Only one process at a time may change the lock: callers hold the search's controller lock
(``sweepgen.run.search.controller``) around ``render``.
"""

from __future__ import annotations

import contextlib
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from sweepgen.compile.run_api import (
    Lock,
    RenderedFile,
    SearchBlock,
    Spec,
    compile_expansion,
    load_spec,
    load_validator,
    lock,
    lock_entries,
    spec_digest,
    sweep_view,
)
from sweepgen.compile.run_api import trials as search
from sweepgen.errors import ConfigError, Location, UserError, ValidationError
from sweepgen.fs import runfs
from sweepgen.fs.outtree import read_inside
from sweepgen.fs.safefs import TEMP_NAME
from sweepgen.run.core.base import RunTask
from sweepgen.run.core.plan import trl_output_dir
from sweepgen.run.core.plan.shared_outputs import OutputClaims
from sweepgen.run.core.plan.tasks import read_lock, run_dir_of, task_of
from sweepgen.run.search.lock import LockText


@dataclass(frozen=True)
class Refused:
    """A point the gate, a constraint or the schema refused: told as failed, never run."""

    reason: str


def spec_of(sweep_dir: Path) -> Spec | None:
    """The spec that rendered ``sweep_dir``, when it is a search; None for any other sweep.
    The spec must still be the one the lock recorded: trials are rendered from it."""
    current = _lock(sweep_dir)
    out_root = sweep_dir.resolve().parent
    spec_path = out_root.parent / current.spec
    # the lock's `spec` is data: only a regular file inside the project, reached without a link
    if read_inside(str(out_root.parent), current.spec) is None:
        return None
    spec = load_spec(str(spec_path), str(out_root))
    if not search.is_search(spec):
        return None
    if spec_digest(spec) != current.spec_sha256:  # the lock's own measure: parsed content
        raise UserError(
            f"{current.spec} changed since {sweep_dir} was rendered",
            location=Location(str(spec_path)),
            hint=f"render it again (`sweepgen render {current.spec}`) before running the search",
        )
    search.check_block(spec)
    return spec


def _lock(sweep_dir: Path) -> Lock:
    return read_lock(sweep_dir)  # the same checks and messages as every `run`


def clear_leftovers(sweep_dir: Path) -> list[str]:
    """Remove the temp files a controller killed mid-write left in the sweep folder (a trial file or
    the lock, written atomically through a temp file): those of a process no longer alive on this
    host. Callers hold the controllers' shared lock; returns the names removed."""
    removed = []
    for name in os.listdir(sweep_dir):
        match = TEMP_NAME.fullmatch(name)
        pid = _pid_in(name) if match else None
        if pid is None or _alive(pid):
            continue
        with contextlib.suppress(FileNotFoundError):
            os.unlink(sweep_dir / name)
            removed.append(name)
    return removed


def _pid_in(name: str) -> int | None:
    found = re.search(r"sweepgen-(\d+)-\d+\.tmp$", name)
    return int(found.group(1)) if found else None


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


class TrialRenderer:
    """Renders trials of one search sweep; holds what every trial shares (template, schema, views)."""

    def __init__(
        self, sweep_dir: Path, spec: Spec, *, command: Sequence[str] | None, done_file: str | None
    ) -> None:
        self.sweep_dir = sweep_dir
        self.spec = spec
        self.out_abs = str(sweep_dir.resolve().parent)
        self.spec_rel = os.path.relpath(spec.abspath, os.path.dirname(self.out_abs)).replace(os.sep, "/")
        self.sweep = sweep_view(spec, self.spec_rel)
        self.validator = load_validator(spec)
        self.command = command
        self.done_file = done_file
        # the lock as last read or written here, keyed by the file's identity: another controller's
        # write changes the key, and the lock is read again (keeps a trial O(1) in lock reads)
        self._cached: tuple[tuple[int, int, int], Lock] | None = None
        self._text: LockText | None = None  # the lock's text, entry by entry (search_lock)
        self._claims: OutputClaims | None = None  # the output folders the trials so far name

    def _current(self) -> Lock:
        key = _identity(self.sweep_dir / lock.LOCK_NAME)
        if self._cached is None or self._cached[0] != key:
            self._cached = (key, _lock(self.sweep_dir))
        return self._cached[1]

    @property
    def block(self) -> SearchBlock:
        return search.block(self.spec)

    def render(self, number: int, params: dict[str, Any]) -> list[RunTask] | Refused:
        """Trial ``number`` at ``params`` (dotted path -> value): its run(s), written and locked."""
        variants = search.trial_variants(self.spec, number, params)
        expansion = search.expansion_of(self.spec, variants)
        try:
            plan = compile_expansion(
                expansion, self.out_abs, self.sweep, self.validator, self.spec_rel, build_lock=False
            )
        except ValidationError as err:
            return Refused(err.message)
        shared = self._shared_output(plan.files)
        if shared is not None:
            return Refused(f"{shared.message} (hint: {shared.hint})")
        for f in plan.files:
            runfs.write_atomic(self.sweep_dir / f.path, f.content())  # no linked folder followed
        self._add_to_lock(plan.files)
        return self.tasks_of([f.variant.name for f in plan.files])

    def planned(self, number: int, params: dict[str, Any]) -> list[tuple[RunTask, bytes]] | Refused:
        """Trial ``number`` at ``params`` as ``render`` would write it, in memory: each run (its
        command not filled in) with its config's bytes; nothing is written (`run --dry-run`)."""
        variants = search.trial_variants(self.spec, number, params)
        try:
            plan = compile_expansion(
                search.expansion_of(self.spec, variants),
                self.out_abs,
                self.sweep,
                self.validator,
                self.spec_rel,
                build_lock=False,
            )
        except ValidationError as err:
            return Refused(err.message)
        return [(self._planned_task(f), f.content()) for f in plan.files]

    def _planned_task(self, f: RenderedFile) -> RunTask:
        path = self.sweep_dir / f.path
        run_dir = run_dir_of(path, f.content(), f.variant.config, f.run_dir)
        return RunTask(f.run_name, f.variant.name, path, run_dir, (), config=f.variant.config)

    def _shared_output(self, files: list[RenderedFile]) -> ConfigError | None:
        """The first output folder a new trial's config names that an earlier trial's names too
        (shared_outputs); the earlier trials' are read from the lock once per controller."""
        try:  # a `trl` trial left to transformers' one default folder (trl_output_dir)
            trl_output_dir.check(
                self.command, [(f.run_name, self.sweep_dir / f.path, f.content()) for f in files]
            )
        except ConfigError as err:
            return err
        claims = self._claims or self._claimed()
        conflicts = (claims.conflict(f.run_name, self.sweep_dir / f.path, f.content()) for f in files)
        return next((c for c in conflicts if c is not None), None)

    def _claimed(self) -> OutputClaims:
        """The output folders the trials in the lock name (read once per controller)."""
        self._claims = OutputClaims()
        for entry in self._current().files:
            data = read_inside(str(self.sweep_dir), entry.path) or b""
            self._claims.conflict(entry.run_name or entry.variant, self.sweep_dir / entry.path, data)
        return self._claims

    def _add_to_lock(self, files: list[RenderedFile]) -> None:
        """Add (or replace) the trial's entries, keeping the lock's text for the next trial."""
        current = self._current()
        if self._text is None or self._text.head is not current:
            self._text = LockText(current)
        new = lock_entries(files, current.base)
        self._text.put(new)
        path = self.sweep_dir / lock.LOCK_NAME
        runfs.write_atomic(path, self._text.text().encode("utf-8"))
        names = {e.variant for e in new}
        files_now = [f for f in current.files if f.variant not in names] + new
        files_now.sort(key=lambda f: f.variant)
        updated = replace(current, files=files_now, varying=self._text.varying(), version=lock.LOCK_VERSION)
        self._text.head = updated
        self._cached = (_identity(path), updated)

    def tasks_of(self, names: Sequence[str]) -> list[RunTask]:
        """The runs of already rendered trials, by variant name, from the lock."""
        current = self._current()
        by_name = {f.variant: f for f in current.files}
        return [task_of(self.sweep_dir, current, by_name[n], self.command, self.done_file) for n in names]


def _identity(path: Path) -> tuple[int, int, int]:
    st = os.stat(path)
    return st.st_ino, st.st_size, st.st_mtime_ns
