"""How a run ended, in words: the one rule every recorder of a run's end applies (the local run's
supervisor, the Slurm task on the node, a `sweepgen run` that outlived a killed supervisor).

The standard library and sweepgen's ground floor only (fs/runfs.py): the supervisor of every local run
imports it, and must start fast.
"""

from __future__ import annotations

import errno
import os
import signal
import stat
from pathlib import Path

from sweepgen.fs import filenames, runfs

SUMMARY_FILE = filenames.SUMMARY
TIMEOUT_REASON = "timed out (Slurm time limit; raise resources.time)"
CANCEL_REASON = "cancelled"
# in the ids of a `running` status: how the trainer ended, written by its supervisor the moment it
# exits, before the rest of its group is ended and the end recorded (a supervisor killed meanwhile
# leaves what it knew: base.effective_state)
TRAINER_END = "trainer_end"

# what a signal most often means when it ends a trainer: the user reading "killed by SIGKILL" after
# hours of training wants the likely cause, not the signal's number
_LIKELY_CAUSE = {
    signal.SIGKILL: "out of memory?",
    signal.SIGSEGV: "a crash in native code?",
    signal.SIGBUS: "a crash in native code, or a file mapped into memory was truncated?",
    signal.SIGABRT: "aborted by native code, e.g. a failed CUDA or NCCL check?",
    signal.SIGFPE: "an arithmetic fault in native code?",
    signal.SIGILL: "an instruction this CPU lacks?",
    signal.SIGTERM: "stopped by someone, or by the system shutting down?",
    signal.SIGHUP: "its terminal closed?",
    signal.SIGINT: "interrupted?",
    signal.SIGPIPE: "it wrote to a closed pipe?",
    signal.SIGXCPU: "a CPU time limit (ulimit -t)?",
    signal.SIGXFSZ: "a file size limit (ulimit -f)?",
}


def signal_name(num: int) -> str:
    try:
        return signal.Signals(num).name
    except ValueError:
        return f"signal {num}"


def killed_by(num: int) -> str:
    """``killed by SIGKILL (out of memory?)``: the signal by name, with its likely cause."""
    cause = _LIKELY_CAUSE.get(num)  # type: ignore[call-overload]  # an int looks up its Signals member
    return f"killed by {signal_name(num)}" + (f" ({cause})" if cause else "")


def exit_words(code: int) -> str:
    """An exit code in words. A shell reports its child's death by signal N as 128+N (a `--shell`
    command, a launcher script): said as such, since a trainer rarely exits 137 by choice."""
    if code < 0:
        return killed_by(-code)
    if 128 < code < 128 + 65:
        try:
            sig = signal.Signals(code - 128)
        except ValueError:
            return f"exit code {code}"
        return f"exit code {code} (128 + {sig.name}: its command was probably {killed_by(sig)})"
    return f"exit code {code}"


def is_finished(run_dir: Path, done_file: str | None = SUMMARY_FILE) -> bool:
    """The run left its done file (always False for a run held to exit 0 alone)."""
    return done_file is not None and done_file_missing(run_dir, done_file) is None


def done_file_missing(run_dir: Path, done_file: str) -> str | None:
    """Why the done file is not there (``missing``, ``behind a symbolic link ...``); None where it
    is. Its folders are walked as every run file's (``runfs``): a done file behind a link (the run
    folder, or ``final`` of ``--done-file final/model.bin``, linked elsewhere) is not there, as the
    check of who wrote the run's result files (report/committed.py) never looks there either; the
    done file itself may be a link (counted by its owner there)."""
    try:
        with runfs.parent(run_dir / done_file) as (folder, name):
            mode = os.stat(name, dir_fd=folder).st_mode
    except (FileNotFoundError, NotADirectoryError, ValueError):
        return "missing"
    except OSError as err:
        if err.errno == errno.ELOOP:
            return f"behind a symbolic link ({err.filename}: never followed)"
        return f"not readable ({err.strerror})"
    return None if stat.S_ISREG(mode) else "missing (not a regular file)"


def succeeded(code: int | None, run_dir: Path, done_file: str | None, *, stopped: bool = False) -> bool:
    """Whether a run that just ended finished: its done file, whatever its exit (the file is the one
    proof every reader of a run takes, base.effective_state; a trainer may fail in its teardown after
    writing it last). Without a done file, exit 0, and a run that sweepgen or Slurm stopped proves
    nothing by exiting 0 (a trainer may exit 0 on SIGTERM)."""
    if done_file is None:
        return code == 0 and not stopped
    return is_finished(run_dir, done_file)


def _no_proof_reason(done_file: str | None) -> str:
    return f"exited 0 but wrote no {done_file}" if done_file else "exited 0 after it was stopped"


def run_outcome(
    code: int,
    *,
    finished: bool,
    timed_out: bool = False,
    cancelled: bool = False,
    cancel_reason: str = CANCEL_REASON,
    done_file: str | None = SUMMARY_FILE,
    timeout_reason: str = TIMEOUT_REASON,
) -> tuple[str, str | None]:
    """How a run ended, as (state word, reason), from its exit code and what happened to it.
    ``finished`` is ``succeeded(...)``: the run's done file (summary.json for the bundled trainer;
    exit 0 alone for a foreign trainer held to no done file), the proof of success even if a late
    signal or a failed teardown came after it was written (said in the reason); exit 0 without it
    is a failure, never a quiet success. The state words are base.RunState's values."""
    if finished:
        # a done file with a failed exit: finished, as every reader of the run takes it, and said
        return "finished", None if code == 0 else f"{exit_words(code)} after it left its {done_file}"
    if timed_out:
        return "failed", timeout_reason
    if cancelled:
        return "cancelled", cancel_reason
    if code == 0:
        return "failed", _no_proof_reason(done_file)
    return "failed", exit_words(code)
