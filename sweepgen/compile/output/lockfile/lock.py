"""``sweep.lock.json``: what ``render`` produced, so ``check``, ``run``, ``status`` and ``report`` can
trust it. One typed model (``Lock``, ``LockFile``) is the only reader; every consumer goes through it.

The lock stores the resolved base once and, per file, only what makes that variant different: the
values it sets (``set``) and the keys it deletes (``deleted``) relative to the base, the layer that
set each overridden path, its run name, its run directory (``run_dir``) and the sha256 of its bytes.
Resolved configs are rebuilt on read. ``inputs`` hashes everything a render read (spec, included
files, templates with their Jinja includes, the schema's source), so ``check`` can trust an
unchanged input set without re-rendering. Version 3 added ``run_dir`` to every entry whose run
directory render can tell, so ``run`` and ``report`` find a run's entry without reading every
generated file; version 1 (every resolved config in full) and version 2 are still read.

Keys are sorted and the file ends with a newline; each file entry sits on its own line so a
re-render reads as a git diff file by file. JSON has no NaN or Infinity: such floats are written as
``{"$float": "nan" | "inf" | "-inf"}`` and read back as floats. Each distinct ``layers`` mapping is
written once under ``layer_sets``; a file entry names its mapping by index.
"""

from __future__ import annotations

import errno
import json
import math
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import sweepgen
from sweepgen import paths
from sweepgen.compile.spec.sampling.digits import MAX_DIGITS
from sweepgen.errors import Location, UserError
from sweepgen.formats import jsonfloat
from sweepgen.fs import filenames, outtree, regular
from sweepgen.fs.safefs import kind_of

LOCK_NAME = filenames.LOCK
# `sweepgen run`'s record of how the sweep was started (sweepgen.run.core.sweepfile.sweep_state), beside the
# lock:
# run state, never generated output and never an orphan
RUN_STATE_NAME = filenames.RUN_STATE
# `run --until-decided`'s record of its rounds (sweepgen.run.sweep.decide): run state as well
DECIDE_STATE_NAME = filenames.DECIDE_STATE
RUN_STATE_NAMES = (RUN_STATE_NAME, DECIDE_STATE_NAME, filenames.DECIDE_LOCK)
LOCK_VERSION = 3
READABLE_VERSIONS = (1, 2, 3)
FLOAT_TAG = jsonfloat.FLOAT_TAG
MAX_LOCK_DEPTH = 200  # a deeper lock is damaged (configs are refused far earlier)


@dataclass
class LockFile:
    """One generated file: where it is, which variant it is, and what sweepgen wrote."""

    path: str  # relative to the sweep folder, posix
    variant: str
    run_name: str
    sha256: str
    layers: dict[str, str]
    set: dict[str, Any] = field(default_factory=dict)  # dotted path -> value, where it differs from the base
    deleted: list[str] = field(default_factory=list)  # dotted paths of the base this variant removes
    # where the run writes (compile.rundir): the spec's `run_dir`, else the file's output_dir; None
    # when render could not tell (then `run` reads it from the file) or the lock predates it
    run_dir: str | None = None
    full_config: dict[str, Any] | None = None  # a version-1 lock's config, stored whole


@dataclass
class Lock:
    version: int
    sweepgen_version: str
    sweep: str
    spec: str
    spec_sha256: str
    inputs: dict[str, str]  # project-relative path -> sha256 of what the render read
    varying: list[str]
    resources: dict[str, Any] | None
    base: dict[str, Any]
    files: list[LockFile]
    # for `report`: the spec's seed path and held-out split (`seed:`), sample's `digits`, and `trl`:
    # the TRL command a `schema: trl:X` names
    report: dict[str, Any] | None = None

    def config(self, entry: LockFile) -> dict[str, Any]:
        """The resolved config of ``entry``, rebuilt from the base (shares unchanged subtrees)."""
        if entry.full_config is not None:
            return entry.full_config
        config = self.base
        for dotted in entry.deleted:
            config = _without(config, dotted.split("."))
        for dotted in sorted(entry.set, key=lambda p: p.count(".")):
            config = _with(config, dotted.split("."), entry.set[dotted])
        return config

    def values(self, entry: LockFile) -> dict[str, Any]:
        """The variant's value at each varying path (absent ones left out)."""
        config = self.config(entry)
        return {p: v for p in self.varying if (v := paths.get(config, p)) is not paths.MISSING}


