"""The supervisor of one local run: ``python -m sweepgen.run.local.supervise LOCK_FD -- ARGV...``.

The local executor starts this small process (the leader of a new process group) instead of the
trainer itself, and hands it the run's lock (runlock.py). The supervisor

- holds the lock for the run's whole life, also when `sweepgen run` dies meanwhile; the trainer and
  whatever it forks never get it (the descriptor is not inheritable), so a logging service the
  trainer leaves behind cannot keep a failed run "running";
- runs the trainer in its own process group (the supervisor's), so SIGTERM/SIGKILL sent to the group by
  `sweepgen run` (Ctrl-C, `cancel`) reaches the trainer and every worker it forked directly (the
  supervisor itself outlives a SIGTERM: it waits for the trainer to stop);
- when the trainer exits, kills whatever is left in that group, then exits with the trainer's own
  status (the same exit code, or the same signal), and only then is the lock released.

Standard library only: it starts for every run and must start fast.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
from pathlib import Path

STOP_SIGNALS = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)


def main(argv: list[str]) -> int:
    if len(argv) < 3 or argv[1] != "--":
        print("usage: python -m sweepgen.run.local.supervise LOCK_FD -- ARGV...", file=sys.stderr)
        return 2
    lock_fd = int(argv[0])
    os.set_inheritable(lock_fd, False)  # the run's lock stays here, never in the trainer's processes

    def wait_for_the_trainer(signum: int, frame: object) -> None:
        """A stop signal reached the whole group, the trainer too: it decides how to stop, and the
        supervisor waits for it (a second copy from here could cut its checkpoint short)."""

    # a Python handler (unlike SIG_IGN) is reset to the default in the trainer by exec
    for sig in STOP_SIGNALS:
        signal.signal(sig, wait_for_the_trainer)
    try:
        trainer = subprocess.Popen(argv[2:], stdin=subprocess.DEVNULL)
    except OSError as err:
        print(f"sweepgen: could not start the run: {err}", file=sys.stderr, flush=True)
        return 127
    code = trainer.wait()
    _end_group()
    if code < 0:  # died of a signal: so does the supervisor, so the executor sees the same ending
        signal.signal(-code, signal.SIG_DFL)
        os.kill(os.getpid(), -code)
    return code


def _end_group() -> None:
    """SIGKILL every other process left in this process group (a forked worker, a logging service
    the trainer started); a process that left the group (setsid) is no longer the run's."""
    me, group = os.getpid(), os.getpgrp()
    if not Path("/proc").is_dir():  # no process table to read: SIGTERM the group, ourselves immune
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(group, signal.SIGTERM)
        return
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit() and int(entry.name) != me:
            with contextlib.suppress(OSError):  # gone meanwhile, or not ours
                if os.getpgid(int(entry.name)) == group:
                    os.kill(int(entry.name), signal.SIGKILL)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
