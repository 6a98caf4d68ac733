"""`sweepgen cancel` reaches runs a live local `sweepgen run` has queued and not started (here: behind
`--jobs 1`). Before, `cancel` stopped the running one and that `run` then started the queued one,
which the user had just cancelled; now the `run` drops it (shown cancelled, never started), and a
`run` started after the cancel starts it as usual. Each trainer counts its starts (starts.txt)."""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
import time
from pathlib import Path

from run_support import LOADED_S, WAITER, make_sweep, output_of
from search_support import cli, sweepgen

from sweepgen.run.core.stopping import queue_cancel


def _starts(run: Path) -> int:
    path = run / "starts.txt"
    return len(path.read_text().splitlines()) if path.exists() else 0


def _queued_behind_one(root: Path) -> subprocess.Popen[str]:
    """`run --jobs 1` of r0 and r1, once r0's trainer has started (r1 queued behind it)."""
    release = root / "release"
    make_sweep(root, {"r0": {"release": str(release)}, "r1": {"release": str(release)}})
    (root / "waiter.py").write_text(WAITER)
    command = f"{shlex.quote(sys.executable)} {shlex.quote(str(root / 'waiter.py'))} {{config}}"
    proc = sweepgen(root, "run", "generated/fake", "--command", command, "--jobs", "1", wait=False)
    deadline = time.monotonic() + LOADED_S
    runs = root / "runs" / "fake"
    while not (_starts(runs / "r0") or _starts(runs / "r1")):
        assert time.monotonic() < deadline and proc.poll() is None, output_of(proc)
        time.sleep(0.05)
    return proc


def test_cancel_drops_the_runs_a_live_run_has_queued(tmp_path: Path) -> None:
    started = _queued_behind_one(tmp_path)
    try:
        cancel = sweepgen(tmp_path, "cancel", "generated/fake")
        # anything started from now on ends at once: a queued run started after the cancel is seen
        (tmp_path / "release").touch()
        out, err = started.communicate(timeout=LOADED_S)
    finally:
        output_of(started)
    assert cancel.returncode == 0 and "Traceback" not in cancel.stderr, cancel.stdout + cancel.stderr
    assert started.returncode == 1 and "Traceback" not in err, out + err
    runs = tmp_path / "runs" / "fake"
    assert sorted(_starts(runs / name) for name in ("r0", "r1")) == [0, 1], out + err
    shown = json.loads(cli(tmp_path, "status", "generated/fake", "--format", "json").stdout)
    states = sorted(row["state"] for row in shown)
    assert states == ["CANCELLED", "NOT STARTED"], shown  # the queued one: never started
    # a `run` started after the cancel is not held by it: the dropped run starts, once
    again = sweepgen(tmp_path, "run", "generated/fake", "--command", _command(tmp_path), "--rerun-failed")
    assert again.returncode == 0, again.stdout + again.stderr
    assert [_starts(runs / name) for name in ("r0", "r1")] == [2, 1] or [
        _starts(runs / name) for name in ("r0", "r1")
    ] == [1, 2]


def _command(root: Path) -> str:
    return f"{shlex.quote(sys.executable)} {shlex.quote(str(root / 'waiter.py'))} {{config}}"


def test_a_request_is_data_of_this_boot_and_time(tmp_path: Path) -> None:
    """What the request file holds is data: a link, junk or another boot's request asks nothing."""
    queue_cancel.ask(tmp_path, ["r0"])
    assert set(queue_cancel.asked_since(tmp_path, 0.0)) == {"r0"}
    assert set(queue_cancel.asked_since(tmp_path, float("inf"))) == set()  # a `run` started later
    queue_cancel.ask(tmp_path, ["r1"])  # a second cancel keeps the first one's run at its time
    assert set(queue_cancel.asked_since(tmp_path, 0.0)) == {"r0", "r1"}
    request = tmp_path / queue_cancel.REQUEST_FILE
    request.write_text(json.dumps({"boot_id": "another boot", "runs": {"r0": 1e12}}))
    assert set(queue_cancel.asked_since(tmp_path, 0.0)) == set()
    request.write_text("not json")
    assert set(queue_cancel.asked_since(tmp_path, 0.0)) == set()
    request.unlink()
    (tmp_path / "elsewhere.json").write_text(json.dumps({"boot_id": "x", "runs": {}}))
    request.symlink_to(tmp_path / "elsewhere.json")
    assert set(queue_cancel.asked_since(tmp_path, 0.0)) == set()