def _with(tree: dict[str, Any], parts: list[str], value: Any) -> dict[str, Any]:
    out = dict(tree)
    if len(parts) == 1:
        out[parts[0]] = value
        return out
    child = out.get(parts[0])
    out[parts[0]] = _with(child if isinstance(child, dict) else {}, parts[1:], value)
    return out


def _without(tree: dict[str, Any], parts: list[str]) -> dict[str, Any]:
    if parts[0] not in tree:
        return tree
    out = dict(tree)
    if len(parts) == 1:
        del out[parts[0]]
    elif isinstance(out[parts[0]], dict):
        out[parts[0]] = _without(out[parts[0]], parts[1:])
    return out


def entry_for(
    *,
    path: str,
    variant: str,
    run_name: str,
    sha256: str,
    layers: dict[str, str],
    config: dict[str, Any],
    differing: Iterable[str],
    run_dir: str | None = None,
) -> LockFile:
    """A file entry: the variant's values at the sorted paths where it differs from the base
    (``paths.diff_at``; a path it does not have is recorded as deleted)."""
    sets: dict[str, Any] = {}
    deleted: list[str] = []
    for dotted in differing:
        value = paths.get(config, dotted)
        if value is paths.MISSING:
            deleted.append(dotted)
        else:
            sets[dotted] = value
    return LockFile(
        path=path,
        variant=variant,
        run_name=run_name,
        sha256=sha256,
        layers=layers,
        set=sets,
        deleted=deleted,
        run_dir=run_dir,
    )


def layers_key(layers: dict[str, str]) -> frozenset[tuple[str, str]]:
    """The identity of a layer mapping: entries with equal keys share one ``layer_sets`` item."""
    return frozenset(layers.items())


def _entry_json(entry: LockFile, layer_set: int) -> dict[str, Any]:
    """``entry`` as its JSON object in the lock's ``files`` list (``layer_set``: the index of its
    layers in ``layer_sets``); ``_model`` reads it back. Defaults are left out."""
    obj: dict[str, Any] = {
        "path": entry.path,
        "variant": entry.variant,
        "sha256": entry.sha256,
        "layers": layer_set,
    }
    if entry.run_name != entry.variant:
        obj["run_name"] = entry.run_name  # default: the variant name
    if entry.set:
        obj["set"] = entry.set
    if entry.deleted:
        obj["deleted"] = entry.deleted
    if entry.run_dir is not None:
        obj["run_dir"] = entry.run_dir
    return obj


def entry_line(entry: LockFile, layer_set: int) -> str:
    """``entry``'s line in the lock's ``files`` list, as ``dumps`` writes it (no indent, no comma)."""
    return _CachedJson().once(_entry_json(entry, layer_set))


