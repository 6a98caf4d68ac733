"""Resolve mmengine-style ``_base_`` inheritance, so ``diff --resolve-bases`` compares the configs
a trainer would actually see rather than two short override files.

The rules are mmengine's (``Config.fromfile``), applied to the data the AST reader produced:

* ``_base_`` is a path or a list of paths, relative to the file that names it; bases are resolved
  recursively and merged in order; two bases defining the same top-level key is an error;
* the child then merges into the merged bases: a mapping merges key by key, recursively, unless it
  carries ``_delete_=True``, which replaces the base mapping; any other value replaces;
* ``_base_.a.b`` in a value reads the merged bases, and ``_base_.a.b = v`` at module level writes
  into them;
* within each file, a name bound by an earlier statement is replaced by its value, as running the
  file would (``type=dataset_type`` reads ``'CocoDataset'``).

Calls (``{"call": ...}``) and opaque expressions are values, never merged into. Old-style
``"{{_base_.x}}"`` string templates are not expanded: they stay strings, so they still show in a
diff.
"""

from __future__ import annotations

import copy
import re
from pathlib import Path
from typing import Any

from sweepgen.errors import ConfigError, Location
from sweepgen.readers.basepath import Project
from sweepgen.readers.model import ReadResult, Ref
from sweepgen.readers.python.pyvalues import ImportBase, is_call_or_expr

DELETE_KEY = "_delete_"
_BASE_ATTR = re.compile(r"_base_((?:\.[A-Za-z_][A-Za-z0-9_]*)+)")


def load_with_bases(path: str | Path, _chain: tuple[str, ...] = (), yaml_version: str = "1.1") -> Any:
    """The config in ``path`` with its ``_base_`` files and relative-import bases merged in."""
    return read_with_bases(path, _chain, yaml_version).data


def read_with_bases(  # noqa: C901, PLR0912 - each refusal (cycle, unknown base, bad file) is said where the base is read
    path: str | Path, _chain: tuple[str, ...] = (), yaml_version: str = "1.1", root: Project | None = None
) -> ReadResult:
    """``root``: the project every base must stay in and its read budget (``readers.basepath``);
    the first file's own."""
    path = Path(path)
    root = root or Project(path)
    root.spend(path)
    key = str(path.resolve())
    if key in _chain:
        cycle = " -> ".join([*(_chain[_chain.index(key) :]), key])
        raise ConfigError(f"`_base_` inheritance cycle: {cycle}", location=Location(str(path)))
    chain = (*_chain, key)
    if path.suffix == ".py":
        # the Python evaluator loads only for Python configs: a YAML `defaults:` chain never needs it
        from sweepgen.readers.python.pyast import read_python_file  # noqa: PLC0415 - see above

        # each file is evaluated on its own before merging (as mmengine does): a child that rebinds
        # `data_root` does not change what its base built from the base's own `data_root`
        result = read_python_file(path, import_base=_importer(path, chain, yaml_version, root))
    elif path.suffix in (".yaml", ".yml"):
        # the YAML readers (and PyYAML) load only for YAML chains: a Python chain never needs them
        from sweepgen.readers.structured.formats import read_yaml_file  # noqa: PLC0415 - see above
        from sweepgen.readers.structured.hydradefaults import compose  # noqa: PLC0415 - see above

        # a `# @package` header shows as `@package` where nothing is composed (as without
        # --resolve-bases): Hydra places the file by it, a plain OmegaConf.load does not
        result = read_yaml_file(path, yaml_version, header=not _chain)
        if isinstance(result.data, dict) and "defaults" in result.data and "_base_" not in result.data:
            # Hydra / NeMo-RL inheritance: composed from the raw files, interpolations after
            return compose(path, lambda p: read_yaml_file(p, yaml_version, raw=True), root)
    elif path.suffix in (".json", ".toml"):
        from sweepgen.readers.structured.formats import STRUCTURED  # noqa: PLC0415 - as for YAML above

        result = STRUCTURED[path.suffix](path)
    else:
        raise ConfigError(f"cannot read a base of type {path.suffix!r}", location=Location(str(path)))
    data = result.data
    if not isinstance(data, dict) or "_base_" not in data:
        return result
    data = dict(data)
    bases = data.pop("_base_")
    names = [bases] if isinstance(bases, str) else bases
    if not isinstance(names, (list, tuple)) or not all(isinstance(n, str) for n in names):
        raise ConfigError(
            "`_base_` must be a path or a list of paths",
            location=Location(str(path), result.lines.get(("_base_",), 0)),
            hint="e.g. _base_ = ['../_base_/models/faster_rcnn_r50_fpn.py']",
        )
    merged: dict[str, Any] = {}
    origin: dict[str, str] = {}
    for name in names:
        base_path = _base_file(path, name, root, result.lines.get(("_base_",), 0))
        base = read_with_bases(base_path, chain, yaml_version, root)
        result.warnings.extend(base.warnings)
        if not isinstance(base.data, dict):
            raise ConfigError(f"`_base_` file {name!r} is not a mapping", location=Location(str(path)))
        for k, v in base.data.items():
            if k in merged:
                raise ConfigError(
                    f"key {k!r} is defined by two bases, {origin[k]!r} and {name!r}",
                    location=Location(str(path)),
                    hint="mmengine refuses duplicate keys among bases; keep it in one of them",
                )
            merged[k] = v
            origin[k] = name
    if path.suffix == ".py":
        # evaluate the child again, now with `_base_.x` reading (a copy of) the merged bases, so that
        # `pipeline = _base_.train_pipeline; pipeline[2]['scale'] = ...` works as mmengine runs it
        from sweepgen.readers.python.pyast import read_python_file  # noqa: PLC0415 - only for Python configs

        again = read_python_file(path, import_base=_importer(path, chain, yaml_version, root), bases=merged)
        data = dict(again.data)
        data.pop("_base_", None)
        result.lines = again.lines
    result.data = _apply_child(merged, data, str(path))
    return result


