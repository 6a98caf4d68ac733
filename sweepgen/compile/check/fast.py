"""``check``'s fast path: trust the lock when nothing it depends on has changed.

A render records the sha256 of every input it read (spec, included files, templates with their
Jinja includes, the schema's source) and of every file it wrote. When sweepgen's version, every
input and every generated file still have those hashes, rendering again would give the same bytes
and the same verdicts, so nothing is rendered. Otherwise:

- an input changed (or the lock is older, from another sweepgen, or lists a dynamic include), a
  render was interrupted, or the folder holds a link, FIFO, device or temp file: the caller renders
  the whole spec and its full comparison reports everything (``None`` is returned);
- only generated files changed: those files are edited by hand (their inputs did not change, so
  they cannot be stale); exactly those variants are rendered again to show the diff.

The folder is read through ``OutputTree`` like everywhere else: never through a link.
"""

from __future__ import annotations

import hashlib
import os
import posixpath
from dataclasses import dataclass

from sweepgen import __version__
from sweepgen.compile.check.foreign import foreign_ok
from sweepgen.compile.output.lockfile import lock, lock_digest
from sweepgen.compile.output.lockfile.inputs import file_sha256, module_identity, spec_digest
from sweepgen.compile.output.write.journal import JOURNAL_NAME
from sweepgen.compile.schema.validate import imports_disabled
from sweepgen.compile.spec.model import Spec, display_path, load_spec
from sweepgen.errors import SweepgenError
from sweepgen.fs.confine import resolve_inside
from sweepgen.fs.outtree import OutputTree
from sweepgen.fs.safefs import TEMP_NAME

Finding = tuple[str, str, str, bytes | None]  # (kind, path in the sweep folder, variant, bytes on disk)


@dataclass
class Verdict:
    """What the hashes decided for one spec whose inputs all match its lock."""

    name: str  # the sweep's name
    shown: str  # its folder, as the user reads it
    lock: lock.Lock
    findings: list[Finding]  # edited | missing | orphan; empty: nothing to render, nothing to report


@dataclass
class Trust:
    """What the fast path found: the loaded spec, handed on so that a caller who must render does
    not load it again (None when it did not load: the full path reports why), and the verdict."""

    spec: Spec | None
    verdict: Verdict | None  # None: the spec must be rendered


def trusted(spec_path: str, out_root: str) -> Trust:
    """The verdict from hashes alone, or none when the spec must be rendered (the full path then
    reports whatever made it so, with its location). Never a verdict under ``CI=true``: see lock_digest."""
    spec = None
    try:
        spec = load_spec(spec_path, out_root)
        if lock_digest.in_ci():  # only a render proves a file is what the spec produces
            return Trust(spec, None)
        sweep_dir = os.path.join(os.path.abspath(out_root), spec.name)
        shown = display_path(sweep_dir)
        tree = OutputTree.open(*os.path.split(sweep_dir), shown, create=False)
        if tree is None:
            return Trust(spec, None)
        with tree:
            return Trust(spec, _decide(spec, out_root, tree, shown))
    except (SweepgenError, OSError):
        return Trust(spec, None)


def _inputs_hold(spec: Spec, recorded: lock.Lock, project: str) -> bool:
    """Whether every input the lock records has the digest it records. The lock is data: the only
    module ever looked up is the one the spec names as its schema (a lock naming another is a
    mismatch), and the only files hashed are inside the project, each once, named as render names
    them (normalised): a lock listing one large file under a million names (`./f`, `././f`, links
    to it) held `check` for hours, hashing it again for each."""
    if imports_disabled() and any(rel.startswith("module:") for rel in recorded.inputs):
        return False  # the full path reports the schema check as skipped, loudly
    schema = spec.model.schema_ or ""
    named = "" if schema.endswith(".json") else schema.partition(":")[0]
    hashed: dict[str, str | None] = {}
    return all(
        _input_now(spec, recorded, rel, named, project, hashed) == digest
        for rel, digest in recorded.inputs.items()
    )


def _input_now(
    spec: Spec, recorded: lock.Lock, rel: str, named: str, project: str, hashed: dict[str, str | None]
) -> str | None:
    """The digest `rel` has now; None where it can never hold: a module other than the one the spec
    names as its schema, a file outside the project or not named as render names it."""
    if rel == recorded.spec:
        return spec_digest(spec)
    if rel.startswith("module:"):
        return module_identity(named) if named and rel == f"module:{named}" else None
    inside = resolve_inside(project, rel) if posixpath.normpath(rel) == rel else None
    if inside is None:
        return None
    if inside not in hashed:
        hashed[inside] = file_sha256(inside)
    return hashed[inside]


def _decide(spec: Spec, out_root: str, tree: OutputTree, shown: str) -> Verdict | None:  # noqa: C901 - each early exit is one reason the fast path must fall back to a full check
    name = spec.name
    raw = tree.read_regular(lock.LOCK_NAME)
    if raw is None or tree.read_regular(JOURNAL_NAME) is not None:
        return None
    if not lock_digest.holds(raw):  # edited by hand (or written before locks had a digest)
        return None
    recorded = lock.parse(raw, tree.where(lock.LOCK_NAME))
    if recorded.version != lock.LOCK_VERSION or recorded.sweepgen_version != __version__:
        return None
    project = os.path.dirname(os.path.abspath(out_root))
    if recorded.spec != os.path.relpath(spec.abspath, project).replace(os.sep, "/"):
        return None
    if not _inputs_hold(spec, recorded, project):
        return None
    on_disk: dict[str, str] = dict(tree.walk())
    if any(kind != "file" for kind in on_disk.values()):
        return None  # links, FIFOs, devices: the full comparison reports them as unsafe
    if any(TEMP_NAME.fullmatch(p.rpartition("/")[2]) for p in on_disk):
        return None
    findings: list[Finding] = []
    for entry in recorded.files:
        if entry.path not in on_disk:
            findings.append(("missing", entry.path, entry.variant, None))
            continue
        data = tree.read(entry.path)
        if hashlib.sha256(data).hexdigest() != entry.sha256:
            findings.append(("edited", entry.path, entry.variant, data))
    listed = {f.path for f in recorded.files} | {lock.LOCK_NAME, *lock.RUN_STATE_NAMES}
    foreign = [p for p in on_disk if p not in listed]
    allowed = foreign_ok(os.path.join(os.path.abspath(out_root), name), foreign)
    findings.extend(("orphan", p, "", None) for p in foreign if p not in allowed)
    return Verdict(name, shown, recorded, findings)
