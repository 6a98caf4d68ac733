"""A run's logged metrics, whatever trainer wrote them: metrics.jsonl, metrics.csv, a Hugging Face
trainer_state.json (its log_history), TensorBoard events, W&B run files (wandb_history).

Each source gives series ``name -> ((step, value), ...)``. A row without an integer step, or a value
that is not a number, is skipped (a CSV cell left empty at a step that did not evaluate is normal);
a NaN or infinite value is skipped too but counted (``Series.non_finite``), so a report can say a
run diverged instead of silently ranking its last finite value (the search controller reads them
with ``keep_non_finite``: a pruner must see a NaN, and a NaN final value fails its trial); a metric
logged at the same step twice keeps the last value, as TensorBoard shows it.

The files are read through ``runfiles``: only regular files, bounded in size (a FIFO, a link to
``/dev/zero`` or a line nested a million deep is a ``RunFileError`` naming the file and the reason).

TensorBoard event files are read with tensorboard's own ``EventAccumulator`` (never a hand-written
protobuf parser) from files sweepgen opened itself, each a regular file reached without a link,
found by tensorboard's own rule in one bounded walk of the run (tb_files.py), a run's together at
most ``runfiles.MAX_EVENTS_BYTES``; tensorboard is an optional extra (``sweepgen[track]``) and is
imported only when a run has event files. When a metric is in more than one source of a run, the
first source in ``SOURCES`` order is used and the report names it.
"""

from __future__ import annotations

import csv
import functools
import io
import itertools
import json
import math
import os
from collections.abc import Collection, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sweepgen.errors import UserError
from sweepgen.fs import filenames
from sweepgen.run.core import runfiles
from sweepgen.run.logs import state_json, tb_events, tb_files, trainer_states, wandb_history
from sweepgen.run.logs.points import Builder
from sweepgen.run.logs.points import Points as Points  # the type of every series, named here

SOURCES = (filenames.METRICS, filenames.METRICS_CSV, filenames.TRAINER_STATE, "tensorboard", "wandb")
TRACKERS = frozenset({"tensorboard", "wandb"})  # written by a tracker's callback, under its names
TRAINER_STATE = filenames.TRAINER_STATE
TRACK_HINT = "install it with `pip install 'sweepgen[track]'` (or `pip install tensorboard`)"
# metric names of one file: TRL logs about 60; each name held costs hundreds of bytes where the log
# spends a dozen on it (a 256 MiB log of distinct names would have held gigabytes)
MAX_METRICS = 10_000


@dataclass(frozen=True)
class Series:
    name: str
    source: str  # one of SOURCES
    points: Points  # sorted by step
    non_finite: int = 0  # NaN or infinite values logged for this metric, left out of ``points``

    @property
    def final(self) -> tuple[int, float]:
        return self.points[-1]

    def best(self, mode: str) -> tuple[int, float]:
        """The best value and the first step it was reached at (max or min)."""
        pick = max if mode == "max" else min
        value = pick(v for _, v in self.points)
        return next(p for p in self.points if p[1] == value)


class Sources(dict[str, dict[str, Points]]):
    """source -> metric -> points, plus how many non-finite values each (source, metric) had."""

    def __init__(self) -> None:
        super().__init__()
        self.non_finite: dict[tuple[str, str], int] = {}

    def add(self, source: str, points: dict[str, Points], non_finite: Mapping[str, int]) -> None:
        """A source's metrics, and how many non-finite values each had."""
        self[source] = points
        self.non_finite.update(((source, metric), n) for metric, n in non_finite.items())


def _number(value: object) -> float | None:
    """A number as a float (NaN and infinities included); None for anything else."""
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        try:
            return float(value)
        except OverflowError:  # an integer beyond any float
            return math.inf
    if isinstance(value, str) and value.strip():
        try:
            return float(value)
        except ValueError:
            return None
    return None


def _step(value: object) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, str):
        try:
            return int(value)
        except ValueError:
            return None
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return None


def _gather(
    series: dict[str, Builder],
    rows: Iterable[Mapping[str, object]],
    non_finite: dict[str, int] | None,
    keep: bool,
) -> dict[str, Builder]:
    """``series`` (metric -> its points so far) with the values of ``rows`` added."""
    for row in rows:
        raw_step = row.get("step")
        # the common int step and float cells are taken directly, skipping the general parsers
        # (a report reads 1,000 runs x 1,000 steps); everything else goes through them
        step = raw_step if type(raw_step) is int else _step(raw_step)
        if step is None:
            continue
        for name, value in _cells(row, non_finite, keep):
            points = series.get(name)
            if points is None:
                points = series[name] = Builder()
            points.add(step, value)
    return series


