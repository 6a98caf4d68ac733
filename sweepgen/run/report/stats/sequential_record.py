"""`run --until-decided`'s record of its looks: ``DIR/.sweepgen-decide.json`` (DECIDE_STATE_NAME).

The rule (baseline, metric, value, direction, schedule, spending) and per look the seeds per group,
the alpha spent there and each open comparison's test against its boundary. Written by
sweepgen.run.sweep.decide after every look, read back by it to resume and by `report` to show where
each comparison crossed. Run state beside ``.sweepgen-run.json``: sweep.lock.json is the render's
record, compared by `check`, so the rounds are never written into it.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass, fields
from pathlib import Path
from typing import Any

from sweepgen.compile.run_api import DECIDE_STATE_NAME
from sweepgen.errors import Location, UserError
from sweepgen.formats import jsonfloat
from sweepgen.run.core import runfiles
from sweepgen.run.core.base import write_json_atomic
from sweepgen.run.report.stats import sequential

# the record's format; a reader refuses a higher one by name (written by a newer sweepgen), and a field
# added within a version is where a reader of that version ignores it: a crossing's ``reason`` is kept
# beside the look's crossings (``REASONS``), never in them, for sweepgen before it built a crossing from
# every key and called a record with one damaged
STATE_VERSION = 1
REASONS = "reasons"  # per look: the name of each open comparison the look could not test -> why


@dataclass(frozen=True)
class Rule:
    """What is compared and how; None: not given (taken from the recorded rule, else the default)."""

    baseline: str | None = None
    metric: str | None = None  # None: the bundled trainer's final reward
    at: str | None = None  # final | last:K (best is refused: biased upward)
    mode: str | None = None  # max | min
    per_round: int | None = None
    max_seeds: int | None = None  # None: every seed the spec renders for the smallest group
    spending: str | None = None

    def merged_over(self, recorded: Rule | None) -> Rule:
        if recorded is None:
            return self
        return Rule(
            **{f.name: _given(getattr(self, f.name), getattr(recorded, f.name)) for f in fields(self)}
        )

    def words(self) -> list[str]:
        """The rule as `run` options, to copy."""
        out = ["--until-decided", "--compare", str(self.baseline)]
        for flag, value in (
            ("--metric", self.metric),
            ("--at", self.at),
            ("--mode", self.mode),
            ("--seeds-per-round", self.per_round),
            ("--max-seeds", self.max_seeds),
            ("--spending", self.spending),
        ):
            if value is not None:
                out += [flag, str(value)]
        return out


# a crossing without a p: a group with fewer than 2 values, or both without spread (stats._spreads)
NO_TEST = "no test (a group has fewer than 2 values, or every run of both gave one value each)"


def _given(value: Any, recorded: Any) -> Any:
    return recorded if value is None else value


# the mode is not here: it follows the metric's name (sweepgen.direction) when neither gives it
DEFAULTS = Rule(at="final", per_round=2, spending="obf")


@dataclass(frozen=True)
class Look:
    """One recorded look: seeds per group, alpha spent there, each open comparison's test."""

    seeds: int
    alpha: float
    crossings: tuple[sequential.Crossing, ...]


def look_lines(look: Look, number: int, total: int) -> list[str]:
    """One look in words: each comparison's p against its boundary, and what it decided."""
    lines = [f"look {number} of {total}: {look.seeds} seed(s) per group, alpha spent here {look.alpha:.3g}"]
    for c in look.crossings:
        if c.reason is not None:  # values the report would not compare: cannot decide at this look
            lines.append(f"  {c.name}: cannot decide at this look (open): {c.reason}")
            continue
        p = f"p {c.p:.3g}" if c.p is not None else NO_TEST
        word = "crossed: " + c.verdict if c.verdict != sequential.OPEN else "open"
        lines.append(f"  {c.name}: {p} against boundary {c.boundary:.3g}: {word}{_interval_words(c)}")
    return lines


def _interval_words(c: sequential.Crossing) -> str:
    """The look's repeated-confidence interval of the difference, as the report's table shows it (the
    per-look lines once gave the p alone, so a crossing's size was seen only in the table)."""
    if c.low is None or c.high is None:  # no test, or a record from before the intervals were kept
        return ""
    level = f"{1 - c.boundary:.2%}".rstrip("0").rstrip(".")
    if not (math.isfinite(c.low) and math.isfinite(c.high)):
        return f"; difference {c.diff:+.3g}, no {level} interval (no calibrated level this far out)"
    return f"; difference {c.diff:+.3g}, repeated {level} interval [{c.low:+.3g}, {c.high:+.3g}]"


