"""`sweepgen run DIR --until-decided`: run a sweep's seeds in rounds until every comparison against the
baseline group is decided by the sequential test of sweepgen.run.report.stats.sequential, or the seeds
are spent.

The seeds are the ones the spec renders (its seed axis): round k runs the first n_k seeds of the
baseline and of every arm still open, in the order the lock lists them, through ``run_sweep`` with
``--only`` (so a finished run is never started again, a failed one only with --rerun-failed, and a
run another `sweepgen run` holds is waited for: exactly once, as for any run). After a round whose
runs all finished, the open comparisons are tested at that look's boundary; an arm that crosses is
decided and gets no more seeds.

Each look is recorded in ``DIR/.sweepgen-decide.json`` (DECIDE_STATE_NAME, run state beside
``.sweepgen-run.json``; sweep.lock.json is the render's record, compared by `check`, so rounds are
not written into it): the rule (baseline, metric, value, direction, schedule, spending) and per look
the seeds, the alpha spent and each comparison's p against its boundary. A later `run --until-decided`
replays the recorded looks and goes on; a changed rule is exit 2 (a rule changed after seeing data
voids the error rate), and `sweepgen report` shows the looks.
"""

from __future__ import annotations

import difflib
import fcntl
import math
import os
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path

from sweepgen import direction
from sweepgen.compile.run_api import DECIDE_STATE_NAME, LOCK_NAME
from sweepgen.errors import Location, UserError
from sweepgen.fs import filenames, runfs
from sweepgen.run.core.plan.tasks import NAMING_PATHS, read_lock
from sweepgen.run.core.sweepfile import replay_guard
from sweepgen.run.report import collect as rep
from sweepgen.run.report import committed
from sweepgen.run.report import compared as compared_
from sweepgen.run.report import groups as grp
from sweepgen.run.report.stats import bounds, sequential
from sweepgen.run.report.stats.sequential_record import (
    DEFAULTS,
    Look,
    Rule,
    look_lines,
    read_state,
    write_state,
)
from sweepgen.run.sweep.grid import Display, RunRequest, RunResult, run_sweep


@dataclass
class DecideResult:
    code: int
    rule: Rule
    looks: list[Look] = field(default_factory=list)
    total_looks: int = 0
    verdicts: dict[str, str] = field(default_factory=dict)  # arm -> better | worse | open
    last: RunResult | None = None  # the last round's runs (their table, failures, notes)
    plan: list[str] = field(default_factory=list)  # --dry-run: the schedule and the first round
    notes: list[str] = field(default_factory=list)
    # which way "better" points and how it was chosen: a direction inferred from the metric's name
    # (sweepgen.direction) was never said, so `better` on `--metric kl` could mean a higher KL unseen
    direction: str = ""

    @property
    def spent(self) -> bool:
        return len(self.looks) >= self.total_looks

    @property
    def open_arms(self) -> list[str]:
        """The arms not decided yet."""
        return [a for a, v in self.verdicts.items() if v == sequential.OPEN]


def run_until_decided(request: RunRequest, given: Rule, display: Display) -> DecideResult:
    """Rounds of ``run_sweep`` and looks of the sequential test, until decided or spent."""
    rule, members, looks, fresh = _settled(request, given)
    schedule = _schedule(rule)
    result = DecideResult(0, rule, list(looks), len(schedule.looks))
    result.verdicts = _verdicts_so_far(looks, members, rule)
    result.direction = _direction_line(given, rule, fresh)
    if request.dry_run:
        return _dry_run(request, rule, schedule, members, result, display)
    if fresh:
        _begin(request.sweep_dir, rule, members, display)
    while True:
        # looks another `run --until-decided` of this test recorded while this one waited for the runs
        # it held are taken as they are: never taken again, never written over by an older record
        _adopt_recorded(request.sweep_dir, result, display)
        still = result.open_arms
        if result.spent or not still:
            break
        n, alpha = schedule.looks[len(result.looks)], schedule.alphas[len(result.looks)]
        display.note(
            f"round {len(result.looks) + 1} of at most {result.total_looks}: {n} seed(s) of "
            f"{rule.baseline} and of {len(still)} open arm(s)"
        )
        names = _round_runs(rule, members, still, n)
        # a look needs every end; a hint of the round goes on with the rounds, never the whole grid
        round_request = replace(request, only=names, wait=True, scope=("--until-decided",))
        result.last = run_sweep(round_request, display)
        if result.last.code != 0:
            result.code = result.last.code
            return result
        _record_look(request, result, _look(request.sweep_dir, rule, members, still, n, alpha), display)
    return result


