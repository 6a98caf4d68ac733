"""Graceful stop on SIGTERM, SIGINT or SIGUSR2: finish the step, save a checkpoint, exit 128+signum.

Who sends what: the local executor SIGTERMs a run's process group on Ctrl-C and SIGKILLs it
``--stop-timeout`` seconds later (sweepgen/run/local/executor.py); under Slurm, SIGUSR2 comes before
the time limit and SIGTERM on scancel or preemption, and Slurm signals every process of the job
while sweepgen's node wrapper (sweepgen/run/slurm/task.py) forwards each as a SIGTERM too. So one
stop request often reaches the trainer twice within milliseconds: signals within
``REPEAT_WINDOW_S`` of the first are the same request. A later one means "now": the process exits at once.

What the first signal does depends on where the run is:

- set-up (config checks, model load, TRL's own set-up): nothing is worth saving, so the handler
  raises ``Stopped`` on the spot; the run directory holds at most config.yaml and grpo_args.json.
- training: the handler only records the signal. At the end of the current optimizer step (of the
  current generation cycle when one batch of completions serves several steps, so the resume draws
  the same batches) ``StopCallback`` sets ``should_log``, ``should_save`` and ``should_training_stop``:
  transformers saves the checkpoint exactly as it saves the periodic ones, so a resume takes the
  tested path. ``train()`` returns and the run raises ``Stopped``: no summary.json, exit 128+signum.
- the last step already done: the run is complete, summary.json is written and it exits 0 (both
  executors accept a finished run whatever signal reached it).

A partly written checkpoint (second signal during the save) has no trainer_state.json, which
transformers writes last, so ``RunDir.last_checkpoint`` skips it and the next run resumes from the
one before. Nothing here imports torch; the callback class is built when first asked for.
"""

from __future__ import annotations

import contextlib
import math
import os
import signal
import sys
import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # annotations only: stop handling is torch-free until the callback is built
    from transformers import TrainerCallback, TrainerControl, TrainerState, TrainingArguments

# SIGUSR2 does not exist on Windows, where only Ctrl-C (SIGINT) and SIGTERM can reach the trainer.
STOP_SIGNALS = tuple(
    s for s in (signal.SIGTERM, signal.SIGINT, getattr(signal, "SIGUSR2", None)) if s is not None
)
REPEAT_WINDOW_S = 2.0  # Slurm and sweepgen's node wrapper both signal the trainer for one request


def _signal_name(signum: int | None) -> str:
    if signum is None:
        return "no signal"
    try:
        return signal.Signals(signum).name
    except ValueError:
        return f"signal {signum}"


class Stopped(BaseException):
    """The run stopped on a signal before finishing. A BaseException, like KeyboardInterrupt, so a
    library's ``except Exception`` around model loading cannot swallow it when raised mid-set-up."""

    def __init__(self, signum: int, message: str) -> None:
        super().__init__(message)
        self.signum = signum
        self.message = message

    @property
    def exit_code(self) -> int:
        return 128 + self.signum  # the shell's convention: 143 for SIGTERM, 130 SIGINT, 140 SIGUSR2


def _note(text: str) -> None:
    # Straight to the file descriptor: a print() here could re-enter a write the main thread was in.
    with contextlib.suppress(OSError, ValueError):  # stderr closed: the exit code still tells what happened
        os.write(sys.stderr.fileno(), (text + "\n").encode())


