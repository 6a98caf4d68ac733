"""Where one optimizer step's time goes: the ``time/*`` keys of metrics.jsonl (docs/TRAINER.md).

Phases are stamped where our trainer already has a hook (``on_step_begin``/``on_optimizer_step``/
``on_step_end`` callbacks, ``training_step``, transformers' public ``compute_loss``, the reward
functions we hand TRL, a timing wrapper on our own model's ``generate``, forward hooks on the
reference model). On CUDA a stamp is a CUDA event, so no phase boundary waits for the GPU: the one
synchronisation is at the step's end, where TRL's logging synchronises anyway. Elapsed times between
events are on the GPU's timeline, which includes the time it sat idle waiting for Python, so the
phases still add up to the step's wall time. On CPU a stamp is ``time.perf_counter()``.

Nesting: generation, rewards and reference log-probs happen inside TRL's input preparation (the
part of ``training_step`` before ``compute_loss``); ``time/scoring_other_s`` is what is left of it
(decoding, old log-probs when ``num_iterations`` > 1, advantages, bookkeeping).
"""

from __future__ import annotations

import functools
import time
from collections import defaultdict
from collections.abc import Callable
from typing import Any

# metrics.jsonl keys, in the order the phases happen
PHASES = (
    "generation",
    "reward",
    "ref_logprobs",
    "scoring_other",
    "loss_forward",
    "backward",
    "optimizer",
    "logging",
)
KEYS = tuple(f"time/{phase}_s" for phase in PHASES) + ("time/step_s",)


class _Stamp:
    """A point in time: ``time.perf_counter()`` on CPU, a recorded CUDA event on CUDA."""

    __slots__ = ("event", "t")

    def __init__(self, cuda: bool) -> None:
        self.t = time.perf_counter()
        self.event: Any = None
        if cuda:
            import torch  # noqa: PLC0415 - only on CUDA; this module is imported on CPU-only installs too

            self.event = torch.cuda.Event(enable_timing=True)  # type: ignore[no-untyped-call]
            self.event.record()

    def seconds_to(self, end: _Stamp) -> float:
        if self.event is None:
            return end.t - self.t
        return float(self.event.elapsed_time(end.event)) / 1000.0


class StepClock:
    """Intervals per phase within one optimizer step; ``close`` resolves them into seconds."""

    def __init__(self, cuda: bool) -> None:
        self.cuda = cuda
        self._intervals: dict[str, list[tuple[_Stamp, _Stamp]]] = defaultdict(list)
        self._open: dict[str, _Stamp] = {}
        # the previous step's logging (metrics files, checkpoints), known at this step's start; timed
        # on the CPU clock: the GPU has nothing queued then (``close`` waited for it)
        self._logging_s: float | None = None
        self._logging_start: float | None = None

    def start(self, phase: str) -> None:
        self._open[phase] = _Stamp(self.cuda)

    def stop(self, phase: str) -> None:
        begin = self._open.pop(phase, None)
        if begin is not None:  # a stop without start: a hook fired outside a timed step (eval)
            self._intervals[phase].append((begin, _Stamp(self.cuda)))

    def timed(self, phase: str, fn: Callable[..., Any]) -> Callable[..., Any]:
        """``fn`` with its calls counted under ``phase`` (keeps ``__name__``: TRL names rewards by it)."""

        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            self.start(phase)
            try:
                return fn(*args, **kwargs)
            finally:
                self.stop(phase)

        return wrapper

    def step_begin(self) -> None:
        if self._logging_start is not None:
            self._logging_s = time.perf_counter() - self._logging_start
        self._intervals.clear()
        self._open.clear()
        self.start("step")

    def close(self) -> dict[str, float | None]:
        """The finished step's phases in seconds; starts timing its logging (reported next step)."""
        self.stop("step")
        if self.cuda:
            import torch  # noqa: PLC0415

            torch.cuda.synchronize()  # the one wait per step: every event above has happened
        totals = {phase: self._total(phase) for phase in (*PHASES, "step", "prepare") if phase != "logging"}
        nested = totals["generation"] + totals["reward"] + totals["ref_logprobs"]
        totals["scoring_other"] = max(0.0, totals["prepare"] - nested)
        row: dict[str, float | None] = {f"time/{p}_s": totals[p] for p in PHASES if p != "logging"}
        row["time/logging_s"] = self._logging_s  # None on a session's first step
        row["time/step_s"] = totals["step"]
        self._logging_start = time.perf_counter()
        return row

    def _total(self, phase: str) -> float:
        return sum(begin.seconds_to(end) for begin, end in self._intervals.get(phase, ()))
