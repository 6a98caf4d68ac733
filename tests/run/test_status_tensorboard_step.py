"""`status` of a `trl` run that kept no trainer state (`save_strategy: "no"`) and logged only to
TensorBoard showed `-/N` steps: its step is now read from the newest event file's last record."""

from __future__ import annotations

import os
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
from click.testing import CliRunner
from run_support import make_config_sweep

from sweepgen.cli import main
from sweepgen.run.core.base import RunState, RunStatus, write_status
from sweepgen.run.logs import tb_step


def _events(folder: str, steps: range, tags: int = 3) -> None:
    import torch.utils.tensorboard as torch_tb  # the writer transformers' TensorBoardCallback uses

    writer = torch_tb.SummaryWriter(log_dir=folder)
    for step in steps:
        for t in range(tags):
            writer.add_scalar(f"train/m{t}", 0.5, global_step=step)
    writer.close()


def _status(name: str, started: datetime) -> None:
    write_status(
        Path(f"runs/t/{name}"),
        RunStatus(
            RunState.FINISHED,
            "local",
            exit_code=0,
            started=started.isoformat(),
            ended=datetime.now(timezone.utc).isoformat(),
            done_file=None,
            sweep_dir="generated/t",
        ),
    )


@pytest.mark.train  # events written with torch's SummaryWriter, as a trl run writes them
def test_status_shows_the_step_of_a_run_that_logged_only_to_tensorboard(cli_cwd):
    configs = {n: {"output_dir": f"runs/t/{n}", "max_steps": 40, "lr": lr} for n, lr in (("a", 1), ("b", 2))}
    make_config_sweep(cli_cwd, configs, sweep="t", values={"a": {"lr": 1}, "b": {"lr": 2}})
    _events("runs/t/a/runs/Nov29_host", range(1, 38))
    _events("runs/t/b/runs/Nov28_host", range(1, 11))  # an earlier attempt's folder
    now = datetime.now(timezone.utc)
    old = (now - timedelta(hours=2)).timestamp()
    for file in Path("runs/t/b/runs/Nov28_host").iterdir():
        os.utime(file, (old, old))
    _status("a", now - timedelta(minutes=5))
    _status("b", now - timedelta(minutes=5))  # started after b's only events were written
    result = CliRunner().invoke(main, ["status", "generated/t"])
    assert result.exit_code == 0, result.output
    rows = {name: next(ln for ln in result.output.splitlines() if f" {name} " in ln[:5]) for name in "ab"}
    assert "37/40" in rows["a"], result.output
    assert "-/40" in rows["b"] and "10/40" not in rows["b"], result.output


@pytest.mark.train
def test_a_record_still_being_written_is_not_read(tmp_path):
    """The trainer may be writing the last record now: the last whole one's step counts."""
    _events(str(tmp_path / "runs"), range(1, 6), tags=1)
    (path,) = (tmp_path / "runs").iterdir()
    data = path.read_bytes()
    path.write_bytes(data + data[-30:-10])  # a record's first bytes, no more
    assert tb_step.last_step(tmp_path, None) == 5
