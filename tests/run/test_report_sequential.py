"""The sequential test of `run --until-decided` (sweepgen.run.report.stats.sequential): the looks and the
alpha each spends, the boundary a crossing is held to, and the family-wise error rate over every look
and comparison under the null, against the uncorrected rule that inflates it."""

from __future__ import annotations

import math

import numpy as np
import pytest
import scipy.stats as sps
from hypothesis import given, settings
from hypothesis import strategies as st

from sweepgen.errors import UserError
from sweepgen.run.report.stats import calibrated, joint
from sweepgen.run.report.stats import sequential as sq
from sweepgen.run.report.stats import verdicts as stats


@settings(deadline=None)
@given(st.integers(1, 6), st.integers(2, 30), st.sampled_from(sq.SPENDING))
def test_the_looks_end_at_max_seeds_and_spend_exactly_alpha(per_round, max_seeds, spending):
    schedule = sq.Schedule(per_round, max_seeds, spending=spending)
    looks = schedule.looks
    assert looks[0] >= min(2, max_seeds) and looks[-1] == max_seeds
    assert all(b > a for a, b in zip(looks, looks[1:]))
    assert all(b - a <= per_round for a, b in zip(looks, looks[1:]))
    assert all(a >= 0 for a in schedule.alphas) and math.isclose(sum(schedule.alphas), stats.ALPHA)


def test_spending_functions_are_lan_demets():
    assert sq.spent(1.0, 0.05, "pocock") == pytest.approx(0.05)
    assert sq.spent(0.5, 0.05, "pocock") == pytest.approx(0.05 * math.log(1 + (math.e - 1) / 2))
    # O'Brien-Fleming-type: 2 - 2 Phi(1.95996 / sqrt(t)); Phi(3.91993) = 0.99995571 (tables)
    assert sq.spent(0.25, 0.05, "obf") == pytest.approx(2 * (1 - 0.99995571), rel=1e-3)
    assert sq.Schedule(2, 10).looks == (2, 4, 6, 8, 10)
    assert sq.Schedule(3, 10).looks == (3, 6, 9, 10)
    assert sq.Schedule(1, 4).looks == (2, 3, 4)


def test_a_bad_schedule_is_a_user_error():
    with pytest.raises(UserError, match="--max-seeds 1"):
        sq.Schedule(1, 1)
    with pytest.raises(UserError, match="--spending"):
        sq.Schedule(1, 4, spending="linear")


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.lists(st.floats(0, 1), min_size=0, max_size=6), min_size=1, max_size=4),
    st.lists(st.floats(0, 1), min_size=2, max_size=6),
    st.floats(1e-4, 0.05),
)
def test_a_comparison_crosses_exactly_when_holm_rejects_its_p_at_the_look(arms, base, alpha):
    named = [(f"a{i}", values) for i, values in enumerate(arms)]
    crossings = sq.look(named, base, alpha, "max")
    pvalues = [1.0 if c.p is None else c.p for c in crossings]
    _, rejected = stats.holm_levels(pvalues, alpha)
    for c, rej, p in zip(crossings, rejected, pvalues):
        assert (c.verdict != sq.OPEN) == rej
        assert c.boundary <= alpha
        if c.verdict != sq.OPEN:
            assert p < c.boundary and c.verdict == ("better" if c.diff > 0 else "worse")
        if c.p is None:  # fewer than two values: never decided, no interval
            assert c.verdict == sq.OPEN and c.low is None and c.high is None
        else:  # the repeated-confidence interval excludes 0 exactly where the look crossed
            assert c.low is not None and c.high is not None
            assert (c.verdict != sq.OPEN) == (not c.low <= 0 <= c.high), c


def _null_error_rate(schedule: sq.Schedule, reps: int, corrected: bool) -> float:
    rng = np.random.default_rng(7)
    wrong = 0
    for _ in range(reps):
        values = {name: rng.normal(0.5, 0.05, schedule.max_seeds).tolist() for name in ("b", "x", "y", "z")}
        if corrected:
            outcome = sq.simulate(values, "b", schedule)
            wrong += any(v != sq.OPEN for v in outcome.verdicts.values())
        else:  # the fixed-n report at every look: what the sequential rule is there to avoid
            wrong += any(
                any(
                    c.verdict in ("better", "worse")
                    for c in stats.compare(
                        [(k, v[:n]) for k, v in values.items()], baseline="b", mode="max", seeds_needed=False
                    ).comparisons
                )
                for n in schedule.looks
            )
    return wrong / reps


