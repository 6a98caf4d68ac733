"""Seed-aware statistics (sweepgen.run.report.stats) against hand-computed references, and seed groups."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats as sps

from sweepgen.errors import UserError
from sweepgen.run.report import groups as grp
from sweepgen.run.report import stats


def test_bootstrap_of_two_values_is_their_range():
    # resample means of [0, 1] are 0, 0.5, 1 with probability 1/4, 1/2, 1/4: with 10,000 draws both
    # tails hold more than 2.5%, so the interval is exactly (0, 1)
    assert stats.bootstrap_mean([0.0, 1.0]) == (0.0, 1.0)
    assert stats.bootstrap_mean([2.5, 2.5, 2.5]) == (2.5, 2.5)
    assert stats.bootstrap_mean([3.0]) == (None, None)


def test_bootstrap_is_the_documented_algorithm_bit_for_bit():
    values = [0.31, 0.42, 0.29, 0.55, 0.47, 0.38]
    rng = np.random.Generator(np.random.PCG64(stats.SEED))
    idx = rng.integers(0, len(values), (stats.RESAMPLES, len(values)))
    means = np.asarray(values)[idx].mean(axis=1)
    expected = tuple(float(x) for x in np.percentile(means, [2.5, 97.5]))
    assert stats.bootstrap_mean(values) == expected  # equal, not close
    assert stats.bootstrap_mean(values) == stats.bootstrap_mean(list(values))
    # another seed gives another interval: the seed is what makes it reproducible
    assert stats.bootstrap_mean(values, seed=1) != expected


def test_bootstrap_difference_resamples_arm_then_baseline():
    arm, base = [1.0, 1.2, 0.9, 1.4], [0.5, 0.7, 0.6]
    rng = np.random.Generator(np.random.PCG64(stats.SEED))
    a = np.asarray(arm)[rng.integers(0, 4, (stats.RESAMPLES, 4))].mean(axis=1)
    b = np.asarray(base)[rng.integers(0, 3, (stats.RESAMPLES, 3))].mean(axis=1)
    expected = tuple(float(x) for x in np.percentile(a - b, [2.5, 97.5]))
    assert stats.bootstrap_diff(arm, base) == expected


def test_welch_p_matches_the_formula_to_1e12():
    a = [0.61, 0.58, 0.66, 0.71, 0.63, 0.69]
    b = [0.52, 0.55, 0.49, 0.6, 0.57]
    va, vb = np.var(a, ddof=1) / len(a), np.var(b, ddof=1) / len(b)
    t = (np.mean(a) - np.mean(b)) / math.sqrt(va + vb)
    df = (va + vb) ** 2 / (va**2 / (len(a) - 1) + vb**2 / (len(b) - 1))
    expected = 2 * sps.t.sf(abs(t), df)
    test, p = stats.difference_test(a, b)
    assert test == "welch"
    assert p == pytest.approx(expected, abs=1e-12)


def test_small_groups_get_the_exact_permutation_test():
    # the 6 ways to split {1,2,3,4} in two pairs give differences -2,-1,0,0,1,2; the observed -2 and
    # its mirror 2 are 2 of 6: p = 1/3
    test, p = stats.difference_test([1.0, 2.0], [3.0, 4.0])
    assert test == "permutation"
    assert p == pytest.approx(1 / 3, abs=1e-12)
    assert stats.difference_test([1.0], [3.0, 4.0]) == (None, None)


def test_holm_order_and_monotonicity():
    # sorted: 0.01*3 = 0.03, 0.03*2 = 0.06, 0.04*1 = 0.04 -> raised to 0.06 (step-down is monotone)
    assert stats.holm([0.01, 0.04, 0.03]) == pytest.approx([0.03, 0.06, 0.06])
    assert stats.holm([0.5, None, 0.01]) == pytest.approx([0.5, None, 0.02])
    assert stats.holm([0.9, 0.8]) == [1.0, 1.0]


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
        ("noise", [0.50, 0.53, 0.48, 0.52, 0.49]),
        ("single", [0.9]),
    ]
    result = stats.compare(groups, baseline="identity", mode="max")
    by = {c.name: c for c in result.comparisons}
    assert set(by) == {"coma", "noise", "single"}
    assert by["coma"].verdict == "better" and by["coma"].test == "welch"
    assert by["coma"].low is not None and by["coma"].low > 0
    assert by["noise"].verdict == "no evidence"
    assert by["single"].test is None and by["single"].verdict == "no evidence"
    # Holm over the two tested arms: the smaller p doubled
    ps = sorted([by["coma"].p, by["noise"].p])
    assert min(by["coma"].p_holm, by["noise"].p_holm) == pytest.approx(2 * ps[0])
    worse = stats.compare(groups, baseline="identity", mode="min")
    assert {c.name: c.verdict for c in worse.comparisons}["coma"] == "worse"


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
