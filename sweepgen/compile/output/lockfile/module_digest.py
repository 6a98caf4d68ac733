"""A ``module:Class`` schema's identity in the lock, the same for the same code however it is installed.

An editable install and a plain one (what pre-commit makes of a hook repository) of the same code
must record the same identity, or the hook calls a fresh lock out of date and `render` changes
nothing. So a module's identity is the digest of its source and of the sources it imports from its
own package (a model's validators live there too), found by reading the import statements, never by
importing. Only a distribution installed from an index (no PEP 610 ``direct_url.json``: a release,
whose ``name==version`` pins its code) is recorded by its version, which reads better in a diff.
"""

from __future__ import annotations

import ast
import hashlib
import importlib.metadata
import os

SOURCE_LIMIT = 4 << 20  # bytes per file: a schema package's module, not a data blob


def released_version(top: str) -> str | None:
    """``name==version`` of the one distribution that installs package ``top`` from an index; None
    for a local checkout, an editable or a plain install from a folder or a VCS, or no distribution."""
    dists = importlib.metadata.packages_distributions().get(top) or []
    if len(dists) != 1:
        return None
    try:
        dist = importlib.metadata.distribution(dists[0])
    except importlib.metadata.PackageNotFoundError:
        return None
    if dist.read_text("direct_url.json") is not None:
        return None  # installed from a folder, a file or a VCS: its version does not pin its code
    return f"{dists[0]}=={dist.version}"


def source_digest(module: str, source: str) -> str | None:
    """sha256 over ``source`` (the file of ``module``) and every file of the same top-level package it
    imports, transitively, each named by its path inside the package; None when one cannot be read."""
    top_dir = _package_root(module, source)
    digest = hashlib.sha256()
    seen: set[str] = set()
    todo = [(module, source)]
    while todo:
        name, path = todo.pop()
        if path in seen:
            continue
        seen.add(path)
        data = _read(path)
        if data is None:
            return None
        rel = os.path.relpath(path, top_dir).replace(os.sep, "/")
        digest.update(rel.encode() + b"\0" + hashlib.sha256(data).digest())
        todo += [(n, p) for n in _imports(name, path, data) if (p := _file_of(n, top_dir)) is not None]
    return digest.hexdigest()


def _package_root(module: str, source: str) -> str:
    """The folder holding the top-level package of ``module`` (its parent when it is a plain module)."""
    depth = module.count(".") + (1 if os.path.basename(source) == "__init__.py" else 0)
    folder = os.path.dirname(os.path.abspath(source))
    for _ in range(depth):
        folder = os.path.dirname(folder)
    return folder


def _read(path: str) -> bytes | None:
    try:
        with open(path, "rb") as fh:
            return fh.read(SOURCE_LIMIT + 1)
    except OSError:
        return None


def _imports(name: str, path: str, data: bytes) -> list[str]:
    """The absolute names of what ``name`` imports from its own top-level package."""
    top = name.partition(".")[0]
    package = name if os.path.basename(path) == "__init__.py" else name.rpartition(".")[0]
    try:
        tree = ast.parse(data)
    except (SyntaxError, ValueError, RecursionError, MemoryError):  # the last two: nested past the parser
        return []  # nothing Python can import either
    out = [n for node in ast.walk(tree) for n in _imported(node, package)]
    return [n for n in out if n == top or n.startswith(top + ".")]


def _imported(node: ast.AST, package: str) -> list[str]:
    """The absolute names an import statement (in ``package``) names; none for any other node."""
    if isinstance(node, ast.Import):
        return [a.name for a in node.names]
    if not isinstance(node, ast.ImportFrom):
        return []
    base = _absolute(package, node.level, node.module)
    return [] if base is None else [base, *(f"{base}.{a.name}" for a in node.names)]


def _absolute(package: str, level: int, module: str | None) -> str | None:
    if level == 0:
        return module
    parts = package.split(".")
    if level - 1 >= len(parts):
        return None
    base = ".".join(parts[: len(parts) - (level - 1)])
    return f"{base}.{module}" if module else base


def _file_of(name: str, top_dir: str) -> str | None:
    stem = os.path.join(top_dir, *name.split("."))
    for candidate in (stem + ".py", os.path.join(stem, "__init__.py")):
        if os.path.isfile(candidate):
            return candidate
    return None