def test_the_family_wise_error_rate_over_every_look_stays_under_alpha_where_peeking_does_not():
    schedule = sq.Schedule(1, 8)  # seven looks, three arms, all at the baseline's mean
    corrected = _null_error_rate(schedule, 300, corrected=True)
    peeking = _null_error_rate(schedule, 150, corrected=False)  # about 4 SE above alpha: 150 draws do
    assert corrected <= stats.ALPHA + 2 * math.sqrt(stats.ALPHA * 0.95 / 300)  # within 2 SE of alpha
    assert peeking > 2 * corrected and peeking > stats.ALPHA + 0.03


def test_a_look_tests_at_the_level_calibrated_over_the_variance_ratio():
    # 3 + 3 seeds, the arm 10x noisier than the baseline: plain Welch's p is 0.045, below a look's
    # 0.05, but at 3 + 3 Welch's test at 0.05 errs up to 5.6% over the ratio of spreads, and the
    # looks' union bound holds only for a test that keeps its level: the calibrated p is 0.054.
    # Simulated (benchmarks/bench_stats.py --only sequential-spread): plain Welch's looks called a
    # null arm in up to 6.35% of sweeps (three arms 10x noisier, up to 5 seeds; 2,000 sweeps, sd 0.55%),
    # the calibrated ones in at most 4.2% of any cell (RESULTS.md §27)
    arm, base = [0.659, 0.759, 0.859], [0.50, 0.51, 0.49]
    assert sps.ttest_ind(arm, base, equal_var=False).pvalue == pytest.approx(0.045, abs=1e-4)
    (crossing,) = sq.look([("x", arm)], base, 0.05, "max")
    assert crossing.p == pytest.approx(calibrated.p_value(0.045025, 3, 3), rel=1e-3)
    assert crossing.p > 0.05 and crossing.verdict == sq.OPEN


@settings(max_examples=40, deadline=None)
@given(
    st.lists(st.floats(0, 1), min_size=2, max_size=5),
    st.lists(st.floats(0, 1), min_size=2, max_size=5),
    st.floats(1e-3, 0.05),
)
def test_a_looks_p_is_reports_calibrated_p(arm, base, alpha):
    (crossing,) = sq.look([("x", arm)], base, alpha, "max")
    assert crossing.p == stats.difference_test(arm, base)[1]


def test_a_large_effect_is_decided_early_and_stops_getting_seeds():
    rng = np.random.default_rng(3)
    values = {
        "b": rng.normal(0.5, 0.05, 10).tolist(),
        "big": rng.normal(0.8, 0.05, 10).tolist(),  # 6 sd
        "nil": rng.normal(0.5, 0.05, 10).tolist(),
    }
    outcome = sq.simulate(values, "b", sq.Schedule(2, 10))
    assert outcome.verdicts["big"] == "better" and outcome.verdicts["nil"] == sq.OPEN
    assert outcome.decided_at["big"] is not None and outcome.seeds["big"] < 10
    assert outcome.seeds["b"] == outcome.seeds["nil"] == 10


def test_a_look_at_seeds_without_spread_stays_open():
    # 2 seeds a side, each arm's runs one value (accuracy over 10 items): Welch's standard error
    # would be 0 and its p 0, crossing any boundary at the first look; there is no spread to test
    crossings = sq.look([("a", [1.0, 1.0]), ("b", [1.0, 0.9])], [0.9, 0.9], 0.05 / 4, "max")
    assert [(c.name, c.p, c.verdict) for c in crossings][0] == ("a", None, sq.OPEN)
    assert crossings[1].verdict == sq.OPEN and crossings[1].p is not None


