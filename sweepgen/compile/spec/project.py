"""The project a spec belongs to, and the rule that every file a spec reads lies inside it.

A spec is data from a repository that may not be trusted (a pull request under review): through
``template:``, ``base.include``, ``{% include %}`` or ``schema:`` it could otherwise read
``/proc/self/environ`` or ``../../creds.yaml`` and have ``check`` print it. So every such path is
resolved (symlinks included) and must stay inside the project:

- the git work tree holding the spec (the nearest folder above it with a ``.git`` entry);
- outside git, the deepest folder holding both the spec and the output root (``-o``, normally
  ``generated/`` in the folder sweepgen runs in), so the usual ``specs/`` + ``templates/`` +
  ``generated/`` layout works; never the filesystem root or the home folder itself;
- otherwise the spec's own folder.

The output root is chosen by the person running sweepgen, never by the spec, so a spec cannot widen
its own project.
"""

from __future__ import annotations

import os

from sweepgen.errors import Location, SpecError
from sweepgen.fs import regular


def find_root(spec_abspath: str, out_root: str) -> str:
    """The project folder of a spec (absolute, symlinks resolved)."""
    spec_dir = os.path.dirname(os.path.realpath(spec_abspath))
    folder = spec_dir
    while True:
        if os.path.lexists(os.path.join(folder, ".git")):
            return folder
        parent = os.path.dirname(folder)
        if parent == folder:
            break
        folder = parent
    common = os.path.commonpath([spec_dir, os.path.realpath(out_root)])
    if common in (os.path.dirname(common), os.path.realpath(os.path.expanduser("~"))):
        return spec_dir  # too wide: the filesystem root or the whole home folder
    return common


def _is_inside(path: str, root: str) -> bool:
    """Is ``path`` ``root`` or below it? Both absolute and already resolved."""
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


def resolve(root: str, base_dir: str, rel: str, *, what: str, loc: Location) -> str:
    """``rel`` (relative to ``base_dir``) as an absolute path inside ``root``, else an exit-2 error.

    Symlinks are resolved before the test, so a link inside the project that points out of it is
    refused like a ``../`` path.
    """
    if not os.path.isabs(root):  # an unset project would make every path "inside": fail closed
        raise RuntimeError(f"project root not set or not absolute: {root!r}")
    full = os.path.normpath(os.path.join(base_dir, rel))
    real = os.path.realpath(full)
    if not _is_inside(real, root):
        raise SpecError(
            f"{what} {rel!r} lies outside the project {root}",
            location=loc,
            hint="templates, includes and schema files must live in the project: the git work tree "
            "holding the spec (outside git, the folder holding the spec and the output root); "
            "copy the file in",
        )
    return full


INPUT_BYTES = 16 << 20  # default `limits.input_bytes`; real specs, configs and templates are kilobytes


def read_regular(path: str, *, what: str, loc: Location, limit: int = INPUT_BYTES) -> bytes:
    """The bytes of a regular file; a FIFO, device or folder is an error instead of a hang, and so
    is a file over ``limit`` bytes, found from its size before anything is read (``fs.regular``)."""
    try:
        return regular.read(path, limit=limit)
    except regular.NotRead as err:
        if err.why == "missing":
            raise SpecError(
                f"{what} not found: {path}", location=loc, hint="paths are relative to the spec"
            ) from None
        if err.why == "not regular":
            raise SpecError(
                f"{what} {path} is not a regular file", location=loc, hint="point it at a plain file"
            ) from None
        if err.why == "too large":
            raise _too_large(what, path, err.size, limit, loc) from None
        raise SpecError(f"cannot read {what} {path}: {err.strerror}", location=loc) from None


def _too_large(what: str, path: str, size: int, limit: int, loc: Location) -> SpecError:
    return SpecError(
        f"{what} {path} is larger than the limit of {limit:,} bytes ({size:,})",
        location=loc,
        hint="not a config? Otherwise raise the limit in the spec: `limits: {input_bytes: N}` "
        "(the spec file itself must stay under the default)",
    )
