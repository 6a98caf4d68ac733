"""What a report holds of a run's metrics: every logged value, 16 bytes each (two machine arrays),
counted against the command's read budget, and a trainer_state.json read an entry at a time; a file
that would make it hold far more than it is (ten thousand metric names, one log_history entry of a
MiB) is refused naming it."""

from __future__ import annotations

import json
import math
import re
import struct
import tracemalloc
import zlib
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sweepgen.run.core import runfiles
from sweepgen.run.logs import metrics, state_json
from sweepgen.run.logs.points import Points


def _peak(read, path: Path):
    tracemalloc.start()
    try:
        got = read(path)
        return got, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def _dense(path: Path, kind: str, rows: int) -> int:
    """A log of three metrics a row, short lines (many values a byte); how many values."""
    with open(path, "w", encoding="utf-8") as fh:
        if kind == "csv":
            fh.write("step,a,b,c\n")
        for step in range(rows):
            a, b, c = step / 7, step / 3, -step / 11
            fh.write(
                f"{step},{a},{b},{c}\n"
                if kind == "csv"
                else json.dumps({"step": step, "a": a, "b": b, "c": c}) + "\n"
            )
    return 3 * rows


@pytest.mark.parametrize("kind", ["jsonl", "csv"])
def test_a_logged_value_is_held_in_16_bytes(tmp_path, monkeypatch, kind):
    """A point as a tuple of Python objects took about 100 bytes: a 256 MiB metrics.jsonl held
    1.7 GB in `report`. As two arrays (and the log read a batch at a time) a value costs 16 bytes."""
    path = tmp_path / f"metrics.{kind}"
    values = _dense(path, kind, 100_000)
    monkeypatch.setattr(metrics, "_BATCH", 1 << 18)
    got, peak = _peak(metrics.read_csv if kind == "csv" else metrics.read_jsonl, path)
    assert got["b"][-1] == (99_999, 99_999 / 3) and len(got["a"]) == 100_000
    assert peak < 24 * values + (4 << 20), f"{peak:,} bytes held for {values:,} values"


def test_a_trainer_state_is_read_an_entry_at_a_time(tmp_path):
    """A 256 MiB trainer_state.json parsed whole held 2.3 GB; read an entry at a time, its text and
    the values."""
    history = [{"step": s, "loss": s / 7, "reward": s / 3, "epoch": s / 1000} for s in range(60_000)]
    path = tmp_path / "trainer_state.json"
    path.write_text(json.dumps({"global_step": 59_999, "log_history": history}, indent=2))
    size = path.stat().st_size
    got, peak = _peak(metrics._read_trainer_state, path)
    assert got["loss"][-1] == (59_999, 59_999 / 7) and len(got["epoch"]) == 60_000
    assert peak < 3 * size, f"{peak:,} bytes held to read {size:,}"


def test_a_log_history_entry_of_a_mib_is_refused_before_it_is_built(tmp_path):
    path = tmp_path / "trainer_state.json"
    big = {"step": 2, "loss": [0.5] * 300_000}  # 1.5 MB of text, tens of MB as Python objects
    path.write_text(json.dumps({"log_history": [{"step": 1, "loss": 0.5}, big]}))
    with pytest.raises(
        runfiles.RunFileError, match=r"`log_history` entry 2 is 1,048,576 characters or longer"
    ):
        metrics._read_trainer_state(path)


def test_ten_thousand_metric_names_are_refused(tmp_path):
    """A name held costs hundreds of bytes where the log spends a dozen on it."""
    path = tmp_path / "metrics.jsonl"
    path.write_text(json.dumps({"step": 1, **{f"m{i}": 1 for i in range(metrics.MAX_METRICS + 1)}}) + "\n")
    with pytest.raises(runfiles.RunFileError, match="more than 10,000 metric names"):
        metrics.read_jsonl(path)
    path = tmp_path / "metrics.csv"
    path.write_text("step," + ",".join(f"m{i}" for i in range(metrics.MAX_METRICS + 1)) + "\n")
    with pytest.raises(runfiles.RunFileError, match="more than 10,000 metric names"):
        metrics.read_csv(path)


def test_the_values_held_count_against_the_read_budget(tmp_path):
    """A CSV of one-digit cells holds eight times its bytes: a report's budget counts what it holds."""
    path = tmp_path / "metrics.csv"
    rows = "".join(f"{step}," + "1," * 49 + "1\n" for step in range(9_000))
    path.write_text("step," + ",".join(f"m{i}" for i in range(50)) + "\n" + rows)
    assert path.stat().st_size < 1 << 20  # read alone, within the budget below
    with pytest.raises(runfiles.ReadBudgetError, match=r"logged values held"), runfiles.read_budget(4 << 20):
        metrics.read_csv(path)


