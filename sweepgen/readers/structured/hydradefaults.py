"""Follow a Hydra or NeMo-RL ``defaults:`` list under ``diff --resolve-bases``, as they compose.

* NeMo-RL: ``defaults: grpo_math_1B.yaml`` (or a list of such files): each file, relative to the
  config that names it, is merged first; the config's own keys win.
* Hydra, as 1.3 composes (``tests/readers/test_hydra_reference.py`` holds this reader to
  hydra-core's own ``compose``): ``- base`` merges ``base.yaml`` in the config's package;
  ``- model: llama`` merges ``model/llama.yaml`` at ``model`` below the package of the config
  that lists it. The package is the defaults list's ``group@pkg`` when given (relative to that
  config's package; ``_global_`` the root, ``_here_`` the config's own), else the file's
  ``# @package`` header (absolute), else the group's path; ``/group`` is looked up from the primary
  config's folder, other groups from the folder of the config that lists them; ``optional``
  entries may be missing, ``null`` selects nothing; ``override group: option`` changes the option
  where the group is selected (an ancestor's override wins; one that selects nothing is an error);
  ``_self_`` places the config's own keys (last when not listed). Hydra's own groups
  (``override hydra/launcher: submitit_slurm``) come from its
  plugins: kept as data under ``hydra.@defaults``, never looked up.

Merging is OmegaConf's: mappings merge key by key, anything else is replaced. Interpolations are
resolved after composing (``sweepgen.readers.structured.omegayaml``). A file that cannot be found is an error
naming the entry and where it was looked for.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from sweepgen.errors import ConfigError, Location
from sweepgen.readers.basepath import Project
from sweepgen.readers.model import ReadResult
from sweepgen.readers.structured.formats import header_package
from sweepgen.readers.structured.omegayaml import resolve_interpolations


def compose(path: Path, read: Any, project: Project | None = None) -> ReadResult:
    """The config in ``path`` with its ``defaults:`` composed in; ``read(path)`` reads one file raw.
    ``project``: the folder every file the list names must stay in, and its read budget
    (``readers.basepath``)."""
    composer = _Composer(path.parent, read, project or Project(path))
    # the primary config's own `# @package` header places it, and with it every package its list
    # names below its own (Hydra 1.3: `# @package foo` composes to `{foo: {...}}`)
    result, nodes = composer.file(path, (), _header_package(path) or "", "")
    unused = sorted(set(composer.overrides) - composer.used)
    if unused:
        raise ConfigError(
            f"`override {unused[0]}` matches no group in the defaults list",
            location=Location(str(path), result.lines.get(("defaults",), 0)),
            hint="Hydra refuses an override of a group the defaults list does not select",
        )
    merged: Any = {}
    for package, data, source in nodes:
        merged = _merge(merged, _place(data, package), source, ())
    result.data = resolve_interpolations(merged, str(path))
    result.warnings = list(dict.fromkeys(result.warnings))  # a file read twice warns once
    return result


class _Composer:
    """Hydra 1.3's defaults tree, flattened in order: each config's entries, then its own keys
    where ``_self_`` stands (last when absent); each node placed at its absolute package."""

    def __init__(self, root: Path, read: Any, project: Project) -> None:
        self.root = root
        self.project = project
        self.read = read
        # override key (the group, `@package` where it lands elsewhere) -> option; an ancestor's wins
        self.overrides: dict[str, Any] = {}
        self.used: set[str] = set()
        self.choices: dict[str, list[Any]] = {}  # group[@package] -> the options selected

    def file(
        self, path: Path, chain: tuple[str, ...], package: str, group: str
    ) -> tuple[ReadResult, list[tuple[str, Any, str]]]:
        """(the file read, the (package, data, file) nodes it contributes in order)."""
        key = str(path.resolve())
        _refuse_cycle(key, chain, path)
        self.project.spend(path)
        result: ReadResult = self.read(path)
        data = {} if result.data is None else result.data  # an empty file is an empty config to Hydra
        if not isinstance(data, dict) or "defaults" not in data:
            return result, [(package, data, str(path))]
        own = {k: v for k, v in data.items() if k != "defaults"}
        line = result.lines.get(("defaults",), 0)
        entries = self.entries(data["defaults"], group, package, path, line)
        nodes: list[tuple[str, Any, str]] = []
        for entry in entries:
            if entry == "_self_":
                nodes.append((package, own, str(path)))
            elif _override(entry, group, package) is None:  # an override was noted by `entries`
                nodes.extend(self.included(entry, path, line, (*chain, key), package, group, result))
        return result, nodes

    def included(
        self,
        entry: Any,
        path: Path,
        line: int,
        chain: tuple[str, ...],
        package: str,
        group: str,
        result: ReadResult,
    ) -> list[tuple[str, Any, str]]:
        """The nodes of the files one entry names, each read in turn (an optional one may be
        missing); their warnings join those of the file that lists them."""
        hydra = _hydra_entry(entry)
        if hydra is not None:
            # Hydra's own groups (launcher, sweeper, logging) come from its plugins, not from the
            # config folder: kept as data under `hydra`, never looked up
            return [("", {"hydra": {"@defaults": hydra}}, str(path))]
        nodes: list[tuple[str, Any, str]] = []
        for child, target, optional, child_group in self.targets(entry, path, line, package, group):
            if not self.project.holds_file(target, named=_show(entry).strip("`"), source=path, line=line):
                if optional:
                    continue
                raise ConfigError(
                    f"`defaults:` entry {_show(entry)} not found (looked for {target})",
                    location=Location(str(path), line),
                    hint="group options live in GROUP/OPTION.yaml next to the config; "
                    "diff without --resolve-bases to compare the lists as written",
                )
            base, more = self.file(target, chain, child, child_group)
            result.warnings.extend(base.warnings)
            nodes.extend(more)
        return nodes

    def entries(self, listed: Any, group: str, package: str, path: Path, line: int) -> list[Any]:
        """The list's entries with ``_self_`` in place; its overrides noted (an ancestor's win).
        Hydra wants the overrides at the end of the list (``_self_`` may follow them)."""
        entries = listed if isinstance(listed, list) else [listed]
        last_override = None
        for entry in entries:
            if _is_override(entry):
                last_override = entry
            elif last_override is not None and entry != "_self_":
                raise ConfigError(
                    f"`defaults:` entry {_show(last_override)} comes before {_show(entry)}",
                    location=Location(str(path), line),
                    hint="Hydra refuses it: overrides must be at the end of the defaults list",
                )
            override = _override(entry, group, package)
            if override is not None:
                self.overrides.setdefault(*override)
        return entries if "_self_" in entries else [*entries, "_self_"]

    def targets(
        self, entry: Any, path: Path, line: int, parent: str, group_dir: str
    ) -> list[tuple[str, Path, bool, str]]:
        """(package, file, optional, group folder) for one entry of the list."""
        if isinstance(entry, str):
            target = self.where(entry, path)
            return [(_header_package(target) or parent, target, False, group_dir)]
        if not (isinstance(entry, dict) and len(entry) == 1):
            raise ConfigError(
                f"cannot read the `defaults:` entry {entry!r}",
                location=Location(str(path), line),
                hint="entries are `name`, `group: option` or `_self_`",
            )
        ((spec, options),) = entry.items()
        words = str(spec).split()
        optional = "optional" in words[:-1]
        group, at, explicit = words[-1].partition("@")
        absolute = _absolute_group(group, group_dir)
        key = _choice_key(absolute, at, explicit, parent, group)
        chosen = self.chosen(key, options)
        self.choose(key, chosen, path, line)
        out = []
        for option in chosen:
            target = self.where(f"{group}/{option}", path)
            out.append((_option_package(at, explicit, parent, group, target), target, optional, absolute))
        return out

    def choose(self, key: str, chosen: list[Any], path: Path, line: int) -> None:
        """Hydra refuses one group (at one package) selected twice, with other options or not."""
        if key in self.choices:
            earlier = self.choices[key]
            raise ConfigError(
                f"`{key}` selected twice in the defaults: {_listed(earlier)} and {_listed(chosen)}",
                location=Location(str(path), line),
                hint=f"Hydra refuses it; to change the option use `override {key}: ...`",
            )
        self.choices[key] = chosen

    def chosen(self, key: str, listed: Any) -> list[Any]:
        """The options a group entry selects: an ancestor's override wins (and counts as used);
        ``null`` selects none."""
        if key in self.overrides:
            self.used.add(key)
            listed = self.overrides[key]
        if listed is None:
            return []
        return listed if isinstance(listed, list) else [listed]

    def where(self, name: str, path: Path) -> Path:
        base = self.root if name.startswith("/") else path.parent
        target = base / name.lstrip("/")
        target = target if target.suffix in (".yaml", ".yml") else target.with_name(target.name + ".yaml")
        return self.project.inside(target, named=name, source=path)


def _is_override(entry: Any) -> bool:
    return isinstance(entry, dict) and len(entry) == 1 and "override" in str(next(iter(entry))).split()[:-1]


def _override(entry: Any, group_dir: str, parent: str) -> tuple[str, Any] | None:
    """``override group[@pkg]: option`` as (override key, option): the key of the choice it
    changes, as Hydra names it (``group@pkg`` where the group lands elsewhere than its own path:
    ``override model`` never matches ``model@p``); None for any other entry."""
    if not _is_override(entry) or _hydra_entry(entry) is not None:
        return None
    ((spec, option),) = entry.items()
    group, at, explicit = str(spec).split()[-1].partition("@")
    return _choice_key(_absolute_group(group, group_dir), at, explicit, parent, group), option


def _refuse_cycle(key: str, chain: tuple[str, ...], path: Path) -> None:
    """A file that (through its defaults) includes itself: Hydra refuses it, naming the loop."""
    if key in chain:
        raise ConfigError(
            f"`defaults:` cycle: {' -> '.join([*chain[chain.index(key) :], key])}",
            location=Location(str(path)),
        )


def _option_package(at: str, explicit: str, parent: str, group: str, target: Path) -> str:
    """Where a group's option lands: the defaults list's ``@package`` wins over the file's header
    (Hydra 1.1+), which wins over the group's own path below the parent."""
    if at:
        return _relative_package(explicit, parent)
    return _header_package(target) or _join(parent, group.lstrip("/").replace("/", "."))


