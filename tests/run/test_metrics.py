"""TensorBoard event files are bounded before tensorboard reads them: what its reader would open
must be regular files, a run's together at most runfiles.MAX_EVENTS_BYTES; anything else is a
RunFileError naming the file (a report lists the run with it and goes on)."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from sweepgen.run.core import metrics, runfiles

EVENTS = "events.out.tfevents.1732000000.host.1.0"


def _sparse(path: Path, size: int) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "wb") as handle:
        handle.truncate(size)  # no bytes written: the size is what is checked


def test_an_event_file_over_the_limit_is_refused_before_it_is_read(tmp_path):
    _sparse(tmp_path / "run" / "runs" / "Nov24" / EVENTS, runfiles.MAX_EVENTS_BYTES + 1)
    with pytest.raises(runfiles.RunFileError) as caught:
        metrics.read_tensorboard(tmp_path / "run")
    assert caught.value.path.name == EVENTS
    assert "past 67,108,864 bytes (67,108,865)" in caught.value.reason


def test_the_limit_is_on_the_runs_event_files_together(tmp_path, monkeypatch):
    monkeypatch.setattr(runfiles, "MAX_EVENTS_BYTES", 1000)
    _sparse(tmp_path / "run" / "a" / EVENTS, 600)
    _sparse(tmp_path / "run" / "b" / EVENTS, 600)
    with pytest.raises(runfiles.RunFileError, match="past 1,000 bytes"):
        metrics.read_tensorboard(tmp_path / "run")


@pytest.mark.parametrize("kind", ["fifo", "dev-zero"])
def test_a_file_tensorboard_would_open_that_is_not_regular_is_refused_without_blocking(tmp_path, kind):
    folder = tmp_path / "run" / "runs"
    _sparse(folder / EVENTS, 10)  # the folder is listed for its regular event file...
    other = folder / "events.out.tfevents.2"  # ...and tensorboard would open every `tfevents` file in it
    if kind == "fifo":
        os.mkfifo(other)
    else:
        other.symlink_to("/dev/zero")
    started = time.monotonic()
    with pytest.raises(runfiles.RunFileError, match="is not a regular file"):
        metrics.read_tensorboard(tmp_path / "run")
    assert time.monotonic() - started < 10


@pytest.mark.train  # events written with torch's SummaryWriter; read with the track extra's tensorboard
def test_report_lists_the_run_with_an_oversized_event_file_and_reports_the_others(tmp_path, monkeypatch):
    import torch.utils.tensorboard as torch_tb
    from click.testing import CliRunner

    from sweepgen.cli import main

    runs = tmp_path / "runs"
    for name in ("a", "b"):
        (runs / name).mkdir(parents=True)
        (runs / name / "config.yaml").write_text(f"name: {name}\n")
        (runs / name / "summary.json").write_text('{"final_reward": 0.5}\n')  # what marks a run folder
        writer = torch_tb.SummaryWriter(log_dir=str(runs / name / "tb"))
        for step in range(1, 4):
            writer.add_scalar("eval/acc", 0.1 * step, global_step=step)
        writer.close()
    _sparse(runs / "b" / "tb" / EVENTS, 5000)
    monkeypatch.setattr(runfiles, "MAX_EVENTS_BYTES", 4000)
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(main, ["report", "runs", "--metric", "eval/acc", "--no-plot"])
    assert result.exit_code == 0, result.output
    assert (
        f"warning: run b: {EVENTS} brings the run's TensorBoard event files past 4,000 bytes" in result.stderr
    )
    assert "warning: run a" not in result.stderr
    assert "a = 0.300 at step 3" in result.stdout


@pytest.mark.train  # events written with torch's SummaryWriter; read with the track extra's tensorboard
def test_a_step_two_attempts_logged_takes_the_later_attempt_s_value_whatever_the_folders_names(tmp_path):
    """transformers names a run's event folder `runs/<Mon><DD>_<time>_<host>`: an attempt started
    again on Dec 1 sorts before the failed one of Nov 30, whose values must not win."""
    import torch.utils.tensorboard as torch_tb

    attempts = [
        ("Nov30_23-50-00_host", 1_732_999_800.0, [0.5, 0.25, 0.75]),
        ("Dec01_00-10-00_host", 1_733_011_800.0, [0.125, 0.375]),
    ]
    for folder, start, values in attempts:
        writer = torch_tb.SummaryWriter(log_dir=str(tmp_path / "run" / "runs" / folder))
        for step, value in enumerate(values, 1):
            writer.add_scalar("train/reward", value, global_step=step, walltime=start + step)
        writer.close()
    # steps 1-2 from the later attempt; step 3 only the first one logged
    assert metrics.read_tensorboard(tmp_path / "run") == {"train/reward": ((1, 0.125), (2, 0.375), (3, 0.75))}
