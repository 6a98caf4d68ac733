"""Rendering: the spec's template, its inline `output` template, the generated-file header, and the
checks on output paths. Deterministic: no timestamps, no absolute paths, keys in written order."""

from __future__ import annotations

import hashlib
import os
import traceback
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from jinja2 import BaseLoader, Environment, Template, TemplateNotFound, TemplateSyntaxError
from jinja2.loaders import split_template_path

from sweepgen import escape
from sweepgen.compile.output.lockfile import lock
from sweepgen.compile.spec import project
from sweepgen.compile.spec.limits import raise_hint
from sweepgen.compile.spec.model import SAFE_NAME, Spec, display_path, unportable
from sweepgen.compile.spec.variants.expand import Variant
from sweepgen.compile.template.sandbox import TimeLimitExceeded, describe, interrupted_at, make_env
from sweepgen.errors import Location, SpecError, SweepgenError, TemplateError, ValidationError
from sweepgen.formats import yamlio
from sweepgen.fs import filenames

# the lock and the journal of an interrupted render live beside the outputs: no output may take
# their names, not even as a folder (`sweep.lock.json/a.yaml` would make the lock unwritable)
RESERVED_NAMES = frozenset({lock.LOCK_NAME, filenames.RENDER_JOURNAL})

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
    data: bytes | None  # None when staged on disk as it was rendered (compile.staging)
    sha256: str
    run_dir: str | None = None  # where its run writes (compile.rundir), recorded in the lock
    # its text's digest with the variant's name, run name and run folder masked (dead_axes)
    name_blind: bytes | None = None

    def content(self) -> bytes:
        """The rendered bytes of a file that was not staged on disk (compile.staging)."""
        if self.data is None:
            raise RuntimeError(f"{self.path}: its bytes were staged on disk, not kept")
        return self.data


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


class ProjectLoader(BaseLoader):
    """Loads the main template and its ``{% include %}``/``{% extends %}`` targets from the main
    template's folder, refusing any file outside the project (symlinks resolved), any file that is
    not a regular file (a FIFO would hang) and any file that is not UTF-8 (with its line and column)."""

    def __init__(self, folder: str, root: str, loc: Location, limit: int) -> None:
        self.folder = folder
        self.root = root
        self.loc = loc
        self.limit = limit

    def get_source(self, environment: Environment, template: str) -> tuple[str, str, Callable[[], bool]]:
        pieces = split_template_path(template)  # refuses `..` segments
        path = os.path.join(self.folder, *pieces)
        shown = display_path(path)
        project.resolve(self.root, self.folder, os.path.join(*pieces), what="template", loc=self.loc)
        if not os.path.exists(path):
            raise TemplateNotFound(template)
        raw = project.read_regular(path, what="template", loc=Location(shown), limit=self.limit)
        try:
            text = yamlio.decode_utf8(raw, shown)
        except SpecError as err:
            raise TemplateError(err.message, location=err.location, hint=err.hint) from None
        return text, path, lambda: True


def load_template(spec: Spec, template_abs: str) -> Template:
    loc = spec.loc(("template",))
    template_abs = project.resolve(spec.project, spec.dir, spec.model.template, what="template", loc=loc)
    if not os.path.exists(template_abs):
        raise SpecError(
            f"template not found: {spec.model.template}",
            location=loc,
            hint="the template path is relative to the spec file",
        )
    loader = ProjectLoader(os.path.dirname(template_abs), spec.project, loc, spec.model.limits.input_bytes)
    env = make_env(loader)
    try:
        return env.get_template(os.path.basename(template_abs))
    except TemplateSyntaxError as err:
        shown = display_path(err.filename) if err.filename else display_path(template_abs)
        raise TemplateError(
            f"template syntax error: {err.message}",
            location=Location(shown, err.lineno or 0, 1),
            hint="fix the Jinja syntax ({{ }}, {% %}, matching end tags)",
        ) from None
    except (RecursionError, MemoryError, SyntaxError) as err:  # nesting too deep for Jinja or Python
        raise TemplateError(
            f"template is nested too deeply to compile ({type(err).__name__})",
            location=Location(display_path(template_abs)),
            hint="split deeply nested expressions or blocks",
        ) from None
    except TemplateNotFound as err:
        raise TemplateError(
            f"template includes a file that does not exist: {err.name}",
            location=Location(display_path(template_abs)),
            hint="included templates are looked up next to the main template",
        ) from None


def compile_inline(env: Environment, spec: Spec, field: str, source: str) -> Template:
    try:
        return env.from_string(source)
    except TemplateSyntaxError as err:
        raise SpecError(
            f"`{field}` is not a valid template: {err.message}",
            location=spec.loc((field,)),
            hint='e.g. "{{ variant.name }}.yaml"',
        ) from None
    except (RecursionError, MemoryError, SyntaxError) as err:
        raise SpecError(
            f"`{field}` is nested too deeply to compile ({type(err).__name__})",
            location=spec.loc((field,)),
            hint="write a simpler template",
        ) from None