def _begin(sweep_dir: Path, rule: Rule, members: dict[str, list[str]], display: Display) -> None:
    """A new test's empty record (unless a `run` beside this one began the test first), and what
    its seeds' values seen before it mean."""
    with _record_held(sweep_dir):
        if read_state(sweep_dir)[0] is None:
            write_state(sweep_dir, rule, [])
    for line in _seen_before(sweep_dir, rule, members):
        display.note(line)


def _seen_before(sweep_dir: Path, rule: Rule, members: dict[str, list[str]]) -> list[str]:
    """A new test whose seeds already have values (a plain `run` of the grid, or the test of a
    deleted record): its looks take them as unseen, and each test of the same values spends alpha
    anew (two tests of a null arm at 0.05 call it in up to 10% of sweeps): said (none where no run
    of the groups has a value yet)."""
    try:
        values = _values(sweep_dir, rule)
    except UserError:  # no run finished yet (collect refuses that); anything else the first look raises
        return []
    seen = sum(values.get(name) is not None for names in members.values() for name in names)
    if not seen:
        return []
    return [
        f"{seen} run(s) of this test's groups already have a value of the metric compared: "
        "its error rate holds where this rule was chosen before they were looked at; a test or report "
        "of them before this one (a deleted record's looks too) is a test of its own, whose alpha this "
        "one does not count"
    ]


def _direction_line(given: Rule, rule: Rule, fresh: bool) -> str:
    """The value compared and its direction: given, the recorded rule's, or inferred from the
    metric's name (with how to turn it: a recorded test's direction is turned only by a new test)."""
    what = f"compared: `{rule.metric or 'final_reward'}` ({rule.at}), "
    if given.mode is not None:
        return what + f"{rule.mode} is better"
    if not fresh:
        return what + f"{rule.mode} is better (the recorded rule's)"
    return what + direction.inferred_words(rule.metric, str(rule.mode))


def _verdicts_so_far(looks: Sequence[Look], members: dict[str, list[str]], rule: Rule) -> dict[str, str]:
    """Each arm's verdict from the looks already taken (open where none decided it)."""
    decided = {c.name: c.verdict for look in looks for c in look.crossings}
    return {a: decided.get(a, sequential.OPEN) for a in members if a != rule.baseline}


def _round_runs(rule: Rule, members: dict[str, list[str]], arms: Sequence[str], n: int) -> tuple[str, ...]:
    """A round's runs: the first ``n`` seeds of the baseline and of each arm still open."""
    return tuple(m for g in [str(rule.baseline), *arms] for m in members[g][:n])


def _record_look(request: RunRequest, result: DecideResult, look: Look, display: Display) -> None:
    """A look taken: its verdicts kept, the state file written (the test goes on from it), and said.
    Under the record's lock, re-read first: a look another `run --until-decided` of this test recorded
    meanwhile is the one kept (the same runs' values: the same look), and its later looks are never
    written over with this run's older list (a look lost, its arm's verdict with it)."""
    with _record_held(request.sweep_dir):
        if _adopt_recorded(request.sweep_dir, result, display):
            return
        result.looks.append(look)
        result.verdicts.update({c.name: c.verdict for c in look.crossings})
        write_state(request.sweep_dir, result.rule, result.looks)
    for line in look_lines(look, len(result.looks), result.total_looks):
        display.say(line)


@contextmanager
def _record_held(sweep_dir: Path) -> Iterator[None]:
    """One `run --until-decided` at a time reads and writes the record: an flock on
    ``.sweepgen-decide.lock`` beside it (not on the sweep folder: a render holds that one), which the
    kernel releases when its holder dies."""
    fd = runfs.open_file(sweep_dir / filenames.DECIDE_LOCK, os.O_RDWR | os.O_CREAT, 0o644)  # never via a link
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # the flock goes with it


def _adopt_recorded(sweep_dir: Path, result: DecideResult, display: Display) -> bool:
    """The record's looks when it holds more than this run has (another `run --until-decided` of the
    same rule took them): taken over, and said; True when they were."""
    recorded, looks = read_state(sweep_dir)
    if recorded != result.rule or len(looks) <= len(result.looks):
        return False
    display.note(
        f"look(s) {len(result.looks) + 1}-{len(looks)} were recorded by another `sweepgen run "
        "--until-decided` of this sweep: taken from its record, not taken again"
    )
    for look in looks[len(result.looks) :]:
        result.looks.append(look)
        result.verdicts.update({c.name: c.verdict for c in look.crossings})
        for line in look_lines(look, len(result.looks), result.total_looks):
            display.say(line)
    return True