def build(
    *,
    sweep: str,
    spec: str,
    spec_sha256: str,
    inputs: dict[str, str],
    varying: list[str],
    base: dict[str, Any],
    files: Iterable[LockFile],
    resources: dict[str, Any] | None,
    report: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """The lock's JSON document (``dumps`` writes it). ``files``: each file's entry (``entry_for``),
    consumed one at a time."""
    # Variants mostly share one of a few layer mappings (every grid point has the same one): each
    # distinct mapping is written once, and a file entry names it by its index.
    layer_sets: list[dict[str, str]] = []
    index: dict[frozenset[tuple[str, str]], int] = {}
    by_id: dict[int, tuple[dict[str, str], int]] = {}  # entries often share the mapping object too
    shared = []
    for entry in files:
        hit = by_id.get(id(entry.layers))
        if hit is None or hit[0] is not entry.layers:
            key = layers_key(entry.layers)
            if key not in index:
                index[key] = len(layer_sets)
                layer_sets.append(entry.layers)
            hit = by_id[id(entry.layers)] = (entry.layers, index[key])
        shared.append(_entry_json(entry, hit[1]))
    return {
        "lock_version": LOCK_VERSION,
        "sweepgen_version": sweepgen.__version__,
        "sweep": sweep,
        "spec": spec,
        "spec_sha256": spec_sha256,
        "inputs": dict(sorted(inputs.items())),
        "varying": varying,
        "resources": resources,
        "base": base,
        "layer_sets": layer_sets,
        "files": shared,
        **({"report": report} if report else {}),
    }


class _CachedJson:
    """``json.dumps(value, sort_keys=True, ensure_ascii=False)``, byte for byte, with mappings
    cached by identity (configs share unchanged subtrees, so each is encoded once), non-finite
    floats tagged (JSON has no NaN or Infinity)."""

    def __init__(self) -> None:
        self._cache: dict[int, tuple[Any, str]] = {}
        self._encode = json.JSONEncoder(sort_keys=True, ensure_ascii=False, allow_nan=False).encode

    def __call__(self, value: Any) -> str:
        if isinstance(value, float) and not math.isfinite(value):
            return self._encode(jsonfloat.tag(value))
        if isinstance(value, list):
            return "[" + ", ".join(self(v) for v in value) + "]"
        if not isinstance(value, dict):
            return self._encode(value)
        hit = self._cache.get(id(value))
        if hit is not None:
            return hit[1]
        text = self.once(value)
        self._cache[id(value)] = (value, text)
        return text

    def once(self, value: dict[str, Any]) -> str:
        """A mapping met once (a file's entry), encoded without keeping it: a cache entry for each
        of 100,000 files would hold the whole lock text twice."""
        if list(value) == [FLOAT_TAG]:
            raise UserError(
                f"a config mapping whose only key is {FLOAT_TAG!r} cannot be locked (the lock uses it "
                "for NaN and Infinity)",
                hint=f"rename the key {FLOAT_TAG!r}",
            )
        try:
            return self._encode(value)  # the C encoder, when nothing inside needs a tag
        except ValueError:
            return "{" + ", ".join(f"{self._encode(k)}: {self(value[k])}" for k in sorted(value)) + "}"


def dumps(lock: dict[str, Any]) -> str:
    encode = _CachedJson()
    keys = sorted(lock)
    lines = ["{"]
    for i, key in enumerate(keys):
        comma = "," if i < len(keys) - 1 else ""
        if key == "files":
            entries = lock["files"]
            lines.append('  "files": [')
            for j, entry in enumerate(entries):
                sep = "," if j < len(entries) - 1 else ""
                lines.append("    " + encode.once(entry) + sep)
            lines.append("  ]" + comma)
        else:
            lines.append(f"  {json.dumps(key)}: {encode(lock[key])}{comma}")
    lines.append("}\n")
    return "\n".join(lines)  # one copy of a text that may be tens of MB


def read(sweep_dir: str, shown_dir: str) -> Lock | None:
    """The lock in ``sweep_dir``, or None when there is none. A damaged lock is an error, and so is
    a lock that is not a regular file: a link is never followed and a FIFO never blocks (opened
    ``O_NOFOLLOW | O_NONBLOCK``, then ``fstat``: ``regular.read``)."""
    path = os.path.join(sweep_dir, LOCK_NAME)
    shown = f"{shown_dir}/{LOCK_NAME}"
    most = outtree.MAX_READ_BYTES  # a lock takes about 500 bytes a variant: two million
    try:
        raw = regular.read(path, limit=most, follow=False)
    except regular.NotRead as err:
        if err.why == "missing" or err.errno == errno.ENOTDIR:
            return None
        if err.why == "too large":
            raise _damaged(
                shown, f"{err.size:,} bytes, more than sweepgen reads of a lock ({most:,})"
            ) from None
        if err.why == "not regular":
            raise _unsafe(shown, kind_of(err.mode)) from None
        raise _unsafe(shown, "symlink" if err.why == "link" else err.strerror or str(err)) from None
    return parse(raw, shown)


def _unsafe(shown: str, kind: str) -> UserError:
    return UserError(
        f"{shown} is a {kind}, not a lock file",
        location=Location(shown),
        hint="move it away; `sweepgen render` writes the lock",
    )


def _damaged(shown: str, what: str, line: int = 0, col: int = 0) -> UserError:
    return UserError(
        f"lock file is damaged: {what}",
        location=Location(shown, line, col),
        hint="it is written by `sweepgen render`: restore it from git, or render the spec again",
    )


def parse(raw: bytes, shown: str) -> Lock:
    """A lock file's bytes as the typed model; anything malformed is a UserError naming the file."""
    data = _json_of(raw, shown)
    if paths.too_deep(data, MAX_LOCK_DEPTH):
        raise _damaged(shown, f"nested more than {MAX_LOCK_DEPTH} levels deep")
    if not isinstance(data, dict):
        raise _damaged(shown, "not a JSON object")
    version = data.get("lock_version")
    if type(version) is not int or version not in READABLE_VERSIONS:
        raise UserError(
            f"lock file has an unknown format (lock_version {version!r})",
            location=Location(shown),
            hint="restore it from git, or render with a matching sweepgen",
        )
    data = jsonfloat.untagged(data)
    try:
        return _model(data, version)
    except (KeyError, IndexError, TypeError, ValueError, AttributeError) as err:
        raise _damaged(shown, f"unexpected content ({type(err).__name__}: {err})") from None


def _json_of(raw: bytes, shown: str) -> Any:
    """A lock file's bytes as decoded JSON; bytes that are not UTF-8 JSON are a UserError."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as err:
        raise _damaged(shown, f"not UTF-8 text (byte {err.start})") from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as err:
        raise _damaged(shown, f"not valid JSON: {err.msg}", err.lineno, err.colno) from None
    except RecursionError:
        raise _damaged(shown, "nested too deeply") from None
    except ValueError as err:  # an integer past Python's 4,300-digit conversion limit
        raise _damaged(shown, str(err).split(";")[0]) from None


def _str(value: Any) -> str:
    if not isinstance(value, str):
        raise TypeError(f"expected a string, got {type(value).__name__}")
    return value


def _mapping(value: Any) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise TypeError(f"expected an object, got {type(value).__name__}")
    return value


def _optional_mapping(value: Any) -> dict[str, Any] | None:
    """An optional object of the lock: None where absent (or null)."""
    return None if value is None else _mapping(value)


def _report_block(value: Any) -> dict[str, Any] | None:
    """The lock's ``report`` entry (seed path, tune and test seeds, ``digits``, ``names``, ``trl``: the
    TRL command of a ``schema: trl:X`` spec), each of
    the kind the spec gives it: an edited lock's `digits: "x"` or `tune: 5` ended `report` in a
    traceback, and `digits: 100000000` wrote every number of the page with as many."""
    block = _optional_mapping(value)
    if block is None:
        return None
    digits = block.get("digits", 3)
    if type(digits) is not int or not 1 <= digits <= MAX_DIGITS:
        raise TypeError(f"`report.digits` is not a number of digits from 1 to {MAX_DIGITS}")
    for key in ("seed", "names"):
        if key in block:
            _str(block[key])
    _trl_command(block)
    for key in ("tune", "test"):
        if block.get(key) is not None and not isinstance(block[key], list):
            raise TypeError(f"`report.{key}` is not a list of seeds")
    return block


def _trl_command(block: dict[str, Any]) -> None:
    """``report.trl``, where there: a TRL command's name (``sft``), which `report` reads as data."""
    if "trl" in block and not _str(block["trl"]).isidentifier():
        raise TypeError("`report.trl` is not a TRL command's name")


