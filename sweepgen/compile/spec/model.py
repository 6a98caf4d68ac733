"""The spec file format (version 1): pydantic models with ``extra="forbid"``, and loading a spec file.

Pydantic checks shapes and types; its errors are mapped back to ``file:line:col`` through the YAML
marks, so a typo in a key or a string where a number belongs points at the exact spot. Loading also
resolves the base (inline, or include files merged in order, then ``set:``) once for the whole sweep.
"""

from __future__ import annotations

import difflib
import os
import re
from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, StrictStr, field_validator
from pydantic import ValidationError as PydanticValidationError

from sweepgen import globs, paths, settings
from sweepgen.compile.spec import limits as spec_limits
from sweepgen.compile.spec import overrides, project
from sweepgen.compile.spec.limits import Limits
from sweepgen.compile.spec.request import resources as spec_resources
from sweepgen.compile.spec.request.resources import Resources
from sweepgen.compile.spec.sampling.sample import SampleBlock
from sweepgen.compile.spec.sampling.search_block import SearchBlock
from sweepgen.compile.spec.seeds import SeedBlock
from sweepgen.errors import Location, SpecError
from sweepgen.formats import yamlio

# Names that become file/folder names (sweep, variant, step, grid label, run name, output component).
# Always use ``SAFE_NAME.fullmatch``: ``$`` in ``match`` would accept a trailing newline.
SAFE_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]*")
RESERVED_TOP_LEVEL = ("config", "variant", "sweep")  # template variables a config key would shadow
# Windows refuses these as a file's stem in any case and with any extension (``nul.yaml``, ``Con``),
# so a checkout of such a generated file fails there.
_WINDOWS_RESERVED = re.compile(r"(?:con|prn|aux|nul|com[0-9¹²³]|lpt[0-9¹²³])(?:\..*)?", re.IGNORECASE)


def unportable(name: str) -> str | None:
    """Why a safe file or folder name still breaks a checkout on Windows (``is ...``), or None."""
    if _WINDOWS_RESERVED.fullmatch(name):
        return "is a reserved device name on Windows"
    if name.endswith("."):
        return "ends with `.`, which Windows drops"
    if len(name.encode("utf-8")) > MAX_NAME_BYTES:
        return f"is longer than {MAX_NAME_BYTES} bytes (file names stop at 255, temp-file suffixes included)"
    return None


def name_problem(name: str) -> str | None:
    """Why ``name`` cannot be a file or folder name on any OS a checkout may land on, or None;
    written to follow the quoted name: ``f"{name!r} {problem}"``."""
    if not SAFE_NAME.fullmatch(name):
        return "is not filesystem-safe"
    return unportable(name)


MAX_NAME_BYTES = 200
NAME_HINT = (
    "use letters, digits, `_`, `-` and `.` only, at most 200 bytes; not CON, NUL, COM1... "
    "(Windows device names)"
)

_STRICT = ConfigDict(extra="forbid", strict=True, populate_by_name=False)


class Constraint(BaseModel):
    """A Jinja expression that must be true for every resolved variant."""

    model_config = _STRICT
    expr: StrictStr = Field(description="sandboxed Jinja expression over the resolved config")
    message: StrictStr = Field(description="what the rule protects, shown when it fails")


class AblationStep(BaseModel):
    """One rung of an ablation ladder; each step keeps the ``set`` of every step before it."""

    model_config = _STRICT
    name: StrictStr = Field(description="step name, part of the variant name")
    set: dict[str, Any] = Field(default_factory=dict, description="overrides added at this step")


class ZipGroup(BaseModel):
    """Axes stepped together: the i-th values of every axis form the group's i-th point."""

    model_config = _STRICT
    name: StrictStr = Field(description="group name, used in messages")
    axes: dict[StrictStr, list[Any]] = Field(
        min_length=1, description="dotted path -> values; every axis has the same number of values"
    )
    labels: list[StrictStr] | None = Field(
        default=None,
        description="one name part per point; default: each axis' last path component and value",
    )


