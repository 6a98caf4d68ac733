"""The compile pipeline in the order it runs: load -> expand -> derive -> gate -> constraints ->
schema -> render -> lock. Everything stays in memory; ``sweepgen.compile.writer`` writes a plan to
disk, all or nothing, after every spec compiled."""

from __future__ import annotations

import gc
import os
from dataclasses import dataclass
from typing import Any

from jinja2 import Template

from sweepgen import paths
from sweepgen.compile import lock, lock_digest, seeds
from sweepgen.compile.constraints import check_constraints
from sweepgen.compile.context import context, sweep_view
from sweepgen.compile.derive import derive
from sweepgen.compile.expand import Expansion, Variant, expand
from sweepgen.compile.gate import check_gate
from sweepgen.compile.inputs import render_inputs
from sweepgen.compile.parallel import render_all
from sweepgen.compile.render import (
    OutputTooLarge,
    RenderedFile,
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
from sweepgen.compile.rundir import run_dir_of_rendered
from sweepgen.compile.sandbox import time_budget
from sweepgen.compile.schema import check_schema, load_validator
from sweepgen.compile.spec import Spec, display_path, load_spec


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


def variants_of(spec: Spec, sweep: dict[str, Any]) -> Expansion:
    """``expand`` then ``derive``, with Python's cyclic garbage collector paused: the two build
    millions of small dicts and tuples that all live on (a 100,000-variant sweep), which the collector
    would otherwise walk again and again, a third of their time, to find no cycle (they make none)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        return derive(expand(spec), sweep)
    finally:
        if enabled:
            gc.enable()


def compile_spec(
    spec_path: str,
    out_root: str = "generated",
    *,
    only: frozenset[str] | None = None,
    loaded: Spec | None = None,
) -> Plan:
    """``loaded``: the spec at ``spec_path`` when the caller already loaded it (the fast path did)."""
    spec = loaded if loaded is not None else load_spec(spec_path, out_root)
    return compile_loaded(spec, out_root, only=only)


def compile_loaded(spec: Spec, out_root: str, *, only: frozenset[str] | None = None) -> Plan:
    """Validate every variant and render them; with ``only`` (variant names), render just those and
    build no lock (``check`` re-renders the files it found edited, nothing else)."""
    out_abs = os.path.abspath(out_root)
    project = os.path.dirname(out_abs)
    spec_rel = _rel(spec.abspath, project)
    sweep = sweep_view(spec, spec_rel)
    validator = load_validator(spec)  # fail on a bad schema reference before the slower work
    expansion = variants_of(spec, sweep)
    check_gate(expansion)
    check_constraints(expansion, sweep)
    check_schema(expansion, validator)
    report = seeds.report_block(spec, [v.config for v in expansion.variants])

    template_abs = os.path.normpath(os.path.join(spec.dir, spec.model.template))
    template = load_template(spec, template_abs)
    env = template.environment
    output_t = compile_inline(env, spec, "output", spec.model.output)
    header = header_maker(spec_rel)
    template_dir = os.path.dirname(template_abs)

    seconds = spec.model.limits.eval_seconds

    def render_one(variant: Variant) -> tuple[str, str, bytes, str | None]:
        ctx = context(variant.config, variant.context_view(), sweep)
        with time_budget(seconds):
            out_path = render_inline(output_t, ctx, spec, "output", variant)
        try:
            with time_budget(seconds):
                text = render_bounded(template, ctx, spec.model.limits.output_bytes)
        except OutputTooLarge as err:
            raise too_large(err.limit, spec, variant, out_path) from None
        except Exception as err:  # noqa: BLE001 - anything raised by template code is the template's fault
            raise template_runtime_error(err, template_dir, spec, variant) from None
        if text.startswith("\ufeff"):  # a template saved with a BOM: the header goes first, not after it
            text = text[1:]
        data = header(out_path, variant.name, text).encode("utf-8")
        if len(data) > spec.model.limits.output_bytes:
            raise too_large(spec.model.limits.output_bytes, spec, variant, out_path)
        run_dir = run_dir_of_rendered(out_path, data, variant.config, variant.run_dir)
        return out_path, variant.run_name or variant.name, data, run_dir

    chosen = expansion.variants if only is None else [v for v in expansion.variants if v.name in only]
    files = [
        RenderedFile(out_path, variant, run_name, data, sha256(data), run_dir)
        for variant, (out_path, run_name, data, run_dir) in zip(chosen, render_all(render_one, chosen))
    ]
    check_outputs(files, spec)
    # with `only`, just the chosen files: no lock (check re-renders edited files for their diff)
    lock_data = {} if only is not None else _lock(spec, expansion, files, template, project, spec_rel, report)
    sweep_dir = os.path.join(out_abs, spec.name)
    return Plan(
        spec=spec,
        expansion=expansion,
        out_root=out_abs,
        sweep_dir=sweep_dir,
        shown_dir=display_path(sweep_dir),
        files=files,
        lock=lock_data,
        lock_bytes=lock_digest.seal(lock.dumps(lock_data)).encode("utf-8") if lock_data else b"",
    )


def _lock(
    spec: Spec,
    expansion: Expansion,
    files: list[RenderedFile],
    template: Template,
    project: str,
    spec_rel: str,
    report: dict[str, Any] | None,
) -> dict[str, Any]:
    """The lock's content: the base once, each file's differences from it, every input's hash."""
    base = spec.base
    entries = [
        lock.entry_for(
            path=f.path,
            variant=f.variant.name,
            run_name=f.run_name,
            sha256=f.sha256,
            layers=dict(sorted(f.variant.layers.items())),
            base=base,
            config=f.variant.config,
            touched=f.variant.touched,
            run_dir=f.run_dir,
        )
        for f in files
    ]
    inputs = render_inputs(spec, template, project)  # the spec's own hash among them: read once
    resources = spec.model.resources.model_dump() if spec.model.resources is not None else None
    return lock.build(
        sweep=spec.name,
        spec=spec_rel,
        spec_sha256=inputs[spec_rel],
        inputs=inputs,
        varying=varying_paths(expansion),
        base=base,
        files=entries,
        resources=resources,
        report=report,
    )


def _rel(path: str, start: str) -> str:
    return os.path.relpath(path, start).replace(os.sep, "/")


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
