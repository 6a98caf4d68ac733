"""Rendering every variant's file, across processes above a size threshold.

Output is byte-identical and the error raised is the same (the first in variant order) whatever the
number of workers: workers render contiguous chunks in variant order, each stops at its first
error, and the parent takes the results in chunk order, so the lowest failing variant wins.
Workers are forked after the whole compile state is built, so they share it copy-on-write and
nothing but each file's path and sha256 (its bytes too, when they are not staged on disk by the
worker, see ``staging``), or an error's fields, crosses a pipe.
"""

from __future__ import annotations

import multiprocessing
import os
import traceback
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from sweepgen import errors
from sweepgen.compile.spec.expand import Variant

PARALLEL_MIN = 2000  # variants; below this, starting processes costs more than it saves
WORKERS_ENV = "SWEEPGEN_WORKERS"  # force a worker count (1 = serial), e.g. to compare outputs

# (output path, run name, bytes or None when staged on disk, sha256, run dir)
Rendered = tuple[str, str, bytes | None, str, str | None]
RenderOne = Callable[[int, Variant], Rendered]  # (index in variant order, variant)


@dataclass
class _Failure:
    index: int
    kind: str  # a sweepgen error class name, or "bug"
    fields: dict[str, Any]


_JOB: tuple[RenderOne, Sequence[Variant]] | None = None  # set in the parent before forking


def worker_count(n_variants: int) -> int:
    forced = os.environ.get(WORKERS_ENV, "")
    if forced:
        if not forced.isdigit() or int(forced) < 1:
            raise errors.UserError(
                f"{WORKERS_ENV}={forced!r} is not a positive number",
                hint=f"unset it, or set e.g. {WORKERS_ENV}=2",
            )
        return int(forced)
    if n_variants < PARALLEL_MIN or "fork" not in multiprocessing.get_all_start_methods():
        return 1
    return max(1, len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1)


class Rendering:
    """Every variant being rendered. With more than one worker, the workers are forked and start
    at once, so the caller can validate the variants meanwhile (``result`` then waits); with one,
    ``result`` renders them in this process. ``close`` stops the workers (on the caller's error)."""

    def __init__(self, render_one: RenderOne, variants: Sequence[Variant]) -> None:
        global _JOB
        self._render_one = render_one
        self._variants = variants
        self._pool: Any = None
        workers = min(worker_count(len(variants)), max(1, len(variants)))
        if workers > 1:
            _JOB = (render_one, variants)
            self._pool = multiprocessing.get_context("fork").Pool(workers)
            # 16 chunks a worker: the last chunk, which one worker renders while the other may have
            # none left, is a 32nd of the work on two cores (with 4 a worker, an eighth: ~0.4 s idle
            # at 100,000 variants)
            self._parts = self._pool.map_async(
                _render_chunk, _chunks(len(variants), workers * 16), chunksize=1
            )

    def result(self) -> list[Rendered]:
        if self._pool is None:
            return [self._render_one(i, v) for i, v in enumerate(self._variants)]
        try:
            parts = self._parts.get()
        finally:
            self.close()
        out: list[Rendered] = []
        for part in parts:
            if isinstance(part, _Failure):
                raise _rebuild(part)
            out.extend(part)
        return out

    def close(self) -> None:
        global _JOB
        if self._pool is not None:
            self._pool.terminate()
            self._pool.join()
            self._pool = None
        _JOB = None


def _chunks(n: int, pieces: int) -> list[tuple[int, int]]:
    step = -(-n // pieces)
    return [(i, min(n, i + step)) for i in range(0, n, step)]


def _render_chunk(bounds: tuple[int, int]) -> list[Rendered] | _Failure:
    assert _JOB is not None  # set before the fork
    render_one, variants = _JOB
    out = []
    for i in range(*bounds):
        try:
            out.append(render_one(i, variants[i]))
        except errors.SweepgenError as err:
            fields = {"message": err.message, "location": err.location, "key": err.key, "hint": err.hint}
            return _Failure(i, type(err).__name__, fields)
        except Exception:  # noqa: BLE001 - a bug: carried to the parent with its traceback
            return _Failure(i, "bug", {"traceback": traceback.format_exc()})
    return out


def _rebuild(failure: _Failure) -> Exception:
    if failure.kind == "bug":
        return RuntimeError(
            f"rendering variant #{failure.index} failed in a worker:\n{failure.fields['traceback']}"
        )
    cls = getattr(errors, failure.kind)
    fields = failure.fields
    return cls(fields["message"], location=fields["location"], key=fields["key"], hint=fields["hint"])  # type: ignore[no-any-return]
