"""How a sweep was started: ``.sweepgen-run.json`` in the generated sweep folder.

`sweepgen run DIR --command "python train.py {config}" --done-file metrics.csv --executor slurm`
records its command line there, so a later `sweepgen run DIR --rerun-failed` (or any hint sweepgen
prints) runs the same trainer the same way instead of falling back to the bundled trainer on foreign
configs. An option given on the command line always wins and is recorded in its turn.

The file sits beside ``sweep.lock.json``; `check` and `render` know its name and never call it an
orphan (it is run state: add ``**/.sweepgen-run.json`` to .gitignore if you do not want to commit it).
"""

from __future__ import annotations

import shlex
from dataclasses import asdict, dataclass, fields, replace
from pathlib import Path
from typing import Any

from sweepgen.compile.run_api import RUN_STATE_NAME
from sweepgen.errors import Location, UserError
from sweepgen.run.core import runfiles
from sweepgen.run.core.base import write_json_atomic
from sweepgen.run.core.sweepfile import replay_guard

STATE_VERSION = 1


@dataclass(frozen=True)
class RunOptions:
    """The options of `sweepgen run` that say how runs are started; None: not given."""

    command: str | None = None
    shell: bool | None = None
    done_file: str | None = None
    executor: str | None = None
    jobs: int | None = None
    gpus: str | None = None
    per_gpu: int | None = None
    mps: bool | None = None
    stop_timeout: float | None = None
    time_limit: float | None = None  # seconds; local only

    def merged_over(self, recorded: RunOptions | None) -> RunOptions:
        """These options, each one not given taken from ``recorded`` (a changed --command drops the
        recorded --shell and --done-file: they belonged to the old command)."""
        if recorded is None:
            return self
        if self.command is not None and self.command != recorded.command:
            recorded = replace(recorded, shell=None, done_file=None)
        values = {f.name: getattr(self, f.name) for f in fields(self)}
        for name, value in values.items():
            if value is None:
                values[name] = getattr(recorded, name)
        return RunOptions(**values)

    def command_line(self, sweep_dir: Path, *extra: str) -> str:
        """`sweepgen run DIR ...` with every recorded option spelled out, for a hint to copy."""
        words = ["sweepgen", "run", sweep_dir.as_posix()]
        if self.command is not None:
            words += ["--command", self.command]
        if self.shell:
            words.append("--shell")
        if self.done_file is not None:
            words += ["--done-file", self.done_file]
        if self.executor not in (None, "local"):
            words += ["--executor", str(self.executor)]
        return shlex.join([*words, *self._placement_words(), *extra])

    def _placement_words(self) -> list[str]:
        """The options of where and how long runs run: jobs, GPUs, MPS, stop timeout, time limit."""
        words: list[str] = []
        if self.jobs is not None:
            words += ["--jobs", str(self.jobs)]
        if self.gpus is not None:
            words += ["--gpus", self.gpus]
        if self.per_gpu not in (None, 1):
            words += ["--per-gpu", str(self.per_gpu)]
        if self.mps:
            words.append("--mps")
        if self.stop_timeout is not None:
            words += ["--stop-timeout", f"{self.stop_timeout:g}"]
        if self.time_limit is not None:
            words += ["--time-limit", f"{self.time_limit:g}"]
        return words


_TYPES: dict[str, tuple[type, ...]] = {
    "command": (str,),
    "shell": (bool,),
    "done_file": (str,),
    "executor": (str,),
    "jobs": (int,),
    "gpus": (str,),
    "per_gpu": (int,),
    "mps": (bool,),
    "stop_timeout": (int, float),
    "time_limit": (int, float),
}
_MAX_BYTES = 1 << 20  # a command line and a few options


def _check_type(name: str, value: Any) -> None:
    """TypeError when option ``name`` holds another type than its own (None: not given). A bool is
    an int to isinstance, so it passes only where a bool belongs."""
    wanted = _TYPES[name]
    if value is not None and (
        not isinstance(value, wanted) or (bool not in wanted and isinstance(value, bool))
    ):
        raise TypeError(f"options.{name} is a {type(value).__name__}")


def recorded_line(sweep_dir: Path) -> str:
    """`sweepgen run` as the sweep was started (its recorded options; the defaults when it never
    ran): the command that goes on with it, running the same trainer."""
    return (read(sweep_dir) or RunOptions()).command_line(sweep_dir)


def read(sweep_dir: Path) -> RunOptions | None:
    """The recorded options, or None when the sweep was never run. A damaged file is an error. The
    file is read as run files are (never through a link, a regular file of at most 1 MiB), and each
    option must have its type (a string where a number belongs is damage, not a crash later)."""
    path = sweep_dir / RUN_STATE_NAME
    raw = runfiles.read_bytes(path, limit=_MAX_BYTES)
    if raw is None:
        return None
    try:
        data = runfiles.parse_json(raw.decode("utf-8"), path)
        options: dict[str, Any] = data["options"]
        known = {f.name: options.get(f.name) for f in fields(RunOptions)}
        for name, value in known.items():
            _check_type(name, value)
        return RunOptions(**known)
    except (UnicodeDecodeError, KeyError, TypeError, AttributeError) as err:
        raise UserError(
            f"{path} is damaged: {type(err).__name__}: {err}",
            location=Location(str(path)),
            hint="it is written by `sweepgen run`; delete it and give the run's options again",
        ) from None


# what `run` does without the option: a file recording these chooses nothing
_DEFAULTS = {"shell": False, "executor": "local", "per_gpu": 1, "mps": False}


def replayed(sweep_dir: Path, given: RunOptions) -> tuple[RunOptions | None, RunOptions]:
    """The recorded options and ``given`` merged over them. A recorded command the command line does
    not replace is about to be executed, and recorded options choose how many runs go at once, on
    which GPUs, under an MPS daemon or on Slurm, how long a stop waits: each must come from a file
    git does not track (``replay_guard``), else exit 2."""
    recorded = read(sweep_dir)
    merged = given.merged_over(recorded)
    taken = _taken(given, merged)
    path = sweep_dir / RUN_STATE_NAME
    if taken.command is not None:
        replay_guard.refuse_tracked_command(path, taken.command)
    elif taken != RunOptions():
        options = shlex.join(shlex.split(taken.command_line(sweep_dir))[3:])
        replay_guard.refuse_tracked_state(path, f"the options {options}")
    return recorded, merged


def _taken(given: RunOptions, merged: RunOptions) -> RunOptions:
    """The options ``merged`` takes from the recorded file: neither given nor a default."""
    values = {f.name: getattr(merged, f.name) for f in fields(RunOptions) if getattr(given, f.name) is None}
    return RunOptions(**{k: v for k, v in values.items() if v != _DEFAULTS.get(k)})


def write(sweep_dir: Path, options: RunOptions) -> None:
    """Record the command line; a sweep folder that cannot be written is a UserError saying what
    `run` needs (the generic hint of a file-system fault names an option `run` does not have)."""
    path = sweep_dir / RUN_STATE_NAME
    try:
        write_json_atomic(path, {"version": STATE_VERSION, "options": asdict(options)})
    except OSError as err:
        raise UserError(
            f"cannot record the command line in {path}: {err.strerror or err}",
            location=Location(str(path)),
            hint="`sweepgen run` records how the sweep was started in its sweep folder: make the folder "
            "writable (or copy the sweep folder somewhere writable and run that copy)",
        ) from None
