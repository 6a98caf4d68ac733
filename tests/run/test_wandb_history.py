"""`report` reads a W&B run's local `.wandb` file (an offline run's only record): `sweepgen run` puts
it in the run folder (WANDB_DIR), the chunks are checked and joined here, the records parsed by
wandb's own protobuf classes; a step is the HF Trainer's `train/global_step`."""

from __future__ import annotations

import json
import shlex
import struct
import sys
import zlib
from pathlib import Path

import pytest
from click.testing import CliRunner
from run_support import make_config_sweep

from sweepgen.cli import main
from sweepgen.run.core import runfiles
from sweepgen.run.logs.wandb_history import _BLOCK, _HEADER, records


def _chunk(kind: int, body: bytes) -> bytes:
    return (
        struct.pack("<IHB", zlib.crc32(body, zlib.crc32(bytes([kind]))) & 0xFFFFFFFF, len(body), kind) + body
    )


def test_records_are_joined_across_blocks_and_a_cut_one_ends_the_file(tmp_path):
    first = _HEADER + _chunk(1, b"a" * 10)
    room = _BLOCK - len(first) - 7  # what the first block holds after the next chunk's header
    big = b"b" * (room + 100)
    data = first + _chunk(2, big[:room]) + _chunk(4, big[room:]) + _chunk(1, b"c")
    assert list(records(data, tmp_path / "x.wandb")) == [b"a" * 10, big, b"c"]
    cut = data + _chunk(1, b"dddd")[:-2]  # a run still writing its last record
    assert list(records(cut, tmp_path / "x.wandb")) == [b"a" * 10, big, b"c"]
    damaged = data[:-1] + b"x"  # a crc that does not match ends the file there
    assert list(records(damaged, tmp_path / "x.wandb")) == [b"a" * 10, big]


def test_a_file_without_the_header_is_named(tmp_path):
    with pytest.raises(runfiles.RunFileError, match="not a W&B run file"):
        list(records(b"PK\x03\x04", tmp_path / "x.wandb"))
    with pytest.raises(runfiles.RunFileError, match="format this sweepgen does not read"):
        list(records(_HEADER[:6] + b"\x01" + _chunk(1, b"a"), tmp_path / "x.wandb"))


# a stand-in for `trl grpo --report_to wandb` offline: the HF Trainer's WandbCallback logs
# `train/<name>` with `train/global_step`; wandb writes where WANDB_DIR says
WRITER = """
import sys, wandb
reward = float(sys.argv[2])
run = wandb.init(mode="offline", project="p")
for step in (10, 20, 30):
    run.log({"train/reward": reward * step, "train/loss": 1.0 / step, "train/global_step": step})
run.finish()
"""