def _absolute_group(group: str, group_dir: str) -> str:
    return group.lstrip("/") if group.startswith("/") or not group_dir else f"{group_dir}/{group}"


def _relative_package(package: str, parent: str) -> str:
    """An entry's ``@package``: ``_global_`` is the root, ``_here_`` the parent's, else below it."""
    if package == "_global_" or package.startswith("_global_."):
        return package[len("_global_.") :] if "." in package else ""
    if package == "_here_":
        return parent
    return _join(parent, package)


def _join(parent: str, child: str) -> str:
    return f"{parent}.{child}" if parent and child else parent or child


def _hydra_entry(entry: Any) -> dict[str, Any] | None:
    """``{group: option}`` for an entry that selects one of Hydra's own groups (``hydra/launcher``)."""
    if not (isinstance(entry, dict) and len(entry) == 1):
        return None
    ((spec, option),) = entry.items()
    group = str(spec).split()[-1].lstrip("/")
    return {group: option} if group == "hydra" or group.startswith("hydra/") else None


def _header_package(path: Path) -> str | None:
    if not path.is_file():  # missing (said where it is read), or a FIFO that would block the read
        return None
    try:  # the head alone: the whole file is read (bounded) where it is composed
        with path.open("rb") as handle:
            head = handle.read(4096).decode("utf-8", errors="replace")
    except OSError:
        return None
    return header_package(head)