def test_accuracy_over_few_items_keeps_the_sequential_error_rate():
    # both arms and the baseline the same accuracy over 10 eval items at p = 0.95, looks at 2, 4, 6, 8
    # seeds: a group's zero variance taken at face value called one of two null arms at 15%
    # (Monte-Carlo sd at 400 draws: 1.1%); the rule keeps it under alpha
    rng = np.random.default_rng(3)
    schedule = sq.Schedule(per_round=2, max_seeds=8, spending="pocock")
    wrong = 0
    for _ in range(400):
        values = {g: (rng.binomial(10, 0.95, 8) / 10).tolist() for g in ("base", "a1", "a2")}
        outcome = sq.simulate(values, "base", schedule)
        wrong += any(v != sq.OPEN for v in outcome.verdicts.values())
    assert wrong / 400 <= 0.05 + 2 * 0.011


def test_a_crossed_arm_keeps_its_looks_interval_not_a_fixed_n_one_on_the_seeds_the_looks_chose():
    # `arm` crosses at the first look (2 seeds); the baseline goes on to 10 and drifts up, so the
    # fixed-n interval on 2 + 10 seeds holds 0 beside the sequential "better": the table now shows
    # the look's repeated-confidence interval, which excludes 0 where the look crossed
    from sweepgen.run.report.stats import sequential_table
    from sweepgen.run.report.stats.sequential_record import Look, held_at_last_look

    values = {
        "base": [0.0, 0.1, 3.0, 2.0, 2.5, 1.5, 3.0, 2.0, 2.5, 2.0],
        "arm": [2.0, 2.1, *[2.0] * 8],
        "same": [0.1, 0.0, 2.5, 3.0, 2.0, 2.0, 1.5, 2.5, 3.0, 2.0],  # open to the end: the baseline goes on
    }
    schedule = sq.Schedule(1, 10)
    out = sq.simulate(values, "base", schedule)
    assert out.verdicts["arm"] == "better" and out.seeds["arm"] == 2
    fixed = stats.compare([(g, v[: out.seeds[g]]) for g, v in values.items()], baseline="base", mode="max")
    c = fixed.comparisons[0]
    assert c.low is not None and c.high is not None and c.low <= 0 <= c.high  # fixed-n: holds 0
    looks = [Look(n, alpha, crossings) for n, alpha, crossings in out.looks]
    table, notes = sequential_table.adjusted(fixed, out.verdicts, held_at_last_look(looks, schedule.alpha))
    c, same = table.comparisons
    assert same.verdict == "no evidence" and same.low is not None and same.low <= 0 <= same.high
    assert c.verdict == "better" and c.low is not None and c.low > 0
    assert fixed.comparisons[0].seeds_needed is not None  # the fixed-n "no evidence" asked for seeds
    assert c.seeds_needed is None and c.detectable is None  # decided: none are needed
    assert c.level == pytest.approx(0.95)
    said = "intervals of arm at look 1 (2 seeds per group), same at look 9 (10 seeds per group) are the looks"
    assert said in notes[0]
    _, before = sequential_table.adjusted(fixed, out.verdicts)  # a record without intervals: said fixed-n
    assert "the difference intervals are fixed-n too" in before[0]
    (together,) = joint.sentence(table)  # the level column is not all Holm's steps now
    assert "(the level column: Holm's step, or for an arm the looks held, the looks' coverage)" in together


def test_each_looks_line_shows_the_repeated_interval_the_table_shows():
    # the terminal's per-look lines of `run --until-decided` gave p and boundary only: the size of a
    # crossing (and the interval the report's table shows for it) was not seen where the looks are said
    from sweepgen.run.report.stats.sequential_record import Look, look_lines

    crossings = sq.look(
        [("arm", [2.0, 2.1, 2.05]), ("same", [0.1, 0.0, 0.05])], [0.0, 0.1, 0.05], 0.02, "max"
    )
    arm, same = crossings
    assert arm.verdict == "better" and same.verdict == sq.OPEN
    lines = look_lines(Look(3, 0.02, tuple(crossings)), 1, 4)
    assert arm.low is not None and arm.high is not None and arm.low > 0
    level = f"{1 - arm.boundary:.2%}".rstrip("0").rstrip(".")
    assert (
        f"difference {arm.diff:+.3g}, repeated {level} interval [{arm.low:+.3g}, {arm.high:+.3g}]" in lines[1]
    )
    assert same.low is not None and f"[{same.low:+.3g}, {same.high:+.3g}]" in lines[2]
    untested = sq.Crossing("x", 1, 3, 0.5, None, 0.02, sq.OPEN)  # no test: no interval, nothing claimed
    assert "interval" not in look_lines(Look(3, 0.02, (untested,)), 1, 4)[1]


