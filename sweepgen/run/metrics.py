"""A run's logged metrics, whatever trainer wrote them: metrics.jsonl, metrics.csv, TensorBoard events.

Each source gives series ``name -> ((step, value), ...)``. A row without an integer step, or a value
that is not a finite number, is skipped (a CSV cell left empty at a step that did not evaluate is
normal); a metric logged at the same step twice keeps the last value, as TensorBoard shows it.

TensorBoard event files are read with tensorboard's own ``EventAccumulator`` (never a hand-written
protobuf parser); tensorboard is an optional extra (``sweepgen[track]``) and is imported only when a
run has event files. When a metric is in more than one source of a run, the first source in
``SOURCES`` order is used and the report names it.
"""

from __future__ import annotations

import csv
import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from sweepgen.errors import UserError

SOURCES = ("metrics.jsonl", "metrics.csv", "tensorboard")
EVENTS_GLOB = "events.out.tfevents.*"
TRACK_HINT = "install it with `pip install 'sweepgen[track]'` (or `pip install tensorboard`)"

Points = tuple[tuple[int, float], ...]


@dataclass(frozen=True)
class Series:
    name: str
    source: str  # one of SOURCES
    points: Points  # sorted by step

    @property
    def final(self) -> tuple[int, float]:
        return self.points[-1]

    def best(self, mode: str) -> tuple[int, float]:
        """The best value and the first step it was reached at (max or min)."""
        pick = max if mode == "max" else min
        value = pick(v for _, v in self.points)
        return next(p for p in self.points if p[1] == value)


def _number(value: object) -> float | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        out = float(value)
    elif isinstance(value, str) and value.strip():
        try:
            out = float(value)
        except ValueError:
            return None
    else:
        return None
    return out if math.isfinite(out) else None


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


def _collect(rows: Sequence[Mapping[str, object]]) -> dict[str, Points]:
    series: dict[str, dict[int, float]] = {}
    for row in rows:
        raw_step = row.get("step")
        # the common int step and float/int values are taken directly, skipping the general
        # parsers (a report reads 1,000 runs x 1,000 steps); bool, str and the rest go through them
        step = raw_step if isinstance(raw_step, int) and not isinstance(raw_step, bool) else _step(raw_step)
        if step is None:
            continue
        for key, raw in row.items():
            if key == "step":
                continue
            value: float | None
            if isinstance(raw, float):
                value = float(raw) if math.isfinite(raw) else None
            elif isinstance(raw, int) and not isinstance(raw, bool):
                value = float(raw)
            else:
                value = _number(raw)
            if value is not None:
                name = str(key)
                points = series.get(name)
                if points is None:
                    points = series[name] = {}
                points[step] = value
    return {k: tuple(sorted(v.items())) for k, v in series.items()}


def read_jsonl(path: Path) -> dict[str, Points]:
    lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
    if lines and all(lines):
        # one decode of the whole log instead of one per line (a report reads 1,000 runs x 1,000
        # steps); a cut or blank line fails it, and the line-by-line reading below decides
        try:
            whole = json.loads("[" + ",".join(lines) + "]")
        except json.JSONDecodeError:
            pass
        else:
            if len(whole) == len(lines):  # one value per line, exactly as the line-by-line reading
                return _collect([row for row in whole if isinstance(row, dict)])
    rows: list[Mapping[str, object]] = []
    for line in lines:
        try:
            row = json.loads(line)
        except json.JSONDecodeError:
            break  # a line cut by a kill ends the readable log
        if isinstance(row, dict):
            rows.append(row)
    return _collect(rows)


def read_csv(path: Path) -> dict[str, Points]:
    with open(path, encoding="utf-8", errors="replace", newline="") as fh:
        reader = csv.DictReader(fh)
        if reader.fieldnames is None or "step" not in reader.fieldnames:
            raise UserError(
                f"{path} has no `step` column",
                hint="a metrics.csv needs a header row with a `step` column, e.g. step,train_loss,eval_acc",
            )
        rows = [{k: v for k, v in row.items() if k is not None} for row in reader]
    return _collect(rows)


def event_dirs(run_dir: Path) -> list[Path]:
    """Every folder under the run holding TensorBoard event files (transformers writes them to
    <output_dir>/runs/<date>_<host>/ by default)."""
    return sorted({p.parent for p in run_dir.rglob(EVENTS_GLOB) if p.is_file()})


def read_tensorboard(run_dir: Path) -> dict[str, Points]:
    dirs = event_dirs(run_dir)
    if not dirs:
        return {}
    try:
        from tensorboard.backend.event_processing import event_accumulator  # type: ignore[import-untyped]
    except ImportError:
        raise UserError(
            f"{run_dir} has TensorBoard event files but tensorboard is not installed", hint=TRACK_HINT
        ) from None
    series: dict[str, dict[int, float]] = {}
    for folder in dirs:
        # size_guidance 0: keep every scalar (the default samples down to 10,000 per tag)
        acc = event_accumulator.EventAccumulator(str(folder), size_guidance={event_accumulator.SCALARS: 0})
        acc.Reload()
        for tag in acc.Tags().get("scalars", []):
            for event in acc.Scalars(tag):
                value = _number(event.value)
                if value is not None:
                    series.setdefault(tag, {})[int(event.step)] = value
    return {k: tuple(sorted(v.items())) for k, v in series.items()}


def read_all(run_dir: Path, *, tensorboard: bool = True) -> dict[str, dict[str, Points]]:
    """source -> metric -> points, for the sources the run has (event files only if asked)."""
    out: dict[str, dict[str, Points]] = {}
    if (run_dir / "metrics.jsonl").is_file():
        out["metrics.jsonl"] = read_jsonl(run_dir / "metrics.jsonl")
    if (run_dir / "metrics.csv").is_file():
        out["metrics.csv"] = read_csv(run_dir / "metrics.csv")
    tb = read_tensorboard(run_dir) if tensorboard and run_dir.is_dir() else {}
    if tb:
        out["tensorboard"] = tb
    return out


def find_in_run(
    run_dir: Path, name: str, *, tensorboard: bool = True
) -> tuple[dict[str, dict[str, Points]], Series | None]:
    """The run's sources and the series ``name``; event files are read only when the metric is in
    neither metrics file (so a report of the bundled trainer's reward never needs tensorboard)."""
    sources = read_all(run_dir, tensorboard=False)
    series = find(sources, name)
    if series is None and tensorboard:
        sources = read_all(run_dir)
        series = find(sources, name)
    return sources, series


def find(sources: Mapping[str, Mapping[str, Points]], name: str) -> Series | None:
    for source in SOURCES:
        points = sources.get(source, {}).get(name)
        if points:
            return Series(name, source, points)
    return None


def names(sources: Mapping[str, Mapping[str, Points]]) -> list[str]:
    return sorted({n for metrics in sources.values() for n in metrics})
