"""Whether a parameter of a grid matters at all, calibrated (importance.matters): a permutation test
of its column within runs alike in every other parameter, Holm over the parameters. The forest's
shares and their intervals over refits are no test (a do-nothing parameter's interval lay above 0
in 1 sweep in 6 to 16, where a 95% interval's would in 1 in 40: benchmarks/RESULTS.md §31); the
page said so and gave no calibrated answer to "does this parameter matter"."""

from __future__ import annotations

import csv
import io

import numpy as np
import pytest

from sweepgen.run.report.stats import importance as imp

GRID = np.array([(lr, beta) for lr in (1, 2, 3) for beta in (1, 2, 3) for _ in range(3)], dtype=float)


def test_a_parameter_that_does_nothing_is_called_at_most_alpha_of_the_time():
    # a 3 x 3 grid at 3 seeds, lr moves the metric, beta does nothing: beta is called in at most 5%
    # of sweeps (the test is exact: 4.40% measured in 2,000, bench_stats_round10.py --part importance)
    rng = np.random.default_rng(7)
    called = np.zeros(2)
    for _ in range(150):
        y = 1.5 * GRID[:, 0] + rng.normal(size=len(GRID))
        p = imp.matters(np, GRID, y)
        called += [q is not None and q < imp.ALPHA for q in p]
    assert called[0] / 150 > 0.9  # lr
    assert called[1] / 150 <= 0.05 + 2 * 0.018  # beta: at the level, within two standard errors


def test_a_sampled_axis_has_no_runs_alike_in_the_others_and_gets_no_test():
    rng = np.random.default_rng(1)
    x = rng.uniform(size=(20, 2))  # a random search: no two runs share a value of either parameter
    assert imp.matters(np, x, rng.normal(size=20)) == [None, None]


def test_skewed_metrics_and_lost_runs_keep_the_level():
    # an unbalanced grid (a third of the runs lost) and a heavy-tailed metric: the permutation test
    # needs neither balance nor normality
    rng = np.random.default_rng(2)
    called = 0
    for _ in range(150):
        keep = rng.uniform(size=len(GRID)) > 0.33
        y = rng.lognormal(0, 1.5, len(GRID))[keep]
        called += any(q is not None and q < imp.ALPHA for q in imp.matters(np, GRID[keep], y))
    assert called / 150 <= 0.05 + 2 * 0.018


@pytest.mark.plot  # scikit-learn: the forest beside the test
def test_the_note_and_importance_csv_carry_the_test():
    rng = np.random.default_rng(4)
    values = [{"lr": float(lr), "beta": float(beta)} for lr, beta in GRID]
    scores = [3.0 * v["lr"] + float(rng.normal()) for v in values]
    params = [imp.Param("lr", log=False, categorical=False), imp.Param("beta", log=False, categorical=False)]
    result = imp.compute(values, scores, params)
    assert result is not None
    tested = dict(result.matters)
    lr, beta = tested["lr"], tested["beta"]
    assert lr is not None and lr < 0.05 and beta is not None
    assert f"lr matters (p {lr:.3g})" in result.note
    assert "Whether each parameter matters at all (a calibrated test:" in result.note
    rows = {r["parameter"]: r for r in csv.DictReader(io.StringIO(result.csv_text()))}
    assert float(rows["lr"]["matters_p_holm"]) == pytest.approx(lr)
    assert float(rows["beta"]["matters_p_holm"]) == pytest.approx(beta)


def test_a_sweep_of_one_parameter_is_tested_over_all_its_runs():
    # no other parameter: every run is alike in the others, one stratum
    x = np.array([[1.0], [1.0], [2.0], [2.0], [3.0], [3.0]] * 2)
    y = x[:, 0] * 10 + np.tile([0.0, 0.1], 6)
    (p,) = imp.matters(np, x, y)
    assert p is not None and p < imp.ALPHA
    (flat,) = imp.matters(np, x, np.ones(len(x)))  # every score equal: nothing to find
    assert flat == 1.0