def test_with_bootstrap_intervals_the_looks_intervals_are_said_to_be_welchs():
    # --interval bootstrap after --until-decided: the held arms' intervals are the looks' calibrated
    # Welch ones under a table titled "percentile bootstrap"; the sentence now says which they are
    from sweepgen.run.report.stats import sequential_table
    from sweepgen.run.report.stats.sequential_record import Look, held_at_last_look

    values = {"base": [0.0, 0.1, 0.05, 0.02], "arm": [2.0, 2.1, 2.05, 2.02]}
    schedule = sq.Schedule(2, 4)
    out = sq.simulate(values, "base", schedule)
    assert out.verdicts["arm"] == "better"
    looks = [Look(n, alpha, crossings) for n, alpha, crossings in out.looks]
    held = held_at_last_look(looks, schedule.alpha)
    groups = [(g, v[: out.seeds[g]]) for g, v in values.items()]
    boot = stats.compare(groups, baseline="base", mode="max", methods=stats.Methods(interval="bootstrap"))
    _, notes = sequential_table.adjusted(boot, out.verdicts, held)
    assert (
        "with --interval bootstrap those repeated intervals are still Welch's at the calibrated" in notes[0]
    )
    _, plain = sequential_table.adjusted(
        stats.compare(groups, baseline="base", mode="max"), out.verdicts, held
    )
    assert "bootstrap" not in plain[0]


def test_a_proportions_look_line_keeps_its_interval_inside_what_a_difference_can_be():
    # an accuracy at 2 seeds a side: the look's repeated interval reached past +1 in the terminal's
    # look line, where the report's table clips it to [-1, 1]; now both show the same interval
    from sweepgen.run.report.stats.sequential_record import Look, look_lines
    from sweepgen.run.sweep.decide import clipped

    arm, base = [0.9, 0.5], [0.1, 0.2]
    crossings = sq.look([("arm", arm)], base, 0.01, "max")
    assert crossings[0].high is not None and crossings[0].high > 1  # as computed
    (kept,) = clipped(crossings, "eval_acc", [*arm, *base])
    assert (kept.low, kept.high) == (-1.0, 1.0)  # computed: [-20.4, +21.5]
    assert "interval [-1, +1]" in look_lines(Look(2, 0.01, (kept,)), 1, 4)[1]
    assert clipped(crossings, "reward", [*arm, *base]) == tuple(crossings)  # no proportion: as it is
    no_level = sq.Crossing("x", 2, 2, 0.5, 0.3, 0.01, sq.OPEN, -math.inf, math.inf)
    assert clipped([no_level], "eval_acc", [0.5]) == (no_level,)  # "no interval", not the whole range


def test_a_report_of_another_metric_says_its_seeds_were_chosen_by_the_looks(tmp_path):
    # `run --until-decided` on eval_acc chose how many seeds each group ran; a fixed-n report of
    # eval_loss on them (noise tracking eval_acc's at 0.9) called a null arm in 5.3% of sweeps at
    # 0.05 (RESULTS.md §36): said beside the pointer to the looks, not only "report as there"
    from sweepgen.run.report.stats.sequential_record import Rule, report_lines, write_state

    rule = Rule("base", "eval_acc", "final", "max", 2, 8, "pocock")
    write_state(tmp_path, rule, [])
    (line,) = report_lines(tmp_path, "eval_loss", "final", "min", "base")
    assert "comparing eval_acc (final, max is better) against base" in line
    assert "the seeds each group ran were chosen by those looks" in line
    assert "a test family of their own" in line
    assert report_lines(tmp_path, "eval_acc", "final", "max", "base")[0].startswith("sequential test")