class SpecModel(BaseModel):
    """A sweep spec, format version 1."""

    model_config = ConfigDict(extra="forbid", strict=True, title="sweepgen spec")
    sweepgen: Literal[1] = Field(description="format version")
    name: StrictStr = Field(description="sweep name; output folder generated/<name>/")
    description: StrictStr = Field(default="", description="what the sweep compares, for people")
    template: StrictStr = Field(description="Jinja template, relative to the spec file")
    output: StrictStr = Field(description="output path template, relative to generated/<name>/")
    names: Literal["readable", "legacy"] = Field(
        default="legacy",
        description="how variants are named: readable (`beta0.04-seed1`: `-` between axes, `_` between "
        "a key and a text value) or legacy (`beta0.04_seed1`, the default: existing sweeps keep their "
        "run names); `sweepgen init` writes readable",
    )
    run_name: StrictStr | None = Field(default=None, description="run name template")
    run_dir: StrictStr | None = Field(
        default=None,
        description="run directory template for `sweepgen run`/`report` (default: the config's output_dir)",
    )
    derived: dict[str, StrictStr] | None = Field(
        default=None, description="override key -> template evaluated per variant (after run_name)"
    )
    base: dict[str, Any] = Field(description="inline config, or {include: [files], set: {...}}")
    variants: dict[str, dict[str, Any] | None] | None = Field(
        default=None,
        description="named variants: name -> overrides on the base (`a.b: v` replaces, a nested "
        "mapping merges, `+a.b: v` adds a key, `~a.b: null` deletes one)",
    )
    grid: dict[str, list[Any] | dict[str, Any]] | None = Field(
        default=None,
        description="cartesian axes crossed with the variants: dotted path -> [values], or "
        "{label: value} to name the values",
    )
    zip: dict[str, list[Any]] | list[ZipGroup] | None = Field(
        default=None,
        description="axes stepped together: one group as {path: [values], ...} of equal lengths, or "
        "several named groups [{name, axes, labels}], crossed with each other",
    )
    sample: SampleBlock | None = Field(
        default=None, description="seeded random or quasi-random search, crossed with the variants"
    )
    search: SearchBlock | None = Field(
        default=None,
        description="adaptive search (Optuna ask/tell) that `sweepgen run` drives; see docs/SEARCH.md",
    )
    ablation: list[AblationStep] | None = Field(
        default=None, description="ordered ladder; each step keeps the `set` of every step before it"
    )
    allow: list[StrictStr] = Field(
        default_factory=list,
        description="leaf path globs that may differ between variants (`*` one segment, `**` any depth)",
    )
    constraints: list[Constraint] = Field(
        default_factory=list, description="sandboxed Jinja expressions that must hold for every variant"
    )
    schema_: StrictStr | None = Field(
        default=None, alias="schema", description="module:Class (pydantic) or a JSON Schema file"
    )
    choices: dict[StrictStr, list[Any]] | None = Field(
        default=None,
        description="dotted path -> the values it may take in every variant (checked like the schema)",
    )
    resources: Resources | None = Field(
        default=None,
        description="per-run resources and the run's shape (nodes, GPUs, processes, launcher)",
    )
    limits: Limits = Field(
        default_factory=Limits,
        description="lower a bound, or raise it up to its ceiling (past that: `--limit KEY=VALUE`)",
    )
    seed: StrictStr | SeedBlock | None = Field(
        default=None,
        description="the config path that is the random seed (runs differing only in it are one group in "
        "`report`), or {path, tune, test} to hold test seeds out for `report --seeds test`",
    )

    @field_validator("sweepgen", mode="before")
    @classmethod
    def _exact_version(cls, value: Any) -> Any:
        # Literal[1] accepts True and 1.0 (they compare equal to 1); a version is an int.
        if type(value) is not int:
            raise ValueError("the format version must be the integer 1")
        return value