def _file_entry(raw: Any, layer_sets: list[Any], version: int) -> LockFile:
    """One entry of ``files``, its layer mapping looked up in ``layer_sets`` (version 3)."""
    entry = _mapping(raw)
    layers = entry.get("layers", {})
    if type(layers) is int:
        layers = layer_sets[layers]  # an IndexError is a damaged lock
    variant = _str(entry.get("variant", entry.get("path")))
    deleted = entry.get("deleted", [])
    if not isinstance(deleted, list) or not all(isinstance(d, str) for d in deleted):
        raise TypeError("`deleted` is not a list of paths")
    return LockFile(
        path=_str(entry["path"]),
        variant=variant,
        run_name=_str(entry.get("run_name", variant)),
        sha256=_str(entry["sha256"]),
        layers=_mapping(layers),
        set=_mapping(entry.get("set", {})),
        deleted=deleted,
        run_dir=_str(entry["run_dir"]) if "run_dir" in entry else None,
        full_config=_mapping(entry["config"]) if version == 1 else None,
    )


def _model(data: Mapping[str, Any], version: int) -> Lock:
    files = data["files"]
    if not isinstance(files, list):
        raise TypeError("`files` is not a list")
    layer_sets = data.get("layer_sets", [])
    if not isinstance(layer_sets, list) or not all(isinstance(x, dict) for x in layer_sets):
        raise TypeError("`layer_sets` is not a list of objects")
    entries = [_file_entry(raw, layer_sets, version) for raw in files]
    inputs = _mapping(data.get("inputs", {}))
    if version == 1:
        inputs = {
            **_mapping(data.get("templates", {})),
            _str(data.get("spec", "")): _str(data.get("spec_sha256", "")),
        }
    return Lock(
        version=version,
        sweepgen_version=_str(data.get("sweepgen_version", "")),
        sweep=_str(data.get("sweep", "")),
        spec=_str(data.get("spec", "")),
        spec_sha256=_str(data.get("spec_sha256", "")),
        inputs={_str(k): _str(v) for k, v in inputs.items()},
        varying=[_str(p) for p in data.get("varying", [])],
        resources=_optional_mapping(data.get("resources")),
        base=_mapping(data.get("base", {})),
        files=entries,
        report=_report_block(data.get("report")),
    )
