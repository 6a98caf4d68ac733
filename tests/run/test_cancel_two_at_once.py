"""Two `sweepgen cancel`s at once, each asking a live `run` to drop a queued run: both stay asked.
Before, each read `.sweepgen-cancel.json`, added its runs and wrote it: the later write dropped the
other's runs, and the `run` then started a run the user had cancelled."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

from run_support import LOADED_S

from sweepgen.run.core.stopping import queue_cancel

# asks for run `a`, pausing once it has read the request file (until `go` exists): a `cancel` slow
# between its read and its write
SLOW_ASK = """\
import sys, time
from pathlib import Path
from sweepgen.run.core.stopping import queue_cancel
folder = Path(sys.argv[1])
read = queue_cancel._asked
def paused(*args):
    found = read(*args)
    (folder.parent / "read").touch()
    while not (folder.parent / "go").exists():
        time.sleep(0.01)
    return found
queue_cancel._asked = paused
queue_cancel.ask(folder, ["a"])
"""
ASK = "import sys; from pathlib import Path; from sweepgen.run.core.stopping import queue_cancel; "
ASK += "queue_cancel.ask(Path(sys.argv[1]), ['b'])"


def _waits_for_a_lock(pid: int) -> bool:
    """Whether ``pid`` is blocked waiting for a file lock (a `->` line of /proc/locks)."""
    return any(
        line.split()[1] == "->" and str(pid) in line.split()[2:6]
        for line in Path("/proc/locks").read_text().splitlines()
    )


def test_two_cancels_at_once_keep_both_requests(tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    runs.mkdir()
    started_s = 0.0  # a `run` started before both
    slow = subprocess.Popen([sys.executable, "-c", SLOW_ASK, str(runs)])
    other: subprocess.Popen[bytes] | None = None
    try:
        deadline = time.monotonic() + LOADED_S
        while not (tmp_path / "read").exists():
            assert time.monotonic() < deadline and slow.poll() is None, "the first cancel never read"
            time.sleep(0.01)
        other = subprocess.Popen([sys.executable, "-c", ASK, str(runs)])
        # the second one either wrote (no lock: the old code) or waits for the first's lock
        while other.poll() is None and not _waits_for_a_lock(other.pid):
            assert time.monotonic() < deadline, "the second cancel neither wrote nor waited"
            time.sleep(0.01)
        (tmp_path / "go").touch()
        assert slow.wait(timeout=LOADED_S) == 0
        assert other.wait(timeout=LOADED_S) == 0
    finally:
        for proc in (slow, other):
            if proc is not None and proc.poll() is None:
                proc.kill()
                proc.wait()
    assert set(queue_cancel.asked_since(runs, started_s)) == {"a", "b"}


def test_a_file_system_without_locks_still_takes_the_request(tmp_path: Path, monkeypatch) -> None:
    """Some network mounts refuse flock (ENOLCK): the request is written all the same, as before the
    lock existed, never dropped with a warning."""
    import errno

    def refused(fd: int, how: int) -> None:
        raise OSError(errno.ENOLCK, "No locks available")

    monkeypatch.setattr(queue_cancel.fcntl, "flock", refused)
    queue_cancel.ask(tmp_path, ["a"])
    assert set(queue_cancel.asked_since(tmp_path, 0.0)) == {"a"}
