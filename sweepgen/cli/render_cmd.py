"""``sweepgen render SPEC… [-o DIR] [--dry-run]``: compile specs and write their files atomically."""

from __future__ import annotations

import contextlib
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING

import click

from sweepgen.cli import EXIT_OK, _no_import
from sweepgen.cli._console import detail, info
from sweepgen.cli._params import limit_option, output_root_option
from sweepgen.cli._table import emit, format_option
from sweepgen.escape import line

if TYPE_CHECKING:  # the compiler loads when the command runs
    from sweepgen.compile.output.write.writer import Outcome


@click.command()
@click.argument("specs", nargs=-1, type=click.Path(dir_okay=False))
@output_root_option("output root; each sweep goes to <DIR>/<name>/")
@click.option("--dry-run", is_flag=True, help="show the plan table; write nothing")
@format_option()
@_no_import.option
@limit_option
def render(specs: tuple[str, ...], out_root: str, dry_run: bool, fmt: str, no_import: bool) -> int:
    """Expand, validate and render SPECs; all or nothing, plus sweep.lock.json per sweep.

    Without SPECs: the specs of [tool.sweepgen] in pyproject.toml (as `check` finds them)."""
    # the compiler (pydantic, jinja2: ~0.15 s) loads when the command runs, not for --help
    from sweepgen.compile import api
    from sweepgen.compile.output.lockfile.lock import LOCK_NAME
    from sweepgen.compile.schema import validate as schema

    started = time.perf_counter()
    with schema.no_import() if no_import else contextlib.nullcontext() as skipped:
        outcomes = api.render(list(specs) or None, out_root, dry_run=dry_run)
    _no_import.report(skipped or [])
    detail(
        f"compiled and {'planned' if dry_run else 'wrote'} {len(outcomes)} spec(s) in "
        f"{time.perf_counter() - started:.2f} s"
    )
    if dry_run:
        _show_plan(outcomes, fmt, LOCK_NAME)
    else:
        _show_written(outcomes, fmt)
    return EXIT_OK


def _show_plan(outcomes: Sequence[Outcome], fmt: str, lock_name: str) -> None:
    """--dry-run: each spec's files and what a render would do to them (one table for programs)."""
    if fmt == "text":
        for out in outcomes:
            rows: list[list[object]] = [
                [a.path, a.variant or "", a.run_name or "", a.action] for a in out.actions
            ]
            rows.append([lock_name, "", "", _lock_action(out)])
            title = f"{out.spec_path} -> {out.shown_dir}/ (dry run: nothing written)"
            emit(title, ["file", "variant", "run name", "action"], rows, fmt)
        return
    table: list[list[object]] = [
        [out.spec_path, f"{out.shown_dir}/{a.path}", a.variant, a.run_name, a.action]
        for out in outcomes
        for a in out.actions
    ]
    emit("", ["spec", "file", "variant", "run_name", "action"], table, fmt)


def _show_written(outcomes: Sequence[Outcome], fmt: str) -> None:
    """What each spec's render wrote: a line per spec, or one table for programs."""
    if fmt == "text":
        for out in outcomes:
            info(
                line(
                    f"{out.spec_path}: {out.files} file(s) in {out.shown_dir}/ "
                    f"({out.count('create')} created, {out.count('update')} updated, "
                    f"{out.count('unchanged')} unchanged, {out.count('remove')} removed)"
                )
            )
        return
    columns = ["spec", "folder", "files", "created", "updated", "unchanged", "removed"]
    summary: list[list[object]] = [
        [out.spec_path, out.shown_dir, out.files]
        + [out.count(a) for a in ("create", "update", "unchanged", "remove")]
        for out in outcomes
    ]
    emit("", columns, summary, fmt)


def _lock_action(out: Outcome) -> str:
    """What a render does to the sweep's lock: a new sweep's lock is created, not updated."""
    if not out.lock_changed:
        return "unchanged"
    return "update" if out.recorded is not None and out.recorded.lock_bytes is not None else "create"
