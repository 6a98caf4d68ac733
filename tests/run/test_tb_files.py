"""Which files of a run are TensorBoard event files is one rule and one walk (run/logs/tb_files.py)
for `report` (metrics.py, tb_events.py) and `status` (tb_step.py); the three said it three ways
and disagreed on a name, a link and a folder that could not be listed."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from fs_support import chain

from sweepgen.run.core import runfiles
from sweepgen.run.logs import metrics, tb_files, tb_step


def _events(folder: Path, name: str, steps: range, tag: str = "acc") -> Path:
    """``folder/name``: scalars ``tag`` = step / 10 at ``steps``, written by tensorboard's own writer."""
    from tensorboard.compat.proto import event_pb2, summary_pb2  # type: ignore[import-untyped]
    from tensorboard.summary.writer.event_file_writer import EventFileWriter  # type: ignore[import-untyped]

    scratch = folder.parent / f".w-{name}"
    writer = EventFileWriter(str(scratch))
    for step in steps:
        value = summary_pb2.Summary.Value(tag=tag, simple_value=step / 10)
        writer.add_event(
            event_pb2.Event(step=step, wall_time=1.0 + step, summary=summary_pb2.Summary(value=[value]))
        )
    writer.close()
    folder.mkdir(parents=True, exist_ok=True)
    (written,) = scratch.iterdir()
    written.rename(folder / name)
    shutil.rmtree(scratch)
    return folder / name


def _tensorboards_own(folder: Path) -> dict[str, tuple[tuple[int, float], ...]]:
    """What tensorboard's EventAccumulator, pointed at the folder by name, reads there (the oracle)."""
    from tensorboard.backend.event_processing import event_accumulator  # type: ignore[import-untyped]

    acc = event_accumulator.EventAccumulator(str(folder), size_guidance={event_accumulator.SCALARS: 0})
    acc.Reload()
    return {t: tuple((e.step, pytest.approx(e.value)) for e in acc.Scalars(t)) for t in acc.Tags()["scalars"]}


@pytest.mark.train  # the track extra's tensorboard, which the full lane installs
def test_an_event_file_tensorboard_reads_by_its_name_is_read_by_report_and_status_alike(tmp_path: Path):
    """A folder whose only event file is named ``x.tfevents.bak``: tensorboard reads it (any name
    holding ``tfevents``), `status` showed its step, `report` found no metric (it looked only for
    folders holding an ``events.out.tfevents.*``, yet read the same file beside one)."""
    folder = tmp_path / "run" / "runs" / "Nov29"
    _events(folder, "x.tfevents.bak", range(1, 4))
    expected = _tensorboards_own(folder)
    assert expected == {"acc": ((1, 0.1), (2, 0.2), (3, 0.3))}
    assert metrics.read_tensorboard(tmp_path / "run") == expected
    assert tb_step.last_step(tmp_path / "run", None) == 3
    assert tb_files.event_files(tmp_path / "run") == {folder: ["x.tfevents.bak"]}


@pytest.mark.train
def test_a_profilers_placeholder_is_no_event_file_for_status_either(tmp_path: Path):
    """The profiler's ``*.profile-empty`` (no scalars; tensorboard never reads it) written after the
    run's events: `status` took it as the newest event file and showed no step."""
    folder = tmp_path / "run" / "runs" / "Nov29"
    events = _events(folder, "events.out.tfevents.1.host.1.0", range(1, 8))
    placeholder = _events(folder, "events.out.tfevents.2.host.profile-empty", range(0, 1))
    os.utime(placeholder, ns=(os.stat(events).st_mtime_ns + 10**9,) * 2)
    assert tb_step.last_step(tmp_path / "run", None) == 7
    assert set(metrics.read_tensorboard(tmp_path / "run")) == {"acc"}
    assert tb_files.event_files(tmp_path / "run") == {folder: [events.name]}


@pytest.mark.parametrize("target", ["missing", "a folder"])
def test_a_link_named_like_an_event_file_is_refused_whatever_it_points_at(tmp_path: Path, target: str):
    """A link to a file was refused with its reason, but a dangling link or a link to a folder in a
    folder of no other event file was passed over: `report` said the metric was not logged."""
    folder = tmp_path / "run" / "runs"
    folder.mkdir(parents=True)
    (tmp_path / "elsewhere").mkdir()
    to = tmp_path / ("nothing" if target == "missing" else "elsewhere")
    (folder / "events.out.tfevents.1.host.1.0").symlink_to(to)
    with pytest.raises(runfiles.RunFileError, match="is a symbolic link"):
        metrics.read_tensorboard(tmp_path / "run")
    assert tb_step.last_step(tmp_path / "run", None) is None  # a display shows only what it can read


def test_a_folder_too_deep_to_be_listed_is_refused_not_passed_over(tmp_path: Path):
    """Past the longest path the system opens (PATH_MAX) a folder cannot be listed by name: its event
    files were passed over in silence, and `report` said the metric was not logged."""
    run = tmp_path / "run"
    run.mkdir()
    bottom = chain(run, 20, name="d" * 250)  # 5,000 characters: past Linux's 4,096
    fd = os.open(run, os.O_DIRECTORY)
    try:
        for _ in range(20):
            below = os.open("d" * 250, os.O_DIRECTORY, dir_fd=fd)
            os.close(fd)
            fd = below
        os.close(os.open("events.out.tfevents.1.host.1.0", os.O_CREAT | os.O_WRONLY, dir_fd=fd))
    finally:
        os.close(fd)
    assert len(str(bottom)) > 4096
    with pytest.raises(runfiles.RunFileError, match=r"a folder \d+ levels down that cannot be listed"):
        metrics.read_tensorboard(run)
    assert tb_step.last_step(run, None) is None


def test_a_run_folder_of_too_many_entries_is_refused_when_checkpoints_are_looked_for(
    tmp_path: Path, monkeypatch
):
    """A run folder of 300,000 files named `checkpoint-N` (no trainer state in any) was listed and
    looked into whole: `report` 6 s, and every refresh of `status`'s live table as long. The run's
    entries are bounded as its event files' walk is: `report` says why, `status` shows no step."""
    run = tmp_path / "run"
    run.mkdir()
    for i in range(30):
        (run / f"checkpoint-{i}").write_text("")
    monkeypatch.setattr(tb_files, "MAX_RUN_ENTRIES", 20)
    with pytest.raises(
        runfiles.RunFileError, match="more than 20 files and folders .checkpoints are looked for"
    ):
        metrics.read_all(run, tensorboard=False)
    assert metrics.trainer_step(run) is None
    monkeypatch.setattr(tb_files, "MAX_RUN_ENTRIES", 40)
    (run / "checkpoint-7").unlink()
    (run / "checkpoint-7").mkdir()
    (run / "checkpoint-7" / "trainer_state.json").write_text('{"global_step": 7, "log_history": []}')
    assert metrics.trainer_step(run) == 7