def _base_file(path: Path, name: str, root: Project, line: int) -> Path:
    """The file a ``_base_`` entry of ``path`` names: in this package, inside ``root``, and there."""
    if "::" in name:
        raise ConfigError(
            f"`_base_` file {name!r} lives in another package ({name.split('::')[0]})",
            location=Location(str(path), line),
            hint="cross-package bases are not resolved; diff without --resolve-bases, or copy the base",
        )
    base_path = root.inside(path.parent / name, named=name, source=path, line=line)
    if not root.holds_file(base_path, named=name, source=path, line=line):
        raise ConfigError(
            f"`_base_` file {name!r} not found (looked for {base_path})",
            location=Location(str(path), line),
            hint="base paths are relative to the file that names them",
        )
    return base_path


def _importer(path: Path, chain: tuple[str, ...], yaml_version: str, root: Project) -> ImportBase:
    """Follows ``from .x import y`` / ``with read_base(): from .x import *`` relative to ``path``."""

    def import_base(module: str, level: int, line: int) -> dict[str, Any]:
        folder = path.parent
        for _ in range(level - 1):
            folder = folder.parent
        stem = folder.joinpath(*module.split(".")) if module else folder
        spelled = "." * level + module
        for candidate in (stem.with_suffix(".py") if module else None, stem / "__init__.py"):
            if candidate is None:
                continue
            if root.holds_file(candidate, named=spelled, source=path, line=line):
                data = read_with_bases(candidate, chain, yaml_version, root).data
                return data if isinstance(data, dict) else {}
        raise ConfigError(
            f"base `{spelled}` imported here cannot be found (looked for {stem}.py)",
            location=Location(str(path), line, 1),
            hint="relative imports name config files next to this one; fix the path or add the file",
        )

    return import_base


def _apply_child(base: dict[str, Any], child: dict[str, Any], where: str) -> dict[str, Any]:
    result = copy.deepcopy(base)
    _write_into_bases(result, child, base, where)
    for key, value in child.items():
        if isinstance(key, str) and _BASE_ATTR.fullmatch(key):
            continue
        value = _substitute(value, base, where)
        result[key] = _merge(value, result[key], key, where) if key in result else _strip_delete(value)
    return result


def _write_into_bases(
    result: dict[str, Any], child: dict[str, Any], base: dict[str, Any], where: str
) -> None:
    """The child's writes into its bases (``_base_.optim_wrapper.type = 'AmpOptimWrapper'``), applied
    before its own keys merge."""
    for key, value in child.items():
        target = _BASE_ATTR.fullmatch(key) if isinstance(key, str) else None
        if target:
            _set_path(result, target.group(1)[1:].split("."), _substitute(value, base, where), where)


def _merge(child: Any, base: Any, key: Any, where: str) -> Any:
    if not _mergeable(child):
        return child
    if child.get(DELETE_KEY) is True:
        return _strip_delete(child)
    if not _mergeable(base):
        raise ConfigError(
            f"`{key}` is a mapping in the child config but a {type(base).__name__} in its base",
            location=Location(where),
            hint=f"add {DELETE_KEY}=True to replace the base value instead of merging into it",
        )
    merged = dict(base)
    for k, v in child.items():
        if k == DELETE_KEY:
            continue
        merged[k] = _merge(v, base[k], k, where) if k in base else _strip_delete(v)
    return merged


def _mergeable(value: Any) -> bool:
    return isinstance(value, dict) and not is_call_or_expr(value)


def _strip_delete(value: Any) -> Any:
    if _mergeable(value):
        return {k: _strip_delete(v) for k, v in value.items() if k != DELETE_KEY}
    return value


def _substitute(value: Any, base: dict[str, Any], where: str) -> Any:
    """Replace ``_base_.a.b`` references with the merged bases' value at ``a.b``."""
    if isinstance(value, Ref):
        return _base_value(value, base, where)
    if isinstance(value, dict):
        out = type(value)()  # a CallData stays a call
        out.update((k, _substitute(v, base, where)) for k, v in value.items())
        return out
    if isinstance(value, list):
        return [_substitute(v, base, where) for v in value]
    if isinstance(value, tuple):
        return tuple(_substitute(v, base, where) for v in value)
    return value


def _base_value(ref: Ref, base: dict[str, Any], where: str) -> Any:
    """A copy of what ``_base_.a.b`` names in the merged bases; any other reference as it is."""
    match = _BASE_ATTR.fullmatch(ref)
    if match:
        return copy.deepcopy(_get_path(base, match.group(1)[1:].split("."), where))
    return ref


def _get_path(tree: Any, parts: list[str], where: str) -> Any:
    node = tree
    for i, part in enumerate(parts):
        if not _mergeable(node) or part not in node:
            raise ConfigError(
                f"`_base_.{'.'.join(parts)}` does not exist in the bases (no `{'.'.join(parts[: i + 1])}`)",
                location=Location(where),
            )
        node = node[part]
    return node


def _set_path(tree: dict[str, Any], parts: list[str], value: Any, where: str) -> None:
    parent = _get_path(tree, parts[:-1], where) if len(parts) > 1 else tree
    if not _mergeable(parent):
        raise ConfigError(f"`_base_.{'.'.join(parts[:-1])}` is not a mapping", location=Location(where))
    parent[parts[-1]] = value
