"""Rendering: the spec's template, its inline `output` template, the generated-file header, and the
checks on output paths. Deterministic: no timestamps, no absolute paths, keys in written order."""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from sweepgen.compile import lock
from sweepgen.compile.expand import Variant
from sweepgen.compile.sandbox import make_env
from sweepgen.compile.spec import SAFE_NAME, Spec, display_path
from sweepgen.errors import Location, SpecError, TemplateError, ValidationError

if TYPE_CHECKING:
    from jinja2 import Environment, Template

HASH_COMMENT = {
    ".py",
    ".yaml",
    ".yml",
    ".sh",
    ".bash",
    ".toml",
    ".cfg",
    ".ini",
    ".conf",
    ".run",
    ".sbatch",
    ".slurm",
    ".env",
    ".r",
    ".pl",
    ".rb",
    ".mk",
}
SLASH_COMMENT = {".js", ".ts", ".jsonc", ".c", ".cc", ".cpp", ".h", ".java", ".go", ".rs"}


@dataclass(slots=True)
class RenderedFile:
    path: str  # relative to the sweep folder, posix
    variant: Variant
    run_name: str
    data: bytes
    sha256: str


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def load_template(spec: Spec, template_abs: str) -> Template:
    from jinja2 import FileSystemLoader, TemplateNotFound, TemplateSyntaxError

    loc = spec.loc(("template",))
    if not os.path.isfile(template_abs):
        raise SpecError(
            f"template not found: {spec.model.template}",
            location=loc,
            hint="the template path is relative to the spec file",
        )
    env = make_env(FileSystemLoader(os.path.dirname(template_abs)))
    try:
        return env.get_template(os.path.basename(template_abs))
    except TemplateSyntaxError as err:
        shown = display_path(err.filename) if err.filename else display_path(template_abs)
        raise TemplateError(
            f"template syntax error: {err.message}",
            location=Location(shown, err.lineno or 0, 1),
            hint="fix the Jinja syntax ({{ }}, {% %}, matching end tags)",
        ) from None
    except TemplateNotFound as err:
        raise TemplateError(
            f"template includes a file that does not exist: {err.name}",
            location=Location(display_path(template_abs)),
            hint="included templates are looked up next to the main template",
        ) from None


def compile_inline(env: Environment, spec: Spec, field: str, source: str) -> Template:
    from jinja2 import TemplateSyntaxError

    try:
        return env.from_string(source)
    except TemplateSyntaxError as err:
        raise SpecError(
            f"`{field}` is not a valid template: {err.message}",
            location=spec.loc((field,)),
            hint='e.g. "{{ variant.name }}.yaml"',
        ) from None


def render_inline(template: Template, ctx: dict[str, Any], spec: Spec, field: str, variant: Variant) -> str:
    try:
        return template.render(ctx)
    except Exception as err:  # noqa: BLE001 - user template code
        raise TemplateError(
            f"`{field}` fails for variant {variant.name!r}: {type(err).__name__}: {err}",
            location=spec.loc((field,)),
            hint="names are the config's top-level keys, `config`, `variant` and `sweep`",
        ) from None


def template_runtime_error(err: Exception, template_dir: str, spec: Spec, variant: Variant) -> TemplateError:
    import traceback

    from jinja2 import TemplateSyntaxError

    if isinstance(err, TemplateSyntaxError):  # an included template is compiled on first use
        shown = display_path(err.filename) if err.filename else spec.model.template
        return TemplateError(
            f"template syntax error: {err.message}",
            location=Location(shown, err.lineno or 0, 1),
            hint="fix the Jinja syntax ({{ }}, {% %}, matching end tags)",
        )
    loc = None
    for frame in traceback.extract_tb(err.__traceback__):
        if frame.filename.startswith(template_dir + os.sep) and frame.lineno:
            loc = Location(display_path(frame.filename), frame.lineno, 1)
    if loc is None:
        raise err  # not raised by template code: a bug in sweepgen, let the funnel show it
    return TemplateError(
        f"template fails for variant {variant.name!r}: {type(err).__name__}: {err}",
        location=loc,
        hint="templates see the config's top-level keys, `config`, `variant` "
        "and `sweep`; undefined names and unsafe attributes are errors",
    )


def header_maker(spec_rel: str) -> Callable[[str, str, str], str]:
    def add_header(out_path: str, variant_name: str, text: str) -> str:
        ext = os.path.splitext(out_path)[1].lower()
        if ext in HASH_COMMENT:
            prefix = "#"
        elif ext in SLASH_COMMENT:
            prefix = "//"
        else:
            return text  # no comment syntax (e.g. JSON): the lock still records the file
        line = (
            f"{prefix} generated by sweepgen from {spec_rel} (variant {variant_name}); do not edit: "
            f"change the spec and run `sweepgen render`\n"
        )
        if text.startswith("#!"):
            first, nl, rest = text.partition("\n")
            return first + "\n" + line + rest if nl else first + "\n" + line
        return line + text

    return add_header


def check_outputs(files: list[RenderedFile], spec: Spec) -> None:
    loc = spec.loc(("output",))
    seen: dict[str, str] = {}
    folded: dict[str, str] = {}
    for f in files:
        parts = f.path.split("/")
        if not all(SAFE_NAME.fullmatch(p) for p in parts):
            raise ValidationError(
                f"output path {f.path!r} of variant {f.variant.name!r} is unsafe "
                f"or leaves generated/{spec.name}/",
                location=loc,
                hint="use relative paths of letters, digits, `_`, `-`, `.` (no `..`, no leading "
                "`/` or `.`, no spaces)",
            )
        if f.path == lock.LOCK_NAME:
            raise ValidationError(
                f"output path {f.path!r} is reserved for the lock file",
                location=loc,
                hint="choose another file name",
            )
        if f.path in seen:
            raise ValidationError(
                f"variants {seen[f.path]!r} and {f.variant.name!r} both render to {f.path!r}",
                location=loc,
                hint="include `{{ variant.name }}` in `output`",
            )
        low = f.path.lower()
        if low in folded:
            raise ValidationError(
                f"output paths {folded[low]!r} and {f.path!r} differ only in case",
                location=loc,
                hint="they would collide on macOS and Windows",
            )
        seen[f.path], folded[low] = f.variant.name, f.path
    dirs = {"/".join(p.split("/")[:i]) for p in seen for i in range(1, p.count("/") + 1)}
    clash = sorted(dirs & set(seen))
    if clash:
        raise ValidationError(
            f"output path {clash[0]!r} is both a file and a folder",
            location=loc,
            hint="make output paths distinct",
        )
