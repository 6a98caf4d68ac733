"""A trainer that leaves its done file and then exits non-zero (a teardown that fails after the
results are written: a logger's finish, a process group's shutdown) is finished for `run` as for
every other reader of the run, with the exit said; before, `run` recorded it failed and exited 1
while `status` showed it finished, and `--rerun-failed` then ran nothing."""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path

from click.testing import CliRunner
from run_support import make_config_sweep

from sweepgen.cli import main

TRAINER = (
    "import pathlib, sys, yaml; out = pathlib.Path(yaml.safe_load(open(sys.argv[1]))['output_dir']); "
    "out.mkdir(parents=True, exist_ok=True); (out / 'starts.txt').open('a').write('x\\n'); "
    "(out / 'done.json').write_text('ok'); sys.exit(3)"
)
COMMAND = f"{shlex.quote(sys.executable)} -c {shlex.quote(TRAINER)} {{config}}"


def test_a_done_file_then_a_failed_exit_is_finished_and_said(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    make_config_sweep(tmp_path, {"a": {"output_dir": "runs/t/a"}}, sweep="t", values={"a": {}})
    first = CliRunner().invoke(main, ["run", "generated/t", "--command", COMMAND, "--done-file", "done.json"])
    assert first.exit_code == 0, first.output
    status = json.loads(Path("runs/t/a/sweepgen_status.json").read_text())
    assert status["state"] == "finished"
    assert status["reason"] == "exit code 3 after it left its done.json"
    shown = CliRunner().invoke(main, ["status", "generated/t", "--format", "json"])
    (view,) = json.loads(shown.output)
    assert view["state"] == "FINISHED" and view["reason"] == "exit code 3 after it left its done.json", view
    again = CliRunner().invoke(
        main, ["run", "generated/t", "--command", COMMAND, "--done-file", "done.json", "--rerun-failed"]
    )
    assert again.exit_code == 0, again.output
    assert Path("runs/t/a/starts.txt").read_text() == "x\n"  # started once