def _points(series: dict[str, Builder]) -> dict[str, Points]:
    return {k: v.points() for k, v in series.items()}


def _held(series: Mapping[str, Builder], path: Path, before: int) -> int:
    """How many values ``series`` holds; those added since ``before`` are charged to the command's
    read budget (a report holds every run's points at once), and a file naming more than
    ``MAX_METRICS`` metrics is refused (checked as it is read)."""
    _few_names(series, path)
    now = sum(len(b.values) for b in series.values())
    runfiles.charge(path, 0, held=now - before)
    return now


def _few_names(series: Collection[str], path: Path) -> None:
    if len(series) > MAX_METRICS:
        raise runfiles.RunFileError(
            path, f"logs more than {MAX_METRICS:,} metric names (a trainer logs tens): not read"
        )


def _cells(
    row: Mapping[str, object], non_finite: dict[str, int] | None, keep: bool
) -> Iterator[tuple[str, float]]:
    """A row's metric values (its step aside); a non-finite one is counted in ``non_finite`` and
    given only with ``keep``."""
    for key, raw in row.items():
        if key == "step":
            continue
        value = float(raw) if isinstance(raw, float) else _number(raw)
        if value is None:
            continue
        name = str(key)
        if not math.isfinite(value):
            if non_finite is not None:
                non_finite[name] = non_finite.get(name, 0) + 1
            if not keep:
                continue
        yield name, value


def read_jsonl(
    path: Path, non_finite: dict[str, int] | None = None, *, keep: bool = False
) -> dict[str, Points]:
    """The metrics of a JSON-lines log, read and parsed a batch of lines at a time: its bytes, text,
    lines and rows are never held whole (a 256 MiB log cost 2.8 GB while read, then 1.7 GB with
    its bytes held whole and its points as tuples)."""
    series: dict[str, Builder] = {}
    number = held = 0
    for text in _text_batches(path):
        lines = text.splitlines()
        rows, cut = _rows(lines, path, number)
        _gather(series, rows, non_finite, keep)
        held = _held(series, path, held)
        number += len(lines)
        if cut:
            break
    return _points(series)


_BATCH = 4 << 20  # bytes of a log read, decoded and parsed at once


def _text_batches(path: Path) -> Iterator[str]:
    """The log's text in pieces of about ``_BATCH`` bytes or more, each ending just after a newline
    byte: UTF-8 never holds one inside a character, and it ends a line alone or as the end of a
    CRLF, so no character and no line is split (a piece's lines are the whole text's)."""
    held: list[bytes] = []  # read since the last newline: a line of many reads is joined once
    for chunk in runfiles.read_pieces(path, limit=runfiles.MAX_LOG_BYTES, piece=_BATCH):
        cut = chunk.rfind(b"\n")
        if cut < 0:
            held.append(chunk)
            continue
        yield b"".join([*held, chunk[: cut + 1]]).decode("utf-8", errors="replace")
        held = [chunk[cut + 1 :]]
    rest = b"".join(held)
    if rest:
        yield rest.decode("utf-8", errors="replace")


def _rows(lines: list[str], path: Path, before: int) -> tuple[list[Mapping[str, object]], bool]:
    """The rows of ``lines`` (line ``before + 1`` onwards), and whether a line cut by a kill (not
    JSON) ended the readable log there."""
    flat = _flat_rows(lines)
    if flat is not None:
        return flat, False
    rows: list[Mapping[str, object]] = []
    for number, line in enumerate(lines, before + 1):
        try:
            row = runfiles.parse_json(line, path, f"line {number}")
        except runfiles.RunFileError as err:
            if "not valid JSON" in err.reason:
                return rows, True  # a line cut by a kill ends the readable log
            if "is not a number" in err.reason or "too large for a float" in err.reason:
                row = _lenient(line)  # NaN/Infinity: counted per metric below, not fatal
            else:
                raise
        if isinstance(row, dict):
            rows.append(row)
    return rows, False


