"""Seed-aware statistics (run/report/stats/verdicts.py) against hand-computed references, and seed groups."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats as sps

from sweepgen.errors import UserError
from sweepgen.run.report import groups as grp
from sweepgen.run.report.stats import bootstrap, calibrated, power
from sweepgen.run.report.stats import verdicts as stats


def _boot_mean(values, seed=bootstrap.SEED):
    return bootstrap.mean_interval(np, values, 0.95, seed=seed)


def test_bootstrap_of_two_values_is_withheld():
    # resample means of [0, 1] are 0, 0.5, 1 with probability 1/4, 1/2, 1/4: with 10,000 draws both
    # tails hold more than 2.5%, so the interval was exactly (0, 1), covering ~52%: none below 3 now
    assert _boot_mean([0.0, 1.0]) == (None, None) and _boot_mean([3.0]) == (None, None)
    assert _boot_mean([2.5] * bootstrap.MIN_RUNS) == (2.5, 2.5)
    assert bootstrap.label(2) == bootstrap.TOO_FEW == bootstrap.label(19)
    assert bootstrap.label(20) == "bootstrap (covers ~93% at n=20)"
    assert bootstrap.coverage(7) == bootstrap.COVERAGE[5] and bootstrap.coverage(1) is None


@pytest.mark.parametrize("n", [3, 4, 5, 10, 19])
def test_no_bootstrap_interval_below_the_runs_where_it_covers_its_95(n):
    # a 95% percentile bootstrap covered 76-89% of true means and 80-92% of true differences at 3-10
    # seeds on normal runs, labelled "covers ~80%" beside a level column of 95%: an interval that
    # does not cover what it claims is refused below MIN_RUNS, said why, and the t interval named
    rng = np.random.default_rng(n)
    arm, base = list(rng.normal(0.3, 1, n)), list(rng.normal(0, 1, n))
    s = stats.compare([("base", base), ("arm", arm)], baseline="base", mode="max", methods=BOOT)
    assert all((g.low, g.high) == (None, None) and g.interval == bootstrap.TOO_FEW for g in s.groups)
    c = s.comparisons[0]
    assert (c.low, c.high) == (None, None) and c.p is not None and c.verdict in ("better", "no evidence")
    said = stats.bootstrap_coverage(s) or ""
    assert said.startswith("no bootstrap difference interval for arm: with fewer than 20 runs")
    assert "--interval t (the default) gives an interval there that holds its level" in said
    assert "covers about" not in said  # no coverage printed beside an interval that is not there


def test_a_bootstrap_from_twenty_runs_is_given_and_labelled():
    rng = np.random.default_rng(20)
    arm, base = list(rng.normal(0.3, 1, 20)), list(rng.normal(0, 1, 20))
    s = stats.compare([("base", base), ("arm", arm)], baseline="base", mode="max", methods=BOOT)
    assert s.groups[0].low is not None and s.groups[0].interval == "bootstrap (covers ~93% at n=20)"
    assert s.comparisons[0].low is not None
    said = stats.bootstrap_coverage(s)
    assert said is not None and "at 20 + 20 seeds" in said and "covers about 93% of true differences" in said


def test_bootstrap_difference_coverage_is_read_at_the_smaller_group():
    assert bootstrap.diff_coverage(2, 8) == bootstrap.DIFF_COVERAGE[2] == 0.67
    assert bootstrap.diff_coverage(9, 6) == bootstrap.DIFF_COVERAGE[5]
    assert bootstrap.diff_coverage(1, 5) is None and bootstrap.diff_sentence([(1, 5)]) is None
    sentence = bootstrap.diff_sentence([(5, 5), (3, 5)])
    assert sentence is not None and "at 3 + 3 seeds" in sentence
    assert "difference interval covers about 80%" in sentence and "mean interval about 76%" in sentence


def test_bootstrap_is_the_documented_algorithm_bit_for_bit():
    values = list(np.linspace(0.29, 0.55, bootstrap.MIN_RUNS) ** 1.5)
    rng = np.random.Generator(np.random.PCG64(bootstrap.SEED))
    idx = rng.integers(0, len(values), (bootstrap.RESAMPLES, len(values)))
    means = np.asarray(values)[idx].mean(axis=1)
    expected = tuple(float(x) for x in np.percentile(means, [2.5, 97.5]))
    assert _boot_mean(values) == expected  # equal, not close
    # another seed gives another interval: the seed is what makes it reproducible
    assert _boot_mean(values, seed=1) != expected


def test_bootstrap_difference_resamples_arm_then_baseline():
    arm, base = [1.0, 1.2, 0.9, 1.4] * 6, [0.5, 0.7, 0.6, 0.55] * 5
    rng = np.random.Generator(np.random.PCG64(bootstrap.SEED))
    a = np.asarray(arm)[rng.integers(0, 24, (bootstrap.RESAMPLES, 24))].mean(axis=1)
    b = np.asarray(base)[rng.integers(0, 20, (bootstrap.RESAMPLES, 20))].mean(axis=1)
    expected = tuple(float(x) for x in np.percentile(a - b, [2.5, 97.5]))
    assert bootstrap.diff_interval(np, arm, base, 0.95) == expected


BOOT = stats.Methods(interval="bootstrap")


@pytest.mark.parametrize(
    ("arm", "base"),
    [
        ([0.72, 0.72, 0.74] * 7, [0.7] * 21),  # a tied baseline: resamples of one value
        ([0.8] * 20, [0.7, 0.72, 0.69] * 7),  # a tied arm
        ([0.72, 0.75], [0.7, 0.71, 0.69] * 7),  # two runs: their range
    ],
)
def test_no_bootstrap_difference_interval_where_a_group_has_nothing_to_resample(arm, base):
    # a tied group's resamples are one value, so the interval held the other group's spread alone
    # ([0.02, 0.04] beside the test's "no evidence"; 36-65% covered at 2-5 seeds), and two runs give
    # their range (62-75%): no interval, said beside the table, the test's verdict kept
    s = stats.compare([("base", base), ("arm", arm)], baseline="base", mode="max", methods=BOOT)
    c = s.comparisons[0]
    assert (c.low, c.high) == (None, None) and c.p is not None  # tested: the verdict is the test's
    said = stats.bootstrap_coverage(s)
    assert said is not None and said.startswith("no bootstrap difference interval for arm: with fewer than")
    with_t = stats.compare([("base", base), ("arm", arm)], baseline="base", mode="max")
    assert with_t.comparisons[0].low is not None  # Welch's interval needs spread in one group only


def test_a_bootstrap_group_interval_of_two_runs_is_withheld_not_their_range():
    g = stats.group_stats("g", [0.4, 0.6], BOOT)
    assert (g.low, g.high) == (None, None) and g.interval == bootstrap.TOO_FEW
    assert stats.group_stats("g", [0.4, 0.6, 0.5] * 7, BOOT).low is not None


samples = st.lists(st.floats(-100, 100, allow_nan=False), min_size=2, max_size=12).filter(
    lambda xs: max(xs) - min(xs) > 1e-6
)


@settings(max_examples=60, deadline=None)
@given(samples, st.sampled_from([0.8, 0.95, 0.99, 1 - 0.05 / 7]))
def test_t_interval_of_the_mean_is_scipys(values, level):
    expected = sps.ttest_1samp(values, 0.0).confidence_interval(level)
    low, high = stats.t_mean(values, level)
    assert low == pytest.approx(expected.low, rel=1e-9, abs=1e-9)
    assert high == pytest.approx(expected.high, rel=1e-9, abs=1e-9)


@settings(max_examples=60, deadline=None)
@given(samples, samples)
def test_welch_p_is_scipys_and_the_calibrated_p_is_its_worst_rate(arm, base):
    expected = sps.ttest_ind(arm, base, equal_var=False).pvalue
    diff, se, df = stats.welch(arm, base)
    assert 2 * sps.t.sf(abs(diff / se), df) == pytest.approx(expected, rel=1e-9, abs=1e-12)
    # report's test: the largest rate, over every ratio of spreads, of Welch's p at or below this one
    test, p = stats.difference_test(arm, base)
    assert test == stats.CALIBRATED
    assert p == pytest.approx(calibrated.worst_rate(len(arm), len(base), expected), rel=1e-9, abs=1e-12)
    assert p >= expected * (1 - 1e-9)  # never below Welch's own p


def test_a_group_of_equal_values_takes_the_other_groups_spread(recwarn):
    # a reward at its cap in every seed: its variance 0 is no estimate of its seed noise (Welch would
    # take its mean as known exactly: scipy's p is 0.0035 here); the baseline's variance stands for
    # both, with the baseline's n - 1 degrees of freedom (scipy warns of precision loss; none here)
    capped, base = [1.0] * 5, [0.938, 0.956, 0.972, 0.93, 0.963]
    test, p = stats.difference_test(capped, base)
    assert not [w for w in recwarn if "precision" in str(w.message).lower()]
    se = math.sqrt(np.var(base, ddof=1) * (1 / 5 + 1 / 5))
    t = (1.0 - np.mean(base)) / se
    assert test == stats.CALIBRATED and p == pytest.approx(2 * sps.t.sf(t, 4), rel=1e-9)
    assert p > 3 * sps.ttest_ind(capped, base, equal_var=False).pvalue
    half = sps.t.ppf(0.975, 4) * se
    # the two-sample t on the baseline's variance, at the stated level: no spread ratio to calibrate
    for interval in (stats.welch_interval, stats.calibrated_interval):
        low, high = interval(capped, base, 0.95)
        assert (low, high) == pytest.approx(
            (1.0 - np.mean(base) - half, 1.0 - np.mean(base) + half), rel=1e-9
        )
    # the same on the other side, and the group gets no zero-width interval of its own mean
    assert stats.difference_test(base, capped)[1] == pytest.approx(p, rel=1e-12)
    group = stats.group_stats("capped", capped, stats.Methods())
    assert (group.low, group.high, group.interval) == (None, None, stats.NO_SPREAD)


def test_two_groups_without_spread_cannot_decide():
    # accuracy over 10 eval items, every seed of each arm the same: 2 + 2 seeds are no evidence of a
    # difference (Welch's standard error would be 0, its p 0 and its interval [0.1, 0.1])
    groups = [("base", [0.9, 0.9]), ("arm", [1.0, 1.0]), ("same", [0.9, 0.9]), ("noisy", [0.8, 1.0])]
    by = {c.name: c for c in stats.compare(groups, baseline="base", mode="max").comparisons}
    for name in ("arm", "same"):
        c = by[name]
        assert c.verdict == stats.UNDECIDABLE and (c.low, c.high, c.p) == (None, None, None)
        assert "no spread" in c.reason and "--test permutation" in c.reason
    assert by["noisy"].verdict == "no evidence" and by["noisy"].low is not None
    assert stats.difference_test([1.0, 1.0], [0.9, 0.9]) == (None, None)
    # the exact permutation test is defined with ties; there is still no interval to draw
    perm = stats.compare(
        [("base", [0.9] * 5), ("arm", [1.0] * 5)],
        baseline="base",
        mode="max",
        methods=stats.Methods(test="permutation"),
    ).comparisons[0]
    assert perm.p == pytest.approx(2 / math.comb(10, 5)) and perm.verdict == "better"
    assert (perm.low, perm.high) == (None, None)


def _false_verdicts(draw, n_arm: int, n_base: int, reps: int, seed: int) -> float:
    rng = np.random.default_rng(seed)
    wrong = 0
    for _ in range(reps):
        groups = [("base", list(draw(rng, n_base))), ("arm", list(draw(rng, n_arm)))]
        c = stats.compare(groups, baseline="base", mode="max", seeds_needed=False).comparisons[0]
        wrong += c.verdict in ("better", "worse")
    return wrong / reps


@pytest.mark.parametrize(("n_arm", "n_base"), [(2, 2), (2, 5)])
def test_accuracy_over_few_items_keeps_the_error_rate(n_arm, n_base):
    # both arms the same: accuracy over 10 eval items at p = 0.95, so most seeds score 1.0 or 0.9.
    # Welch with a group's zero variance taken at face value called 8.4% (2 + 2) and 7.4% (2 + 5) of
    # these better or worse; the rule keeps it under 5% (Monte-Carlo sd at 2,000 draws: 0.5%)
    def accuracy(rng, n):
        return (rng.binomial(10, 0.95, n) / 10).tolist()

    assert _false_verdicts(accuracy, n_arm, n_base, reps=2000, seed=3) <= 0.05 + 2 * 0.0049


@settings(max_examples=60, deadline=None)
@given(samples, samples, st.sampled_from([0.95, 1 - 0.05 / 3]))
def test_welch_interval_of_a_difference_is_scipys(arm, base, level):
    expected = sps.ttest_ind(arm, base, equal_var=False).confidence_interval(level)
    low, high = stats.welch_interval(arm, base, level)
    assert low == pytest.approx(expected.low, rel=1e-9, abs=1e-9)
    assert high == pytest.approx(expected.high, rel=1e-9, abs=1e-9)


def test_two_seeds_against_more_keep_welchs_df_at_the_calibrated_level():
    # report and the sequential looks of `run --until-decided`: Welch's df at the level calibrated
    # for 2 + 5 (0.0066 for 95%)
    arm, base = [0.61, 0.72], [0.52, 0.55, 0.49, 0.6, 0.57]
    welch = sps.ttest_ind(arm, base, equal_var=False)
    assert stats.welch(base, arm)[2] == pytest.approx(welch.df)
    level = calibrated.level(2, 5, 0.05)
    assert level == pytest.approx(0.00657, abs=2e-5)  # RESULTS.md §22: 0.0066
    half = sps.t.isf(level / 2, welch.df) * math.sqrt(np.var(arm, ddof=1) / 2 + np.var(base, ddof=1) / 5)
    diff = np.mean(arm) - np.mean(base)
    assert stats.calibrated_interval(arm, base, 0.95) == pytest.approx((diff - half, diff + half), rel=1e-9)
    assert stats.welch([0.5, 0.6], [0.1, 0.2])[2] == pytest.approx(2.0)  # 2 + 2: Welch's own df


def test_two_seeds_against_eight_keep_the_error_rate():
    # normal runs, the same mean, the 2-seed group twice as noisy: scipy's Welch test (Welch's df)
    # rejects 11.5% (40,000 draws); at the calibrated level it stays under 5% (sd at 20,000: 0.15%);
    # Welch's p below the calibrated level is the calibrated p below 0.05
    rng = np.random.default_rng(5)
    arm, base = rng.normal(0, 2, (20000, 2)), rng.normal(0, 1, (20000, 8))
    p = sps.ttest_ind(arm, base, axis=1, equal_var=False).pvalue
    assert (p < 0.05).mean() > 0.1
    assert (p < calibrated.level(2, 8, 0.05)).mean() <= 0.05


def test_welch_p_matches_the_formula_to_1e12():
    a = [0.61, 0.58, 0.66, 0.71, 0.63, 0.69]
    b = [0.52, 0.55, 0.49, 0.6, 0.57]
    va, vb = np.var(a, ddof=1) / len(a), np.var(b, ddof=1) / len(b)
    t = (np.mean(a) - np.mean(b)) / math.sqrt(va + vb)
    df = (va + vb) ** 2 / (va**2 / (len(a) - 1) + vb**2 / (len(b) - 1))
    expected = 2 * sps.t.sf(abs(t), df)
    diff, se, welch_df = stats.welch(a, b)
    assert (diff / se, welch_df) == pytest.approx((t, df), rel=1e-12)
    test, p = stats.difference_test(a, b)
    assert test == stats.CALIBRATED
    assert p == pytest.approx(calibrated.p_value(expected, 6, 5), rel=1e-9) and p > expected
    # at every n >= 2: two seeds a side can already decide a large effect
    # (t = 1 / sqrt(0.005 / 2 + 0.005 / 2) = 14.1 at 2 degrees of freedom: Welch's p = 0.005)
    expected = 2 * sps.t.sf(1 / math.sqrt(0.005), 2)
    test, p = stats.difference_test([1.0, 1.1], [0.0, 0.1])
    assert test == stats.CALIBRATED and expected < p < 0.05


def test_the_permutation_test_by_name_and_its_floor():
    # the 6 ways to split {1,2,3,4} in two pairs give differences -2,-1,0,0,1,2; the observed -2 and
    # its mirror 2 are 2 of 6: p = 1/3, the smallest this test can give at 2 + 2 seeds
    test, p = stats.difference_test([1.0, 2.0], [3.0, 4.0], "permutation")
    assert test == "permutation"
    assert p == pytest.approx(1 / 3, abs=1e-12) == stats.smallest_p("permutation", 2, 2)
    assert stats.smallest_p("permutation", 3, 3) == pytest.approx(0.1)
    assert stats.smallest_p("permutation", 4, 4) == pytest.approx(2 / 70)
    assert stats.smallest_p("welch", 2, 2) == 0.0
    assert stats.difference_test([1.0], [3.0, 4.0]) == (None, None)


def test_a_permutation_test_that_cannot_decide_says_so_and_how_many_seeds_would():
    groups = [("base", [0.50, 0.51, 0.49]), ("big", [0.90, 0.91, 0.89]), ("same", [0.5, 0.52, 0.48])]
    perm = stats.compare(groups, baseline="base", mode="max", methods=stats.Methods(test="permutation"))
    by = {c.name: c for c in perm.comparisons}
    # 40 standard deviations apart, yet 3 + 3 seeds cannot give p below 0.1: not "no evidence"
    assert by["big"].verdict == stats.UNDECIDABLE and "cannot give p below 0.1" in by["big"].reason
    welch = {c.name: c for c in stats.compare(groups, baseline="base", mode="max").comparisons}
    assert welch["big"].verdict == "better" and welch["big"].reason is None
    assert welch["same"].verdict == "no evidence" and welch["same"].seeds_needed is None  # diff 0
    one = stats.compare([("base", [0.5, 0.6]), ("solo", [0.9])], baseline="base", mode="max")
    assert one.comparisons[0].verdict == stats.UNDECIDABLE and "one run" in one.comparisons[0].reason


def test_no_calibrated_level_at_two_seeds_against_two_hundred_is_cannot_decide():
    # at 0.001, Welch's test errs above it at every level a float holds when the pair carries the
    # noise: the interval is the whole line, so "no evidence" would be a verdict these seeds cannot give
    base = [math.sin(i) for i in range(200)]  # spread ~0.7, deterministic
    arm = [50.0, 50.01]  # 70 baseline spreads away, the pair tight: a test that could decide would
    got = stats.compare(
        [("base", base), ("arm", arm)], baseline="base", mode="max", methods=stats.Methods(alpha=0.001)
    )
    (c,) = got.comparisons
    assert stats.calibrated_level(arm, base, 0.001) == 0.0
    assert c.verdict == stats.UNDECIDABLE and c.low is None and c.high is None
    assert "run at least 3 seeds of arm" in c.reason and "0.001" in c.reason
    assert calibrated.level(3, 200, 0.001) > 0  # the advice holds
    # at the usual 0.05 the same seeds decide
    assert (
        stats.compare([("base", base), ("arm", arm)], baseline="base", mode="max").comparisons[0].verdict
        == "better"
    )


def test_seeds_needed_matches_the_textbook_sample_size():
    # two-sided two-sample t-test, d = 1, alpha 0.05, 80% power: 17 per group (Cohen's tables); d = 0.5:
    # 64. The calibrated Welch test, equal spreads, needs the same there (its cost is at 2-6 seeds)
    assert power.seeds_needed(1.0, 0.05) == 17
    assert power.seeds_needed(0.5, 0.05) == 64
    assert power.seeds_needed(-0.5, 0.05) == 64
    assert power.seeds_needed(0.0, 0.05) is None
    assert power.power(17, 1.0, 0.05) >= 0.8 > power.power(16, 1.0, 0.05)
    # at n = 17 a group detects d = 1 (a little less: 17 is the first n past 80%)
    assert power.detectable(17, 17, 4.0, 4.0, 0.05) == pytest.approx(2.0, rel=0.03)
    assert power.detectable(1, 5, 1.0, 1.0, 0.05) is None


def test_holm_order_and_monotonicity():
    # sorted: 0.01*3 = 0.03, 0.03*2 = 0.06, 0.04*1 = 0.04 -> raised to 0.06 (step-down is monotone)
    assert stats.holm([0.01, 0.04, 0.03]) == pytest.approx([0.03, 0.06, 0.06])
    assert stats.holm([0.5, None, 0.01]) == pytest.approx([0.5, None, 0.02])
    assert stats.holm([0.9, 0.8]) == [1.0, 1.0]
    # levels: the smallest at 0.05/3 (rejected), the next at 0.05/2 (not): Holm stops, the last at 0.05/2
    levels, rejected = stats.holm_levels([0.01, 0.04, 0.03], 0.05)
    assert levels == pytest.approx([0.05 / 3, 0.05 / 2, 0.05 / 2]) and rejected == [True, False, False]


def test_verdict_words_follow_the_mode():
    assert stats.verdict(0.2, 0.01, "max") == "better"
    assert stats.verdict(0.2, 0.01, "min") == "worse"
    assert stats.verdict(-0.2, 0.01, "min") == "better"
    assert stats.verdict(0.2, 0.05, "max") == "no evidence"
    assert stats.verdict(0.2, None, "max") == "no evidence"


def test_compare_against_a_baseline():
    groups = [
        ("identity", [0.50, 0.52, 0.49, 0.51, 0.50]),
        ("coma", [0.60, 0.62, 0.61, 0.63, 0.59]),
        ("noise", [0.50, 0.54, 0.48, 0.52, 0.49]),
        ("single", [0.9]),
    ]
    result = stats.compare(groups, baseline="identity", mode="max")
    by = {c.name: c for c in result.comparisons}
    assert set(by) == {"coma", "noise", "single"}
    assert by["coma"].verdict == "better" and by["coma"].test == stats.CALIBRATED
    assert by["coma"].low is not None and by["coma"].low > 0
    assert by["coma"].level == pytest.approx(1 - 0.05 / 2)  # first Holm step over two tested arms
    assert by["noise"].verdict == "no evidence" and by["noise"].level == pytest.approx(0.95)
    # d = 0.002 / 0.02 = 0.1 needs about 1,600 seeds a side: beyond MAX_SEEDS, said as None
    assert by["noise"].seeds_needed is None and power.seeds_needed(0.1, 0.05) is None
    # what 5 + 5 seeds can see with the calibrated Welch test (0.038 by the equal-variance t's power)
    assert by["noise"].detectable == pytest.approx(0.0420, abs=1e-3)
    assert by["single"].test is None and by["single"].verdict == stats.UNDECIDABLE
    # Holm over the two tested arms: the smaller p doubled
    ps = sorted([by["coma"].p, by["noise"].p])
    assert min(by["coma"].p_holm, by["noise"].p_holm) == pytest.approx(2 * ps[0])
    worse = stats.compare(groups, baseline="identity", mode="min")
    assert {c.name: c.verdict for c in worse.comparisons}["coma"] == "worse"


arm_lists = st.lists(
    st.lists(st.floats(-5, 5, allow_nan=False).map(lambda x: round(x, 3)), min_size=2, max_size=6),
    min_size=1,
    max_size=6,
)


@settings(max_examples=150, deadline=None)
@given(arm_lists, st.sampled_from(["max", "min"]))
def test_interval_excludes_zero_exactly_when_the_verdict_decides(arms, mode):
    base = arms[0]
    named = [("base", base)] + [(f"a{i}", v) for i, v in enumerate(arms[1:])]
    for c in stats.compare(named, baseline="base", mode=mode).comparisons:
        if c.low is None:  # every run of both groups gave one value each: no interval, no verdict
            assert c.verdict == stats.UNDECIDABLE and len(set(base)) == 1, c
            continue
        excludes = not (c.low <= 0 <= c.high)
        assert excludes == (c.verdict in ("better", "worse")), c
        if excludes:
            assert c.verdict == ("better" if (c.diff > 0) == (mode == "max") else "worse")
            assert c.p_holm < 0.05 or math.isclose(c.p_holm, 0.05, rel_tol=1e-9)
        else:
            assert c.p_holm >= 0.05 or math.isclose(c.p_holm, 0.05, rel_tol=1e-9)


group_values = st.lists(
    st.floats(-10, 10, allow_nan=False).map(lambda x: round(x, 3)), min_size=1, max_size=6
)


@settings(max_examples=25, deadline=None)
@given(st.lists(group_values, min_size=2, max_size=4), st.randoms(use_true_random=False))
def test_relabelling_groups_permutes_the_output(values, random):
    names = [f"g{i}" for i in range(len(values))]
    relabel = dict(zip(names, random.sample([f"h{i}" for i in range(len(values))], len(values))))
    order = random.sample(range(len(values)), len(values))
    first = stats.compare(list(zip(names, values)), baseline="g0", mode="max")
    second = stats.compare(
        [(relabel[names[i]], values[i]) for i in order], baseline=relabel["g0"], mode="max"
    )
    assert {relabel[g.name]: (g.n, g.mean, g.low, g.high) for g in first.groups} == {
        g.name: (g.n, g.mean, g.low, g.high) for g in second.groups
    }
    assert {
        relabel[c.name]: (c.diff, c.low, c.high, c.p, c.p_holm, c.verdict) for c in first.comparisons
    } == {c.name: (c.diff, c.low, c.high, c.p, c.p_holm, c.verdict) for c in second.comparisons}


# -- seed groups ----------------------------------------------------------------------------------


def _members(names_seeds):
    return [grp.Member(f"run_{v}", v, {"training.seed": s, "lr": lr}) for v, s, lr in names_seeds]


def test_groups_are_named_by_the_variant_without_its_seed_part():
    members = _members(
        [("lo_seed1", 1, 0.1), ("lo_seed2", 2, 0.1), ("hi_seed1", 1, 0.9), ("hi_seed2", 2, 0.9)]
    )
    plan = grp.seed_plan(None, ["lr", "training.seed"])
    assert plan.source == "inferred" and plan.path == "training.seed" and "inferred" in plan.note
    groups = grp.group(members, plan, ["lr", "training.seed"], "sweep")
    assert [(g.name, g.members) for g in groups] == [
        ("lo", ("run_lo_seed1", "run_lo_seed2")),
        ("hi", ("run_hi_seed1", "run_hi_seed2")),
    ]


def test_a_seed_only_sweep_is_one_group_named_after_the_sweep():
    members = [grp.Member(f"r{s}", f"seed{s}", {"seed": s}) for s in (1, 2, 3)]
    groups = grp.group(members, grp.seed_plan({"seed": "seed"}, ["seed"]), ["seed"], "happy")
    assert [(g.name, len(g.members)) for g in groups] == [("happy", 3)]


def test_held_out_seeds_select_the_test_runs():
    members = _members([("a_seed1", 1, 0.1), ("a_seed2", 2, 0.1), ("a_seed3", 3, 0.1)])
    plan = grp.seed_plan({"seed": "training.seed", "tune": [1, 2], "test": [3]}, ["training.seed"])
    assert [m.variant for m in grp.select_seeds(members, plan, "test")] == ["a_seed3"]
    assert [m.variant for m in grp.select_seeds(members, plan, "tune")] == ["a_seed1", "a_seed2"]
    with pytest.raises(UserError, match="tune and test"):
        grp.select_seeds(members, grp.seed_plan(None, ["training.seed"]), "test")


def _named(variants_seeds, seed_path="seed"):
    members = [grp.Member(f"r_{v}", v, {seed_path: s, "k": k}) for v, s, k in variants_seeds]
    plan = grp.seed_plan({"seed": seed_path}, [seed_path, "k"])
    return [(g.name, len(g.members)) for g in grp.group(members, plan, [seed_path, "k"], "sweep")]


def test_group_labels_never_fall_back_to_the_sweeps_name_for_a_real_group():
    # names of different shapes, a token that ends in the seed's digit (top1) kept
    assert _named([("top1_seed1", 1, "a"), ("top1_seed2", 2, "a"), ("top5_wide_seed1", 1, "b")]) == [
        ("top1", 2),
        ("top5_wide", 1),
    ]
    # a dash-separated seed is still the seed: x-seed1 and x-seed2 are one group of two
    assert _named([("x-seed1", 1, "a"), ("x-seed2", 2, "a"), ("y-seed1", 1, "b")]) == [("x", 2), ("y", 1)]
    assert _named([("x-s7", 7, "a"), ("x-s8", 8, "a")]) == [("x", 2)]
    # a sweep over the seed alone: its one group is named after the sweep
    only = [grp.Member(v, v, {"seed": int(v)}) for v in ("7", "8")]
    plan = grp.seed_plan({"seed": "seed"}, ["seed"])
    assert [g.name for g in grp.group(only, plan, ["seed"], "sweep")] == ["sweep"]
    # names that say nothing once the seed is gone: the values name the groups, never the sweep
    assert _named([("seed1", 1, "a"), ("seed2", 2, "b")]) == [("k=a", 1), ("k=b", 1)]


def test_one_seed_rule_for_grouping_and_curves():
    # data_seed is not the seed: only a last part of exactly `seed` is inferred
    assert grp.seed_plan(None, ["data_seed", "lr"]).path is None
    assert grp.seed_plan(None, ["data.seed", "lr"]).path == "data.seed"
    assert grp.seed_plan(None, ["data.seed", "training.seed"]).source == "none"  # two: none guessed


@pytest.mark.parametrize("scale", [1e-100, 1e100])
def test_the_test_does_not_depend_on_the_metrics_scale(scale):
    # Welch's df from squared errors of 1e-200 underflowed to 0 / 0 (ZeroDivisionError: report ended
    # with exit 70); the test, its interval and its verdict are the same at any scale
    arm, base = [0.61, 0.58, 0.66, 0.71], [0.52, 0.55, 0.49]
    at_one = stats.compare([("b", base), ("a", arm)], baseline="b", mode="max").comparisons[0]
    scaled = [("b", [v * scale for v in base]), ("a", [v * scale for v in arm])]
    c = stats.compare(scaled, baseline="b", mode="max").comparisons[0]
    assert (c.p, c.verdict) == (pytest.approx(at_one.p, rel=1e-9), at_one.verdict)
    assert (c.low / scale, c.high / scale) == pytest.approx((at_one.low, at_one.high), rel=1e-9)


@pytest.mark.parametrize("value", [0.025, 0.1, 0.3, 1 / 3])
def test_runs_that_all_gave_one_value_have_no_spread_whatever_the_rounding_of_their_mean(value):
    # six runs at 0.025 have a mean 1 ulp off (fsum / 6), which left them a variance of 1e-35: two
    # groups whose seeds changed nothing, 1e-4 apart, were called "worse" at p 1e-67 with an interval
    # of width 1e-17 (shaping's `--metric loss --at best`: "a detectable difference of 9.69e-18")
    arm, base = [value + 1e-4] * 6, [value] * 6
    statistics = stats.compare([("b", base), ("a", arm)], baseline="b", mode="min")
    (c,) = statistics.comparisons
    assert c.verdict == stats.UNDECIDABLE and c.p is None and c.low is None
    assert all(g.interval == stats.NO_SPREAD and g.sd == 0 for g in statistics.groups)
    assert stats.difference_test(arm, base) == (None, None)


def test_groups_of_equal_mean_tie_whatever_their_seed_counts():
    # fsum / n rounds twice: three seeds at 0.95 averaged 0.9500000000000001, five 0.95, so the
    # page's "best mean" (and the winner's sentence) named the first alone, where the two tie
    from sweepgen.run.report.page import tied_best

    groups = [("three", [0.95] * 3), ("five", [0.95] * 5), ("pair", [0.9, 1.0]), ("low", [0.8, 0.85, 0.9])]
    statistics = stats.compare(groups, baseline=None, mode="max")
    assert [g.mean for g in statistics.groups][:3] == [0.95, 0.95, 0.95]
    assert tied_best(statistics) == ["three", "five", "pair"]


def test_the_pages_forest_says_the_bootstraps_own_minimum():
    # the page's hover text on an interval-less row said "a bootstrap with under 3 runs" once the
    # bootstrap was refused below 20: it names MIN_RUNS as the report applies it
    from pathlib import Path

    import sweepgen.run.report as report_package

    script = (Path(report_package.__file__).parent / "page.js").read_text()
    assert f"a bootstrap with under {bootstrap.MIN_RUNS} runs in a group" in script