@pytest.mark.train  # wandb: the track extra, in the full lane
def test_report_reads_an_offline_wandb_run_without_metric(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("WANDB_SILENT", "true")
    (tmp_path / "writer.py").write_text(WRITER)
    configs = {f"beta{b}": {"output_dir": f"runs/t/beta{b}", "beta": b} for b in (1, 2)}
    make_config_sweep(
        tmp_path, configs, sweep="t", values={n: {"beta": c["beta"]} for n, c in configs.items()}
    )
    command = f"{shlex.quote(sys.executable)} writer.py {{config}} 0.5"
    ran = CliRunner().invoke(main, ["run", "generated/t", "--command", command])
    assert ran.exit_code == 0, ran.output
    assert list(Path("runs/t/beta1").glob("wandb/offline-run-*/run-*.wandb")), "not in the run folder"
    assert not Path("wandb").exists()  # not one ./wandb/ for every run
    status = CliRunner().invoke(main, ["status", "generated/t"])
    assert status.exit_code == 0, status.output
    steps = [row.split("│")[7].strip() for row in status.stdout.splitlines() if row.startswith("│ beta")]
    assert steps == ["30", "30"], status.stdout  # W&B's step alone: no trainer state, no TensorBoard
    report = CliRunner().invoke(main, ["report", "generated/t", "--no-plot"])
    assert report.exit_code == 0, report.output
    assert "reporting `train/reward`" in report.stderr
    assert "beta1 = 15.000 at step 30" in report.stdout  # 0.5 x the HF Trainer's step, not wandb's
    assert [line.split()[-2] for line in report.stdout.splitlines() if line.lstrip().startswith("beta")] == [
        "wandb",
        "wandb",
    ]


@pytest.mark.train  # wandb's protobuf classes: the track extra, in the full lane
@pytest.mark.train  # wandb parses the records: the track extra, in the full lane
def test_a_record_wandb_cannot_read_is_named_with_its_file(tmp_path):
    from sweepgen.run.logs import wandb_history

    path = tmp_path / "run" / "wandb" / "offline-run-1" / "run-x.wandb"
    path.parent.mkdir(parents=True)
    path.write_bytes(_HEADER + _chunk(1, b"\xff\xff\xff"))
    with pytest.raises(runfiles.RunFileError, match="holds a record wandb cannot read"):
        wandb_history.rows(wandb_history.files(tmp_path / "run"))


def test_a_wandb_folder_swapped_for_a_link_after_its_check_is_never_listed(tmp_path, monkeypatch):
    """A shared runs folder's writer swaps a run's checked wandb folder for a link to a folder
    outside: it was listed by name (glob) after the check, so a folder outside the project was read
    (its names; opening its files was refused later). It is listed by descriptor now: the link is
    refused, never followed."""
    from sweepgen.run.logs import wandb_history

    outside = tmp_path / "outside" / "offline-run-2"
    outside.mkdir(parents=True)
    (outside / "run-secret.wandb").write_bytes(_HEADER)
    folder = tmp_path / "run" / "wandb" / "offline-run-1"
    folder.mkdir(parents=True)
    (folder / "run-x.wandb").write_bytes(_HEADER)
    checked = wandb_history._real_folder

    def check_then_swap(path: Path) -> bool:
        ok = checked(path)
        if path == folder:
            (folder / "run-x.wandb").unlink()
            folder.rmdir()
            folder.symlink_to(outside)
        return ok

    monkeypatch.setattr(wandb_history, "_real_folder", check_then_swap)
    assert wandb_history.files(tmp_path / "run") == []
    assert folder.is_symlink()  # the swap happened


@pytest.mark.train  # wandb parses the records: the track extra, in the full lane
def test_wandb_files_that_grow_after_their_size_check_are_bounded_together(tmp_path, monkeypatch):
    """The total of a run's W&B files was checked from their sizes, then each file read up to the
    limit alone: files grown in between (a live writer, a shared folder's owner) were read in full,
    N times the bound. The total is now kept as they are read."""
    from sweepgen.run.logs import wandb_history

    folder = tmp_path / "run" / "wandb" / "offline-run-1"
    folder.mkdir(parents=True)
    for name in ("run-a.wandb", "run-b.wandb"):  # empty records: each file 427 bytes, both 854
        (folder / name).write_bytes(_HEADER + _chunk(1, b"") * 60)
    monkeypatch.setattr(runfiles, "MAX_EVENTS_BYTES", 700)
    monkeypatch.setattr(runfiles, "regular_size", lambda path: 0)  # as listed: before they grew
    with pytest.raises(runfiles.RunFileError, match="past 700 bytes") as caught:
        wandb_history.rows(wandb_history.files(tmp_path / "run"))
    assert caught.value.path.name == "run-b.wandb"


@pytest.mark.train  # wandb's protobuf classes: the track extra, in the full lane
def test_a_logged_value_nested_ten_thousand_deep_is_left_out(tmp_path):
    """Only numbers are metrics: a list or object value is never decoded (one nested ten thousand
    deep ended `report` in a RecursionError, exit 70); the record's numbers still stand."""
    from wandb.proto import wandb_internal_pb2

    from sweepgen.run.logs import wandb_history

    record = wandb_internal_pb2.Record()
    for key, value in (
        ("_step", "3"),
        ("_timestamp", "1.0"),
        ("acc", "0.5"),
        ("deep", "[" * 10_000 + "]" * 10_000),
    ):
        item = record.history.item.add()
        item.key, item.value_json = key, value
    body = record.SerializeToString()
    room = _BLOCK - len(_HEADER) - 7
    path = tmp_path / "run" / "wandb" / "offline-run-1" / "run-x.wandb"
    path.parent.mkdir(parents=True)
    path.write_bytes(_HEADER + _chunk(2, body[:room]) + _chunk(4, body[room:]))
    rows = wandb_history.rows(wandb_history.files(tmp_path / "run"))
    assert [{k: v for k, v in row.items() if k != "step"} for row in rows] == [{"acc": 0.5}]


def _log_file(bodies: list[bytes]) -> bytes:
    """A `.wandb` file of ``bodies`` as wandb's writer frames them: 32 KiB blocks, a record split
    FIRST/MIDDLE/LAST across them, a block's tail under a chunk header padded with zeros."""
    data = bytearray(_HEADER)
    for body in bodies:
        left, first = body, True
        while True:
            room = _BLOCK - len(data) % _BLOCK
            if room < 7:
                data += b"\0" * room
                continue
            piece, left = left[: room - 7], left[room - 7 :]
            kind = (1 if not left else 2) if first else (4 if not left else 3)
            data += _chunk(kind, piece)
            first = False
            if not left:
                break
    return bytes(data)


@pytest.mark.train  # wandb's protobuf classes: the track extra, in the full lane
def test_status_reads_the_step_from_a_wandb_file_s_last_blocks_alone(tmp_path):
    """`status` showed `-/N` for a `trl grpo` run logging to W&B alone (report_to wandb,
    save_strategy "no": no trainer state, no TensorBoard), while `report` read its steps. The step
    comes from the file's last blocks (a long run's file is large): a record begun in an earlier
    block is left out there, never parsed from its middle."""
    from wandb.proto import wandb_internal_pb2

    from sweepgen.run.logs import wandb_history

    def history(step: int, filler: int) -> bytes:
        record = wandb_internal_pb2.Record()
        for key, value in (("train/global_step", step), ("_timestamp", 1000 + step), ("pad", "x" * filler)):
            item = record.history.item.add()
            item.key, item.value_json = key, json.dumps(value)
        return record.SerializeToString()

    # records of 1.5 blocks each: every block (the tail's first too) starts inside one
    bodies = [history(step, 49_000) for step in range(1, 41)]
    path = tmp_path / "run" / "wandb" / "offline-run-1" / "run-x.wandb"
    path.parent.mkdir(parents=True)
    path.write_bytes(_log_file(bodies))
    assert path.stat().st_size > 4 * wandb_history._TAIL_BYTES  # read from its end, not whole
    assert wandb_history.last_step(tmp_path / "run", None) == 40
    assert [r["step"] for r in wandb_history.rows(wandb_history.files(tmp_path / "run"))][-1] == 40
    assert (
        wandb_history.last_step(tmp_path / "run", path.stat().st_mtime_ns + 1) is None
    )  # an older attempt's
    assert wandb_history.last_step(tmp_path / "none", None) is None


def test_status_s_wandb_step_survives_a_file_gone_between_its_checks(tmp_path, monkeypatch):
    """`status` checked a ``.wandb`` file was a plain file, then lstat'ed it again for its time:
    removed in between (a run folder cleaned while `status --wait` polls) it was a
    FileNotFoundError traceback. One lstat now; the file gone shows no step."""
    from sweepgen.fs import runfs
    from sweepgen.run.logs import wandb_history

    path = tmp_path / "run" / "wandb" / "offline-run-1" / "run-x.wandb"
    path.parent.mkdir(parents=True)
    path.write_bytes(_HEADER)
    real = runfs.lstat

    def lstat_then_gone(p):  # the file removed right after it was first looked at
        info = real(p)
        if Path(p) == path and path.exists():
            path.unlink()
        return info

    monkeypatch.setattr(runfs, "lstat", lstat_then_gone)
    assert wandb_history.last_step(tmp_path / "run", None) is None


def test_a_wandb_folder_of_too_many_entries_is_never_listed_whole(tmp_path, monkeypatch):
    """A run's wandb folder (or one run's folder in it) of a million entries was listed whole by
    every `status` poll and `report`: now at most MAX_LISTED names are read; past it `status` shows
    no W&B step and `report` names the folder (a RunFileError), never a silent empty history."""
    from sweepgen.run.logs import wandb_history

    monkeypatch.setattr(wandb_history, "MAX_LISTED", 3, raising=False)  # absent before: listed whole
    top = tmp_path / "run" / "wandb"
    for name in ("offline-run-1", "b", "c"):
        (top / name).mkdir(parents=True)
    (top / "offline-run-1" / "run-x.wandb").write_bytes(_HEADER)
    assert wandb_history.files(tmp_path / "run") == [top / "offline-run-1" / "run-x.wandb"]
    (top / "d").mkdir()
    with pytest.raises(runfiles.RunFileError, match="holds more than 3 entries"):
        wandb_history.files(tmp_path / "run")
    assert wandb_history.last_step(tmp_path / "run", None) is None
