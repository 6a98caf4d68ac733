"""What sweepgen recorded in a sweep folder: the lock, plus the journal of an interrupted render.

A render writes ``.sweepgen-journal.json`` (atomically) before it changes the first file of a sweep
folder and deletes it after the lock is written. The journal lists the sha256 every path will have.
When the render is killed (SIGKILL, Ctrl-C, a full disk, a name the file system refuses), the folder
holds a mix of old and new files, and the old lock; the next render, of the new spec or of the old
one, accepts any file whose bytes match the old lock *or* the journal as its own, finishes the job
and deletes the journal. Nothing is rolled back and nothing needs deleting by hand; ``check`` reports
the journal and leftover temp files as an interrupted render, and the files as stale, not as edits.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from sweepgen.compile.output.lockfile import lock
from sweepgen.compile.output.pipeline import Plan
from sweepgen.errors import Location, UserError
from sweepgen.fs import filenames
from sweepgen.fs.outtree import OutputTree

JOURNAL_NAME = filenames.RENDER_JOURNAL
JOURNAL_VERSION = 1


@dataclass
class Recorded:
    lock_bytes: bytes | None  # the lock on disk, as bytes (None: no lock)
    sweep: str | None  # the sweep the lock on disk belongs to
    version: int | None  # its format version
    journal: dict[str, list[str]] | None  # path -> sha256s of an interrupted render
    shas: dict[str, set[str]] = field(default_factory=dict)  # path -> every sha256 that is sweepgen's

    def accepts(self, path: str, sha: str) -> bool:
        return sha in self.shas.get(path, ())


def read_recorded(tree: OutputTree, plan: Plan) -> Recorded:
    lock_bytes = tree.read_regular(lock.LOCK_NAME)
    shas: dict[str, set[str]] = {}
    sweep: str | None = None
    version: int | None = None
    if lock_bytes is None:
        pass
    elif lock_bytes == plan.lock_bytes:  # the common case: skip parsing a lock that may be large
        sweep, version = plan.spec.name, lock.LOCK_VERSION
        for rendered in plan.files:  # what the lock's entries record
            shas.setdefault(rendered.path, set()).add(rendered.sha256)
    else:
        previous = lock.parse(lock_bytes, tree.where(lock.LOCK_NAME))  # the bytes checked just above
        sweep, version = previous.sweep, previous.version
        for f in previous.files:
            shas.setdefault(f.path, set()).add(f.sha256)
    journal = _parse(
        _journal_data(tree, _cap({*shas, *(f.path for f in plan.files)})), tree.where(JOURNAL_NAME)
    )
    for path, hashes in (journal or {}).items():
        shas.setdefault(path, set()).update(hashes)
    return Recorded(lock_bytes, sweep, version, journal, shas)


# A journal lists each path a render will write with its sha256 (earlier interrupted renders' merged
# in): about a path and 70 bytes an entry. One far larger than the sweep's own files and its lock's
# could be written is no journal sweepgen wrote, and is refused before it is parsed: a committed
# 200 MiB journal of `"<n>":[]` entries cost `check` 7.1 GB and 2 min 16 s (json.loads builds a
# str, a list and a dict slot for every 8 bytes).
_MERGED = 4  # interrupted renders of different specs whose paths a journal may hold together
_ENTRY = 2 * 67 + 8  # an entry's bytes besides its path: two sha256s quoted, its brackets, commas
_SLACK = 1 << 20  # any journal this small is parsed: its cost is nothing


def _cap(paths: set[str]) -> int:
    """The bytes a journal of this sweep folder may hold: an entry as large as sweepgen writes one
    for each of ``paths`` (the plan's files and the lock's: a first render interrupted has no lock),
    ``_MERGED`` times."""
    return _SLACK + _MERGED * sum(len(path.encode("utf-8", "surrogateescape")) + _ENTRY for path in paths)


def _journal_data(tree: OutputTree, cap: int) -> bytes | None:
    """The journal's bytes, None when there is none; one over ``cap`` is refused before it is read
    (and after, when it grew in between)."""
    node = tree.node(JOURNAL_NAME)
    size = node.size if node.kind == "file" else 0
    data = tree.read_regular(JOURNAL_NAME) if size <= cap else None
    size = size if data is None else len(data)
    if size > cap:
        raise UserError(
            f"the journal of an interrupted render is {size:,} bytes, where a journal of this sweep's "
            f"files and its lock's holds at most {cap:,}",
            location=Location(tree.where(JOURNAL_NAME)),
            hint=_DAMAGED_HINT,
        )
    return data


_DAMAGED_HINT = (
    "sweepgen writes it atomically, so it was edited: delete it, then `sweepgen check` "
    "shows which files differ from the lock"
)


def _parse(data: bytes | None, shown: str) -> dict[str, list[str]] | None:
    if data is None:
        return None
    try:
        doc = json.loads(data)
        files = doc["files"]
        ok = doc.get("journal_version") == JOURNAL_VERSION and _paths_to_hashes(files)
    except (ValueError, TypeError, KeyError, RecursionError):  # a committed journal nested deep
        ok = False
    if not ok:
        raise UserError(
            "the journal of an interrupted render is damaged",
            location=Location(shown),
            hint=_DAMAGED_HINT,
        )
    result: dict[str, list[str]] = files
    return result


def _paths_to_hashes(files: Any) -> bool:
    """Whether ``files`` maps each path to a list of sha256 strings."""
    return isinstance(files, dict) and all(
        isinstance(k, str) and isinstance(v, list) and all(isinstance(s, str) for s in v)
        for k, v in files.items()
    )


def journal_bytes(recorded: Recorded, plan: Plan) -> bytes:
    """The journal for rendering ``plan`` over a folder that may hold an earlier journal (merged in,
    so a second interruption still knows every file any earlier render wrote)."""
    earlier = recorded.journal or {}
    files: dict[str, list[str]] = {p: sorted(set(v)) for p, v in earlier.items()}
    if not files:  # the common case (no interrupted render before): a 100,000-file render at once
        files = {f.path: [f.sha256] for f in plan.files}
    else:
        for f in plan.files:
            had = files.get(f.path)
            files[f.path] = [f.sha256] if had is None else sorted({*had, f.sha256})
    doc = {"journal_version": JOURNAL_VERSION, "sweep": plan.spec.name, "files": files}
    # compact (C encoder): a 100,000-file render writes it before its first file
    return (json.dumps(doc, sort_keys=True, separators=(",", ":")) + "\n").encode("utf-8")
