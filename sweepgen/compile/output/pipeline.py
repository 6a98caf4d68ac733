"""The compile pipeline in the order it runs: load -> expand -> derive -> gate -> constraints ->
schema -> render -> lock. ``sweepgen.compile.output.write.writer`` writes a plan to disk, all or nothing,
after
every spec compiled. A render that will write (``stream``) keeps no rendered bytes in memory: each
file is staged in the sweep folder as soon as it is rendered (``staging``); ``check``
and ``--dry-run`` keep the bytes in ``RenderedFile.data``."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from jinja2 import Template

from sweepgen import escape, paths
from sweepgen.compile.output import gc_state, recorded_trials, rename_guard
from sweepgen.compile.output.lockfile import lock, lock_digest
from sweepgen.compile.output.lockfile.inputs import render_inputs
from sweepgen.compile.output.parallel import Rendered, Rendering
from sweepgen.compile.output.render import (
    OutputTooLarge,
    RenderedFile,
    check_output_path,
    check_outputs,
    compile_inline,
    header_maker,
    load_template,
    render_bounded,
    render_inline,
    sha256,
    template_runtime_error,
    too_large,
)
from sweepgen.compile.output.rundir import YAML_SUFFIXES, run_dir_of_rendered
from sweepgen.compile.output.staging import Staging
from sweepgen.compile.output.verify import dead_axes
from sweepgen.compile.output.verify.readback import check_reads_back
from sweepgen.compile.output.verify.value_types import check_types_kept
from sweepgen.compile.output.verify.yaml_dialects import check_reads_alike
from sweepgen.compile.schema.choices import check_choices
from sweepgen.compile.schema.validate import (
    Validator,
    check_schema,
    imports_disabled,
    load_validator,
    trl_command,
)
from sweepgen.compile.spec import seeds
from sweepgen.compile.spec.model import Spec, display_path, load_spec
from sweepgen.compile.spec.request import resources as spec_resources
from sweepgen.compile.spec.variants import trials as search
from sweepgen.compile.spec.variants.constraints import check_constraints
from sweepgen.compile.spec.variants.context import context, sweep_view
from sweepgen.compile.spec.variants.derive import derive
from sweepgen.compile.spec.variants.expand import Expansion, Variant, expand
from sweepgen.compile.spec.variants.gate import check_gate
from sweepgen.compile.template.sandbox import TimeLimitExceeded, time_budget, total_budget
from sweepgen.errors import Location, SweepgenError, UserError, ValidationError


@dataclass
class Plan:
    """Everything one spec renders, ready to be written (or compared by ``check``)."""

    spec: Spec
    expansion: Expansion
    out_root: str  # absolute output root (``generated/``)
    sweep_dir: str  # absolute ``generated/<name>/``
    shown_dir: str  # the sweep folder as the user reads it
    files: list[RenderedFile]
    lock: dict[str, Any]  # without "files" when streamed: the files' entries are in lock_bytes
    lock_bytes: bytes
    staging: Staging | None = None  # where the files' bytes wait (``data`` is None), if streamed


def variants_of(spec: Spec, sweep: dict[str, Any], out_abs: str) -> Expansion:
    """The spec's variants, expanded and derived: a grid's from its axes, a search's its trials so far
    (from the sweep's lock)."""
    with total_budget(spec.model.limits.total_seconds):
        if search.is_search(spec):
            search.check_block(spec)
            return derived(search.expansion_of(spec, recorded_trials.recorded(spec, out_abs)), sweep)
        with gc_state.paused():
            return derive(expand(spec), sweep)


def derived(expansion: Expansion, sweep: dict[str, Any]) -> Expansion:
    with gc_state.paused():
        return derive(expansion, sweep)


def compile_spec(
    spec_path: str,
    out_root: str = "generated",
    *,
    only: frozenset[str] | None = None,
    loaded: Spec | None = None,
    stream: bool = False,
) -> Plan:
    """``loaded``: the spec at ``spec_path`` when the caller already loaded it (the fast path did).
    ``stream``: stage each file on disk as it is rendered (the caller applies or aborts the plan)."""
    spec = loaded if loaded is not None else load_spec(spec_path, out_root)
    return compile_loaded(spec, out_root, only=only, stream=stream)


def compile_loaded(
    spec: Spec, out_root: str, *, only: frozenset[str] | None = None, stream: bool = False
) -> Plan:
    """Validate every variant and render them; with ``only`` (variant names), render just those and
    build no lock (``check`` re-renders the files it found edited, nothing else)."""
    out_abs = os.path.abspath(out_root)
    spec_rel = _rel(spec.abspath, os.path.dirname(out_abs))
    sweep = sweep_view(spec, spec_rel)
    validator = load_validator(spec)  # fail on a bad schema reference before the slower work
    with total_budget(spec.model.limits.total_seconds):
        if search.is_search(spec):
            # a search sweep's variants are its trials so far (from its lock); the space is probed
            search.check_block(spec)
            probe_search(spec, sweep, validator)
            expansion = search.expansion_of(spec, recorded_trials.recorded(spec, out_abs))
        else:
            with gc_state.paused():
                expansion = expand(spec)
        return compile_expansion(expansion, out_abs, sweep, validator, spec_rel, only=only, stream=stream)


def _utf8_lock(text: str, spec: Spec) -> bytes:
    """The lock's UTF-8 bytes; a path it records (the spec's own file name, read from the disk) whose
    bytes are not UTF-8 cannot be written to JSON: exit 2 naming it, not an internal error."""
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:
        raise UserError(
            "a path the lock records is not UTF-8 (the spec's or an input's file name)",
            location=Location(escape.fs_name(spec.path)),
            hint="rename the file to a UTF-8 name",
        ) from None


def compile_expansion(
    expansion: Expansion,
    out_abs: str,
    sweep: dict[str, Any],
    validator: Validator | None,
    spec_rel: str,
    *,
    only: frozenset[str] | None = None,
    build_lock: bool = True,
    stream: bool = False,
) -> Plan:
    """Derive, validate and render the variants of ``expansion`` (a spec's, or a search's trials);
    ``stream``: staged on disk (see the module's docstring), which an error here deletes."""
    with total_budget(expansion.spec.model.limits.total_seconds):
        return _compile_expansion(expansion, out_abs, sweep, validator, spec_rel, only, build_lock, stream)


def _compile_expansion(
    expansion: Expansion,
    out_abs: str,
    sweep: dict[str, Any],
    validator: Validator | None,
    spec_rel: str,
    only: frozenset[str] | None,
    build_lock: bool,
    stream: bool,
) -> Plan:
    spec = expansion.spec
    expansion = derived(expansion, sweep)
    sweep_dir = os.path.join(out_abs, spec.name)
    chosen = expansion.variants if only is None else [v for v in expansion.variants if v.name in only]
    # Render workers start before validation and render while this process validates; an error of
    # the template, the staging or a variant's rendering is raised only after validation
    # passed, so a spec gets the same error as when validating first. Nothing is put in place here.
    with gc_state.frozen():  # the variants, from here on (see gc_state)
        staged_in = sweep_dir if stream and only is None else None
        started = _Started.start(spec, sweep, spec_rel, staged_in, chosen)
        try:
            # with `only`, just the chosen files: no lock (check re-renders edited files for their diff)
            if only is None and build_lock:
                files, lock_data, lock_bytes = _locked(
                    started, expansion, (sweep, validator, spec_rel), sweep_dir
                )
            else:
                _validate(expansion, sweep, validator, None)
                started.raise_early()
                files, lock_data, lock_bytes = _rendered_files(started, chosen, spec, None), {}, b""
        except BaseException:
            started.undo()
            raise
    return Plan(
        spec=spec,
        expansion=expansion,
        out_root=out_abs,
        sweep_dir=sweep_dir,
        shown_dir=display_path(sweep_dir),
        files=files,
        lock=lock_data,
        lock_bytes=lock_bytes,
        staging=started.staging,
    )


def _locked(
    started: _Started, expansion: Expansion, how: tuple[dict[str, Any], Validator | None, str], sweep_dir: str
) -> tuple[list[RenderedFile], dict[str, Any], bytes]:
    """Validate every variant, then take the render workers' files and build the lock. ``how``: the
    sweep view, the validator and the spec's path from the project."""
    sweep, validator, spec_rel = how
    spec = expansion.spec
    project = os.path.dirname(os.path.dirname(sweep_dir))
    report = _validate(expansion, sweep, validator, (sweep_dir, project))
    started.raise_early()
    varying = varying_paths(expansion)  # while the workers still render
    assert started.template is not None  # made, or `early` says why not
    files = _rendered_files(started, expansion.variants, spec, expansion)
    lock_data = _lock(expansion, files, started.template, project, spec_rel, (report, varying), sweep_dir)
    lock_bytes = _lock_bytes(lock_data, spec)
    if started.staging is not None:  # a render needs only the bytes; the entries hold 100s of bytes a file
        lock_data = {k: v for k, v in lock_data.items() if k != "files"}
    return files, lock_data, lock_bytes


def _validate(
    expansion: Expansion, sweep: dict[str, Any], validator: Validator | None, guarded: tuple[str, str] | None
) -> dict[str, Any] | None:
    """Every check of the variants' configs, and rename_guard's of ``guarded`` (the sweep folder a
    lock is built for, and the project); returns the seeds report the lock records."""
    spec = expansion.spec
    check_gate(expansion)
    check_constraints(expansion, sweep)
    check_schema(expansion, validator)
    check_choices(expansion)
    report = seeds.report_block(spec, [v.config for v in expansion.variants])
    if guarded is not None:
        sweep_dir, project = guarded
        rename_guard.check(expansion, sweep_dir, project, display_path(sweep_dir))
    return report


def _rendered_files(
    started: _Started, chosen: list[Variant], spec: Spec, whole: Expansion | None
) -> list[RenderedFile]:
    """What the render workers made of ``chosen``, checked as output paths; ``whole``: the
    expansion ``chosen`` is all of (not a search's), whose every axis must reach the files."""
    assert started.rendering is not None  # made, or `early` says why not
    files = [
        RenderedFile(out_path, variant, run_name, data, sha, run_dir, blind)
        for variant, (out_path, run_name, data, sha, run_dir, blind) in zip(
            chosen, started.rendering.result()
        )
    ]
    check_outputs(files, spec)
    if whole is not None and not search.is_search(whole.spec):  # a search's trials are no grid
        dead_axes.check(files, whole)
    return files


def _lock_bytes(lock_data: dict[str, Any], spec: Spec) -> bytes:
    """The lock file's sealed bytes; none without a lock."""
    return lock_digest.sealed(_utf8_lock(lock.dumps(lock_data), spec)) if lock_data else b""


@dataclass
class _Started:
    """The template loaded, the sweep folder's staging opened and the render workers started, or
    the error that stopped it (``early``: raised after validation, which wins over it)."""

    template: Template | None = None
    staging: Staging | None = None
    rendering: Rendering | None = None
    early: SweepgenError | None = None

    @classmethod
    def start(
        cls, spec: Spec, sweep: dict[str, Any], spec_rel: str, staged_in: str | None, chosen: list[Variant]
    ) -> _Started:
        """``staged_in``: the sweep folder to stage the files in as they are rendered (None: kept)."""
        started = cls()
        try:
            template_abs = os.path.normpath(os.path.join(spec.dir, spec.model.template))
            started.template = load_template(spec, template_abs)
            if staged_in is not None:
                started.staging = Staging.open(staged_in, display_path(staged_in))
            render_one = _renderer(
                spec, started.template, os.path.dirname(template_abs), sweep, spec_rel, started.staging
            )
            started.rendering = Rendering(render_one, chosen)
        except SweepgenError as err:
            started.early = err
        except BaseException:
            started.undo()
            raise
        return started

    def raise_early(self) -> None:
        """The error that stopped the start, once validation (whose errors win over it) passed."""
        if self.early is not None:
            raise self.early

    def undo(self) -> None:
        """Stop the workers and delete what was staged."""
        if self.rendering is not None:
            self.rendering.close()
        if self.staging is not None:
            self.staging.abort()


def _renderer(
    spec: Spec,
    template: Template,
    template_dir: str,
    sweep: dict[str, Any],
    spec_rel: str,
    staging: Staging | None,
) -> Callable[[int, Variant], Rendered]:
    """What renders one variant (in a render worker, see ``parallel``): its output path, bytes
    (staged on disk when ``staging``), sha256 and run dir."""
    output_t = compile_inline(template.environment, spec, "output", spec.model.output)
    header = header_maker(spec_rel)
    seconds = spec.model.limits.eval_seconds

    def render_one(index: int, variant: Variant) -> Rendered:
        ctx = context(variant.config, variant.context_view(), sweep)
        try:
            with time_budget(seconds):
                out_path = render_inline(output_t, ctx, spec, "output", variant)
        except TimeLimitExceeded as err:  # the watchdog's interrupt, delivered as the evaluation ended
            raise template_runtime_error(err, template_dir, spec, variant) from None
        try:
            with time_budget(seconds):
                text = render_bounded(template, ctx, spec.model.limits.output_bytes)
        except OutputTooLarge as err:
            raise too_large(err.limit, spec, variant, out_path) from None
        except Exception as err:  # noqa: BLE001 - anything raised by template code is the template's fault
            raise template_runtime_error(err, template_dir, spec, variant) from None
        if text.startswith("\ufeff"):  # a template saved with a BOM: the header goes first, not after it
            text = text[1:]
        text = header(out_path, variant.name, text)
        check_output_path(out_path, variant.name, spec)  # a path's own error first
        check_reads_back(text, out_path, spec, variant)
        if out_path.endswith(YAML_SUFFIXES):
            check_reads_alike(text, out_path, spec, variant)  # before: its words name both readers
        check_types_kept(text, out_path, spec, variant)
        data = text.encode("utf-8")
        if len(data) > spec.model.limits.output_bytes:
            raise too_large(spec.model.limits.output_bytes, spec, variant, out_path)
        run_dir = run_dir_of_rendered(out_path, data, variant.config, variant.run_dir)
        blind = dead_axes.name_blind(text, variant, run_dir) if variant.axes else None
        if staging is None:
            return out_path, variant.run_name or variant.name, data, sha256(data), run_dir, blind
        staging.write(index, out_path, data)  # before check_outputs: under a temporary name only
        return out_path, variant.run_name or variant.name, None, sha256(data), run_dir, blind

    return render_one


def probe_search(spec: Spec, sweep: dict[str, Any], validator: Validator | None) -> None:
    """A search's space, checked before any trial: the gate and the schema must hold at every
    probed point (bounds and samples); the constraints must admit at least one of them."""
    points = search.probe_points(spec)
    failures: list[tuple[str, ValidationError]] = []
    for i, (where, values) in enumerate(points):
        expansion = derive(
            search.expansion_of(spec, [search.trial_variant(spec, f"probe{i}", values)]), sweep
        )
        try:
            check_gate(expansion)
            check_schema(expansion, validator)
        except ValidationError as err:
            err.message = f"search probe at {where}: {err.message}"
            raise
        try:
            check_constraints(expansion, sweep)
        except ValidationError as err:
            failures.append((where, err))
    if len(failures) == len(points):
        raise search.too_tight(spec, failures, len(points))


def lock_entries(files: list[RenderedFile], base: dict[str, Any]) -> list[lock.LockFile]:
    """Each rendered file's lock entry: its differences from ``base``, its hash and run dir (a render
    and the search controller, which adds trials to a lock, write the same bytes)."""
    return list(_entries(files, lambda v: sorted(paths.diff_at(base, v.config, v.touched))))


def _entries(
    files: list[RenderedFile], differences: Callable[[Variant], Iterable[str]]
) -> Iterator[lock.LockFile]:
    """``lock_entries`` one at a time: ``lock.build`` keeps only what it writes of each."""
    ordered: dict[int, tuple[dict[str, str], dict[str, str]]] = {}  # variants share layer maps (expand)
    for f in files:
        hit = ordered.get(id(f.variant.layers))
        if hit is None or hit[0] is not f.variant.layers:
            hit = ordered[id(f.variant.layers)] = (f.variant.layers, dict(sorted(f.variant.layers.items())))
        yield lock.entry_for(
            path=f.path,
            variant=f.variant.name,
            run_name=f.run_name,
            sha256=f.sha256,
            layers=hit[1],
            config=f.variant.config,
            differing=differences(f.variant),
            run_dir=f.run_dir,
        )


def _lock(
    expansion: Expansion,
    files: list[RenderedFile],
    template: Template,
    project: str,
    spec_rel: str,
    summary: tuple[dict[str, Any] | None, list[str]],
    sweep_dir: str,
) -> dict[str, Any]:
    """The lock's content: the base once, each file's differences from it, every input's hash.
    ``summary``: the seeds report block and the varying paths (``varying_paths``)."""
    report, varying = summary
    spec = expansion.spec
    base = spec.base
    previous = _recorded_inputs(sweep_dir) if imports_disabled() else None
    inputs = render_inputs(spec, template, project, previous=previous)  # the spec's own hash among them
    resources = spec_resources.lock_block(spec.model.resources)
    report = _with_trl_trainer(report, trl_command(spec))
    return lock.build(
        sweep=spec.name,
        spec=spec_rel,
        spec_sha256=inputs[spec_rel],
        inputs=inputs,
        varying=varying,
        base=base,
        files=_entries(files, expansion.differences),
        resources=resources,
        report=report,
    )


def _with_trl_trainer(report: dict[str, Any] | None, command: str | None) -> dict[str, Any] | None:
    """The report block with ``trl``: the TRL command the spec's schema is written for (``trl:X``, or
    a file exported from it: validate.trl_command); `report` takes that trainer's natural objective
    where the runs' recorded command does not say (a script of the person's own). Recorded as a
    name, read back as data, never run."""
    return report if command is None else {**(report or {}), "trl": command}


def _recorded_inputs(sweep_dir: str) -> dict[str, str] | None:
    """The inputs the sweep's current lock records (None without a readable one): what a render
    under --no-import keeps for the schema module it did not import."""
    try:
        recorded = lock.read(sweep_dir, display_path(sweep_dir))
    except UserError:
        return None
    return recorded.inputs if recorded is not None else None


def _rel(path: str, start: str) -> str:
    return os.path.relpath(path, start).replace(os.sep, "/")


def varying_paths(expansion: Expansion) -> list[str]:
    """Leaf paths whose value is not the same in every variant, sorted."""
    candidates: set[str] = set()
    for variant in expansion.variants:
        candidates.update(expansion.differences(variant))
    out = []
    for path in candidates:
        parts = tuple(path.split("."))
        first = paths.get(expansion.variants[0].config, parts)
        if any(not paths.same(first, paths.get(v.config, parts)) for v in expansion.variants):
            out.append(path)
    return sorted(out)