def _refuse_foreign_state(path: Path, what: str) -> None:
    """A record of looks another user owns or someone else can write (a shared sweep folder) is never
    replayed: its looks decide arms without running them, and anyone could have written `better`."""
    try:
        # the group bit is not counted: sweepgen writes the record under the person's umask, and
        # 002 with a shared group would refuse every test's second look (SECURITY.md)
        why = committed.not_mine(runfs.lstat(path), group=False)
    except OSError:
        return  # read a moment ago: gone since, the next look finds it missing
    if why is not None:
        raise UserError(
            f"{path.name} records {what}, and it is not yours alone ({why}): its looks would decide "
            "arms without running them",
            location=Location(str(path)),
            hint="if you did not write it, delete it to start the test again (the finished runs stay); "
            "keep the sweep folder writable by you alone",
        )


def _settled(request: RunRequest, given: Rule) -> tuple[Rule, dict[str, list[str]], list[Look], bool]:
    """The rule in force (given over recorded over defaults, checked), the seed groups, the recorded
    looks, and whether this is a new test."""
    if request.only:
        raise UserError(
            "--until-decided chooses the runs of each round itself: it cannot be combined with --only",
            hint="leave --only out (the rounds run the first seeds of the baseline and the open arms)",
        )
    recorded, looks = read_state(request.sweep_dir)
    if recorded is not None:  # its looks decide arms without a run: never a pull request's
        what = f"the sequential test `{' '.join(recorded.words())}` and {len(looks)} look(s)"
        replay_guard.refuse_tracked_state(request.sweep_dir / DECIDE_STATE_NAME, what)
        _refuse_foreign_state(request.sweep_dir / DECIDE_STATE_NAME, what)
    rule = given.merged_over(recorded).merged_over(DEFAULTS)
    if rule.mode is None:
        rule = replace(rule, mode=direction.default_mode(rule.metric))
    _check_rule(rule)
    members = _members(request.sweep_dir, rule)
    rule = _fit(rule, members)
    if recorded is not None and rule != recorded:
        raise UserError(
            f"this sweep's sequential test was started with `{' '.join(recorded.words())}`; a rule changed "
            "after data was seen no longer keeps its error rate",
            location=Location(str(request.sweep_dir / DECIDE_STATE_NAME)),
            hint="give the same options (or none: the recorded ones are used), or delete that file to "
            "start a new test (the finished runs stay and are not run again; its looks at them are a "
            "second test of values already tested, so its error rate holds for that test alone)",
        )
    return rule, members, looks, recorded is None


def _check_rule(rule: Rule) -> None:
    """A baseline to compare with, and a value a sequential test may use (never the best)."""
    if rule.baseline is None:
        raise UserError("--until-decided needs --compare GROUP: the baseline every arm is compared with")
    if not rep.valid_at(str(rule.at)):
        raise UserError(f"--at {rule.at}", hint="final, or last:K (K >= 1: the mean of the last K values)")
    if rule.at == "best":
        raise UserError(
            "--until-decided compares --at final or last:K: the best value over a run is biased upward",
            hint="--at final (the default) or --at last:K",
        )


def _look(
    sweep_dir: Path, rule: Rule, members: dict[str, list[str]], still: list[str], n: int, alpha: float
) -> Look:
    """The open comparisons tested on the first ``n`` seeds of each group (a finished run without the
    metric is left out: its group has fewer values, and the test says so)."""
    records = _records(sweep_dir, rule)
    values = _values_of(records)

    def first(group: str) -> list[float]:
        return [v for m in members[group][:n] if (v := values.get(m)) is not None]

    if not any(first(g) for g in [*still, str(rule.baseline)]):  # a typo in --metric: never decides
        raise UserError(
            f"no run of this round has a value of {rule.metric or 'final_reward'}",
            location=Location(str(sweep_dir)),
            hint="give --metric a metric the runs log (`sweepgen report DIR` lists them); delete "
            f"{DECIDE_STATE_NAME} to start the test with the right one (the runs stay)",
        )

    untestable = _unmatched(rule, records, {g: members[g][:n] for g in [*still, str(rule.baseline)]})
    crossings = sequential.look(
        [(a, first(a)) for a in still], first(str(rule.baseline)), alpha, str(rule.mode), untestable
    )
    return Look(n, alpha, clipped(crossings, rule.metric, [v for v in values.values() if v is not None]))


def _unmatched(rule: Rule, records: dict[str, rep.RunRecord], runs: dict[str, list[str]]) -> dict[str, str]:
    """What the report refuses to compare (runs that logged the metric to different last steps, or
    last-K windows from different steps), a look does not decide either: per open arm (``runs``: each
    group's runs at this look, the baseline's too), why."""
    base = runs.pop(str(rule.baseline))
    why = {arm: _why_unmatched(rule, records, [*names, *base]) for arm, names in runs.items()}
    return {arm: reason for arm, reason in why.items() if reason is not None}