@dataclass(frozen=True)
class Spec:
    """A loaded spec: the validated model, its YAML marks and the base resolved once. Later stages
    read it and return their own values (``expand`` the variants and where each layer set a path)."""

    path: str  # as shown to the user
    abspath: str
    doc: yamlio.Doc
    model: SpecModel
    base: dict[str, Any]
    base_layers: dict[str, str]  # dotted path -> which file/layer set it in the base
    base_locs: dict[str, Location]  # dotted path -> where it was written
    project: str = ""  # the folder every file the spec reads must lie in (sweepgen.compile.spec.project)

    @property
    def name(self) -> str:
        return self.model.name

    @property
    def dir(self) -> str:
        return os.path.dirname(self.abspath)

    def loc(self, path: tuple[Any, ...] = (), *, key: bool = False) -> Location:
        return self.doc.loc(path, key=key)

    def base_where(self, path: str) -> Location | None:
        """Where the base set ``path`` (falls back to the closest enclosing path)."""
        return _closest(self.base_locs, path)


def _closest(locs: dict[str, Location], path: str) -> Location | None:
    parts = path.split(".")
    while parts:
        loc = locs.get(".".join(parts))
        if loc is not None:
            return loc
        parts.pop()
    return None


def display_path(path: str) -> str:
    """A path as the user should read it: relative to the cwd when inside it, posix separators."""
    rel = os.path.relpath(os.path.abspath(path))
    shown = path if rel.startswith("..") else rel
    return shown.replace(os.sep, "/")


def load_spec(path: str, out_root: str = "generated") -> Spec:
    """Read, validate and resolve the base of one spec file. Raises SpecError with file:line:col.

    ``out_root`` only helps find the project outside git (see sweepgen.compile.spec.project).
    """
    shown = display_path(path)
    if not os.path.isfile(path):
        raise SpecError(
            f"spec file not found: {shown}",
            location=Location(shown),
            hint="give the path of a spec YAML file, e.g. specs/my_sweep.yaml",
        )
    raw = project.read_regular(path, what="spec file", loc=Location(shown))
    doc = yamlio.loads(yamlio.decode_utf8(raw, shown), shown, max_nodes=None)
    if not isinstance(doc.data, dict):
        raise SpecError(
            "a spec must be a YAML mapping",
            location=doc.loc(),
            hint="start from the example in the README: `sweepgen: 1`, `name:`, ...",
        )
    found = settings.load()
    ceiling = spec_limits.ceilings(found.limits, found.where)
    node_limit = spec_limits.node_limit(doc.data.get("limits"), ceiling)
    if doc.nodes > node_limit:  # again with the limit, to stop at the node that crosses it
        yamlio.loads(yamlio.decode_utf8(raw, shown), shown, max_nodes=node_limit)
    version = doc.data.get("sweepgen", 1)
    if type(version) is not int or version != 1:
        raise SpecError(
            f"unsupported spec format version {version!r}",
            location=doc.loc(("sweepgen",)),
            hint="this sweepgen reads `sweepgen: 1` (the integer, not true or 1.0)",
        )
    model = _validate_model(doc)
    model.limits = spec_limits.effective(model.limits, doc, ceiling)
    _check_names(model, doc)
    _check_allow(model, doc)
    spec_resources.check(model.resources, doc)
    abspath = os.path.abspath(path)
    root = project.find_root(abspath, out_root)
    base = _resolve_base(model, doc, root, os.path.dirname(abspath))
    return Spec(
        path=shown,
        abspath=abspath,
        doc=doc,
        model=model,
        base=base.config,
        base_layers=base.layers,
        base_locs=base.locs,
        project=root,
    )


def _check_allow(model: SpecModel, doc: yamlio.Doc) -> None:
    for i, pattern in enumerate(model.allow):
        try:
            globs.compile_glob(pattern)
        except globs.GlobError as err:
            raise SpecError(
                f"invalid `allow` glob {pattern!r}: {err.why}",
                location=doc.loc(("allow", i)),
                hint=globs.SYNTAX_HINT,
            ) from None