def test_a_request_that_cannot_be_written_is_exit_1_never_nothing_to_cancel(tmp_path: Path) -> None:
    """`cancel` with no run running whose request cannot be written (a full or read-only disk; here
    a folder in its place): a live `run` holding runs of it queued (for a GPU slot, `--jobs`, the next
    round) still starts them. Before, it said "nothing to cancel" and exited 0 under its warning."""
    make_sweep(tmp_path, {"r0": {}, "r1": {}})
    (tmp_path / "runs" / "fake" / queue_cancel.REQUEST_FILE).mkdir(parents=True)
    cancel = sweepgen(tmp_path, "cancel", "generated/fake")
    assert cancel.returncode == 1 and "Traceback" not in cancel.stderr, cancel.stdout + cancel.stderr
    assert "could not write" in cancel.stderr and "still starts the runs it has queued" in cancel.stderr
    assert "nothing to cancel" not in cancel.stdout, cancel.stdout


def test_a_request_of_this_boot_that_no_float_holds_asks_only_what_it_can(tmp_path: Path) -> None:
    """This boot's request with a time no float holds (a 400-digit integer ended `run` and
    `cancel` in an OverflowError) or nested past a run file's depth (a RecursionError) asks nothing
    for that run, and the others as written."""
    queue_cancel.ask(tmp_path, ["r0"])
    request = tmp_path / queue_cancel.REQUEST_FILE
    record = json.loads(request.read_text())
    record["runs"] = {"huge": 10**400, "deep": 1, "r0": 5, "list": [[1]], "yes": True}
    request.write_text(json.dumps(record).replace('"deep": 1', '"deep": ' + "[" * 5000 + "]" * 5000))
    assert set(queue_cancel.asked_since(tmp_path, 0.0)) == set()  # nested too deep: the file asks nothing
    request.write_text(json.dumps(record).replace('"deep": 1,', ""))
    assert set(queue_cancel.asked_since(tmp_path, 0.0)) == {"r0"}
    queue_cancel.ask(tmp_path, ["r1"])  # `cancel` goes on past such a file
    assert set(queue_cancel.asked_since(tmp_path, 0.0)) == {"r0", "r1"}


def test_a_stopped_run_continued_after_another_ran_its_dropped_run_says_what_became_of_it(
    tmp_path: Path,
) -> None:
    """`run --jobs 1` stopped (SIGSTOP) with r1 queued; `cancel` stops the running r0 and asks r1
    dropped; a second, plain `run` starts r1 (never started) and it finishes; then the first goes on
    (SIGCONT). Nothing starts twice, and the first says how r1 ended there (before: "not started:
    cancelled ... while queued" of a run that had run and finished)."""
    import signal

    from sweepgen.run.core.base import RunState, read_status

    started = _queued_behind_one(tmp_path)
    runs = tmp_path / "runs" / "fake"
    first = "r0" if _starts(runs / "r0") else "r1"
    queued = "r1" if first == "r0" else "r0"
    second = None
    try:
        started.send_signal(signal.SIGSTOP)
        try:
            cancel = sweepgen(tmp_path, "cancel", "generated/fake")
            assert cancel.returncode == 0, cancel.stdout + cancel.stderr
            (tmp_path / "release").touch()
            # it ends while the first is stopped: the first's copy of r0's lock holds a run whose end
            # is on record (before: "r0: running", and it waited for the stopped `run` to go on)
            second = sweepgen(tmp_path, "run", "generated/fake", "--command", _command(tmp_path), wait=False)
            said = second.communicate(timeout=LOADED_S)
            assert read_status(runs / queued).state is RunState.FINISHED, said
        finally:
            started.send_signal(signal.SIGCONT)
        out, err = started.communicate(timeout=LOADED_S)
    finally:
        output_of(started)
        if second is not None:
            output_of(second)
    # it ran the queued run once; the cancelled one it did not retry (exit 1 for that)
    assert second.returncode == 1 and f"were not retried: {first}" in "".join(said), "\n".join(said)
    assert f"{first}: running" not in said[0] and "let go unstarted" not in "".join(said), said
    assert [_starts(runs / name) for name in (first, queued)] == [1, 1], out + err
    assert started.returncode == 1, out + err  # its r0 cancelled
    assert f"{queued}: finished (its status changed since it was planned" in out, out + err