class GracefulStop:
    """Installs the handlers for the duration of a ``with`` block; restores the previous ones after."""

    def __init__(
        self,
        *,
        echo: Callable[[str], None] = lambda _: None,
        repeat_window_s: float = REPEAT_WINDOW_S,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.echo = echo
        self.repeat_window_s = repeat_window_s
        self.clock = clock
        self.phase = "setup"  # -> "training" (on_train_begin)
        self.signum: int | None = None
        self._first_at = 0.0
        self._previous: dict[int, Any] = {}

    @property
    def requested(self) -> bool:
        return self.signum is not None

    def __enter__(self) -> GracefulStop:
        # Signals are delivered to the main thread only; a run started in another thread (a test, a
        # notebook helper) cannot receive them, so there is nothing to install there.
        if threading.current_thread() is threading.main_thread():
            for sig in STOP_SIGNALS:
                self._previous[sig] = signal.signal(sig, self.handle)
        return self

    def __exit__(self, *exc: object) -> None:
        for sig, previous in self._previous.items():
            signal.signal(sig, previous)
        self._previous.clear()

    def handle(self, signum: int, frame: object) -> None:
        name = _signal_name(signum)
        now = self.clock()
        if self.signum is None:
            self.signum, self._first_at = signum, now
            if self.phase == "setup":
                raise Stopped(
                    signum,
                    f"stopped by {name} before training started; nothing to save "
                    "(run the same config again to start it)",
                )
            _note(
                f"# received {name}: stopping at the end of the current step, then saving a "
                "checkpoint (send it again to exit at once, without saving)"
            )
            return
        if now - self._first_at < self.repeat_window_s:
            _note(f"# received {name} again: the same stop request")
            return
        _note(
            f"# received {name} while stopping: exiting at once; a partly written checkpoint "
            "is ignored on resume"
        )
        os._exit(128 + signum)

    def callback(self, *, cycle_steps: int = 1) -> TrainerCallback:
        """The TrainerCallback that turns a recorded signal into transformers' own save-and-stop."""
        from transformers import TrainerCallback  # noqa: PLC0415 - lazy: stop handling is torch-free; transformers loads only for the callback

        stop = self

        class StopCallback(TrainerCallback):
            def on_train_begin(
                self, args: TrainingArguments, state: TrainerState, control: TrainerControl, **kwargs: Any
            ) -> None:
                stop.phase = "training"

            def on_step_end(
                self, args: TrainingArguments, state: TrainerState, control: TrainerControl, **kwargs: Any
            ) -> None:
                # every rank stops at the same step, or one waits forever (no args: a unit test)
                if getattr(args, "world_size", 1) > 1:
                    stop.agree(args.device)
                if not stop.requested or state.global_step >= state.max_steps:
                    return  # the last step is saved and ends the run by transformers' own rule
                if state.global_step % cycle_steps:
                    return  # a resume mid-cycle would draw other completions than the uninterrupted run
                control.should_log = True  # the steps since the last log row are not lost
                control.should_save = True
                control.should_training_stop = True
                stop.echo(
                    f"# {_signal_name(stop.signum)}: stopping after step {state.global_step}"
                    f"/{state.max_steps}, saving checkpoint-{state.global_step}"
                )

        return StopCallback()

    def agree(self, device: Any) -> None:
        """Under DDP: a stop any rank received is every rank's (the launcher forwards a signal to
        each rank, but they may be a step apart when it lands; a rank stopping alone would leave
        the others waiting in the next step's all-reduce and its checkpoint without their state)."""
        import torch  # noqa: PLC0415 - lazy: only a multi-process run gets here, with torch loaded
        import torch.distributed as dist  # noqa: PLC0415 - lazy: as above

        flag = torch.tensor([self.signum or 0], device=device)
        dist.all_reduce(flag, op=dist.ReduceOp.MAX)
        if self.signum is None and int(flag.item()):
            self.signum, self._first_at = int(flag.item()), self.clock()

    def finish(self, *, step: int, max_steps: int, checkpoint: str | None) -> None:
        """After ``train()`` returned: raise Stopped if a signal cut the run short."""
        signum = self.signum
        if signum is None:  # no stop was requested
            return
        name = _signal_name(signum)
        if step >= max_steps:
            self.echo(f"# {name} arrived during the last step: the run is complete")
            return
        saved = f"saved {checkpoint}" if checkpoint else "no checkpoint was saved"
        raise Stopped(
            signum,
            f"stopped by {name} after step {step} of {max_steps}; {saved}; "
            "no summary.json: the run is not finished (run the same config again to "
            "resume from its last checkpoint)",
        )


def cycle_steps(args: Any) -> int:
    """Optimizer steps per generation cycle: TRL generates once every ``steps_per_generation ×
    num_iterations`` micro-batches, and an optimizer step takes ``gradient_accumulation_steps``."""
    generate_every: int = args.steps_per_generation * args.num_iterations
    accumulate: int = args.gradient_accumulation_steps
    return math.lcm(generate_every, accumulate) // accumulate
