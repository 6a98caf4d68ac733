"""Compile a spec into its rendered files, in memory: load -> expand -> validate -> render -> lock.

Nothing here writes to disk (sweepgen.writer does, all or nothing, after every spec compiled).
Rendering is deterministic: no timestamps, no absolute paths (paths in headers and the lock are
relative to the project root, the parent of the output folder), keys in their written order.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass
from typing import Any

from sweepgen import lock, paths
from sweepgen.errors import Location, SpecError, TemplateError, ValidationError
from sweepgen.derive import finalize
from sweepgen.expand import Expansion, Variant, expand
from sweepgen.sandbox import make_env
from sweepgen.spec import SAFE_NAME, Spec, display_path, load_spec
from sweepgen.validate import check_constraints, check_gate, check_schema, context

HASH_COMMENT = {".py", ".yaml", ".yml", ".sh", ".bash", ".toml", ".cfg", ".ini", ".conf", ".run",
                ".sbatch", ".slurm", ".env", ".r", ".pl", ".rb", ".mk"}
SLASH_COMMENT = {".js", ".ts", ".jsonc", ".c", ".cc", ".cpp", ".h", ".java", ".go", ".rs"}


@dataclass(slots=True)
class RenderedFile:
    path: str  # relative to the sweep folder, posix
    variant: Variant
    run_name: str
    data: bytes
    sha256: str


@dataclass
class Plan:
    """Everything one spec renders, ready to be written (or compared by ``check``)."""

    spec: Spec
    expansion: Expansion
    out_root: str  # absolute output root (``generated/``)
    sweep_dir: str  # absolute ``generated/<name>/``
    shown_dir: str  # the sweep folder as the user reads it
    files: list[RenderedFile]
    lock: dict[str, Any]
    lock_bytes: bytes


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def compile_spec(spec_path: str, out_root: str = "generated") -> Plan:
    spec = load_spec(spec_path)
    return compile_loaded(spec, out_root)


def compile_loaded(spec: Spec, out_root: str) -> Plan:
    from sweepgen.config_schema import load_validator

    out_abs = os.path.abspath(out_root)
    project = os.path.dirname(out_abs)
    spec_rel = _rel(spec.abspath, project)
    sweep = sweep_view(spec, spec_rel)
    validator = load_validator(spec)  # fail on a bad schema reference before the slower work
    expansion = expand(spec)
    finalize(expansion, sweep)
    check_gate(expansion)
    check_constraints(expansion, sweep)
    check_schema(expansion, validator)

    template_abs = os.path.normpath(os.path.join(spec.dir, spec.model.template))
    template = _load_template(spec, template_abs)
    env = template.environment
    output_t = _compile_inline(env, spec, "output", spec.model.output)
    header = _header_maker(spec_rel)
    template_dir = os.path.dirname(template_abs)

    files: list[RenderedFile] = []
    for variant in expansion.variants:
        ctx = context(variant.config, variant.context_view(), sweep)
        run_name = variant.run_name or variant.name
        out_path = _render_inline(output_t, ctx, spec, "output", variant)
        try:
            text = template.render(ctx)
        except Exception as err:  # noqa: BLE001 - anything raised by template code is the template's fault
            raise _template_runtime_error(err, template_dir, spec, variant) from None
        data = header(out_path, variant.name, text).encode("utf-8")
        files.append(RenderedFile(out_path, variant, run_name, data, sha256(data)))
    _check_outputs(files, spec)

    varying = varying_paths(expansion)
    entries = [{
        "path": f.path, "variant": f.variant.name, "run_name": f.run_name,
        "values": {p: v for p in varying if (v := paths.get(f.variant.config, p)) is not paths.MISSING},
        "layers": dict(sorted(f.variant.layers.items())),
        "config": f.variant.config, "sha256": f.sha256,
    } for f in files]
    with open(spec.abspath, "rb") as fh:
        spec_sha = sha256(fh.read())
    with open(template_abs, "rb") as fh:
        template_sha = sha256(fh.read())
    resources = spec.model.resources.model_dump() if spec.model.resources is not None else None
    lock_data = lock.build(sweep=spec.name, spec=spec_rel, spec_sha256=spec_sha,
                           templates={_rel(template_abs, project): template_sha}, varying=varying,
                           files=entries, resources=resources)
    sweep_dir = os.path.join(out_abs, spec.name)
    return Plan(spec=spec, expansion=expansion, out_root=out_abs, sweep_dir=sweep_dir,
                shown_dir=display_path(sweep_dir), files=files, lock=lock_data,
                lock_bytes=lock.dumps(lock_data).encode("utf-8"))


def sweep_view(spec: Spec, spec_rel: str) -> dict[str, Any]:
    """``sweep`` as templates, constraints and derived values see it."""
    return {"name": spec.name, "spec": spec_rel, "description": spec.model.description}


def _rel(path: str, start: str) -> str:
    return os.path.relpath(path, start).replace(os.sep, "/")


def _load_template(spec: Spec, template_abs: str):
    from jinja2 import FileSystemLoader, TemplateNotFound, TemplateSyntaxError

    loc = spec.loc(("template",))
    if not os.path.isfile(template_abs):
        raise SpecError(f"template not found: {spec.model.template}", location=loc,
                        hint="the template path is relative to the spec file")
    env = make_env(FileSystemLoader(os.path.dirname(template_abs)))
    try:
        return env.get_template(os.path.basename(template_abs))
    except TemplateSyntaxError as err:
        shown = display_path(err.filename) if err.filename else display_path(template_abs)
        raise TemplateError(f"template syntax error: {err.message}", location=Location(shown, err.lineno or 0, 1),
                            hint="fix the Jinja syntax ({{ }}, {% %}, matching end tags)") from None
    except TemplateNotFound as err:
        raise TemplateError(f"template includes a file that does not exist: {err.name}",
                            location=Location(display_path(template_abs)),
                            hint="included templates are looked up next to the main template") from None


def _compile_inline(env, spec: Spec, field: str, source: str):
    from jinja2 import TemplateSyntaxError

    try:
        return env.from_string(source)
    except TemplateSyntaxError as err:
        raise SpecError(f"`{field}` is not a valid template: {err.message}", location=spec.loc((field,)),
                        hint="e.g. \"{{ variant.name }}.yaml\"") from None


def _render_inline(template, ctx: dict, spec: Spec, field: str, variant: Variant) -> str:
    try:
        return template.render(ctx)
    except Exception as err:  # noqa: BLE001 - user template code
        raise TemplateError(f"`{field}` fails for variant {variant.name!r}: {type(err).__name__}: {err}",
                            location=spec.loc((field,)),
                            hint="names are the config's top-level keys, `config`, `variant` and `sweep`") from None


def _template_runtime_error(err: Exception, template_dir: str, spec: Spec, variant: Variant) -> TemplateError:
    import traceback

    from jinja2 import TemplateSyntaxError

    if isinstance(err, TemplateSyntaxError):  # an included template is compiled on first use
        shown = display_path(err.filename) if err.filename else spec.model.template
        return TemplateError(f"template syntax error: {err.message}", location=Location(shown, err.lineno or 0, 1),
                             hint="fix the Jinja syntax ({{ }}, {% %}, matching end tags)")
    loc = None
    for frame in traceback.extract_tb(err.__traceback__):
        if frame.filename.startswith(template_dir + os.sep) and frame.lineno:
            loc = Location(display_path(frame.filename), frame.lineno, 1)
    if loc is None:
        raise err  # not raised by template code: a bug in sweepgen, let the funnel show it
    return TemplateError(f"template fails for variant {variant.name!r}: {type(err).__name__}: {err}",
                         location=loc, hint="templates see the config's top-level keys, `config`, `variant` "
                                            "and `sweep`; undefined names and unsafe attributes are errors")


def _header_maker(spec_rel: str):
    def add_header(out_path: str, variant_name: str, text: str) -> str:
        ext = os.path.splitext(out_path)[1].lower()
        if ext in HASH_COMMENT:
            prefix = "#"
        elif ext in SLASH_COMMENT:
            prefix = "//"
        else:
            return text  # no comment syntax (e.g. JSON): the lock still records the file
        line = (f"{prefix} generated by sweepgen from {spec_rel} (variant {variant_name}); do not edit: "
                f"change the spec and run `sweepgen render`\n")
        if text.startswith("#!"):
            first, nl, rest = text.partition("\n")
            return first + "\n" + line + rest if nl else first + "\n" + line
        return line + text
    return add_header


def _check_outputs(files: list[RenderedFile], spec: Spec) -> None:
    loc = spec.loc(("output",))
    seen: dict[str, str] = {}
    folded: dict[str, str] = {}
    for f in files:
        parts = f.path.split("/")
        if not all(SAFE_NAME.fullmatch(p) for p in parts):
            raise ValidationError(
                f"output path {f.path!r} of variant {f.variant.name!r} is unsafe or leaves generated/{spec.name}/",
                location=loc, hint="use relative paths of letters, digits, `_`, `-`, `.` (no `..`, no leading "
                                   "`/` or `.`, no spaces)")
        if f.path == lock.LOCK_NAME:
            raise ValidationError(f"output path {f.path!r} is reserved for the lock file", location=loc,
                                  hint="choose another file name")
        if f.path in seen:
            raise ValidationError(f"variants {seen[f.path]!r} and {f.variant.name!r} both render to {f.path!r}",
                                  location=loc, hint="include `{{ variant.name }}` in `output`")
        low = f.path.lower()
        if low in folded:
            raise ValidationError(f"output paths {folded[low]!r} and {f.path!r} differ only in case",
                                  location=loc, hint="they would collide on macOS and Windows")
        seen[f.path], folded[low] = f.variant.name, f.path
    dirs = {"/".join(p.split("/")[:i]) for p in seen for i in range(1, p.count("/") + 1)}
    clash = sorted(dirs & set(seen))
    if clash:
        raise ValidationError(f"output path {clash[0]!r} is both a file and a folder", location=loc,
                              hint="make output paths distinct")


def varying_paths(expansion: Expansion) -> list[str]:
    """Leaf paths whose value is not the same in every variant, sorted."""
    base = expansion.spec.base
    candidates: set[str] = set()
    for variant in expansion.variants:
        candidates |= paths.diff_at(base, variant.config, variant.touched)
    out = []
    for path in candidates:
        values = [paths.get(v.config, path) for v in expansion.variants]
        first = values[0]
        if any(not paths.same(first, v) for v in values[1:]):
            out.append(path)
    return sorted(out)
