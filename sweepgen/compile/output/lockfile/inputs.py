"""Every file a render read, with its sha256: the spec, its included base files, the template and
the templates it includes, imports or extends, and the schema's source. The lock records them so
``check`` can tell, without rendering, that nothing a render depends on has changed.

The spec itself is recorded by the hash of its parsed content (``spec_digest``), not of its bytes:
a comment, a quote style or the order of its top-level sections changes no config, so it leaves the
lock valid. A ``module:Class`` schema is recorded by its source digest (or a release's version); a
render that did not import it (``--no-import``) keeps what the lock already says.

A template whose include name is computed at render time cannot be listed; the lock then records
``"<dynamic>"`` for it, which never matches, so ``check`` always re-renders such a spec.
"""

from __future__ import annotations

import importlib.util
import os
import sys
from typing import Any

from jinja2 import Template, TemplateNotFound, meta

from sweepgen.compile.output.lockfile import module_digest
from sweepgen.compile.output.lockfile.lock_where import content_digest
from sweepgen.compile.schema import trl_cli
from sweepgen.compile.spec.model import Spec
from sweepgen.fs import regular

DYNAMIC = "<dynamic>"  # a hash no file can have: the fast path never trusts this input


def file_sha256(path: str) -> str | None:
    """None for anything but a regular file: a lock (hand-edited) may name a FIFO or /dev/zero
    (``regular.sha256``: never waited on, read a chunk at a time)."""
    try:
        return regular.sha256(path)
    except regular.NotRead:
        return None


def spec_digest(spec: Spec) -> str:
    """sha256 of the spec's parsed content: top-level sections in sorted order, everything below in
    its written order (a config's key order is the order its rendered file lists keys in)."""
    return content_digest(spec.doc.data)


def render_inputs(
    spec: Spec, template: Template, project: str, *, previous: dict[str, str] | None = None
) -> dict[str, str]:
    """``{project-relative path: sha256}`` of everything the render of ``spec`` read. ``previous``:
    the inputs the existing lock records, kept for a `module:Class` schema that was not imported."""
    found: dict[str, str] = {}

    def add(path: str, digest: str | None = None) -> None:
        rel = os.path.relpath(path, project).replace(os.sep, "/")
        found[rel] = digest if digest is not None else (file_sha256(path) or DYNAMIC)

    add(spec.abspath, spec_digest(spec))
    raw = spec.model.base
    if isinstance(raw.get("include"), list):
        for inc in raw["include"]:
            add(os.path.normpath(os.path.join(spec.dir, inc)))
    files, dynamic = _template_files(template)
    for path in files:
        add(path)
    if dynamic:
        found["<dynamic template include>"] = DYNAMIC
    schema = spec.model.schema_
    if schema is not None and schema.endswith(".json"):
        add(os.path.normpath(os.path.join(spec.dir, schema)))
    elif schema is not None:
        key, identity = _module_input(schema, previous)
        found[key] = identity
    return found


def _module_input(schema: str, previous: dict[str, str] | None) -> tuple[str, str]:
    """The input entry of a ``module:Class`` (or TRL command) schema: ``module:NAME`` and what
    ``module_identity`` records for it."""
    if trl_cli.command_of(schema) is not None:
        return "module:trl", trl_cli.identity()  # what module_identity("trl") reads, without importing
    module = schema.partition(":")[0]
    key = f"module:{module}"
    if module in sys.modules:
        return key, module_identity(module)
    # skipped under --no-import: nothing was checked, so the lock keeps what it said (the same lock
    # in an environment without the package); with no lock, an input nothing matches, so a later
    # `check` renders (and validates) instead of trusting it
    return key, (previous or {}).get(key, DYNAMIC)


def module_identity(module: str) -> str:
    """What a `module:Class` schema's lock entry records, the same for the same code on every machine
    and under every kind of install: the digest of its source and its package's sources it imports,
    or for a release installed from an index ``name==version`` (``trl==1.16.0``)."""
    source = _module_source(module)
    if source is None:
        return DYNAMIC
    parts = os.path.abspath(source).split(os.sep)
    installed = "site-packages" in parts or "dist-packages" in parts  # not a checkout on the path
    released = module_digest.released_version(module.partition(".")[0]) if installed else None
    return released or module_digest.source_digest(module, source) or DYNAMIC


def _template_files(template: Template) -> tuple[list[str], bool]:
    """The template's file and every template it includes, imports or extends, recursively; and
    whether the files read depend on more than the listed ones: an include name computed at render
    time, or a name that is missing now (``{% include ["a.j2", "b.j2"] %}`` and ``ignore missing``
    take the first that exists: adding ``a.j2`` later changes the output)."""
    env = template.environment
    loader = env.loader
    assert loader is not None and template.name is not None  # loaded from a file by render.py
    seen: dict[str, str] = {}
    dynamic = False
    todo = [template.name]
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        try:
            source, filename, _ = loader.get_source(env, name)
        except TemplateNotFound:
            if name == template.name:
                raise
            dynamic = True
            continue
        seen[name] = filename or name
        for ref in meta.find_referenced_templates(env.parse(source)):
            if ref is None:
                dynamic = True
            else:
                todo.append(ref)
    return list(seen.values()), dynamic


def _module_source(name: str) -> str | None:
    """The source file of module ``name``, found without importing it (for a check that does not
    import); None when there is none (a namespace or built-in module)."""
    module: Any = sys.modules.get(name)
    if module is None:
        cwd = os.getcwd()
        added = cwd not in sys.path  # looked up like the schema check imports it: from the cwd too
        if added:
            sys.path.insert(0, cwd)
        try:
            found = importlib.util.find_spec(name)
        except (ImportError, ValueError):
            return None
        finally:
            if added:
                sys.path.remove(cwd)
        return found.origin if found is not None and found.has_location else None
    path = getattr(module, "__file__", None)
    return path if isinstance(path, str) else None