def _validate_model(doc: yamlio.Doc) -> SpecModel:
    try:
        return SpecModel.model_validate(doc.data)
    except PydanticValidationError as err:
        raise _pydantic_error(err, doc, model=SpecModel) from None


def _pydantic_error(
    err: PydanticValidationError,
    doc: yamlio.Doc,
    *,
    model: type[BaseModel] | None,
    prefix: tuple[Any, ...] = (),
) -> SpecError:
    """The first pydantic error as a SpecError at the right line; notes how many more there are."""
    errors = err.errors(include_url=False)
    # An unknown key first: a misspelled key also makes the intended key "missing", and the typo
    # is the cause worth showing.
    errors.sort(key=lambda e: e["type"] != "extra_forbidden")
    first = errors[0]
    loc_path = prefix + tuple(first["loc"])
    dotted = ".".join(str(p) for p in first["loc"])
    more = f" (and {len(errors) - 1} more problem(s))" if len(errors) > 1 else ""
    if first["type"] == "extra_forbidden":
        return SpecError(
            f"unknown key `{first['loc'][-1]}`{more}",
            location=doc.loc(loc_path, key=True),
            key=dotted,
            hint=_unknown_key_hint(model, first["loc"]),
        )
    if first["type"] == "missing":
        return SpecError(
            f"missing required key `{first['loc'][-1]}`{more}",
            location=doc.loc(loc_path[:-1]),
            key=dotted,
            hint="add it",
        )
    if first["type"] == "value_error":  # a rule of ours (a model validator): its words say the fix
        return SpecError(
            f"{first.get('ctx', {}).get('error', first['msg'])}{more}",
            location=doc.loc(loc_path),
            key=dotted,
            hint="change the value as said above (docs/SPEC.md has every key)",
        )
    got = first.get("input")
    shown = repr(got) if not isinstance(got, (dict, list)) else type(got).__name__
    return SpecError(
        f"{first['msg']}, got {shown}{more}",
        location=doc.loc(loc_path),
        key=dotted,
        hint="fix the value's type; quote strings, write numbers without quotes",
    )


def _unknown_key_hint(model: type[BaseModel] | None, loc: tuple[Any, ...]) -> str:
    """The fix for an unknown key at ``loc``: the closest known key, else every key allowed there."""
    known = _known_fields(model, loc) if model is not None else []
    close = difflib.get_close_matches(str(loc[-1]), known, n=1)
    if close:
        return f"did you mean `{close[0]}`?"
    return f"allowed keys here: {', '.join(known)}" if known else "remove the key"


def _known_fields(model: type[BaseModel], loc: tuple[Any, ...]) -> list[str]:
    """The field names allowed next to the unknown key (walks nested models along ``loc``)."""
    current: Any = model
    for part in loc[:-1]:
        if isinstance(part, int):
            continue
        info = _field_named(current, part)
        if info is None:
            return []
        current = _model_of(info.annotation)
        if current is None:
            return []
    return [f.alias or name for name, f in getattr(current, "model_fields", {}).items()]


def _field_named(model: Any, name: str) -> Any:
    """The field of a pydantic model called ``name``, or written so (its alias); None if none."""
    fields = getattr(model, "model_fields", {})
    found = fields.get(name)
    return found if found is not None else next((f for f in fields.values() if f.alias == name), None)


def _model_of(annotation: Any) -> type[BaseModel] | None:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    for arg in getattr(annotation, "__args__", ()) or ():
        found = _model_of(arg)
        if found is not None:
            return found
    return None


def _check_names(model: SpecModel, doc: yamlio.Doc) -> None:
    problem = name_problem(model.name)
    if problem:
        raise SpecError(f"sweep name {model.name!r} {problem}", location=doc.loc(("name",)), hint=NAME_HINT)
    _check_variant_names(model, doc)
    _check_step_names(model, doc)
    if model.ablation is not None and not model.ablation:
        raise SpecError(
            "`ablation` is empty",
            location=doc.loc(("ablation",)),
            hint="list at least one step, or remove the key",
        )
    if model.variants is not None and not model.variants:
        raise SpecError(
            "`variants` is empty",
            location=doc.loc(("variants",)),
            hint="name at least one variant (`baseline: {}`), or remove the key",
        )


