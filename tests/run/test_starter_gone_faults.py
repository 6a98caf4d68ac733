"""Faults where the starter of a run goes away other than by `kill -9` at a random moment
(tests/run/test_kill9_faults.py): the terminal closing (SIGHUP to `sweepgen run`'s process group, as
the kernel sends it to the foreground group of a hung-up terminal), and the supervisor itself
SIGKILLed after its `sweepgen run` died. In each, every run is recorded with its true end, nothing
is left running, and the next `run` finishes each run with exactly one start per recorded attempt.

Starts are counted by a marker file each start appends to (a start never recorded is seen).
"""

from __future__ import annotations

import contextlib
import json
import os
import shlex
import signal
import subprocess
import sys
import time
from pathlib import Path

from run_support import make_sweep, read_until
from search_support import COMMAND as SEARCH_COMMAND
from search_support import REPO, cli, logged_steps, study, sweepgen, write_search_project

from sweepgen.run.core import runlock
from sweepgen.run.core.base import RunState, read_status
from sweepgen.run.local import liveness

DEADLINE_S = 120

# a foreign trainer: appends one line per start, works ``sleep`` s on its first start (0.2 s on a
# later one: a resumed run), exits 0 (no done file)
FOREIGN = """\
import os, sys, time, yaml
config = yaml.safe_load(open(sys.argv[1]))
out = config["output_dir"]
os.makedirs(out, exist_ok=True)
marker = os.path.join(out, "starts.txt")
first = not os.path.exists(marker)
with open(marker, "a") as fh:
    fh.write(f"{os.getpid()}\\n")
time.sleep(config["fake"]["sleep"] if first else 0.2)
"""


def _foreign_command(root: Path) -> str:
    script = root / "foreign.py"
    script.write_text(FOREIGN)
    return f"{shlex.quote(sys.executable)} {shlex.quote(str(script))} {{config}}"


def _in_a_terminal_session(root: Path, *args: str) -> subprocess.Popen[str]:
    """`sweepgen ARGS` leading a process group of its own, as a shell's foreground job does."""
    env = {**os.environ, "PYTHONPATH": str(REPO), "COLUMNS": "200", "OMP_NUM_THREADS": "1"}
    return subprocess.Popen(
        [sys.executable, "-m", "sweepgen", *args],
        cwd=root,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
        # a terminal's job takes SIGHUP's default action, even where these tests run under nohup
        # (whose ignored SIGHUP `sweepgen run` keeps ignoring)
        preexec_fn=lambda: signal.signal(signal.SIGHUP, signal.SIG_DFL),
    )


def _wait_for(condition, proc: subprocess.Popen[str], what: str) -> None:
    deadline = time.monotonic() + DEADLINE_S
    while not condition():
        if time.monotonic() > deadline or proc.poll() is not None:
            proc.kill()
            out, err = proc.communicate()
            raise AssertionError(f"{what} never happened:\n{out}\n{err}")
        time.sleep(0.05)


def _no_run_held(runs: Path) -> bool:
    return not any(runlock.is_held(run) for run in runs.iterdir() if run.is_dir())


