"""Local runs of several processes: the launcher's command line, disjoint GPU sets, and
real 2-process torchrun/accelerate runs on CPU (gloo) through `sweepgen run`: the ranks find each
other, the run happens once with its status written once (by the supervisor), and a cancel leaves
no rank running, even ranks that ignore SIGTERM."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner
from run_support import FAKE_COMMAND, LOADED_S, make_sweep, output_of

from sweepgen.cli import main
from sweepgen.run.core.base import RunState, read_status
from sweepgen.run.core.shape import RunShape
from sweepgen.run.local import launch
from sweepgen.run.logs.progress import ATTEMPT_MARK

PROBE = Path(__file__).parent.parent / "fixtures" / "ddp_probe.py"
PROBE_COMMAND = f"{sys.executable} {PROBE} {{config}}"


def with_resources(folder: Path, **resources) -> None:
    path = folder / "sweep.lock.json"
    lock = json.loads(path.read_text())
    lock["resources"] = resources
    path.write_text(json.dumps(lock, indent=2, sort_keys=True) + "\n")


def shaped(folder: Path, launcher: str, procs: int, gpus: int = 0) -> None:
    with_resources(folder, nodes=1, gpus_per_node=gpus, procs_per_node=procs, launcher=launcher)


def test_launcher_command_lines():
    argv = ["/venv/bin/python", "-P", "-m", "sweepgen_trainer", "c.yaml"]
    torchrun = launch.launched_argv(RunShape(procs_per_node=2, launcher="torchrun"), argv)
    # the trainer's -P (no working folder on sys.path) is the launcher's too: a committed `torch/`
    # or `accelerate/` was imported in place of the installed one as the launcher started
    assert torchrun[1] == "-P"
    torchrun = [torchrun[0], *torchrun[2:]]
    assert torchrun[1:10] == [
        "-m",
        "torch.distributed.run",
        "--standalone",
        "--nnodes",
        "1",
        "--nproc-per-node",
        "2",
        "--no-python",
        "--",
    ]
    assert torchrun[10:] == argv and torchrun[0].endswith("python")
    acc = launch.launched_argv(RunShape(procs_per_node=2, launcher="accelerate"), argv)
    assert acc[1:4] == ["-P", "-m", "accelerate.commands.launch"] and "--multi_gpu" in acc
    assert acc[acc.index("--num_processes") + 1] == "2" and acc[acc.index("--main_process_port") + 1] == "0"
    assert acc[acc.index("--no_python") + 1 :] == argv
    one = launch.launched_argv(RunShape(procs_per_node=1, launcher="accelerate"), argv)
    assert "--multi_gpu" not in one  # one process: accelerate's plain launcher
    assert launch.launched_argv(RunShape(), argv) == argv
    own = ["/venv/bin/python", "train.py", "-P"]  # a command without -P keeps Python's own rule
    assert launch.launched_argv(RunShape(procs_per_node=2, launcher="torchrun"), own)[1] == "-m"


@pytest.mark.parametrize(
    "resources, words",
    [
        ({"nodes": 1, "gpus_per_node": 0, "procs_per_node": 1, "launcher": "srun"}, "srun needs Slurm"),
        ({"nodes": 2, "gpus_per_node": 0, "procs_per_node": 1, "launcher": "torchrun"}, "2 nodes"),
        # a spec is no reason to start a million processes on this machine (it did: torchrun
        # --nproc-per-node 1000000)
        (
            {"nodes": 1, "gpus_per_node": 0, "procs_per_node": 1_000_000, "launcher": "torchrun"},
            "a run of 1000000 processes",
        ),
    ],
)
def test_shapes_one_machine_cannot_run_are_refused(cli_cwd, resources, words):
    folder = make_sweep(cli_cwd, {"a": {}})
    with_resources(folder, **resources)
    result = CliRunner().invoke(main, ["run", "generated/fake", "--command", FAKE_COMMAND])
    assert result.exit_code == 2, result.output
    assert words in result.output and "sweep.lock.json" in result.output
    assert not (cli_cwd / "runs").exists()


def test_multi_gpu_runs_get_disjoint_gpu_sets(cli_cwd, monkeypatch):
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)
    hold = cli_cwd / "hold"
    hold.touch()  # both runs at once: each holds its GPUs until the other has started
    runs = {name: {"steps": 1, "hold_file": str(hold)} for name in ("a", "b", "c")}
    folder = make_sweep(cli_cwd, runs)
    shaped(folder, "none", 1, gpus=2)  # the command starts its own processes on its 2 GPUs
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "sweepgen",
            "run",
            "generated/fake",
            "--gpus",
            "0,1,2,3",
            "--command",
            FAKE_COMMAND,
        ],
        cwd=cli_cwd,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    started = _wait_for(lambda: _started(cli_cwd, ("a", "b")), proc)
    assert sorted(started) == ["0,1", "2,3"]
    assert not (cli_cwd / "runs" / "fake" / "c" / "starts.jsonl").exists()  # no GPUs left for it
    hold.unlink()
    out, _ = proc.communicate(timeout=LOADED_S)
    assert proc.returncode == 0, out
    third = json.loads((cli_cwd / "runs" / "fake" / "c" / "starts.jsonl").read_text().splitlines()[0])
    assert third["cuda"] in ("0,1", "2,3")
    assert read_status(cli_cwd / "runs" / "fake" / "a").ids["gpu"] in ("0,1", "2,3")


@pytest.mark.parametrize(
    "args, words",
    [(["--gpus", "0,1,2,3", "--per-gpu", "2"], "each run takes 2 GPUs"), (["--gpus", "0"], "has 1 GPU(s)")],
)
def test_gpu_sets_that_cannot_be_made_are_refused(cli_cwd, monkeypatch, args, words):
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)
    folder = make_sweep(cli_cwd, {"a": {}})
    shaped(folder, "none", 1, gpus=2)
    result = CliRunner().invoke(main, ["run", "generated/fake", *args, "--command", FAKE_COMMAND])
    assert result.exit_code == 2 and words in result.output, result.output


def test_dry_run_shows_the_launcher(cli_cwd):
    folder = make_sweep(cli_cwd, {"a": {}})
    shaped(folder, "torchrun", 2)
    result = CliRunner().invoke(main, ["run", "generated/fake", "--dry-run", "--command", FAKE_COMMAND])
    assert result.exit_code == 0, result.output
    assert "2 process(es) under torchrun" in result.output
    assert "torch.distributed.run --standalone --nnodes 1 --nproc-per-node 2 --no-python" in result.output


@pytest.mark.train
@pytest.mark.parametrize("launcher", ["torchrun", "accelerate"])
def test_two_ranks_find_each_other_and_the_run_happens_once(tmp_path, launcher):
    folder = make_sweep(tmp_path, {"p": {}})
    shaped(folder, launcher, 2)
    first = _sweepgen(tmp_path, "run", "generated/fake", "--command", PROBE_COMMAND)
    assert first.returncode == 0, first.stdout + first.stderr
    run = tmp_path / "runs" / "fake" / "p"
    ranks = [json.loads((run / f"rank{r}.json").read_text()) for r in (0, 1)]
    assert [(r["rank"], r["world"], r["sum"]) for r in ranks] == [(0, 2, 3.0), (1, 2, 3.0)]
    status = read_status(run)
    assert status is not None and status.state is RunState.FINISHED and status.attempt == 1
    assert status.ids["launcher"] == launcher and status.ids["procs"] == 2
    # the status is the supervisor's, written by no rank
    assert status.ids["pid"] not in {r["pid"] for r in ranks}
    assert (run / "run.log").read_text().count(ATTEMPT_MARK) == 1
    again = _sweepgen(tmp_path, "run", "generated/fake", "--command", PROBE_COMMAND)
    assert again.returncode == 0, again.stdout + again.stderr
    assert read_status(run) == status and (run / "run.log").read_text().count(ATTEMPT_MARK) == 1


@pytest.mark.train
def test_cancel_leaves_no_rank_running(tmp_path):
    """The ranks ignore SIGTERM; torchrun starts each in a session of its own. The supervisor's stop
    timeout passes, its SIGKILL ends torchrun, and the ranks left behind are ended from its process
    tree before the run's end is recorded."""
    folder = make_sweep(tmp_path, {"p": {}})
    shaped(folder, "torchrun", 2)
    config = folder / "p.yaml"
    config.write_text(config.read_text() + "probe: {hold: true}\n")
    _unlock_config(folder)
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    runner = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "sweepgen",
            "run",
            "generated/fake",
            "--stop-timeout",
            "1",
            "--command",
            PROBE_COMMAND,
        ],
        cwd=tmp_path,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    run = tmp_path / "runs" / "fake" / "p"
    pids = _wait_for(lambda: _rank_pids(run), runner)
    assert len(pids) == 2 and all(_alive(p) for p in pids)
    cancel = _sweepgen(tmp_path, "cancel", "generated/fake")
    assert cancel.returncode == 0, cancel.stdout + cancel.stderr
    assert not [p for p in pids if _alive(p)], "a rank outlived the cancel"
    status = read_status(run)
    assert status is not None and status.state is RunState.CANCELLED
    out, _ = runner.communicate(timeout=LOADED_S)
    assert "Traceback" not in out


