"""Welch's test at a level calibrated over the variance ratio (sweepgen.run.report.stats.calibrated): the
exact integral against simulation, the level against its definition, the p-value against its own,
and report's verdicts at the calibrated level."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import special
from scipy import stats as sps

from sweepgen.run.report.stats import calibrated
from sweepgen.run.report.stats import verdicts as stats

# every ratio of spreads, densely: group 1's weight from 0 to 1 on a linear and a logit grid
DENSE = np.unique(np.concatenate([np.linspace(0, 1, 2001), special.expit(np.linspace(-14, 14, 2001))]))


def _welch_p(n1: int, n2: int, w: float, reps: int, seed: int) -> np.ndarray:
    """Welch's p on ``reps`` simulated null pairs of groups whose weight (group 1's share of the
    squared standard error) is ``w``."""
    rng = np.random.default_rng(seed)
    sd1, sd2 = np.sqrt(w * n1), np.sqrt((1 - w) * n2)
    a, b = rng.normal(0, sd1, (reps, n1)), rng.normal(0, sd2, (reps, n2))
    return sps.ttest_ind(a, b, axis=1, equal_var=False).pvalue


def _worst_weight(n1: int, n2: int, level: float) -> float:
    return float(DENSE[np.argmax(calibrated.rates(DENSE, n1, n2, level))])


@pytest.mark.parametrize(("n1", "n2"), [(3, 3), (3, 8), (2, 5), (4, 8)])
def test_the_calibrated_level_holds_five_percent_at_the_worst_ratio_by_simulation(n1, n2):
    # brute force, fixed seed, 400,000 draws (sd of a 5% rate: 0.034 points): at the ratio where
    # Welch's test errs most, it errs over 5% at its own level and 5% at the calibrated one
    level = calibrated.level(n1, n2, 0.05)
    p = _welch_p(n1, n2, _worst_weight(n1, n2, level), 400_000, seed=n1 * 10 + n2)
    assert (p < level).mean() == pytest.approx(0.05, abs=4 * 0.00034)
    if (n1, n2) != (2, 5):  # 2 + 5 at Welch's own level is under 5% at its worst ratio for Welch
        assert (p < 0.05).mean() > 0.05 + 4 * 0.00034


@pytest.mark.parametrize(
    ("n1", "n2"), [(2, 2), (2, 8), (3, 3), (3, 4), (3, 8), (4, 4), (5, 8), (8, 8), (12, 30)]
)
@pytest.mark.parametrize("alpha", [0.05, 0.05 / 4])
def test_the_error_rate_is_at_most_alpha_at_every_ratio_and_reaches_it(n1, n2, alpha):
    level = calibrated.level(n1, n2, alpha)
    rates = calibrated.rates(DENSE, n1, n2, level)
    assert rates.max() <= alpha * (1 + 1e-6)
    assert rates.max() >= alpha * (1 - 1e-4)  # not conservative beyond the grid's resolution
    assert level <= alpha
    # the exact rate of Welch's own level, at its worst ratio, is over alpha here (what is fixed)
    assert calibrated.rates(DENSE, n1, n2, alpha).max() > alpha


def test_the_integral_is_the_simulated_rate_at_several_ratios():
    for w in (0.0, 0.2, 0.5, 0.9, 1.0):
        p = _welch_p(3, 5, min(max(w, 1e-12), 1 - 1e-12), 200_000, seed=int(w * 100))
        exact = calibrated.rates(np.array([w]), 3, 5, 0.05)[0]
        assert (p < 0.05).mean() == pytest.approx(exact, abs=4 * np.sqrt(exact * (1 - exact) / 200_000))


def test_the_p_value_is_its_definition():
    # the largest probability over the ratio that Welch's p falls at or below the observed one:
    # the integral's maximum over the dense grid, and a simulation at the maximising ratio
    arm, base = [0.62, 0.91, 0.55], [0.50, 0.52, 0.49, 0.53, 0.51, 0.50, 0.48, 0.52]
    welch_p = sps.ttest_ind(arm, base, equal_var=False).pvalue
    test, p = stats.difference_test(arm, base)
    assert test == stats.CALIBRATED
    assert p == pytest.approx(calibrated.rates(DENSE, 3, 8, welch_p).max(), rel=1e-4)
    sims = _welch_p(3, 8, _worst_weight(3, 8, welch_p), 400_000, seed=7)
    assert (sims <= welch_p).mean() == pytest.approx(p, abs=4 * np.sqrt(p * (1 - p) / 400_000))
    # and the calibrated p is below alpha exactly when Welch's p is below the calibrated level
    for alpha in (0.05, 0.1, 0.2):
        assert (p < alpha) == (welch_p < calibrated.level(3, 8, alpha))


def test_three_seeds_against_eight_no_longer_decide_at_welchs_own_level():
    # Welch's p 0.042 at 3 + 8 (the small group noisier): "better" at Welch's 5%, which errs 7% at
    # this ratio; the calibrated level for 3 + 8 is 0.029, so this is no evidence, and the interval
    # (drawn at that level) covers zero
    arm = [0.645, 0.70, 0.755]
    base = [0.55, 0.56, 0.54, 0.57, 0.55, 0.56, 0.55, 0.54]
    welch_p = sps.ttest_ind(arm, base, equal_var=False).pvalue
    assert calibrated.level(3, 8, 0.05) < welch_p < 0.05
    c = stats.compare([("base", base), ("arm", arm)], baseline="base", mode="max").comparisons[0]
    assert c.verdict == "no evidence" and c.p > 0.05 and c.low is not None and c.low <= 0 <= c.high
    assert c.level == pytest.approx(0.95)


def test_the_level_is_cached_and_symmetric():
    calibrated._level.cache_clear()
    first = calibrated.level(3, 8, 0.05)
    assert calibrated.level(8, 3, 0.05) == first
    assert calibrated._level.cache_info().hits == 1
    assert calibrated.worst_rate(8, 3, 0.01) == calibrated.worst_rate(3, 8, 0.01)


def test_the_methods_are_named_as_what_they_are():
    described = stats.Methods().describe()
    assert described["test"] == "Welch's t-test, level calibrated over the variance ratio"
    assert "calibrated level" in described["diff_interval"]
    assert stats.Methods(test="permutation").describe()["test"] == "exact permutation test"


def _stdtrit_everywhere(df, where, n1, n2, tail):
    """The quantiles as before the interpolant: scipy's ``stdtrit`` at every df."""
    return -special.stdtrit(df, tail)


