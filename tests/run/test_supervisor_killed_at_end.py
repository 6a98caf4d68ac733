"""A run's supervisor killed (SIGKILL: the OOM killer) once its trainer has left its done file, before
the supervisor recorded anything of the end: the `sweepgen run` that started it records the end.
The done file proves the run finished, as every reader takes it over a lost record (RUN.md); before,
that `run` said "failed" and exited 1 while `status` showed the run finished (and wrote that over
the run's record), so `--rerun-failed`, which the `run` had told the user to use, ran nothing."""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path

from run_support import make_sweep
from search_support import cli, sweepgen

from sweepgen.run.core.base import RunState, read_status

# leaves its done file, then kills its supervisor (its parent: the supervisor runs it) and waits to
# die with it (the trainer's group is killed when its supervisor dies)
TRAINER = """\
import os, signal, sys, time, yaml
config = yaml.safe_load(open(sys.argv[1]))
os.makedirs(config["output_dir"], exist_ok=True)
with open(os.path.join(config["output_dir"], "starts.txt"), "a") as fh:
    fh.write(f"{os.getpid()}\\n")
with open(os.path.join(config["output_dir"], "done.json"), "w") as fh:
    fh.write("{}")
os.kill(os.getppid(), signal.SIGKILL)
time.sleep(600)
"""


def test_a_supervisor_killed_after_the_done_file_is_recorded_finished_by_its_run(tmp_path: Path) -> None:
    make_sweep(tmp_path, {"r0": {}})
    (tmp_path / "trainer.py").write_text(TRAINER)
    command = f"{shlex.quote(sys.executable)} {shlex.quote(str(tmp_path / 'trainer.py'))} {{config}}"
    done = sweepgen(tmp_path, "run", "generated/fake", "--command", command, "--done-file", "done.json")
    run = tmp_path / "runs" / "fake" / "r0"
    status = read_status(run)
    assert status is not None and status.state is RunState.FINISHED, (status, done.stdout + done.stderr)
    assert status.reason is not None and "done.json proves it finished" in status.reason, status
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stdout + done.stderr
    assert "failed" not in done.stdout, done.stdout
    shown = json.loads(cli(tmp_path, "status", "generated/fake", "--format", "json").stdout)
    assert [row["state"] for row in shown] == ["FINISHED"], shown
    again = sweepgen(tmp_path, "run", "generated/fake", "--rerun-failed")
    assert again.returncode == 0, again.stdout + again.stderr
    assert len((run / "starts.txt").read_text().splitlines()) == 1  # never run again