def _pgid_gone(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return True
    return False


def _gone(pid: int) -> bool:
    """Whether ``pid`` has exited (a zombie waiting for init to reap it counts as exited)."""
    return liveness.proc_start_ticks(pid) is None


def _starts(run: Path, marker: str) -> int:
    path = run / marker
    return len(path.read_text().splitlines()) if path.is_file() else 0


def test_a_closed_terminal_records_every_run_cancelled_and_the_next_run_finishes_each_once(tmp_path):
    names = [f"r{i}" for i in range(4)]
    make_sweep(tmp_path, {n: {"sleep": 3.0} for n in names})
    command = _foreign_command(tmp_path)
    runs = tmp_path / "runs" / "fake"
    proc = _in_a_terminal_session(tmp_path, "run", "generated/fake", "--jobs", "2", "--command", command)
    _wait_for(
        lambda: any(_starts(runs / n, "starts.txt") for n in names if (runs / n).is_dir()), proc, "a start"
    )
    os.killpg(proc.pid, signal.SIGHUP)  # the terminal hung up: its foreground group gets SIGHUP
    out, err = proc.communicate(timeout=DEADLINE_S)
    assert proc.returncode == 130 and "Traceback" not in err, out + err
    # nothing left running, and no run left looking as if it were
    assert _no_run_held(runs)
    before = {}
    for run in runs.iterdir():
        status = read_status(run)
        assert status is not None and status.state in (RunState.CANCELLED, RunState.FINISHED), status
        assert status.ended is not None and _pgid_gone(int(status.ids["trainer_pgid"])), status
        before[run.name] = status
    shown = cli(tmp_path, "status", "generated/fake", "--format", "json")
    said = {r["state"] for r in json.loads(shown.stdout)}
    assert said <= {"CANCELLED", "FINISHED", "NOT STARTED"} and "CANCELLED" in said, shown.stdout
    again = sweepgen(tmp_path, "run", "generated/fake", "--rerun-failed", timeout=180)  # the recorded command
    assert again.returncode == 0 and "Traceback" not in again.stderr, again.stdout + again.stderr
    for name in names:
        status = read_status(runs / name)
        assert status is not None and status.state is RunState.FINISHED, status
        earlier = before.get(name)
        if earlier is not None and earlier.state is RunState.FINISHED:  # never run again
            assert status.attempt == 1 and _starts(runs / name, "starts.txt") == 1, (name, status)
        else:  # cancelled (its trainer perhaps stopped before its first line): one more attempt
            assert status.attempt == (earlier.attempt + 1 if earlier else 1), (name, status)
            assert 1 <= _starts(runs / name, "starts.txt") <= status.attempt, (name, status)


def test_a_supervisor_killed_after_its_sweepgen_run_died_takes_its_trainer_and_is_rerun_once(tmp_path):
    make_sweep(tmp_path, {"r0": {"sleep": 60.0}})
    command = _foreign_command(tmp_path)
    run = tmp_path / "runs" / "fake" / "r0"
    proc = sweepgen(tmp_path, "run", "generated/fake", "--command", command, wait=False)

    def supervised() -> bool:
        status = read_status(run) if run.is_dir() else None
        return status is not None and "trainer_pgid" in status.ids and _starts(run, "starts.txt") == 1

    _wait_for(supervised, proc, "the run's start")
    proc.send_signal(signal.SIGKILL)  # `sweepgen run` first: nobody follows the run any more
    proc.communicate()
    status = read_status(run)
    assert status is not None and liveness.supervises(int(status.ids["pid"]), run)
    os.kill(int(status.ids["pid"]), signal.SIGKILL)  # then its supervisor: nobody records its end
    deadline = time.monotonic() + DEADLINE_S
    while not (_pgid_gone(int(status.ids["trainer_pgid"])) and not runlock.is_held(run)):
        assert time.monotonic() < deadline, (
            "the trainer outlived its killed supervisor, or the lock stayed held"
        )
        time.sleep(0.05)
    # its end is unknown, and said so: not running, not finished, and --rerun-failed starts it again
    shown = cli(tmp_path, "status", "generated/fake", "--format", "json")
    (row,) = json.loads(shown.stdout)
    assert row["state"] == "FAILED", row
    again = sweepgen(tmp_path, "run", "generated/fake", "--rerun-failed", timeout=180)
    assert again.returncode == 0 and "Traceback" not in again.stderr, again.stdout + again.stderr
    status = read_status(run)
    assert status is not None and status.state is RunState.FINISHED and status.attempt == 2, status
    assert _starts(run, "starts.txt") == 2


def test_a_closed_terminal_leaves_a_search_open_and_the_next_run_reaches_exactly_n(tmp_path):
    n = 4
    base = {"x": 0.5, "y": 0.5, "steps": 15, "step_s": 0.1, "seed": 0, "noise": 0.0, "output_dir": None}
    write_search_project(tmp_path, {"n": n, "parallel": 2}, base=base)
    assert cli(tmp_path, "render", "specs/s.yaml").returncode == 0
    runs = tmp_path / "runs" / "fake_search"
    proc = _in_a_terminal_session(tmp_path, "run", "generated/fake_search", "--command", SEARCH_COMMAND)
    _wait_for(lambda: bool(logged_steps(runs / "t0000")), proc, "t0000's first step")
    os.killpg(proc.pid, signal.SIGHUP)
    out, err = proc.communicate(timeout=DEADLINE_S)
    assert proc.returncode == 130 and "Traceback" not in err, out + err
    assert _no_run_held(runs)
    done = sweepgen(tmp_path, "run", "generated/fake_search", timeout=180)  # the recorded command line
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stdout + done.stderr
    trials = study(tmp_path).get_trials()
    assert [t.state.name for t in trials] == ["COMPLETE"] * n
    for t in trials:
        run = runs / f"t{t.number:04d}"
        status = read_status(run)
        assert status is not None and status.state is RunState.FINISHED, status
        # one start per attempt at most (a trainer stopped before its first line wrote none)
        assert 1 <= _starts(run, "starts.jsonl") <= status.attempt, (run.name, status)


# the search's trainer, except that trial 0's run appends a start, waits for ``release`` in the
# project and exits 3 (a trainer that fails by itself); every other run is search_trainer.py
FAILS_FIRST = """\
import os, sys, time, yaml
out = yaml.safe_load(open(sys.argv[1]))["output_dir"]
os.makedirs(out, exist_ok=True)
if out.endswith("t0000"):
    with open(os.path.join(out, "starts.txt"), "a") as fh:
        fh.write(f"{os.getpid()}\\n")
    while not os.path.exists("release"):
        time.sleep(0.02)
    sys.exit(3)
os.execv(sys.executable, [sys.executable, TRAINER, sys.argv[1]])
"""


def _trial_0_running_without_its_controller(root: Path) -> tuple[str, Path]:
    """A search of n=2 whose `sweepgen run` was SIGKILLed while t0000's run waits for ``release``
    (FAILS_FIRST): its supervisor and trainer go on. The command and t0000's run folder."""
    from search_support import TRAINER

    write_search_project(root, {"n": 2, "parallel": 1})
    assert cli(root, "render", "specs/s.yaml").returncode == 0
    script = root / "fails_first.py"
    script.write_text(FAILS_FIRST.replace("TRAINER", repr(str(TRAINER))))
    command = f"{shlex.quote(sys.executable)} {shlex.quote(str(script))} {{config}}"
    run = root / "runs" / "fake_search" / "t0000"
    proc = sweepgen(root, "run", "generated/fake_search", "--command", command, wait=False)
    _wait_for(lambda: _starts(run, "starts.txt") == 1, proc, "t0000's start")
    proc.kill()
    proc.communicate()
    return command, run


def _ended(run: Path) -> None:
    deadline = time.monotonic() + DEADLINE_S
    while runlock.is_held(run):
        assert time.monotonic() < deadline, f"{run.name} never ended"
        time.sleep(0.05)


def test_a_trial_whose_run_failed_by_itself_after_its_controller_died_is_told_failed_not_rerun(tmp_path):
    """`sweepgen run` SIGKILLed while a trial's run trains; the run then fails by itself (exit 3),
    recorded by its supervisor. The next `run` takes the trial over and tells it failed, as the
    controller that started it would have; before, it started the failed run a second time (a
    trial's fate depended on when its controller died)."""
    command, run = _trial_0_running_without_its_controller(tmp_path)
    (tmp_path / "release").touch()
    _ended(run)
    status = read_status(run)
    assert status is not None and status.state is RunState.FAILED and status.exit_code == 3, status
    done = sweepgen(tmp_path, "run", "generated/fake_search", "--command", command, timeout=180)
    assert "Traceback" not in done.stderr, done.stdout + done.stderr
    assert _starts(run, "starts.txt") == 1, done.stdout + done.stderr
    trials = study(tmp_path).get_trials()
    assert trials[0].user_attrs.get("sweepgen_reason") == "exit code 3", trials[0]
    assert [t.state.name for t in trials] == ["FAIL", "COMPLETE"]  # n trials ended, as a live one counts
    assert read_status(run) == status  # its end kept as its supervisor recorded it


def test_cancel_only_of_a_run_whose_controller_died_fails_its_trial_and_never_restarts_it(tmp_path):
    """`sweepgen cancel --only t0000` while t0000's controller is dead: that run alone is stopped and
    the search goes on; the next `run` tells its trial failed with the cancel's reason, as a live
    controller does (and as one re-attached to the run does). Before, it resumed the run."""
    command, run = _trial_0_running_without_its_controller(tmp_path)
    cancel = sweepgen(tmp_path, "cancel", "generated/fake_search", "--only", "t0000")
    assert cancel.returncode == 0, cancel.stdout + cancel.stderr
    _ended(run)
    status = read_status(run)
    assert status is not None and status.state is RunState.CANCELLED, status
    (tmp_path / "release").touch()  # a run started again now ends at once (exit 3)
    done = sweepgen(tmp_path, "run", "generated/fake_search", "--command", command, timeout=180)
    assert "Traceback" not in done.stderr, done.stdout + done.stderr
    assert _starts(run, "starts.txt") == 1, done.stdout + done.stderr
    trials = study(tmp_path).get_trials()
    assert trials[0].state.name == "FAIL", trials[0]
    assert "cancelled by `sweepgen cancel" in trials[0].user_attrs["sweepgen_reason"], trials[0].user_attrs
    assert [t.state.name for t in trials] == ["FAIL", "COMPLETE"]


# a trainer that starts a worker in a session of its own (as torchrun starts its ranks), which
# ignores SIGTERM and works on; the trainer itself then waits
LAUNCHER = FOREIGN.replace(  # its start counted as FOREIGN's is
    'time.sleep(config["fake"]["sleep"] if first else 0.2)\n',
    """import subprocess
worker = "import signal, time\\nsignal.signal(signal.SIGTERM, signal.SIG_IGN)\\nwhile True: time.sleep(0.05)"
rank = subprocess.Popen([sys.executable, "-c", worker], start_new_session=True)
with open(os.path.join(out, "rank.pid"), "w") as fh:
    fh.write(str(rank.pid))
rank.wait()
""",
)


def _kill_all_in(root: Path) -> None:
    """SIGKILL every process working in ``root`` (a test's `sweepgen`, supervisors, trainers and
    their workers), whatever a failed test left."""
    for entry in os.scandir("/proc"):
        with contextlib.suppress(OSError, ValueError):
            if entry.name.isdigit() and Path(os.readlink(f"{entry.path}/cwd")).is_relative_to(root):
                os.kill(int(entry.name), signal.SIGKILL)


def _launcher_run(root: Path) -> tuple[subprocess.Popen[str], Path, int]:
    """`sweepgen run` of r0 under LAUNCHER, once its worker has started; the run's folder and the
    worker's pid."""
    make_sweep(root, {"r0": {}})
    script = root / "launcher.py"
    script.write_text(LAUNCHER)
    command = f"{shlex.quote(sys.executable)} {shlex.quote(str(script))} {{config}}"
    run = root / "runs" / "fake" / "r0"
    proc = sweepgen(root, "run", "generated/fake", "--command", command, wait=False)
    pid_file = run / "rank.pid"
    _wait_for(lambda: pid_file.is_file() and pid_file.read_text(), proc, "the rank's start")
    return proc, run, int(pid_file.read_text())


def test_a_run_whose_supervisor_was_killed_while_its_ranks_work_on_is_running_not_rerun(tmp_path):
    """`sweepgen run` and then the run's supervisor SIGKILLed while its trainer's worker (a rank in
    a session of its own, as torchrun starts them) works: the trainer dies with its supervisor, the
    worker does not. Before, `status` showed the run failed ("lost") while the worker trained on,
    and `--rerun-failed` started a second trainer beside it. Now it is running (the worker found by
    the mark its supervisor put in its environment), not started again, and `cancel` ends the
    worker and records the run cancelled."""
    proc, run, rank = _launcher_run(tmp_path)
    proc.send_signal(signal.SIGKILL)
    proc.communicate()
    status = read_status(run)
    assert status is not None
    os.kill(int(status.ids["pid"]), signal.SIGKILL)
    deadline = time.monotonic() + DEADLINE_S
    while not (_pgid_gone(int(status.ids["trainer_pgid"])) and not runlock.is_held(run)):
        assert time.monotonic() < deadline, "the trainer outlived its killed supervisor"
        time.sleep(0.05)
    try:
        shown = cli(tmp_path, "status", "generated/fake", "--format", "json")
        (row,) = json.loads(shown.stdout)
        assert row["state"] == "RUNNING" and f"still runs (pids [{rank}]: {rank} python" in row["reason"], row
        assert "if that is only a helper" in row["reason"] and "--rerun-failed" in row["reason"], row
        again = sweepgen(tmp_path, "run", "generated/fake", "--rerun-failed", wait=False)
        seen = read_until(again, "waiting for 1 run(s) another")  # followed, not started again
        seen += read_until(again, "r0: its supervisor")  # and what is known of it: nobody records it
        assert f"still runs (pids [{rank}]" in seen, seen
        cancel = sweepgen(tmp_path, "cancel", "generated/fake")
        assert _gone(rank), "the worker outlived the cancel"
        assert cancel.returncode == 0 and "cancelled 1 run(s)" in cancel.stdout, cancel.stdout + cancel.stderr
        out, err = again.communicate(timeout=DEADLINE_S)
        assert again.returncode == 1 and "r0: cancelled" in seen + out and "Traceback" not in err, out + err
    finally:
        _kill_all_in(tmp_path)
    assert _starts(run, "starts.txt") == 1  # never a second trainer
    status = read_status(run)
    assert status is not None and status.state is RunState.CANCELLED, status
    assert "what it left running" in (status.reason or ""), status


def test_a_sweepgen_run_whose_supervisor_was_killed_ends_what_its_trainer_left_running(tmp_path):
    """The run's supervisor SIGKILLed while its trainer's worker (in a session of its own) works,
    its `sweepgen run` alive: before, `run` recorded the run failed and the worker trained on,
    unseen; now `run` ends it with the trainer before it records the end."""
    proc, run, rank = _launcher_run(tmp_path)
    try:
        status = read_status(run)
        assert status is not None
        os.kill(int(status.ids["pid"]), signal.SIGKILL)
        out, err = proc.communicate(timeout=DEADLINE_S)
        assert proc.returncode == 1 and "r0: failed" in out and "Traceback" not in err, out + err
        deadline = time.monotonic() + DEADLINE_S
        while not _gone(rank):
            assert time.monotonic() < deadline, "the worker outlived its run's record"
            time.sleep(0.05)
    finally:
        _kill_all_in(tmp_path)
    status = read_status(run)
    assert status is not None and status.state is RunState.FAILED, status


def test_a_run_lost_under_the_run_that_held_it_is_said_lost_not_let_go_unstarted(tmp_path):
    """A second `run --rerun-failed` that planned while another `run` held a run (its attempt
    recorded running) follows it; the holder and its supervisor SIGKILLed, the attempt is lost. It
    did run: the second `run` says so (not "let go unstarted"), and starts attempt 2, once."""
    make_sweep(tmp_path, {"r0": {"sleep": 60.0}})
    command = _foreign_command(tmp_path)
    run = tmp_path / "runs" / "fake" / "r0"
    first = sweepgen(tmp_path, "run", "generated/fake", "--command", command, wait=False)

    def supervised() -> bool:
        status = read_status(run) if run.is_dir() else None
        return status is not None and "trainer_pgid" in status.ids and _starts(run, "starts.txt") == 1

    _wait_for(supervised, first, "the run's start")
    second = sweepgen(tmp_path, "run", "generated/fake", "--command", command, "--rerun-failed", wait=False)
    said = read_until(second, "waiting for 1 run(s)")
    first.send_signal(signal.SIGKILL)
    first.communicate()
    status = read_status(run)
    assert status is not None and status.state is RunState.RUNNING, status
    os.kill(int(status.ids["pid"]), signal.SIGKILL)  # its supervisor: nobody records the attempt's end
    out, err = second.communicate(timeout=DEADLINE_S)
    said += err
    assert second.returncode == 0 and "Traceback" not in said, out + said
    assert "let go unstarted" not in out + said, out + said
    assert "started by another `sweepgen run` and lost there" in out + said, out + said
    assert "r0 (attempt 1)" in out + said
    status = read_status(run)
    assert status is not None and status.state is RunState.FINISHED and status.attempt == 2, status
    assert _starts(run, "starts.txt") == 2
