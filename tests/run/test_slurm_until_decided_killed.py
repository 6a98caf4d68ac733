"""On the real Slurm (tests/slurm_cluster.py): `sweepgen run --until-decided --executor slurm`
SIGKILLed between looks, as soon as round 2's jobs are submitted (they run on and end unfollowed).
The same command then submits no run a second time, keeps the look recorded, and takes exactly the
schedule's looks (2 and 4 seeds, `--max-seeds 4`): none twice, none skipped. Each start is counted
by a line the trainer appends (a start never recorded is seen). Checked also, and passing without a
change, at the local test's kill points (before look 2 is recorded; before round 3 is submitted):
not kept, about 25 s each on Slurm.
"""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from run_support import ARMS_SPEC as SPEC
from run_support import LOADED_S

from sweepgen.compile.output.lockfile.lock import DECIDE_STATE_NAME

pytestmark = [pytest.mark.slurm, pytest.mark.usefixtures("slurm_cluster")]

# logs eval_acc = its arm's level + a fixed jitter by seed, and appends its run's name to starts.log
TRAINER = """\
import json, pathlib, sys
import yaml
cfg = yaml.safe_load(open(sys.argv[1]))
out = pathlib.Path(sys.argv[2])
out.mkdir(parents=True, exist_ok=True)
with open(pathlib.Path(sys.argv[3]) / "starts.log", "a") as f:
    f.write(out.name + "\\n")
seed = cfg["training"]["seed"]
acc = cfg["arm"]["level"] + [0.01, -0.02, 0.015, -0.005, 0.02, -0.01, 0.0, 0.005][seed - 1]
(out / "metrics.jsonl").write_text(json.dumps({"step": 1, "eval_acc": acc}) + "\\n")
"""
# SIGKILLs itself as soon as round 2's jobs are submitted: they run on and end unfollowed, and no
# look of them is taken (the look-and-round kill points are test_run_until_decided.py's, locally)
KILLED_AT = """\
import os, signal, sys
from sweepgen.run.slurm import executor
real_submit, submits = executor.SlurmExecutor._submit, []
def submit(*args):
    real_submit(*args)
    submits.append(1)
    if len(submits) == 2:
        os.kill(os.getpid(), signal.SIGKILL)
executor.SlurmExecutor._submit = submit
from sweepgen.cli import main
main(["run", "generated/arms", *sys.argv[1:]], prog_name="sweepgen")
"""


@pytest.fixture
def arms(tmp_path: Path) -> Path:
    (tmp_path / "specs").mkdir()
    (tmp_path / "templates").mkdir()
    (tmp_path / "specs/arms.yaml").write_text(textwrap.dedent(SPEC))
    (tmp_path / "templates/t.yaml.j2").write_text("{{ config | to_yaml }}\n")
    (tmp_path / "trainer.py").write_text(TRAINER)
    (tmp_path / "killed_at.py").write_text(KILLED_AT)
    assert _sweepgen(tmp_path, "render", "specs/arms.yaml").returncode == 0
    lock = tmp_path / "generated/arms/sweep.lock.json"
    lock.write_text(json.dumps({**json.loads(lock.read_text()), "resources": {"time": 5}}))
    return tmp_path


def _sweepgen(
    cwd: Path, *args: str, script: tuple[str, ...] = ("-m", "sweepgen")
) -> subprocess.CompletedProcess[str]:
    argv = [sys.executable, *script, *args]
    return subprocess.run(argv, cwd=cwd, capture_output=True, text=True, timeout=LOADED_S * 3)


def test_killed_as_round_2_is_submitted_the_same_command_submits_each_seed_once_and_each_look_once(arms):
    first = (
        "--executor",
        "slurm",
        "--command",
        f"{shlex.quote(sys.executable)} trainer.py {{config}} {{run_dir}} {shlex.quote(str(arms))}",
        "--done-file",
        "metrics.jsonl",
        "--metric",
        "eval_acc",
        "--until-decided",
        "--compare",
        "base",
        "--seeds-per-round",
        "2",
        "--max-seeds",
        "4",
    )
    killed = _sweepgen(arms, *first, script=("killed_at.py",))
    assert killed.returncode == -9, killed.stdout + killed.stderr
    state_path = arms / "generated/arms" / DECIDE_STATE_NAME
    assert [x["seeds"] for x in json.loads(state_path.read_text())["looks"]] == [2]
    again = _sweepgen(arms, "run", "generated/arms", "--until-decided")
    assert again.returncode == 0, again.stdout + again.stderr
    started = (arms / "starts.log").read_text().split()
    assert len(started) == len(set(started)), started  # every run started exactly once, whoever died
    state = json.loads(state_path.read_text())
    assert [x["seeds"] for x in state["looks"]] == [2, 4]  # the schedule's looks, each once
    assert sum(x["alpha"] for x in state["looks"]) == pytest.approx(0.05)
    status = _sweepgen(arms, "status", "generated/arms")
    assert status.returncode == 0, status.stdout + status.stderr