def _check_variant_names(model: SpecModel, doc: yamlio.Doc) -> None:
    """Variant names are file names: safe, and distinct also case-folded."""
    folded: dict[str, str] = {}
    for vname in model.variants or {}:
        problem = name_problem(vname)
        if problem:
            raise SpecError(
                f"variant name {vname!r} {problem}",
                location=doc.loc(("variants", vname), key=True),
                hint=NAME_HINT,
            )
        if vname.lower() in folded:
            raise SpecError(
                f"variant names {folded[vname.lower()]!r} and {vname!r} differ only in case",
                location=doc.loc(("variants", vname), key=True),
                hint="they would collide on macOS and Windows; rename one",
            )
        folded[vname.lower()] = vname


def _check_step_names(model: SpecModel, doc: yamlio.Doc) -> None:
    """Ablation step names: safe, and each step's own."""
    seen: dict[str, int] = {}
    for i, step in enumerate(model.ablation or []):
        problem = name_problem(step.name)
        if problem:
            raise SpecError(
                f"ablation step name {step.name!r} {problem}",
                location=doc.loc(("ablation", i, "name")),
                hint=NAME_HINT,
            )
        if step.name in seen:
            raise SpecError(
                f"duplicate ablation step name {step.name!r} (also step {seen[step.name] + 1})",
                location=doc.loc(("ablation", i, "name")),
                hint="give each step its own name",
            )
        seen[step.name] = i


@dataclass
class _Base:
    """The base as it is being resolved: the config, and which layer set each path, and where."""

    config: dict[str, Any] = field(default_factory=dict)
    layers: dict[str, str] = field(default_factory=dict)
    locs: dict[str, Location] = field(default_factory=dict)


def _resolve_base(model: SpecModel, doc: yamlio.Doc, root: str, spec_dir: str) -> _Base:
    """Inline base, or ``{include: [...], set: {...}}``: files merged in order, then ``set``."""
    raw = model.base
    base = _Base()
    if _is_include_form(raw, doc):
        _included_base(raw, doc, root, spec_dir, model.limits, base)
    else:
        _check_config_keys(raw, doc, ("base",))
        base.config = raw
        for p in paths.all_paths(raw):
            base.layers[p] = "base"
            base.locs[p] = doc.loc(("base",) + tuple(p.split(".")))
    for key in RESERVED_TOP_LEVEL:
        if key in base.config:
            raise SpecError(
                f"top-level config key `{key}` would hide the template variable of that name",
                location=_closest(base.locs, key) or doc.loc(("base",)),
                hint=f"rename the key; templates see `{key}` as sweepgen's own variable",
            )
    return base


def _included_base(
    raw: dict[str, Any], doc: yamlio.Doc, root: str, spec_dir: str, limits: Limits, base: _Base
) -> None:
    """``{include: [...], set: {...}}`` into ``base``: the files merged in order, then ``set``."""
    includes = raw["include"]
    if not isinstance(includes, list) or not all(isinstance(p, str) for p in includes) or not includes:
        raise SpecError(
            "`base.include` must be a non-empty list of file paths",
            location=doc.loc(("base", "include")),
            hint="e.g. include: [../configs/model.yaml]",
        )
    for i, rel in enumerate(includes):
        inc = _read_include(rel, doc.loc(("base", "include", i)), root, spec_dir, limits)
        base.config = _merge_include(base.config, inc.data, (), inc, f"include:{inc.path}", base)
    sets = raw.get("set") or {}
    if not isinstance(sets, dict):
        raise SpecError("`base.set` must be a mapping of overrides", location=doc.loc(("base", "set")))
    ops = overrides.parse(sets, doc, ("base", "set"), "base.set")
    base.config, layers = overrides.apply_all(base.config, ops, {}, where="the base")
    base.layers.update(layers)
    for op in ops:
        base.locs[".".join(op.path)] = op.loc