def render_inline(template: Template, ctx: dict[str, Any], spec: Spec, field: str, variant: Variant) -> str:
    try:
        return template.render(ctx)
    except Exception as err:  # noqa: BLE001 - user template code
        raise TemplateError(
            f"`{field}` fails for variant {variant.name!r}: {describe(err, variant.config)}",
            location=spec.loc((field,)),
            hint="names are the config's top-level keys, `config`, `variant` and `sweep`",
        ) from None


def render_bounded(template: Template, ctx: dict[str, Any], limit: int) -> str:
    """Render, stopping as soon as the text passes ``limit`` characters (the spec's
    ``limits.output_bytes``; UTF-8 bytes are checked again after encoding), so a template looping
    over a huge output fails fast instead of filling memory."""
    size = 0
    chunks: list[str] = []
    gen: Iterator[str] = template.generate(ctx)
    for chunk in gen:
        size += len(chunk)
        if size > limit:
            raise OutputTooLarge(limit)
        chunks.append(chunk)
    return "".join(chunks)


class OutputTooLarge(Exception):
    """Raised by render_bounded; turned into a TemplateError naming the variant by the caller."""

    def __init__(self, limit: int) -> None:
        super().__init__(limit)
        self.limit = limit


def too_large(limit: int, spec: Spec, variant: Variant, out_path: str) -> TemplateError:
    return TemplateError(
        f"{out_path!r} of variant {variant.name!r} would be larger than {limit:,} bytes",
        location=spec.loc(("template",)),
        hint="a runaway loop? Otherwise " + raise_hint("output_bytes"),
    )


def _template_line(err: Exception, template_dir: str) -> Location | None:
    """The innermost line of a template file in ``err``'s traceback, else the template line the
    watchdog found running when it interrupted an overrun (delivered where no template frame is left
    in the traceback, e.g. while Jinja unwound an earlier interrupt); None if no template ran."""
    frames = [(f.filename, f.lineno) for f in traceback.extract_tb(err.__traceback__) if f.lineno]
    at = interrupted_at(err)
    for filename, line in [*reversed(frames), *([at] if at is not None else [])]:
        if filename.startswith(template_dir + os.sep):
            return Location(display_path(filename), line, 1)
    return None


def template_runtime_error(err: Exception, template_dir: str, spec: Spec, variant: Variant) -> SweepgenError:
    if isinstance(err, SweepgenError):  # raised on purpose, e.g. by the loader for an include
        return err
    if isinstance(err, (RecursionError, MemoryError)):
        return TemplateError(
            f"template fails for variant {variant.name!r}: {type(err).__name__} (nested too deeply?)",
            location=spec.loc(("template",)),
            hint="simplify the template's recursion or nesting",
        )
    if isinstance(err, TemplateSyntaxError):  # an included template is compiled on first use
        shown = display_path(err.filename) if err.filename else spec.model.template
        return TemplateError(
            f"template syntax error: {err.message}",
            location=Location(shown, err.lineno or 0, 1),
            hint="fix the Jinja syntax ({{ }}, {% %}, matching end tags)",
        )
    loc = _template_line(err, template_dir)
    if loc is None and isinstance(err, TimeLimitExceeded):  # a budget overran: the template's, always
        loc = spec.loc(("template",))
    if loc is None:
        raise err  # not raised by template code: a bug in sweepgen, let the funnel show it
    return TemplateError(
        f"template fails for variant {variant.name!r}: {describe(err, variant.config)}",
        location=loc,
        hint="templates see the config's top-level keys, `config`, `variant` "
        "and `sweep`; undefined names and unsafe attributes are errors",
    )


def header_maker(spec_rel: str) -> Callable[[str, str, str], str]:
    # The spec's path is user data: a newline in it would inject lines into every file's header.
    spec_rel = escape.line(spec_rel)

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


def check_output_path(path: str, variant: str, spec: Spec) -> None:
    """One output path: safe names inside the sweep folder, portable to Windows, not sweepgen's own
    (checked as each file renders, before its text is read back; ``check_outputs`` then checks the
    paths against each other)."""
    loc = spec.loc(("output",))
    parts = path.split("/")
    if not all(SAFE_NAME.fullmatch(p) for p in parts):
        raise ValidationError(
            f"output path {path!r} of variant {variant!r} is unsafe or leaves generated/{spec.name}/",
            location=loc,
            hint="use relative paths of letters, digits, `_`, `-`, `.` (no `..`, no leading "
            "`/` or `.`, no spaces)",
        )
    reason = next((r for r in map(unportable, parts) if r), None)
    if reason:
        raise ValidationError(
            f"output path {path!r} of variant {variant!r}: a component {reason}",
            location=loc,
            hint="a checkout on Windows would fail; change `output`",
        )
    if parts[0] in RESERVED_NAMES:  # the file itself, or a folder that would stand in its place
        raise ValidationError(
            f"output path {path!r} uses {parts[0]!r}, which is reserved for sweepgen's own files",
            location=loc,
            hint="choose another file name",
        )


def check_outputs(files: list[RenderedFile], spec: Spec) -> None:
    loc = spec.loc(("output",))
    seen: dict[str, str] = {}
    folded: dict[str, str] = {}
    for f in files:  # each path alone was checked as its file rendered (check_output_path)
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
