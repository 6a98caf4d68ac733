"""A proportion's intervals stay inside the range it can take: a t interval of accuracies near 1
runs past 1 at 2-5 seeds; the report intersects it with [0, 1] (a difference's with [-1, 1]) and
says so, only for a metric whose name says proportion and whose every value lies in [0, 1]."""

from __future__ import annotations

import json

from report_support import compare_shaping, make_shaping

from sweepgen.run.report.stats import bounds
from sweepgen.run.report.stats import verdicts as stats

NEAR_ONE = {4: 0.96, 5: 1.0, 6: 0.99}  # coma_lr1e-05's test seeds: a t interval up to 1.035


def _set_acc(root, run: str, value: float) -> None:
    path = root / "runs/shaping" / run / "metrics.jsonl"
    lines = path.read_text().splitlines()
    last = json.loads(lines[-1])
    last["eval_acc"] = value
    path.write_text("\n".join([*lines[:-1], json.dumps(last)]) + "\n")


def test_an_accuracys_interval_never_passes_one(cli_cwd):
    make_shaping(cli_cwd)
    for seed, value in NEAR_ONE.items():
        _set_acc(cli_cwd, f"coma_seed{seed}_lr1e-05", value)
    said, rows = compare_shaping(cli_cwd, "--seeds", "test")
    unclipped = stats.t_mean(list(NEAR_ONE.values()))
    assert unclipped[1] is not None and unclipped[1] > 1.03  # what was printed before
    coma = rows["coma_lr1e-05"]
    assert float(coma["ci_high"]) == 1.0 and float(coma["ci_low"]) == unclipped[0]
    assert coma["interval"] == "t, clipped to [0, 1]"  # the row says so read alone
    assert rows["coma_lr0.001"]["interval"] == "t"  # its interval lies inside: nothing cut
    assert "95% t interval, clipped to [0, 1] (the metric is a proportion)" in said
    assert coma["verdict"] == "better"  # clipping keeps every verdict: 0 stays inside [-1, 1]


def test_only_a_named_proportion_within_zero_and_one_is_bounded():
    assert bounds.of_metric("eval_acc", [0.5, 1.0]) == (0.0, 1.0)
    assert bounds.of_metric("pass@1", [0.0, 0.3]) == (0.0, 1.0)
    assert bounds.of_metric("hackRate", [0.2]) == (0.0, 1.0)
    # plurals, as TRL's DPO and reward trainers log them, and `pass`/`success` kept whole
    assert bounds.of_metric("train/rewards/accuracies", [0.75, 1.0]) == (0.0, 1.0)
    assert bounds.of_metric("success_rates", [0.2]) == bounds.of_metric("successes", [0.2]) == (0.0, 1.0)
    assert bounds.of_metric("rewards/margins", [0.5]) is None
    assert bounds.of_metric("reward_mean", [0.5, 0.9]) is None  # a reward has no bound
    assert bounds.of_metric("eval_acc", [0.5, 1.2]) is None  # a value past 1: not a proportion
    assert bounds.of_metric("eval_acc", [0.5, float("nan")]) is None
    assert bounds.of_metric(None, [0.5]) is None


def test_clipped_difference_intervals_keep_the_verdicts():
    groups = [("base", [0.95, 0.97, 0.99]), ("arm", [0.2, 0.9, 0.5]), ("same", [0.96, 0.98, 0.97])]
    plain = stats.compare(groups, baseline="base", mode="max")
    clipped = stats.compare(groups, baseline="base", mode="max", methods=stats.Methods(bounds=(0.0, 1.0)))
    for a, b in zip(plain.comparisons, clipped.comparisons):
        assert a.verdict == b.verdict and a.p_holm == b.p_holm
        assert -1.0 <= b.low <= b.high <= 1.0
        assert (b.low, b.high) == (max(a.low, -1.0), min(a.high, 1.0))
    assert all(g.high is None or g.high <= 1.0 for g in clipped.groups)
    assert any(g.high is not None and g.high > 1.0 for g in plain.groups)


def test_a_proportions_detectable_difference_is_one_it_can_take():
    # two seeds of an accuracy: the calibrated test at these spreads detects only a difference of 5.2,
    # which no accuracy can differ by; it was printed as "the smallest difference detectable"
    groups = [("base", [0.4, 0.7]), ("arm", [0.3, 0.9])]
    plain = {c.name: c for c in stats.compare(groups, baseline="base", mode="max").comparisons}
    methods = stats.Methods(bounds=(0.0, 1.0))
    bounded = stats.compare(groups, baseline="base", mode="max", methods=methods)
    clipped = {c.name: c for c in bounded.comparisons}
    assert plain["arm"].detectable is not None and plain["arm"].detectable > 1  # unbounded: as it is
    assert clipped["arm"].detectable is None and clipped["arm"].seeds_needed == plain["arm"].seeds_needed
    from sweepgen.run.report.undecided import seeds_sentence as _seeds_sentence

    said = _seeds_sentence(clipped["arm"], methods.bounds)
    assert "no difference the metric can take (at most 1) is detectable with 80% power" in said
    assert "smallest difference detectable" in _seeds_sentence(plain["arm"])
    tight = [("base", [0.5, 0.6, 0.55, 0.52]), ("near", [0.5, 0.52, 0.54, 0.61])]
    near = stats.compare(tight, baseline="base", mode="max", methods=methods).comparisons[0]
    assert near.detectable is not None and 0 < near.detectable < 1  # one it can take: kept