def read_state(sweep_dir: Path) -> tuple[Rule | None, list[Look]]:
    """The recorded rule and looks; (None, []) when no sequential test was started here."""
    path = sweep_dir / DECIDE_STATE_NAME
    raw = runfiles.read_bytes(path, limit=runfiles.MAX_JSON_BYTES)  # never a link, FIFO or device
    if raw is None:
        return None, []
    try:
        data = jsonfloat.untagged(json.loads(raw.decode("utf-8"), parse_int=runfiles.bounded_int))
        rule = Rule(**{f.name: data["rule"].get(f.name) for f in fields(Rule)})
        _check_version(path, data.get("version"))
        looks = [_look(x) for x in data["looks"]]
        _check_types(rule)
    except (UnicodeDecodeError, ValueError, KeyError, TypeError, AttributeError, RecursionError) as err:
        raise UserError(
            f"{path} is damaged: {type(err).__name__}: {err}",
            location=Location(str(path)),
            hint="it is written by `sweepgen run --until-decided`; delete it to start the test again",
        ) from None
    return rule, looks


def _check_types(rule: Rule) -> None:
    """A recorded rule is data: each field of the type `run` gives it, or the file is damaged."""
    for f in fields(Rule):
        value = getattr(rule, f.name)
        wanted = int if f.name in ("per_round", "max_seeds") else str
        if value is not None and (type(value) is not wanted):
            raise TypeError(f"rule.{f.name} is {value!r}")


def _check_version(path: Path, version: Any) -> None:
    """A record of a newer format is not damaged: this sweepgen cannot read it, said so."""
    if type(version) is not int:
        raise TypeError(f"version is {version!r}")
    if version > STATE_VERSION:
        raise UserError(
            f"{path} was written by a newer sweepgen (record version {version}; this one reads up to "
            f"{STATE_VERSION})",
            location=Location(str(path)),
            hint="upgrade sweepgen to continue or report this sequential test",
        )


def _look(data: Any) -> Look:
    """One recorded look; an untested comparison's reason is read from the look's ``REASONS`` (or, as
    written between 2026-11-30 12:55 and this format, from the crossing itself)."""
    reasons = data.get(REASONS, {})
    if not isinstance(reasons, dict):
        raise TypeError(f"{REASONS} is {reasons!r}")
    crossings = []
    for c in data["crossings"]:
        if not isinstance(c, dict):
            raise TypeError(f"crossing {c!r}")
        name = c.get("name")
        given = {"reason": reasons[name]} if isinstance(name, str) and name in reasons else {}
        crossings.append(_crossing({**c, **given}))
    if set(reasons) - {c.name for c in crossings}:
        raise ValueError(f"{REASONS} names no crossing of its look: {sorted(set(reasons))!r}")
    return Look(int(data["seeds"]), float(data["alpha"]), tuple(crossings))


def _crossing(data: Any) -> sequential.Crossing:
    c = sequential.Crossing(**data)
    optional = tuple(x for x in (c.p, c.low, c.high) if x is not None)  # low, high: absent before round 7
    numbers = (c.n_arm, c.n_base, c.diff, c.boundary) + optional
    if not all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in numbers) or not isinstance(
        c.name, str
    ):
        raise TypeError(f"crossing {data!r}")
    if not _reason_fits(c):
        raise TypeError(f"crossing {data!r}: a reason is an untested open comparison's")
    if c.verdict not in ("better", "worse", sequential.OPEN):
        raise ValueError(f"verdict {c.verdict!r}")
    return c


def _reason_fits(c: sequential.Crossing) -> bool:
    """A reason is an untested open comparison's, and words."""
    return c.reason is None or (type(c.reason) is str and (c.verdict, c.p) == (sequential.OPEN, None))


def write_state(sweep_dir: Path, rule: Rule, looks: Sequence[Look]) -> None:
    data = {
        "version": STATE_VERSION,
        "rule": asdict(rule),
        "looks": [_look_data(x) for x in looks],
    }
    write_json_atomic(sweep_dir / DECIDE_STATE_NAME, jsonfloat.tagged(data))


def _look_data(look: Look) -> dict[str, Any]:
    """A look as written: each crossing without its reason, the reasons beside them (``REASONS``)."""
    crossings = []
    for c in look.crossings:
        data = asdict(c)
        del data["reason"]
        crossings.append(data)
    out: dict[str, Any] = {"seeds": look.seeds, "alpha": look.alpha, "crossings": crossings}
    reasons = {c.name: c.reason for c in look.crossings if c.reason is not None}
    if reasons:
        out[REASONS] = reasons
    return out