def _why_unmatched(rule: Rule, records: dict[str, rep.RunRecord], names: list[str]) -> str | None:
    valued = [r for n in names if (r := records.get(n)) is not None and r.value is not None]
    return compared_.unmatched(valued, rule.metric or "final_reward", rule.at or "final")


def clipped(
    crossings: Sequence[sequential.Crossing], metric: str | None, values: Sequence[float]
) -> tuple[sequential.Crossing, ...]:
    """Each look's repeated interval inside the range a difference of a proportion's means can take
    ([-1, 1]: bounds.py), as the report's table shows it: the look's line printed [+0.1, +1.6] for an
    accuracy beside the table's [+0.1, +1]. An interval with no calibrated level (infinite ends) is
    kept as it is: "no interval", not the whole range."""
    span = bounds.of_difference(bounds.of_metric(metric, values))
    if span is None:
        return tuple(crossings)
    return tuple(
        replace(c, low=max(c.low, span[0]), high=min(c.high, span[1]))
        if c.low is not None and c.high is not None and math.isfinite(c.low) and math.isfinite(c.high)
        else c
        for c in crossings
    )


def _schedule(rule: Rule) -> sequential.Schedule:
    assert rule.per_round is not None and rule.max_seeds is not None and rule.spending is not None
    return sequential.Schedule(rule.per_round, rule.max_seeds, spending=rule.spending)


def _members(sweep_dir: Path, rule: Rule) -> dict[str, list[str]]:
    """Each seed group's run names in lock order (the spec's seed order), by the report's one rule."""
    if not (sweep_dir / LOCK_NAME).is_file():
        raise UserError(
            f"--until-decided runs a generated sweep folder: {sweep_dir} has no {LOCK_NAME}",
            location=Location(str(sweep_dir)),
        )
    lock = read_lock(sweep_dir)
    varying = [p for p in lock.varying if p not in NAMING_PATHS]
    plan = grp.seed_plan(lock.report, varying)
    if plan.path is None:
        raise UserError(
            "--until-decided adds seeds, but this sweep has no seed path",
            location=Location(str(sweep_dir / LOCK_NAME)),
            hint="name it in the spec (`seed: training.seed`) and give its axis every seed the test may use",
        )
    runs = [grp.Member(e.run_name or e.variant, e.variant, lock.values(e)) for e in lock.files]
    groups = grp.group(runs, plan, varying, lock.sweep)
    return {g.name: list(g.members) for g in groups}


def _fit(rule: Rule, members: dict[str, list[str]]) -> Rule:
    """The baseline checked against the groups, and --max-seeds against the seeds rendered."""
    if rule.baseline not in members:
        close = difflib.get_close_matches(str(rule.baseline), list(members), n=3)
        raise UserError(
            f"--compare {rule.baseline}: no group of that name",
            hint=(f"did you mean {', '.join(close)}? " if close else "")
            + f"groups: {', '.join(list(members)[:20])}",
        )
    if len(members) < 2:
        raise UserError("--until-decided needs a baseline and at least one other group")
    fewest = min(members, key=lambda g: len(members[g]))
    have = len(members[fewest])
    wanted = rule.max_seeds if rule.max_seeds is not None else have
    if wanted > have:
        raise UserError(
            f"--max-seeds {wanted}: group {fewest} has {have} seed(s) rendered",
            hint="add seed values to the spec's seed axis and render again (seeds not needed are never run)",
        )
    return replace(rule, max_seeds=wanted)


def _values(sweep_dir: Path, rule: Rule) -> dict[str, float | None]:
    return _values_of(_records(sweep_dir, rule))


def _values_of(records: dict[str, rep.RunRecord]) -> dict[str, float | None]:
    return {name: r.value for name, r in records.items()}


def _records(sweep_dir: Path, rule: Rule) -> dict[str, rep.RunRecord]:
    report = rep.collect(sweep_dir, rep.Objective(rule.metric, str(rule.mode), rule.at or "final"))
    return {r.name: r for r in report.finished}


def _dry_run(
    request: RunRequest,
    rule: Rule,
    schedule: sequential.Schedule,
    members: dict[str, list[str]],
    result: DecideResult,
    display: Display,
) -> DecideResult:
    result.plan = [
        f"sequential test against {rule.baseline}: looks after {', '.join(map(str, schedule.looks))} seeds "
        f"per group, alpha spent ({rule.spending}) "
        + ", ".join(f"{a:.3g}" for a in schedule.alphas)
        + f" (sum {schedule.alpha:g})",
        result.direction,
    ]
    open_arms = result.open_arms
    if result.spent or not open_arms:
        result.plan.append("nothing to start: every look is done")
        return result
    names = _round_runs(rule, members, open_arms, schedule.looks[len(result.looks)])
    result.last = run_sweep(replace(request, only=names), display)
    return result