_ROW = st.fixed_dictionaries(
    {"step": st.integers(0, 50)},
    optional={
        "loss": st.floats(allow_nan=True, allow_infinity=True),
        "note": st.text(alphabet='ab"\\{}[],: \u00e9', max_size=8),
        "nested": st.lists(st.integers(), max_size=3),
    },
)


@settings(deadline=None, max_examples=60)
@given(
    st.lists(st.one_of(_ROW, st.integers(), st.none()), max_size=12),
    st.sampled_from([None, 0, 1, 3]),
    st.booleans(),
    st.integers(1, 64),
)
def test_a_state_read_in_pieces_reads_as_parsed_whole(tmp_path_factory, history, indent, last, window):
    """Whatever the layout and window, the pieces give what the whole document gives: the rows in
    order (a step logged twice keeps its last value), NaN counted, the other keys' values."""
    path = tmp_path_factory.mktemp("s") / "trainer_state.json"
    doc = (
        {"best_metric": None, "log_history": history, "global_step": 7} if last else {"log_history": history}
    )
    path.write_text(json.dumps(doc, indent=indent))
    whole = json.loads(path.read_text(), parse_int=runfiles.bounded_int)
    want_counts: dict[str, int] = {}
    rows = [r for r in whole["log_history"] if isinstance(r, dict)]
    want = metrics._points(metrics._gather({}, rows, want_counts, False))
    counts: dict[str, int] = {}
    state_json._FIRST_WINDOW, before = window, state_json._FIRST_WINDOW
    try:
        got = metrics._read_trainer_state(path, counts)
        top = state_json.read(path, lambda _row: None)
    finally:
        state_json._FIRST_WINDOW = before
    assert got == want and counts == want_counts
    assert top.get("global_step") == whole.get("global_step")


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ('{"log_history": [{"step": 1, "loss": 0.5}', "is not valid JSON (Expecting ',' delimiter"),
        ('{"log_history": [], "log_history": []}', "holds `log_history` twice"),
        ('{"log_history": []} {}', "is not valid JSON (Extra data"),
        ('{"log_history": [' + "[" * 200 + "]" * 200 + "]}", "nested"),
        ("", "is not valid JSON (Expecting value, line 1)"),
    ],
)
def test_a_spoiled_state_is_refused_naming_what(tmp_path, text, says):
    path = tmp_path / "trainer_state.json"
    path.write_text(text)
    with pytest.raises(runfiles.RunFileError) as caught:
        metrics._read_trainer_state(path)
    assert says in caught.value.reason


def test_points_are_the_pairs_they_hold():
    """Compared, sliced and indexed as the tuple of pairs they replace; a step past 64 bits kept."""
    points = Points.of([(1, 0.5), (2**70, math.inf)])
    assert points == ((1, 0.5), (2**70, math.inf)) and ((1, 0.5), (2**70, math.inf)) == points
    assert points[-1] == (2**70, math.inf) and points[-1:] == ((2**70, math.inf),)
    assert dict(points) == {1: 0.5, 2**70: math.inf} and len(points) == 2 and points != ((1, 0.5),)


@pytest.mark.train  # wandb's protobuf classes: the track extra, in the full lane
def test_a_wandb_run_is_held_and_named_as_a_metric_log(tmp_path):
    """A W&B record of ten thousand and one metric names is refused as a metrics.jsonl of them is."""
    from wandb.proto import wandb_internal_pb2

    from sweepgen.run.logs.wandb_history import _BLOCK, _HEADER

    record = wandb_internal_pb2.Record()
    names = [("_step", "1"), ("_timestamp", "1.0")] + [(f"m{i}", "1") for i in range(metrics.MAX_METRICS + 1)]
    for key, value in names:
        item = record.history.item.add()
        item.key, item.value_json = key, value
    body, chunks, at = record.SerializeToString(), b"", 0
    room = _BLOCK - len(_HEADER) - 7
    while at < len(body):  # FIRST, MIDDLE..., LAST chunks, each within its block
        kind = 2 if at == 0 else 4 if at + room >= len(body) else 3
        piece = body[at : at + room]
        chunks += struct.pack(
            "<IHB", zlib.crc32(piece, zlib.crc32(bytes([kind]))) & 0xFFFFFFFF, len(piece), kind
        )
        chunks += piece
        at, room = at + len(piece), _BLOCK - 7
    path = tmp_path / "run" / "wandb" / "offline-run-1" / "run-x.wandb"
    path.parent.mkdir(parents=True)
    path.write_bytes(_HEADER + chunks)
    with pytest.raises(runfiles.RunFileError, match="more than 10,000 metric names"):
        metrics.read_all(tmp_path / "run")