def _read_include(rel: str, at: Location, root: str, spec_dir: str, limits: Limits) -> yamlio.Doc:
    full = project.resolve(root, spec_dir, rel, what="included file", loc=at)
    if not os.path.exists(full):
        raise SpecError(
            f"included file not found: {rel}",
            location=at,
            hint="include paths are relative to the spec file",
        )
    raw_inc = project.read_regular(full, what="included file", loc=at, limit=limits.input_bytes)
    shown_inc = display_path(full)
    inc = yamlio.loads(yamlio.decode_utf8(raw_inc, shown_inc), shown_inc, max_nodes=limits.yaml_nodes)
    if not isinstance(inc.data, dict):
        raise SpecError("an included config must be a YAML mapping", location=inc.loc())
    _check_config_keys(inc.data, inc, ())
    return inc


_INCLUDE_KEYS = ("include", "set")
_INLINE_HINT = (
    "an inline base with a top-level key named `include` or `set` must nest it one level "
    "down or be written as `{include: [file], set: {...}}`"
)


def _is_include_form(raw: dict[str, Any], doc: yamlio.Doc) -> bool:
    """True for ``{include: [...], set: {...}}``; a near-miss key (``sets``, ``includes``) is an error.

    A base counts as the include form as soon as it has ``include``, ``set`` or a key close to either;
    then its keys must be exactly a subset of ``{include, set}`` with ``include`` present.
    """
    others = [key for key in raw if key not in _INCLUDE_KEYS]
    near = {key: _include_key_like(key) for key in others}
    if not any(near.values()) and len(others) == len(raw):  # no include key, nor one like it
        return False
    for key in others:
        guess = near[key]
        hint = f"did you mean `{guess}`?" if guess else "the include form allows only `include` and `set`"
        raise SpecError(
            f"unknown key `{key}` in `base` (include form: `include`, `set`)",
            location=doc.loc(("base", key), key=True),
            hint=f"{hint}; {_INLINE_HINT}",
        )
    if "include" not in raw:
        raise SpecError(
            "`base.set` needs `base.include` (the include form is `{include: [...], set: {...}}`)",
            location=doc.loc(("base", "set"), key=True),
            hint=f"add `include: [file]`; {_INLINE_HINT}",
        )
    return True


def _include_key_like(key: str) -> str | None:
    """``include`` or ``set`` when ``key`` is a near miss of it (``sets``, ``includes``)."""
    close = difflib.get_close_matches(str(key), _INCLUDE_KEYS, n=1, cutoff=0.75)
    return close[0] if close else None


def _merge_include(
    into: dict[str, Any], new: dict[str, Any], path: tuple[Any, ...], doc: yamlio.Doc, label: str, base: _Base
) -> dict[str, Any]:
    """Deep-merge an included file: later files win; mappings merge key by key."""
    out = dict(into)
    for key, value in new.items():
        sub = path + (key,)
        dotted = ".".join(sub)
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = _merge_include(out[key], value, sub, doc, label, base)
        else:
            out[key] = value
            below = [f"{dotted}.{q}" for q in paths.all_paths(value)]  # empty unless a mapping
            for p in [dotted, *below]:
                base.layers[p] = label
                base.locs[p] = doc.loc(tuple(p.split(".")))
        base.layers.setdefault(dotted, label)
        base.locs.setdefault(dotted, doc.loc(sub))
    return out


def _check_config_keys(data: Any, doc: yamlio.Doc, prefix: tuple[Any, ...]) -> None:
    """Config keys must be addressable by dotted override paths."""
    if isinstance(data, dict):
        for key, value in data.items():
            if not key or "." in key or key[0] in "+~":
                raise SpecError(
                    f"config key {key!r} cannot be addressed by a dotted path",
                    location=doc.loc(prefix + (key,), key=True),
                    hint="config keys must be non-empty, without `.` and not start with `+`/`~`",
                )
            _check_config_keys(value, doc, prefix + (key,))
    # Lists are leaves (overrides replace a whole list), so keys inside them are never addressed.