def _flat_rows(lines: list[str]) -> list[Mapping[str, object]] | None:
    """The rows of a log whose every line is one flat JSON object, decoded in one ``json.loads``
    instead of one per line (a report reads 1,000 runs x 1,000 steps); None for any other log (a
    cut, blank or non-object line, a nested value), which the line-by-line reading then decides.
    NaN and Infinity decode to floats here as in its lenient reading, and are counted the same way."""
    if not lines or not all(lines):
        return None
    try:
        whole: list[Any] = json.loads("[" + ",".join(lines) + "]", parse_int=runfiles.bounded_int)
    except (json.JSONDecodeError, RecursionError):
        return None
    if len(whole) != len(lines):  # a line holding two values
        return None
    for row in whole:
        if not isinstance(row, dict) or any(isinstance(v, (dict, list)) for v in row.values()):
            return None
    return whole


def _lenient(line: str) -> object:
    return json.loads(
        line, parse_int=runfiles.bounded_int
    )  # depth already checked by parse_json, which refused only the constant


def read_csv(
    path: Path, non_finite: dict[str, int] | None = None, *, keep: bool = False
) -> dict[str, Points]:
    """The metrics of a CSV log, read a batch of lines at a time as ``read_jsonl`` (a row kept as a
    dict per line made a 256 MiB log cost 7.7 GB while read)."""
    # newline="": csv's own rule (a quoted field may hold a line break), batch by batch
    text = itertools.chain.from_iterable(io.StringIO(b, newline="") for b in _text_batches(path))
    reader = csv.DictReader(text)
    try:
        if reader.fieldnames is None or "step" not in reader.fieldnames:
            raise UserError(
                f"{path} has no `step` column",
                hint="a metrics.csv needs a header row with a `step` column, e.g. step,train_loss,eval_acc",
            )
        _few_names(reader.fieldnames, path)
        rows = ({k: v for k, v in row.items() if k is not None} for row in reader)
        series: dict[str, Builder] = {}
        held = 0
        for first in rows:  # a batch of rows gathered as they are read, never held as a list
            _gather(
                series, itertools.chain((first,), itertools.islice(rows, _ROWS_AT_ONCE - 1)), non_finite, keep
            )
            held = _held(series, path, held)
    except csv.Error as err:  # e.g. a field larger than csv's field size limit
        raise runfiles.RunFileError(path, f"is not readable CSV ({err})") from None
    del text, reader
    return _points(series)


def _trainer_state_file(
    run_dir: Path, since_ns: int | None = None, before: dict[str, int] | None = None
) -> Path | None:
    """The HF Trainer's state: the run directory's own (``trainer.save_state()`` at the end), else
    the one in its latest ``checkpoint-N`` folder (written at every save). ``since_ns``: this
    attempt's start; a state written before it is an earlier attempt's (`--rerun-failed` of a trainer
    that starts over, as `trl` does, leaves the earlier attempt's higher-numbered checkpoints) and is
    not taken. ``before``: the states there at this attempt's start (trainer_states.py), which
    decides instead of ``since_ns`` and is right whatever the wall clock did. Among this attempt's
    states the number decides, never the time alone (a copied run folder's files all carry the time
    of the copy)."""
    own = run_dir / TRAINER_STATE
    if own.is_symlink() or (own.exists() and not own.is_file()):
        return own  # refused with a reason when read

    def this_attempts(path: Path) -> bool:
        if before is not None:
            return trainer_states.written_since(run_dir, path, before)
        return _written_since(run_dir, path, since_ns)

    if this_attempts(own):
        return own
    states = list(_checkpoint_states(run_dir))
    linked = [state for _n, state in states if trainer_states.is_link(run_dir, state.parent.name)]
    if linked:  # never looked into, wherever the run folder is anchored
        raise runfiles.RunFileError(
            linked[0].parent,
            "is a link: a checkpoint folder is never looked into through a link",
            hint="the trainer writes checkpoint-N as a folder: replace the link with the folder it names",
        )
    checkpoints = [(n, state) for n, state in states if this_attempts(state)]
    return max(checkpoints)[1] if checkpoints else None


