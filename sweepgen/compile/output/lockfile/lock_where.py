"""Where a value the lock holds was written, for an error ``run`` finds in it: the spec's line, when
the spec that rendered the lock is still there unchanged (the person fixes the spec, not the lock),
else the lock's own line for the key.

``run`` checks what only it can check (a launcher this machine cannot start, a time Slurm does not
read, a run folder a command would act on) on the lock; such an error names the lock and the key.
``placed`` turns that into ``file:line:col`` at the moment the error leaves ``run``'s set-up: the
checks keep one small signature, and nothing is read again unless an error is raised.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from sweepgen.compile.output.lockfile.lock import LOCK_NAME, Lock
from sweepgen.errors import Location, SweepgenError, UserError
from sweepgen.formats import yamlio
from sweepgen.fs.confine import project_root
from sweepgen.fs.outtree import read_inside

_READ_FAILS = (UserError, OSError, ValueError, RecursionError)


@contextlib.contextmanager
def placed(sweep_dir: str | Path, lock: Lock) -> Iterator[None]:
    """Errors raised inside that name ``sweep_dir``'s lock and a key, but no line, get the line."""
    try:
        yield
    except SweepgenError as err:
        shown = str(Path(sweep_dir) / LOCK_NAME)
        at = err.location
        if err.key and at is not None and not at.line and at.path == shown:
            err.location = key_location(Path(sweep_dir), lock, err.key) or at
        raise


def key_location(sweep_dir: Path, lock: Lock, key: str) -> Location | None:
    """The dotted ``key`` where the unchanged spec writes it, else where the lock writes it; None
    when neither holds it."""
    keys = tuple(key.split("."))
    return _in_spec(sweep_dir, lock, keys) or _in_file(sweep_dir, LOCK_NAME, str(sweep_dir / LOCK_NAME), keys)


def _in_spec(sweep_dir: Path, lock: Lock, keys: tuple[str, ...]) -> Location | None:
    root = project_root(str(sweep_dir))
    if root is None or not lock.spec:
        return None
    try:
        raw = read_inside(root, lock.spec)  # data only: no link, no `..`, no FIFO
    except _READ_FAILS:
        return None
    if raw is None:
        return None
    doc = _loaded(raw, os.path.relpath(os.path.join(root, lock.spec)))
    if doc is None or not isinstance(doc.data, dict) or content_digest(doc.data) != lock.spec_sha256:
        return None  # another spec now: its lines would point at something else
    return _marked(doc, keys)


def _in_file(folder: Path, name: str, shown: str, keys: tuple[str, ...]) -> Location | None:
    try:
        raw = read_inside(str(folder), name)
    except _READ_FAILS:
        return None
    doc = None if raw is None else _loaded(raw, shown)
    return None if doc is None else _marked(doc, keys)


def _loaded(raw: bytes, shown: str) -> yamlio.Doc | None:
    """A YAML file (or JSON: YAML 1.2 reads it) with its marks; None when it does not read."""
    try:
        return yamlio.loads(raw.decode("utf-8"), shown)
    except _READ_FAILS:
        return None


def _marked(doc: yamlio.Doc, keys: tuple[str, ...]) -> Location | None:
    """The key's own place; None unless the file writes it."""
    return doc.loc(keys, key=True) if keys in doc.key_marks else None


def content_digest(data: dict[str, Any]) -> str:
    """sha256 of a spec's loaded data, as the lock records it (``inputs.spec_digest``): top-level
    sections in sorted order, everything below in its written order."""
    canonical = {key: data[key] for key in sorted(data)}
    text = json.dumps(canonical, ensure_ascii=False, separators=(",", ":"), default=repr)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()
