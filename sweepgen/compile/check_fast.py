"""``check``'s fast path: trust the lock when nothing it depends on has changed.

A render records the sha256 of every input it read (spec, included files, templates with their
Jinja includes, the schema's source) and of every file it wrote. When sweepgen's version, every
input and every generated file still have those hashes, rendering again would give the same bytes
and the same verdicts, so nothing is rendered. Otherwise:

- an input changed (or the lock is older, from another sweepgen, or lists a dynamic include): the
  caller renders the whole spec (``None`` is returned);
- only generated files changed: those files are edited by hand (their inputs did not change, so
  they cannot be stale); exactly those variants are rendered again to show the diff.
Missing and orphaned files are found from the lock and a listing of the folder.
"""

from __future__ import annotations

import hashlib
import os

from sweepgen import __version__
from sweepgen.compile import lock
from sweepgen.compile.foreign import foreign_ok
from sweepgen.compile.inputs import file_sha256, module_source
from sweepgen.compile.spec import display_path, load_spec

Finding = tuple[str, str, str, bytes | None]


def fast_check(spec_path: str, out_root: str) -> tuple[str, str, int, list[Finding]] | None:
    """``(sweep name, shown sweep folder, files, findings)`` decided from hashes, or None when the
    spec must be rendered.

    A finding is ``(kind, path in the sweep folder, message key, bytes on disk)`` with kind
    ``edited`` | ``missing`` | ``orphan``; the caller renders the edited ones for their diff.
    """
    spec = load_spec(spec_path)  # a spec that does not load is reported by the full path
    out_abs = os.path.abspath(out_root)
    project = os.path.dirname(out_abs)
    sweep_dir = os.path.join(out_abs, spec.name)
    recorded = lock.read(sweep_dir, display_path(sweep_dir))
    if recorded is None or recorded.version != lock.LOCK_VERSION or recorded.sweepgen_version != __version__:
        return None
    if recorded.spec != os.path.relpath(spec.abspath, project).replace(os.sep, "/"):
        return None
    for rel, digest in recorded.inputs.items():
        if rel.startswith("module:"):
            source = module_source(rel.removeprefix("module:"))
            now = file_sha256(source) if source else None
        else:
            now = file_sha256(os.path.join(project, rel))
        if now != digest:
            return None
    findings: list[Finding] = []
    listed = set()
    for entry in recorded.files:
        listed.add(entry.path)
        data = lock.read_bytes(os.path.join(sweep_dir, entry.path), folder_is_missing=True)
        if data is None:
            findings.append(("missing", entry.path, "", None))
        elif hashlib.sha256(data).hexdigest() != entry.sha256:
            findings.append(("edited", entry.path, entry.variant, data))
    on_disk = [p for p in files_in(sweep_dir) if p not in listed and p != lock.LOCK_NAME]
    allowed = foreign_ok(sweep_dir, on_disk)
    findings.extend(("orphan", p, "", None) for p in on_disk if p not in allowed)
    return spec.name, display_path(sweep_dir), len(recorded.files), findings


def files_in(folder: str) -> list[str]:
    out = []
    for root, dirs, files in os.walk(folder):
        dirs.sort()
        for name in sorted(files):
            out.append(os.path.relpath(os.path.join(root, name), folder).replace(os.sep, "/"))
    return out
