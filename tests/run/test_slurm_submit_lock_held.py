"""A `sweepgen run` held at its sweep's Slurm submission lock by another process (a `run` stopped
with SIGSTOP or Ctrl-Z while submitting): within seconds it says the lock is held, by which pid and
command, that the holder is stopped, what it waits for and how to go on; behind a holder that stays
stopped it gives up (exit 2, naming it) instead of waiting ten minutes in silence. The holder is a
real process holding a real flock, stopped by a real SIGSTOP (no sleep: its stop is waited for)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from sweepgen.run.slurm import journal

HOLD = (
    "import fcntl, os, signal, sys; fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT, 0o644); "
    "fcntl.flock(fd, fcntl.LOCK_EX); os.kill(os.getpid(), signal.SIGSTOP)"
)


def _stopped(pid: int) -> bool:
    return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "T"


def test_a_run_held_by_a_stopped_submission_says_who_at_once_and_gives_up(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "runs" / ".sweepgen_slurm"
    root.mkdir(parents=True)
    holder = subprocess.Popen([sys.executable, "-c", HOLD, str(root / journal.SUBMIT_LOCK)])
    try:
        deadline = time.monotonic() + 60
        while not _stopped(holder.pid):
            assert time.monotonic() < deadline and holder.poll() is None
            time.sleep(0.02)
        monkeypatch.setattr(journal, "NOTICE_AFTER_S", 0.1, raising=False)
        monkeypatch.setattr(journal, "STOPPED_WAIT_S", 0.3, raising=False)
        notes: list[str] = []
        began = time.monotonic()
        with (
            pytest.raises(journal.SubmitLockBusy) as busy,
            journal.submission_lock(root, note=notes.append, give_up_stopped=True),
        ):
            pytest.fail("the lock was taken from its holder")
        assert time.monotonic() - began < 30  # not the ten minutes of SUBMIT_LOCK_WAIT_S
        (said,) = notes
        assert f"held by pid {holder.pid} (" in said and "stopped: SIGSTOP or Ctrl-Z" in said, said
        assert "submits nothing until it lets go" in said and f"`kill -CONT {holder.pid}`" in said, said
        error = busy.value.format()
        assert f"pid {holder.pid}" in error and "stays stopped" in error and "kill -CONT" in error, error
        assert busy.value.exit_code == 2
    finally:
        os.kill(holder.pid, signal.SIGKILL)
        holder.wait()