def test_a_state_of_more_entries_than_a_trainer_writes_is_refused(tmp_path, monkeypatch):
    """Each entry costs about 2 us however short: 256 MiB of `[],` entries held `report` for three
    minutes. Past ``MAX_ENTRIES`` (a trainer's 256 MiB state holds fewer) the state is refused."""
    monkeypatch.setattr(state_json, "MAX_ENTRIES", 10)
    path = tmp_path / "trainer_state.json"
    path.write_text(json.dumps({"log_history": [{"step": s, "loss": 0.5} for s in range(10)]}))
    assert len(metrics._read_trainer_state(path)["loss"]) == 10
    path.write_text(json.dumps({"log_history": [{"step": 1, "loss": 0.5}] + [[]] * 10}))
    with pytest.raises(runfiles.RunFileError, match="more than 10 `log_history` entries"):
        metrics._read_trainer_state(path)


def test_wide_entries_are_gathered_one_at_a_time(tmp_path):
    """Entries of thousands of metrics each: held in a batch (or parsed whole) they cost ten times
    the file; gathered as each is decoded, its text and the values. 30 entries (9 MB): the peak is
    2.1 times the file (2.0 at 60 entries, 18 MB; 2.4 at 20), under the bound of 3 with margin."""
    names = [f"metric_{i}" for i in range(9_000)]
    history = [{"step": s, **{n: s + i / 9_000 for i, n in enumerate(names)}} for s in range(30)]
    path = tmp_path / "trainer_state.json"
    path.write_text(json.dumps({"log_history": history}))
    size = path.stat().st_size
    got, peak = _peak(metrics._read_trainer_state, path)
    assert len(got) == 9_000 and got["metric_9"][-1] == (29, 29 + 9 / 9_000)
    assert peak < 3 * size, f"{peak:,} bytes held to read {size:,}"


def test_a_run_whose_metrics_file_is_refused_says_why_not_that_it_has_none(tmp_path):
    """The report's note for a run whose trainer state was refused said "no metrics.jsonl,
    metrics.csv or TensorBoard events", as if the run had logged nothing; it names the refusal."""
    from sweepgen.run.report.collect import Objective, collect

    for name, state in (
        ("a", '{"log_history": [], "log_history": []}'),
        ("b", '{"log_history": [{"step": 1, "acc": 0.5}]}'),
    ):
        run = tmp_path / "runs" / name
        run.mkdir(parents=True)
        (run / "config.yaml").write_text(f"seed: 1\nlr: {0.1 if name == 'a' else 0.2}\n")
        (run / "summary.json").write_text('{"final_reward": 0.5}\n')
        (run / "trainer_state.json").write_text(state)
    report = collect(tmp_path / "runs", Objective(metric="acc"))
    notes = {r.name: r.score.missing for r in report.runs}
    assert notes == {"a": "trainer_state.json holds `log_history` twice", "b": None}


def test_a_refusal_says_what_it_counted_and_a_raise_that_is_enough(tmp_path):
    """The budget refused "3,276,800 bytes with 204,800 logged values held, 944,085 read before":
    the bytes were the values held (none read), and the "before" held this very file. Its hint said
    four times the budget, whatever was counted: a 5 MB log at 1M said `--max-read-bytes 4M`, which
    refused it again."""
    path = tmp_path / "metrics.csv"
    rows = "".join(f"{step}," + "1," * 49 + "1\n" for step in range(9_000))
    path.write_text("step," + ",".join(f"m{i}" for i in range(50)) + "\n" + rows)
    with pytest.raises(runfiles.ReadBudgetError) as caught, runfiles.read_budget(4 << 20):
        metrics.read_csv(path)
    said = str(caught.value)
    assert "reads and the logged values it holds pass its budget of 4,194,304 bytes" in said
    assert "(204,800 logged values held, 16 bytes each: 3,276,800, after 944,085 counted before)" in said
    big = tmp_path / "metrics.jsonl"
    big.write_text('{"step": 1, "acc": 0.5}\n' * 220_000)  # 5.3 MB
    with pytest.raises(runfiles.ReadBudgetError) as caught, runfiles.read_budget(1 << 20):
        metrics.read_jsonl(big)
    assert "(5,280,000 bytes read, after 0 counted before)" in str(caught.value)
    raised = re.search(r"--max-read-bytes (\d+)M", caught.value.hint or "")
    assert raised is not None
    with runfiles.read_budget(int(raised[1]) << 20):
        assert metrics.read_jsonl(big) == {"acc": ((1, 0.5),)}
