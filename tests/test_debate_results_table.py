"""Issue 38: benchmarks/RESULTS.md §7's debate table is what benchmarks/debate_table.py computes from
benchmarks/results/debate_sweep.csv, the per-run results (one row per run, with its provenance)."""

from __future__ import annotations

import importlib.util
import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
BEGIN, END = "<!-- debate-table: begin (benchmarks/debate_table.py) -->", "<!-- debate-table: end -->"


@pytest.fixture(scope="module")
def debate_table():
    spec = importlib.util.spec_from_file_location("debate_table", ROOT / "benchmarks" / "debate_table.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["debate_table"] = module
    spec.loader.exec_module(module)
    return module


def test_results_md_holds_the_table_computed_from_the_csv(debate_table):
    results = (ROOT / "benchmarks" / "RESULTS.md").read_text()
    assert results.count(BEGIN) == 1 and results.count(END) == 1
    published = results.split(BEGIN)[1].split(END)[0].strip()
    _, rows = debate_table.read()
    assert published == debate_table.table(rows).strip()


def test_the_csv_is_one_row_per_run_with_its_provenance(debate_table):
    header, rows = debate_table.read()
    assert re.fullmatch(r"[0-9a-f]{40}", header["commit"]), header["commit"]  # runs of committed code
    assert re.search(r"sha256 [0-9a-f]{64}$", header["prior"])
    assert header["torch"] and header["cpu_capability"] in {"DEFAULT", "AVX2", "AVX512", "ZVECTOR", "VSX"}
    runs = [(r["arm"], int(r["seed"])) for r in rows]
    assert len(runs) == len(set(runs))
    arms = {arm for arm, _ in runs}
    assert "identity" in arms
    # whole seeds only: every arm ran the same seeds
    seeds = {arm: sorted(s for a, s in runs if a == arm) for arm in arms}
    assert len({tuple(v) for v in seeds.values()}) == 1
    for r in rows:
        assert 0.0 <= float(r["start_accuracy"]) <= 1.0 and 0.0 <= float(r["final_accuracy"]) <= 1.0
        assert r["collapsed"] in {"True", "False"}
        assert (r["collapsed"] == "True") <= (float(r["final_accuracy"]) == 0.0)


def test_the_table_counts_collapsed_runs_and_keeps_them_in_the_means(debate_table, tmp_path):
    from scipy import stats

    path = tmp_path / "sweep.csv"
    lines = ["# commit: x", "arm,seed,start_accuracy,final_accuracy,collapsed"]
    identity, coma = [0.1, 0.5, 0.6, 0.7], [0.0, 0.2, 0.3, 0.9]
    lines += [f"identity,{s},0.1,{v},False" for s, v in enumerate(identity)]
    lines += [f"coma,{s},0.05,{v},{v == 0.0}" for s, v in enumerate(coma)]
    path.write_text("\n".join(lines) + "\n")
    header, rows = debate_table.read(path)
    assert header == {"commit": "x"}
    text = debate_table.table(rows)
    coma_row = next(line for line in text.splitlines() if line.startswith("| coma "))
    cells = [c.strip() for c in coma_row.strip("|").split("|")]
    assert cells[1:3] == ["4", "1"]  # 4 seeds, 1 collapsed, counted
    assert cells[4].startswith("0.350 ")  # the collapsed run's 0 is in the mean
    welch = stats.ttest_ind(coma, identity, equal_var=False).pvalue
    assert cells[7] == f"{welch:.3f}" and cells[8] == f"{min(1.0, welch):.3f}"  # one comparison: Holm = p
    gain_p = stats.ttest_rel(identity, [0.1] * 4).pvalue
    identity_row = next(line for line in text.splitlines() if line.startswith("| identity "))
    assert f"+0.375, p = {gain_p:.2g}" in identity_row
