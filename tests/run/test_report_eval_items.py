"""An accuracy over few eval items: the seed intervals hold no draw of the items, and say so."""

from __future__ import annotations

import json

import numpy as np
from report_support import compare_shaping, make_shaping

from sweepgen.run.report.stats import eval_items
from sweepgen.run.report.stats import verdicts as stats

UNIT = (0.0, 1.0)


def test_a_fixed_item_set_is_outside_every_seed_interval():
    # the ground truth the sentence rests on: items of varying difficulty (Beta(1.4, 0.6), the
    # task's accuracy 0.7), every seed scoring the same 20; the report's 95% t interval over 5 seeds
    # covers the task's accuracy far less often than 95% (79% over 20,000 sweeps, RESULTS.md §33)
    rng = np.random.default_rng(7)
    covered = 0
    for _ in range(400):
        q = rng.beta(1.4, 0.6, 20)
        accs = ((rng.random((5, 20)) < q).mean(1)).tolist()
        low, high = stats.t_mean(accs)
        covered += low is not None and high is not None and low <= 0.7 <= high
    assert covered / 400 < 0.88  # sd of the rate at 400 sweeps: 2%


def test_an_accuracy_over_twenty_items_says_the_items_are_in_no_interval():
    said = eval_items.sentence("eval_acc", {"a": [0.7, 0.75, 0.65], "b": [0.8, 0.85, 0.9]}, UNIT)
    assert len(said) == 1 and "`eval_acc` is a count out of 20 items (or a multiple)" in said[0]
    p = 0.775
    assert f"±{1.959963984540054 * (p * (1 - p) / 20) ** 0.5:.2g}" in said[0]
    saturated = eval_items.sentence("acc", {"a": [1.0, 1.0], "b": [1.0, 0.95]}, UNIT)
    assert saturated and "±0 " not in saturated[0]


def test_no_sentence_where_the_values_are_no_counts_of_few_items_or_no_proportion():
    assert eval_items.sentence("eval_acc", {"a": [0.712345, 0.70321]}, UNIT) == []  # no count of few items
    assert eval_items.sentence("eval_acc", {"a": [0.701, 0.703, 0.7]}, UNIT) == []  # counts of 1,000
    assert eval_items.sentence("reward", {"a": [0.7, 0.75]}, None) == []  # no proportion
    # a rate saturated at 1 (or 0/1 per run) gives no item count: "out of 1 items" would be invented
    assert eval_items.sentence("success_rate", {"a": [1.0, 1.0], "b": [1.0, 0.0]}, UNIT) == []


def test_the_report_says_it_beside_the_table_and_in_statistics_json(cli_cwd):
    # make_shaping's accuracies are multiples of 1/200: each run scored (at most) 200 items
    make_shaping(cli_cwd)
    said, _ = compare_shaping(cli_cwd)
    assert "`eval_acc` is a count out of 200 items (or a multiple) in every run" in said
    notes = json.loads((cli_cwd / "runs/shaping/statistics.json").read_text())["notes"]
    assert any("the draw of 200 items alone can move a mean" in n for n in notes)


def test_at_last_k_reads_the_items_of_each_eval_not_of_their_mean(cli_cwd):
    # every eval scores the same 20 items (counts out of 20); --at last:5 averages five of them, a
    # count out of 100: read from the means, the sentence said "100 items" and a reach sqrt(5) too
    # tight, where the draw of the 20 items moves the mean of five evals on them as much as one
    make_shaping(cli_cwd)
    for n, run in enumerate(sorted((cli_cwd / "runs/shaping").iterdir())):
        counts = [10 + (n * 7 + s * 3) % 9 for s in range(6)]  # 10..18 correct of 20, varying by run
        rows = [{"step": 10 * (s + 1), "eval_acc": c / 20} for s, c in enumerate(counts)]
        (run / "metrics.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    said, _ = compare_shaping(cli_cwd, "--at", "last:5")
    assert "`eval_acc` is a count out of 20 items (or a multiple) in every run" in said
    assert "100 items" not in said