def report_lines(sweep_dir: Path, metric: str | None, at: str, mode: str, baseline: str | None) -> list[str]:
    """What `report` says of a sequential test recorded in ``sweep_dir``: the rule, and per arm the
    look it crossed its boundary at (or its last p against its last boundary). A report of another
    metric, value, direction or baseline is told which one the test used. Nothing without a record."""
    rule, looks = read_state(sweep_dir)
    if rule is None:
        return []
    if not _same_comparison(rule, metric, at, mode, baseline):
        return [
            "this sweep's seeds were added by `run --until-decided` comparing "
            f"{rule.metric or 'final_reward'} ({rule.at}, {rule.mode} is better) against {rule.baseline}: "
            "report with --metric, --at, --mode and --compare as there to see its looks; the seeds each "
            "group ran were chosen by those looks, so this report's fixed-n verdicts, on a metric whose "
            "run noise tracks the tested one's, can err slightly above their level (5.3% at 0.05 where "
            "it tracks it at 0.9, benchmarks/RESULTS.md §36), and are a test family of their own"
        ]
    schedule = _schedule(rule)
    total = len(schedule.looks)
    lines = [
        f"sequential test (run --until-decided, {rule.spending} alpha-spending over at most {total} looks "
        f"after {', '.join(map(str, schedule.looks))} seeds per group, Holm at each look; at most "
        f"{schedule.alpha:g} chance of any wrong verdict over every look): its verdicts keep their error "
        "rate; the fixed-n p-values above do not account for the looks"
    ]
    last: dict[str, tuple[int, Look, sequential.Crossing]] = {}
    for number, look in enumerate(looks, 1):
        for c in look.crossings:
            last[c.name] = (number, look, c)
    lines += [_arm_line(name, number, look, c, total) for name, (number, look, c) in last.items()]
    return lines


def _schedule(rule: Rule) -> sequential.Schedule:
    assert rule.per_round is not None and rule.max_seeds is not None and rule.spending is not None
    return sequential.Schedule(rule.per_round, rule.max_seeds, spending=rule.spending)


def _same_comparison(rule: Rule, metric: str | None, at: str, mode: str, baseline: str | None) -> bool:
    return (rule.metric, rule.at, rule.mode, rule.baseline) == (metric, at, mode, baseline)


def decided(
    sweep_dir: Path, metric: str | None, at: str, mode: str, baseline: str | None
) -> dict[str, str] | None:
    """Per arm, the verdict of the sequential test recorded in ``sweep_dir`` at its last look
    (better | worse | open), where the report compares what the test compared; None: no record, or
    one of another comparison."""
    rule, looks = read_state(sweep_dir)
    if rule is None or not _same_comparison(rule, metric, at, mode, baseline):
        return None
    return {c.name: c.verdict for look in looks for c in look.crossings}


@dataclass(frozen=True)
class Held:
    """An arm's repeated-confidence interval at the look that decided it (or its last look): the
    interval the look's test inverts, and the coverage it keeps after the looks stopped the arm."""

    low: float
    high: float
    # what it covers whichever look stopped the arm: 1 - alpha, the sum over every look of the alpha
    # spent there (a boundary is at most its look's alpha; the realised boundaries depend on the
    # other arms' p-values, so their own sum is no bound)
    level: float
    seeds: int  # seeds per group at that look
    look: int  # 1-based


def intervals(
    sweep_dir: Path, metric: str | None, at: str, mode: str, baseline: str | None
) -> dict[str, Held]:
    """Per arm the record holds with an interval (a record from before they were kept has none),
    its repeated-confidence interval at its last look; empty for a record of another comparison."""
    rule, looks = read_state(sweep_dir)
    if rule is None or not _same_comparison(rule, metric, at, mode, baseline):
        return {}
    return held_at_last_look(looks, _schedule(rule).alpha)


def schedule(
    sweep_dir: Path, metric: str | None, at: str, mode: str, baseline: str | None
) -> sequential.Schedule | None:
    """The looks' schedule recorded in ``sweep_dir``; None: no record, or one of another comparison."""
    rule, _ = read_state(sweep_dir)
    if rule is None or not _same_comparison(rule, metric, at, mode, baseline):
        return None
    return _schedule(rule)


def held_at_last_look(looks: Sequence[Look], alpha: float) -> dict[str, Held]:
    """Per arm in ``looks`` with an interval at its last look, that interval and its coverage
    (``alpha``: the schedule's, spent over all its looks)."""
    last: dict[str, Held | None] = {}
    for number, look in enumerate(looks, 1):
        for c in look.crossings:
            if c.low is None or c.high is None:
                last[c.name] = None
            else:
                last[c.name] = Held(c.low, c.high, 1 - alpha, look.seeds, number)
    return {name: h for name, h in last.items() if h is not None}


def _arm_line(name: str, number: int, look: Look, c: sequential.Crossing, total: int) -> str:
    """An arm's last look: the look it crossed its boundary at, or its last p against its boundary."""
    p = "no test" if c.p is None else f"p {c.p:.3g}"
    if c.reason is not None:
        return (
            f"  {name}: cannot decide at look {number} of {total} ({look.seeds} seeds per group): {c.reason}"
        )
    if c.verdict != sequential.OPEN:
        return (
            f"  {name}: {c.verdict} at look {number} of {total} ({look.seeds} seeds per group): "
            f"{p} < boundary {c.boundary:.3g}"
        )
    spent = "seeds spent" if number == total else f"{number} of {total} looks so far"
    return f"  {name}: no crossing ({spent}; last {p} against boundary {c.boundary:.3g})"