def test_the_group_means_the_looks_ran_get_the_looks_level_not_a_fixed_n_95():
    # a fixed-n 95% t interval of a group mean on the seeds the looks chose covered 92-95% (an arm
    # stopped early because its seeds landed far: RESULTS.md §43); each group the looks ran now gets
    # the t interval at the looks' level, one for every look, calibrated jointly over the schedule's
    # stops so that it covers 95% at the look its seeds stopped at, said in a sentence; a group the
    # looks did not run keeps its 95% one
    from sweepgen.run.report.stats import sequential_table

    values = {
        "base": [0.0, 0.1, 3.0, 2.0, 2.5, 1.5, 3.0, 2.0, 2.5, 2.0],
        "arm": [2.0, 2.1, *[2.0] * 8],
        "same": [0.1, 0.0, 2.5, 3.0, 2.0, 2.0, 1.5, 2.5, 3.0, 2.0],
    }
    schedule = sq.Schedule(1, 10)
    out = sq.simulate(values, "base", schedule)
    assert out.seeds == {"base": 10, "arm": 2, "same": 10}
    groups = [(g, v[: out.seeds[g]]) for g, v in values.items()] + [("other", [1.0, 1.5, 1.2])]
    fixed = stats.compare(groups, baseline="base", mode="max")
    table, notes = sequential_table.adjusted(fixed, out.verdicts, None, schedule)
    got = {g.name: g for g in table.groups}
    level = sq.mean_level(schedule)
    for name, n in (("arm", 2), ("base", 10), ("same", 10)):
        assert (got[name].low, got[name].high) == pytest.approx(stats.t_mean(values[name][:n], level))
        assert got[name].interval == f"t at {level:.2%} (the looks')"
        assert f"{name} ({n} seeds)" in notes[-1]
    assert got["other"] == {g.name: g for g in fixed.groups}["other"]  # not run by the looks
    assert f"are t intervals at {level:.2%}, the looks' level" in notes[-1]
    assert "covers its mean at least 95% of the time" in notes[-1]
    assert "they covered 95.5-98.0% at the calibration's worst and best cases" in notes[-1]  # measured
    assert sequential_table.adjusted(fixed, out.verdicts)[0].groups == fixed.groups


def test_the_looks_mean_level_is_calibrated_over_the_stops_not_the_union_bound():
    # the union bound over looks (each look's mean interval at 1 - its share of the 5%) covered
    # 98.2-99.7% where it claimed 95% (a group usually runs to a late look, whose share is small);
    # one level for every look, the least at which the schedule's own simulated stops keep 95% at
    # the look each group stopped at, is well under the last look's union-bound level and over 95%
    # (a fixed-n 95% covers 92-95% there: RESULTS.md §43, bench_stats_round13.py --part means)
    from sweepgen.run.report.stats import looks_level

    schedule = sq.Schedule(1, 5)
    level = sq.mean_level(schedule)
    assert 0.95 < level < sq.union_mean_level(schedule, 5) - 0.01
    assert sq.mean_level(sq.Schedule(1, 5)) == level  # a function of the schedule: fixed draws
    assert sq.mean_level(sq.Schedule(3, 3)) == 0.95  # one look: nothing chose the seeds, 95% is exact
    # the simulation it is calibrated on: at the level every case covers 95% (less nothing), while a
    # fixed-n 95% interval misses more than 5% in some case
    pivots = looks_level._pivots(schedule)
    at = {q: looks_level._quantiles(q, schedule.max_seeds) for q in (level, 0.95)}
    assert min(float(np.mean(p <= at[level][n])) for p, n in pivots) >= 0.95
    assert min(float(np.mean(p <= at[0.95][n])) for p, n in pivots) < 0.94


def test_the_looks_level_simulates_the_looks_holm_step_down_not_bonferroni():
    # looks_level calibrates the mean intervals' level on simulated stops; it stopped several arms at
    # Bonferroni over the arms still open (Holm's first step), where each look (sequential.look) runs
    # Holm's step-down, so an arm Holm's later step rejects stopped later in the model than in the
    # run (1.1% of arm stops at a seed a round to 5, 4.3% at two a round to 10, three arms; RESULTS.md,
    # round fifteen). The model's stops are now the looks' own: draw 139 here is one where they
    # differed (Bonferroni ran arm a0 to 5 seeds; the looks stop it at 4), the others a check.
    from sweepgen.run.report.stats import looks_level

    schedule = sq.Schedule(1, 5)
    rng = np.random.default_rng(15)
    base = rng.normal(size=(300, 5))
    arms = rng.normal(size=(3, 300, 5)) + 1.5
    stops = looks_level._stops(schedule, arms, base)
    for d in (139, 0, 1):
        values = {"base": list(base[d]), **{f"a{k}": list(arms[k, d]) for k in range(3)}}
        out = sq.simulate(values, "base", schedule)
        assert [out.seeds[f"a{k}"] for k in range(3)] == stops[:, d].tolist()
    assert stops[:, 139].tolist() == [4, 4, 4]