def test_the_interpolated_quantiles_give_the_rates_of_stdtrit_everywhere(monkeypatch):
    # 600 random (seeds, weights, level), two seeds against hundreds and levels near 0 and 1
    # included: the rates agree with scipy's quantile at every df to far below any printed digit
    rng = np.random.default_rng(12)
    cases = []
    for _ in range(600):
        n1, n2 = (int(v) for v in rng.choice([2, 3, 4, 5, 6, 8, 12, 30], 2))
        weights = rng.uniform(0, 1, 3) if rng.uniform() < 0.8 else np.array([0.0, 1e-9, 0.5, 1.0])
        cases.append((weights, n1, n2, float(10 ** rng.uniform(-12, 0))))
    cases += [(np.linspace(0, 1, 5), 3, 3, 1 - 1e-9), (np.linspace(0, 1, 5), 2, 200, 1e-12)]
    now = [calibrated.rates(*case) for case in cases]
    monkeypatch.setattr(calibrated, "_critical", _stdtrit_everywhere)
    before = [calibrated.rates(*case) for case in cases]
    for case, new, old in zip(cases, now, before, strict=True):
        assert new == pytest.approx(old, rel=1e-10, abs=1e-300), case


def test_the_calibrated_p_is_the_one_from_stdtrit_everywhere(monkeypatch):
    # the whole p (grid, then the bounded search) on random Welch p's at 2-12 seeds a side
    rng = np.random.default_rng(7)
    cases = [(float(10 ** rng.uniform(-8, 0)), *(int(v) for v in rng.integers(2, 13, 2))) for _ in range(40)]
    now = [calibrated.p_value(*case) for case in cases]
    monkeypatch.setattr(calibrated, "_critical", _stdtrit_everywhere)
    before = [calibrated.p_value(*case) for case in cases]
    assert now == pytest.approx(before, rel=1e-10)


def test_a_calibrated_p_asks_scipy_for_few_quantiles(monkeypatch):
    # the grid's 39 weights x 96 nodes need 65 of stdtrit's quantiles, not 3,744 (the search's
    # ~9 steps ask 96 each)
    asked = []
    real = special.stdtrit

    def counted(df, tail):
        asked.append(np.size(df))
        return real(df, tail)

    monkeypatch.setattr(special, "stdtrit", counted)
    calibrated.p_value(0.0123, 3, 4)
    assert sum(asked) < 1500


def test_the_vectorised_calibrated_p_is_the_loops_and_the_best_test_uses_it(monkeypatch):
    # verdicts_only (the best mean's test) took each group's calibrated p one at a time; the p's of the
    # groups that share their seed counts now come from one pass (the grid at every level together,
    # scipy's bounded search in lockstep): the same numbers as the loop, to 1e-12
    rng = np.random.default_rng(13)
    for n1, n2 in ((2, 2), (3, 5), (5, 3)):
        welch_p = np.concatenate([10 ** rng.uniform(-9, 0, 12), [0.0, 1.0]])
        loop = np.array([calibrated.p_value(float(p), n1, n2) for p in welch_p])
        np.testing.assert_allclose(calibrated.p_values(welch_p, n1, n2), loop, rtol=1e-12, atol=0)
    batches: list[int] = []
    real = calibrated.p_values
    monkeypatch.setattr(calibrated, "p_values", lambda p, *n: batches.append(len(p)) or real(p, *n))
    groups = [(f"g{i}", list(rng.normal(i * 0.8, 1.0, 3))) for i in range(8)]
    quick = stats.compare(groups, baseline="g7", mode="max", seeds_needed=False, verdicts_only=True)
    full = stats.compare(groups, baseline="g7", mode="max", seeds_needed=False)
    assert batches and max(batches) > 1  # several groups' p's in one pass
    for q, f in zip(quick.comparisons, full.comparisons):
        assert q.verdict == f.verdict
        if f.p is not None and f.p < stats.ALPHA:
            assert q.p == pytest.approx(f.p, rel=1e-12)