def _place(data: Any, package: str) -> Any:
    if package in ("", "_global_"):
        return data
    for key in reversed(package.removeprefix("_global_.").split(".")):
        data = {key: data}
    return data


_MISSING = "???"  # OmegaConf's missing value


def _merge(base: Any, update: Any, source: str, at: tuple[Any, ...]) -> Any:
    """OmegaConf's merge: mappings key by key (later wins), anything else replaced; a mapping and a
    list never merge (OmegaConf raises, Hydra stops composing): an error naming the file and key."""
    if isinstance(base, dict) and isinstance(update, dict):
        out = dict(base)
        for key, value in update.items():
            if key in out and isinstance(value, str) and value == _MISSING:
                continue  # OmegaConf: a `???` merged onto a key that has a value never replaces it
            out[key] = _merge(out[key], value, source, (*at, key)) if key in out else value
        return out
    if isinstance(base, (dict, list)) and isinstance(update, (dict, list)) and type(base) is not type(update):
        kinds = {dict: "a mapping", list: "a list"}
        raise ConfigError(
            f"`{'.'.join(map(str, at)) or '(the root)'}`: {source} merges {kinds[type(update)]} onto "
            f"{kinds[type(base)]} (Hydra refuses: Cannot merge DictConfig with ListConfig)",
            location=Location(source),
            hint="give the key the same kind in every file of the defaults list",
        )
    return update


def _choice_key(absolute: str, at: str, explicit: str, parent: str, group: str) -> str:
    """Hydra's key for a group's choice: the group, with the package it lands at (the file's
    header aside) where that is not the group's own path."""
    final = _relative_package(explicit, parent) if at else _join(parent, group.lstrip("/").replace("/", "."))
    final = _relative_package(final, "") if final.startswith("_global_") else final  # a header's
    return absolute if final == absolute.replace("/", ".") else f"{absolute}@{final or '_global_'}"


def _listed(options: list[Any]) -> str:
    return ", ".join(f"`{option}`" for option in options) or "`null`"


def _show(entry: Any) -> str:
    if isinstance(entry, dict) and len(entry) == 1:
        ((key, value),) = entry.items()
        return f"`{key}: {value}`"
    return f"`{entry}`"
