"""`run --mps`: the MPS control daemon's lifecycle, against a stand-in `nvidia-cuda-mps-control` on
PATH that behaves like the real one's interface (``-d`` starts, ``quit`` on stdin stops) and records
what it was asked. The real daemon runs in the GPU benchmarks (benchmarks/bench_gpu_packing.py)."""

from __future__ import annotations

import os
import shutil
import stat
from pathlib import Path

import pytest

from sweepgen.errors import UserError
from sweepgen.run.local.mps import mps_daemon

FAKE = """#!/bin/sh
log="{log}"
if [ "$1" = "-d" ]; then
  echo "start pipe=$CUDA_MPS_PIPE_DIRECTORY log=$CUDA_MPS_LOG_DIRECTORY gpus=$CUDA_VISIBLE_DEVICES" >> "$log"
  exit {start_rc}
fi
read cmd
echo "$cmd pipe=$CUDA_MPS_PIPE_DIRECTORY" >> "$log"
exit {quit_rc}
"""


def _fake(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, start_rc: int = 0, quit_rc: int = 0) -> Path:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    log = tmp_path / "calls.log"
    tool = bin_dir / "nvidia-cuda-mps-control"
    tool.write_text(FAKE.format(log=log, start_rc=start_rc, quit_rc=quit_rc))
    tool.chmod(tool.stat().st_mode | stat.S_IEXEC)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    return log


def test_daemon_starts_with_private_folders_and_quits_at_the_end(tmp_path, monkeypatch):
    log = _fake(tmp_path, monkeypatch)
    with mps_daemon(["0", "1"]) as session:
        pipe = session.env["CUDA_MPS_PIPE_DIRECTORY"]
        assert Path(pipe).is_dir() and Path(session.env["CUDA_MPS_LOG_DIRECTORY"]).is_dir()
        assert log.read_text().splitlines() == [
            f"start pipe={pipe} log={session.env['CUDA_MPS_LOG_DIRECTORY']} gpus=0,1"
        ]
    assert log.read_text().splitlines()[1] == f"quit pipe={pipe}"
    assert not Path(pipe).exists() and session.warnings == []


def test_daemon_quits_when_the_sweep_fails(tmp_path, monkeypatch):
    log = _fake(tmp_path, monkeypatch)
    with pytest.raises(RuntimeError), mps_daemon(["0"]):
        raise RuntimeError("a run crashed the executor")
    assert log.read_text().splitlines()[-1].startswith("quit ")


def test_missing_mps_is_an_error_before_anything_starts(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(UserError, match="nvidia-cuda-mps-control` is not on PATH"), mps_daemon(["0"]):
        pytest.fail("the block must not run")


def test_a_daemon_that_fails_to_start_is_an_error(tmp_path, monkeypatch):
    _fake(tmp_path, monkeypatch, start_rc=3)
    with pytest.raises(UserError, match="exited 3"), mps_daemon(["0"]):
        pytest.fail("the block must not run")


def test_a_daemon_that_does_not_quit_leaves_a_warning_with_the_way_to_stop_it(tmp_path, monkeypatch):
    _fake(tmp_path, monkeypatch, quit_rc=1)
    with mps_daemon(["0"]) as session:
        pipe = session.env["CUDA_MPS_PIPE_DIRECTORY"]
    assert len(session.warnings) == 1 and pipe in session.warnings[0] and Path(pipe).is_dir()
    shutil.rmtree(Path(pipe).parent)  # the folder kept for the stuck daemon; the test's own


def test_mps_needs_gpus():
    with pytest.raises(UserError, match="--mps needs --gpus"), mps_daemon([]):
        pytest.fail("the block must not run")


def test_run_mps_hands_the_daemon_to_every_packed_run_and_stops_it(tmp_path, monkeypatch):
    """`run --gpus 0 --per-gpu 2 --mps` end to end, with a foreign trainer that records its env."""
    from click.testing import CliRunner
    from run_support import make_config_sweep

    from sweepgen.cli import main

    log = _fake(tmp_path, monkeypatch)
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)
    configs = {n: {"output_dir": f"runs/m/{n}"} for n in ("a", "b")}
    make_config_sweep(tmp_path, configs, sweep="m", values={})
    trainer = "sh -c 'echo $CUDA_MPS_PIPE_DIRECTORY > {run_dir}/pipe.txt' {config}"
    result = CliRunner().invoke(
        main, ["run", "generated/m", "--gpus", "0", "--per-gpu", "2", "--mps", "--command", trainer]
    )
    assert result.exit_code == 0, result.output
    calls = log.read_text().splitlines()
    assert calls[0].startswith("start ") and calls[-1].startswith("quit ") and len(calls) == 2
    pipe = calls[0].split()[1].removeprefix("pipe=")
    for name in configs:
        assert (tmp_path / "runs/m" / name / "pipe.txt").read_text().strip() == pipe
    assert not Path(pipe).exists()  # the daemon's folders go with it


def test_run_mps_without_gpus_is_a_usage_error(tmp_path, monkeypatch):
    from click.testing import CliRunner
    from run_support import make_config_sweep

    from sweepgen.cli import main

    monkeypatch.chdir(tmp_path)
    make_config_sweep(tmp_path, {"a": {"output_dir": "runs/a"}}, sweep="m", values={})
    result = CliRunner().invoke(main, ["run", "generated/m", "--mps", "--command", "true"])
    assert result.exit_code == 2 and "--mps needs --gpus" in result.output
