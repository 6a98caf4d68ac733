"""TensorBoard event files are bounded before tensorboard reads them: what its reader would open
must be regular files, a run's together at most runfiles.MAX_EVENTS_BYTES; anything else is a
RunFileError naming the file (a report lists the run with it and goes on)."""

from __future__ import annotations

import json
import os
import struct
import time
import tracemalloc
from pathlib import Path

import pytest

from sweepgen.run.core import runfiles
from sweepgen.run.logs import metrics

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
    refused = "is not a regular file" if kind == "fifo" else "is a symbolic link"
    with pytest.raises(runfiles.RunFileError, match=refused):
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


def _events(folder: Path, tag: str, value: float) -> Path:
    """One scalar at step 1 in a new event file of ``folder``, written by tensorboard's own writer."""
    from tensorboard.compat.proto import event_pb2, summary_pb2  # type: ignore[import-untyped]
    from tensorboard.summary.writer.event_file_writer import EventFileWriter  # type: ignore[import-untyped]

    writer = EventFileWriter(str(folder))
    summary = summary_pb2.Summary(value=[summary_pb2.Summary.Value(tag=tag, simple_value=value)])
    writer.add_event(event_pb2.Event(step=1, wall_time=1.0, summary=summary))
    writer.close()
    return Path(writer.get_logdir()) / next(n for n in os.listdir(folder) if "tfevents" in n)


@pytest.mark.train  # the track extra's tensorboard, which the full lane installs
def test_an_event_file_swapped_for_a_link_after_it_was_checked_is_not_the_one_read(tmp_path, monkeypatch):
    """A shared runs folder's writer swaps a checked event file for a link to another run's (or any
    file of the person running `report`) before tensorboard opens it: tensorboard read the link's
    target by name. It now reads the file sweepgen opened and checked."""
    own = _events(tmp_path / "run" / "runs" / "x", "acc", 0.5)
    elsewhere = _events(tmp_path / "outside", "secret", 0.25)
    swap = runfiles.charge

    def charge_then_swap(path: Path, size: int) -> None:  # charged once the file is checked
        swap(path, size)
        if path == own:
            own.unlink()
            own.symlink_to(elsewhere)

    monkeypatch.setattr(runfiles, "charge", charge_then_swap)
    assert metrics.read_tensorboard(tmp_path / "run") == {"acc": ((1, 0.5),)}
    assert own.is_symlink()  # the swap happened


def _record(data: bytes, length: int | None = None) -> bytes:
    """One TFRecord: its length, the length's checksum, the data, the data's checksum."""
    from tensorboard.compat.tensorflow_stub.pywrap_tensorflow import masked_crc32c  # type: ignore[import-untyped]

    head = struct.pack("<Q", len(data) if length is None else length)
    return head + struct.pack("<I", masked_crc32c(head)) + data + struct.pack("<I", masked_crc32c(data))


@pytest.mark.train  # the track extra's tensorboard, which the full lane installs
@pytest.mark.parametrize(
    "data, length, reason",
    [
        # tensorboard's reader allocated the length first: MemoryError, `report` ended "out of memory"
        (b"x" * 100, 1 << 62, "holds a record of 4,611,686,018,427,387,904 bytes at byte 0"),
        # checksums that hold over bytes that are no Event: protobuf's DecodeError, exit 70
        (b"\xff\xff\xff\xff", None, "holds a record that is no TensorBoard event"),
    ],
    ids=["huge-length", "not-protobuf"],
)
def test_an_event_file_tensorboard_cannot_read_is_a_run_file_error(tmp_path, data, length, reason):
    folder = tmp_path / "run" / "runs" / "x"
    folder.mkdir(parents=True)
    (folder / EVENTS).write_bytes(_record(data, length))
    with pytest.raises(runfiles.RunFileError) as caught:
        metrics.read_tensorboard(tmp_path / "run")
    assert caught.value.path.name == EVENTS and reason in caught.value.reason, caught.value.reason


@pytest.mark.train  # the track extra's tensorboard, which the full lane installs
def test_a_record_still_being_written_ends_the_file_as_before(tmp_path):
    """A last record cut short (a trainer writing it now) is not refused: tensorboard reads the
    records before it, as it always did."""
    whole = _events(tmp_path / "run" / "runs" / "x", "acc", 0.5)
    whole.write_bytes(whole.read_bytes() + _record(b"y" * 1000)[:40])
    assert metrics.read_tensorboard(tmp_path / "run") == {"acc": ((1, 0.5),)}


def _log(path: Path, kind: str, rows: int, note: str) -> dict[str, metrics.Points]:
    """A log of ``rows`` rows, each with a text cell (no metric) and, every 100th row, ``acc``; the
    series it holds."""
    with open(path, "w", encoding="utf-8", newline="") as fh:
        if kind == "csv":
            fh.write("step,note,acc\r\n")
        for step in range(rows):
            acc = step / 1000 if step % 100 == 0 else None
            if kind == "csv":
                fh.write(f'{step},"{note}",{"" if acc is None else acc}\r\n')
            else:
                fh.write(
                    json.dumps({"step": step, "note": note, **({} if acc is None else {"acc": acc})}) + "\n"
                )
    return {"acc": tuple((s, s / 1000) for s in range(0, rows, 100))}


@pytest.mark.parametrize("kind", ["jsonl", "csv"])
def test_a_large_log_is_never_held_whole_while_read(tmp_path, monkeypatch, kind):
    """A shared runs folder's metrics log of 256 MiB (the limit) cost `report` 2.8 GB (JSON lines)
    and 7.7 GB (CSV) while read: its text, its lines, a joined copy, a dict per row (a StringIO of
    the whole text). Read a batch at a time, what it holds beyond the file's bytes is one batch and
    the series."""
    path = tmp_path / f"metrics.{kind}"
    want = _log(path, kind, 40_000, "x" * 400)  # 16 MB
    size = path.stat().st_size
    # a batch's own copies far below the file's size (raising=False: the same test of a reader
    # without batches)
    monkeypatch.setattr(metrics, "_BATCH", 1 << 18, raising=False)
    tracemalloc.start()
    try:
        got = (metrics.read_csv if kind == "csv" else metrics.read_jsonl)(path)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert got == want
    assert peak < 1.5 * size, f"{peak:,} bytes held to read {size:,}"


@pytest.mark.parametrize("kind", ["jsonl", "csv"])
def test_batches_split_no_line_and_no_character(tmp_path, monkeypatch, kind):
    """Whatever the batch size, a log reads as it did whole: CRLF ends, a quoted CSV cell holding a
    line break, a character of several bytes, a line cut by a kill ending the readable log."""
    note = 'é\u2028"\r\nw' if kind == "csv" else "é\u2028w"
    path = tmp_path / f"metrics.{kind}"
    want = _log(path, kind, 1_000, note.replace('"', '""') if kind == "csv" else note)
    monkeypatch.setattr(metrics, "_BATCH", 7, raising=False)
    read = metrics.read_csv if kind == "csv" else metrics.read_jsonl
    assert read(path) == want
    if kind == "jsonl":  # a cut line ends the log where it is, in whichever batch
        text = path.read_text(encoding="utf-8").splitlines(keepends=True)
        path.write_text("".join(text[:450]) + '{"step": 450, "ac\n' + "".join(text[451:]), encoding="utf-8")
        assert read(path) == {"acc": tuple(p for p in want["acc"] if p[0] < 450)}