# the crossing's fields a sweepgen before the look's reasons read: it built a Crossing from every key,
# so any other key made the whole record "damaged" (TypeError: unexpected keyword argument)
_FIELDS_BEFORE_REASONS = {"name", "n_arm", "n_base", "diff", "p", "boundary", "verdict", "low", "high"}


def test_a_look_record_with_a_reason_stays_readable_by_an_older_sweepgen(tmp_path):
    # run --until-decided keeps an untested comparison's reason (runs trained to different last
    # steps); written inside the crossing, the record read as damaged to the sweepgen before, which
    # then refused to resume or report it: the reasons now sit beside the crossings, where an older
    # reader ignores them, and this one reads them back
    import json

    from sweepgen.compile.run_api import DECIDE_STATE_NAME
    from sweepgen.run.report.stats.sequential_record import Look, Rule, read_state, write_state

    why = "the runs of these two groups logged `eval_acc` to different last steps (1, 2)"
    crossings = (
        sq.Crossing("good", 2, 2, 0.1, None, 0.025, sq.OPEN, reason=why),
        sq.Crossing("same", 2, 2, 0.0, 0.9, 0.05, sq.OPEN, -1.0, 1.0),
    )
    rule = Rule("base", "eval_acc", "final", "max", 2, 4, "obf")
    write_state(tmp_path, rule, [Look(2, 0.05, crossings)])
    data = json.loads((tmp_path / DECIDE_STATE_NAME).read_text())
    assert data["version"] == 1
    for look in data["looks"]:
        for c in look["crossings"]:
            assert set(c) <= _FIELDS_BEFORE_REASONS, c  # an older reader's Crossing(**c) takes it
    assert read_state(tmp_path) == (rule, [Look(2, 0.05, crossings)])


def test_a_look_record_with_the_reason_in_its_crossing_is_still_read(tmp_path):
    # records written while the reason sat in the crossing (before this format) keep their reason
    import json

    from sweepgen.compile.run_api import DECIDE_STATE_NAME
    from sweepgen.run.report.stats.sequential_record import read_state

    crossing = {"name": "good", "n_arm": 2, "n_base": 2, "diff": 0.1, "p": None, "boundary": 0.025}
    crossing |= {"verdict": "open", "low": None, "high": None, "reason": "why"}
    record = {"version": 1, "rule": {"baseline": "base"}, "looks": [{"seeds": 2, "alpha": 0.05}]}
    record["looks"][0]["crossings"] = [crossing]
    (tmp_path / DECIDE_STATE_NAME).write_text(json.dumps(record))
    (look,) = read_state(tmp_path)[1]
    assert look.crossings[0].reason == "why"


@pytest.mark.parametrize(
    ("version", "reasons", "said"),
    [(2, None, r"written by a newer sweepgen \(record version 2"), (1, {"gone": "why"}, "damaged")],
)
def test_a_newer_look_record_or_a_stray_reason_is_refused_by_name(tmp_path, version, reasons, said):
    import json

    from sweepgen.compile.run_api import DECIDE_STATE_NAME
    from sweepgen.run.report.stats.sequential_record import read_state

    look: dict = {"seeds": 2, "alpha": 0.05, "crossings": []}
    if reasons is not None:
        look["reasons"] = reasons
    record = {"version": version, "rule": {"baseline": "base"}, "looks": [look]}
    (tmp_path / DECIDE_STATE_NAME).write_text(json.dumps(record))
    with pytest.raises(UserError, match=said) as err:
        read_state(tmp_path)
    assert err.value.location is not None and DECIDE_STATE_NAME in str(err.value.location)