def _checkpoint_states(run_dir: Path) -> Iterator[tuple[int, Path]]:
    """(N, its trainer_state.json) of every ``checkpoint-N`` folder that has one; the run folder's
    entries looked at at most ``tb_files.MAX_RUN_ENTRIES`` (a RunFileError past it: 300,000 files
    named ``checkpoint-N`` held `report` 6 s and each refresh of the live table as long)."""
    limit = tb_files.MAX_RUN_ENTRIES
    try:
        with os.scandir(run_dir) as listing:
            names = [e.name for e in itertools.islice(listing, limit + 1)]
    except OSError:
        return
    if len(names) > limit:
        raise runfiles.RunFileError(
            run_dir, f"holds more than {limit:,} files and folders (checkpoints are looked for)"
        )
    for name in names:
        number = _step(name.removeprefix("checkpoint-")) if name.startswith("checkpoint-") else None
        if number is None:
            continue
        rel = f"{name}/{TRAINER_STATE}"
        if trainer_states.is_link(run_dir, name) or trainer_states.state_time(run_dir, rel) is not None:
            yield number, run_dir / rel  # a linked checkpoint-N is never looked into


def _written_since(run_dir: Path, path: Path, since_ns: int | None) -> bool:
    """``path`` is there (itself, not what it links to, reached through no link), written at or
    after ``since_ns`` if given."""
    written = trainer_states.state_time(run_dir, path.relative_to(run_dir).as_posix())
    return written is not None and (since_ns is None or written >= since_ns)


def trainer_step(
    run_dir: Path, since_ns: int | None = None, before: dict[str, int] | None = None
) -> int | None:
    """The step a Hugging Face Trainer's state says it reached (``global_step``: `trl grpo` and every
    HF Trainer write it at each save and at the end); None without a readable one, or without one
    this attempt wrote (not in ``before``, the states at its start, else written since ``since_ns``).
    The live table asks twice a second: a state is parsed again only when its size or time changed."""
    try:
        path = _trainer_state_file(run_dir, since_ns, before) if run_dir.is_dir() else None
        rel = path.relative_to(run_dir).as_posix() if path is not None else None
        info = trainer_states.state_stat(run_dir, rel) if rel is not None else None
    except (OSError, runfiles.RunFileError):  # a display: `report` says why it cannot read the run
        return None
    return _global_step(str(path), info.st_size, info.st_mtime_ns) if info is not None else None


@functools.lru_cache(maxsize=256)
def _global_step(path: str, size: int, mtime_ns: int) -> int | None:
    try:
        data = state_json.read(Path(path), lambda _row: None)
    except runfiles.RunFileError:  # a spoiled state: the table shows "-", `report` says why
        return None
    return _step(data.get("global_step"))


def _read_trainer_state(
    path: Path, non_finite: dict[str, int] | None = None, *, keep: bool = False
) -> dict[str, Points]:
    """The metrics of a Hugging Face ``trainer_state.json``'s ``log_history`` (one row per logging
    or evaluation step, each with its ``step``; what `trl grpo` and every HF Trainer leave). The HF
    Trainer writes NaN as NaN: counted per metric, as in metrics.jsonl. Read and gathered an entry
    at a time (state_json): entries held in a batch would be the whole document again (256 entries
    of 1 MiB), and an entry's names are counted as it comes."""
    series: dict[str, Builder] = {}
    held = [0, 0]  # values charged to the read budget; entries since

    def on_row(row: object) -> None:
        if isinstance(row, dict):
            _gather(series, (row,), non_finite, keep)
            _few_names(series, path)
            held[1] += 1
            if held[1] >= _ROWS_AT_ONCE:
                held[:] = [_held(series, path, held[0]), 0]

    state_json.read(path, on_row)
    _held(series, path, held[0])
    return _points(series)


_ROWS_AT_ONCE = 4096


def read_tensorboard(run_dir: Path) -> dict[str, Points]:
    """Every scalar of the run's event files. A run started again in its folder (`--rerun-failed`,
    a resume) leaves one folder per attempt (transformers names them ``runs/<Mon><DD>_<time>_<host>``,
    which sorts Dec before Nov): a step two attempts logged takes the value written last, by the
    events' own wall time, never by the folders' names."""
    found = tb_files.event_files(run_dir)
    if not found:
        return {}
    # tag -> step -> (wall time, value): a step logged in several folders keeps its latest value
    series: dict[str, dict[int, tuple[float, float]]] = {}
    try:  # the files are opened and checked first: a FIFO or an oversized run is said without tensorboard
        for tag, events in tb_events.scalars(found):
            _latest(series.setdefault(tag, {}), events)
    except ImportError:
        raise UserError(
            f"{run_dir} has TensorBoard event files but tensorboard is not installed", hint=TRACK_HINT
        ) from None
    return {
        k: Points.of([(step, v) for step, (_, v) in sorted(steps.items())])
        for k, steps in series.items()
        if steps
    }


