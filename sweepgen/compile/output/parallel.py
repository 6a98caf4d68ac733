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
import signal
import struct
import traceback
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from multiprocessing.connection import Connection, wait
from typing import Any

from sweepgen import errors
from sweepgen.compile.spec.variants.expand import Variant

PARALLEL_MIN = 2000  # variants; below this, starting processes costs more than it saves
WORKERS_ENV = "SWEEPGEN_WORKERS"  # force a worker count (1 = serial), e.g. to compare outputs

# (output path, run name, bytes or None when staged on disk, sha256, run dir)
Rendered = tuple[str, str, bytes | None, str, str | None, bytes | None]
RenderOne = Callable[[int, Variant], Rendered]  # (index in variant order, variant)


@dataclass
class _Failure:
    index: int
    kind: str  # a sweepgen error class name, or "bug"
    fields: dict[str, Any]


_JOB: tuple[RenderOne, Sequence[Variant]] | None = None  # set in the parent before forking
_MAX_CHUNKS = 4096  # their numbers (4 bytes each) must fit the pipe's buffer before a worker reads


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
    ``result`` renders them in this process. ``close`` stops the workers (on the caller's error,
    Ctrl-C included).

    Not ``multiprocessing.Pool``: its workers share a queue lock, so a worker killed by Ctrl-C while
    waiting for work leaves the lock held and ``terminate`` waits for it for ever (with the sweep
    folder's lock, inherited by every worker, held too), and each worker prints its own traceback.
    Here the workers ignore SIGINT (the parent alone answers it), take chunk numbers from a pipe
    (the kernel hands each 4-byte read out whole: no lock to leave held) and answer on a pipe of
    their own; ``close`` kills and reaps them, so nothing of theirs outlives the render."""

    def __init__(self, render_one: RenderOne, variants: Sequence[Variant]) -> None:
        self._render_one = render_one
        self._variants = variants
        self._workers: list[tuple[Any, Connection]] = []  # (process, the end its results come from)
        workers = min(worker_count(len(variants)), max(1, len(variants)))
        if workers > 1:
            # 16 chunks a worker: the last chunk, which one worker renders while the other may have
            # none left, is a 32nd of the work on two cores
            self._chunks = _chunks(len(variants), min(workers * 16, _MAX_CHUNKS))
            self._start(render_one, variants, workers)

    def _start(self, render_one: RenderOne, variants: Sequence[Variant], workers: int) -> None:
        global _JOB
        _JOB = (render_one, variants)
        ctx = multiprocessing.get_context("fork")
        todo_r, todo_w = os.pipe()
        # blocked from before the fork until each worker ignores it, so Ctrl-C never reaches one
        # still running our handlers; the parent's pending one is delivered when it unblocks
        old = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
        try:
            os.write(todo_w, b"".join(struct.pack("<I", i) for i in range(len(self._chunks))))
            for _ in range(workers):
                recv, send = ctx.Pipe(duplex=False)
                proc = ctx.Process(target=_work, args=(todo_r, todo_w, self._chunks, send), daemon=True)
                proc.start()
                send.close()
                self._workers.append((proc, recv))
        except BaseException:
            self.close()
            raise
        finally:
            os.close(todo_r)
            os.close(todo_w)
            _JOB = None
            signal.pthread_sigmask(signal.SIG_SETMASK, old)

    def result(self) -> list[Rendered]:
        if not self._workers:
            return [self._render_one(i, v) for i, v in enumerate(self._variants)]
        try:
            parts = self._collect()
        finally:
            self.close()
        out: list[Rendered] = []
        for part in parts:
            if isinstance(part, _Failure):
                raise _rebuild(part)
            out.extend(part)
        return out

    def _collect(self) -> list[list[Rendered] | _Failure]:
        parts = self._received()
        missing = [i for i in range(len(self._chunks)) if i not in parts]
        if missing:
            raise self._died(missing[0])
        return [parts[i] for i in range(len(self._chunks))]

    def _received(self) -> dict[int, list[Rendered] | _Failure]:
        """Every chunk result the workers sent, by chunk number, read until every worker ended."""
        parts: dict[int, list[Rendered] | _Failure] = {}
        open_ends: list[Connection] = [recv for _, recv in self._workers]
        while open_ends:
            for end in wait(open_ends):
                assert isinstance(end, Connection)
                try:
                    message: tuple[int, list[Rendered] | _Failure] = end.recv()
                except EOFError:  # the worker is done, or died: a missing chunk says which
                    open_ends.remove(end)
                    continue
                parts[message[0]] = message[1]
        return parts

    def _died(self, chunk: int) -> RuntimeError:
        """A chunk no worker sent back: its worker died; the workers' exit codes say how."""
        codes = sorted({proc.exitcode for proc, _ in self._workers if proc.exitcode})
        return RuntimeError(f"a render worker ended without rendering chunk {chunk} (exit {codes})")

    def close(self) -> None:
        for proc, recv in self._workers:
            if proc.exitcode is None:
                proc.kill()  # SIGKILL: a worker stuck in one long call ends too
            proc.join()
            recv.close()
        self._workers = []


def _work(todo: int, todo_w: int, chunks: list[tuple[int, int]], send: Any) -> None:
    """A worker: chunk numbers from ``todo`` until it is empty, each chunk's result sent back."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})
    os.close(todo_w)  # the pipe ends (EOF) once the parent and every worker closed this end
    while len(raw := os.read(todo, 4)) == 4:
        index = struct.unpack("<I", raw)[0]
        send.send((index, _render_chunk(chunks[index])))
    send.close()


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
