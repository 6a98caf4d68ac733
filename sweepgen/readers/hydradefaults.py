"""Follow a Hydra or NeMo-RL ``defaults:`` list under ``diff --resolve-bases``, as they compose.

* NeMo-RL: ``defaults: grpo_math_1B.yaml`` (or a list of such files): each file, relative to the
  config that names it, is merged first; the config's own keys win.
* Hydra: ``- base`` merges ``base.yaml`` at the root; ``- model: llama`` merges
  ``model/llama.yaml`` under ``model`` (``model@pkg: x`` under ``pkg``; ``# @package _global_`` or
  ``@_global_`` at the root); ``/group`` is looked up from the primary config's folder, other groups
  from the folder of the config that lists them; ``optional`` entries may be missing, ``null``
  selects nothing, ``override`` replaces an option; ``_self_`` places the config's own keys (last
  when not listed). Hydra's own groups (``override hydra/launcher: submitit_slurm``) come from its
  plugins: kept as data under ``hydra.@defaults``, never looked up.

Merging is OmegaConf's: mappings merge key by key, anything else is replaced. Interpolations are
resolved after composing (``sweepgen.readers.omegayaml``). A file that cannot be found is an error
naming the entry and where it was looked for.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from sweepgen.errors import ConfigError, Location
from sweepgen.readers.model import ReadResult
from sweepgen.readers.omegayaml import resolve_interpolations

_PACKAGE = re.compile(r"^#\s*@package\s+(\S+)", re.M)


def compose(path: Path, read: Any) -> ReadResult:
    """The config in ``path`` with its ``defaults:`` composed in; ``read(path)`` reads one file raw."""
    result = _Composer(path.parent, read).file(path, ())
    result.data = resolve_interpolations(result.data, str(path))
    result.warnings = list(dict.fromkeys(result.warnings))  # a file read twice warns once
    return result


class _Composer:
    def __init__(self, root: Path, read: Any) -> None:
        self.root = root
        self.read = read

    def file(self, path: Path, chain: tuple[str, ...]) -> ReadResult:
        key = str(path.resolve())
        if key in chain:
            raise ConfigError(
                f"`defaults:` cycle: {' -> '.join([*chain[chain.index(key) :], key])}",
                location=Location(str(path)),
            )
        result: ReadResult = self.read(path)
        data = result.data
        if not isinstance(data, dict) or "defaults" not in data:
            return result
        own = {k: v for k, v in data.items() if k != "defaults"}
        line = result.lines.get(("defaults",), 0)
        entries = data["defaults"] if isinstance(data["defaults"], list) else [data["defaults"]]
        if "_self_" not in entries:
            entries = [*entries, "_self_"]
        merged: Any = {}
        for entry in entries:
            if entry == "_self_":
                merged = _merge(merged, own)
                continue
            hydra = _hydra_entry(entry)
            if hydra is not None:
                # Hydra's own groups (launcher, sweeper, logging) come from its plugins, not from the
                # config folder: kept as data under `hydra`, never looked up
                merged = _merge(merged, {"hydra": {"@defaults": hydra}})
                continue
            for package, target, optional in self.targets(entry, path, line):
                if not target.is_file():
                    if optional:
                        continue
                    raise ConfigError(
                        f"`defaults:` entry {_show(entry)} not found (looked for {target})",
                        location=Location(str(path), line),
                        hint="group options live in GROUP/OPTION.yaml next to the config; "
                        "diff without --resolve-bases to compare the lists as written",
                    )
                base = self.file(target, (*chain, key))
                result.warnings.extend(base.warnings)
                package = _header_package(target) or package
                merged = _merge(merged, _place(base.data, package))
        result.data = merged
        return result

    def targets(self, entry: Any, path: Path, line: int) -> list[tuple[str, Path, bool]]:
        """(package, file, optional) for one entry of the list."""
        if isinstance(entry, str):
            return [("", self.where(entry, path), False)]
        if not (isinstance(entry, dict) and len(entry) == 1):
            raise ConfigError(
                f"cannot read the `defaults:` entry {entry!r}",
                location=Location(str(path), line),
                hint="entries are `name`, `group: option` or `_self_`",
            )
        ((spec, options),) = entry.items()
        words = str(spec).split()
        optional = "optional" in words[:-1]
        group, _, package = words[-1].partition("@")
        if options is None:
            return []
        chosen = options if isinstance(options, list) else [options]
        package = package or group.lstrip("/").replace("/", ".")
        return [(package, self.where(f"{group}/{option}", path), optional) for option in chosen]

    def where(self, name: str, path: Path) -> Path:
        base = self.root if name.startswith("/") else path.parent
        target = base / name.lstrip("/")
        return target if target.suffix in (".yaml", ".yml") else target.with_name(target.name + ".yaml")


def _hydra_entry(entry: Any) -> dict[str, Any] | None:
    """``{group: option}`` for an entry that selects one of Hydra's own groups (``hydra/launcher``)."""
    if not (isinstance(entry, dict) and len(entry) == 1):
        return None
    ((spec, option),) = entry.items()
    group = str(spec).split()[-1].lstrip("/")
    return {group: option} if group == "hydra" or group.startswith("hydra/") else None


def _header_package(path: Path) -> str | None:
    try:
        head = path.read_text(encoding="utf-8", errors="replace")[:4096]
    except OSError:
        return None
    found = _PACKAGE.search(head)
    return None if found is None else found.group(1)


def _place(data: Any, package: str) -> Any:
    if package in ("", "_global_"):
        return data
    for key in reversed(package.replace("_global_.", "").split(".")):
        data = {key: data}
    return data


def _merge(base: Any, update: Any) -> Any:
    """OmegaConf's merge: mappings key by key (later wins), anything else replaced."""
    if isinstance(base, dict) and isinstance(update, dict):
        out = dict(base)
        for key, value in update.items():
            out[key] = _merge(out[key], value) if key in out else value
        return out
    return update


def _show(entry: Any) -> str:
    if isinstance(entry, dict) and len(entry) == 1:
        ((key, value),) = entry.items()
        return f"`{key}: {value}`"
    return f"`{entry}`"