def _latest(steps: dict[int, tuple[float, float]], events: Sequence[Any]) -> None:
    """Each event's value at its step, unless a later-written one is there already."""
    for event in events:
        value = _number(event.value)
        step = int(event.step)
        if value is not None and (step not in steps or event.wall_time >= steps[step][0]):
            steps[step] = (event.wall_time, value)


def read_all(run_dir: Path, *, tensorboard: bool = True, keep_non_finite: bool = False) -> Sources:
    """source -> metric -> points, for the sources the run has (event files only if asked);
    ``keep_non_finite``: NaN and infinite values stay in the points (still counted)."""
    out = Sources()
    for name, read in ((filenames.METRICS, read_jsonl), (filenames.METRICS_CSV, read_csv)):
        path = run_dir / name
        if path.exists() or path.is_symlink():  # anything there is read, or refused with a reason
            counts: dict[str, int] = {}
            out.add(name, read(path, counts, keep=keep_non_finite), counts)
    state = _trainer_state_file(run_dir) if run_dir.is_dir() else None
    if state is not None:
        counts = {}
        out.add(TRAINER_STATE, _read_trainer_state(state, counts, keep=keep_non_finite), counts)
    if tensorboard and run_dir.is_dir():
        _read_trackers(out, run_dir, keep_non_finite)
    return out


def _read_trackers(out: Sources, run_dir: Path, keep: bool) -> None:
    """TensorBoard's event files and W&B's run files (the same optional extra)."""
    tb = read_tensorboard(run_dir)
    if tb:
        out["tensorboard"] = tb
    logged = wandb_history.files(run_dir)
    if logged:
        counts: dict[str, int] = {}
        series = _gather({}, wandb_history.rows(logged), counts, keep)
        _held(series, logged[0], 0)  # held and named as a metric log's values are
        out.add("wandb", _points(series), counts)


def find_in_run(
    run_dir: Path, name: str, *, tensorboard: bool = True, keep_non_finite: bool = False
) -> tuple[dict[str, dict[str, Points]], Series | None]:
    """The run's sources and the series ``name``; event files are read only when the metric is in
    neither metrics file (so a report of the bundled trainer's reward never needs tensorboard)."""
    sources = read_all(run_dir, tensorboard=False, keep_non_finite=keep_non_finite)
    series = find(sources, name)
    if series is None and tensorboard:
        sources = read_all(run_dir)
        series = find(sources, name)
    return sources, series


def find(sources: Mapping[str, Mapping[str, Points]], name: str) -> Series | None:
    """The series ``name`` from the first source that has it; in TensorBoard and W&B files also under
    the name the Hugging Face Trainer's callbacks give it there (``loss`` is ``train/loss``): the
    series' own name says which was read."""
    counts = getattr(sources, "non_finite", {})
    for source in SOURCES:
        held = sources.get(source, {})
        key = name if held.get(name) or source not in TRACKERS else tracker_name(name)
        points = held.get(key)
        if points:
            return Series(key, source, points, counts.get((source, key), 0))
    return None


def tracker_name(name: str) -> str:
    """What the Hugging Face Trainer's TensorBoard and W&B callbacks call a logged key (transformers'
    ``rewrite_logs``): ``eval_loss`` is ``eval/loss``, ``test_x`` is ``test/x``, any other key is
    ``train/<key>``. A TRL run that saved no checkpoint has only these names, where the user (and
    TRL's docs) say ``loss``, ``reward``, ``eval_loss``."""
    for prefix in ("eval", "test"):
        if name.startswith(prefix + "_"):
            return f"{prefix}/{name[len(prefix) + 1 :]}"
    return f"train/{name}"


def non_finite_count(sources: Mapping[str, Mapping[str, Points]], name: str) -> int:
    """How many NaN or infinite values of ``name`` the run logged, over all its sources."""
    counts: dict[tuple[str, str], int] = getattr(sources, "non_finite", {})
    return sum(n for (_, metric), n in counts.items() if metric == name)


def names(sources: Mapping[str, Mapping[str, Points]]) -> list[str]:
    return sorted({n for metrics in sources.values() for n in metrics})