def _sweepgen(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "OMP_NUM_THREADS": "1", "COLUMNS": "200"}
    return subprocess.run(
        [sys.executable, "-m", "sweepgen", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=LOADED_S * 2,
    )


def _wait_for(found, proc: subprocess.Popen):
    deadline = time.monotonic() + LOADED_S
    while True:
        value = found()
        if value:
            return value
        assert proc.poll() is None, output_of(proc)[0]
        assert time.monotonic() < deadline
        time.sleep(0.1)


def _started(root: Path, names: tuple[str, ...]) -> list[str] | None:
    seen = []
    for name in names:
        starts = root / "runs" / "fake" / name / "starts.jsonl"
        if not starts.is_file() or not starts.read_text().strip():
            return None
        seen.append(json.loads(starts.read_text().splitlines()[0])["cuda"])
    return seen


def _rank_pids(run: Path) -> list[int] | None:
    files = [run / f"rank{r}.json" for r in (0, 1)]
    if not all(f.is_file() for f in files):
        return None
    return [json.loads(f.read_text())["pid"] for f in files]


def _alive(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"  # a zombie has ended


def _unlock_config(folder: Path) -> None:
    """The lock's sha256 of p.yaml after the test edited it (a hand edit is otherwise refused)."""
    path = folder / "sweep.lock.json"
    lock = json.loads(path.read_text())
    for entry in lock["files"]:
        entry["sha256"] = hashlib.sha256((folder / entry["path"]).read_bytes()).hexdigest()
    path.write_text(json.dumps(lock, indent=2, sort_keys=True) + "\n")
