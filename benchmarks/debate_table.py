"""The debate sweep's results table (benchmarks/RESULTS.md §7), computed from the per-run CSV only.

    python benchmarks/debate_table.py [benchmarks/results/debate_sweep.csv]

prints the markdown that RESULTS.md §7 holds between its ``debate-table`` markers;
tests/test_debate_results_table.py checks that RESULTS.md holds exactly this. No random resampling
(t intervals, Welch's test), so the table is the same on every machine with the same CSV.

Definitions (one CSV row per run, ``benchmarks/bench_debate_sweep.py --csv``):

- ``start_accuracy``: team accuracy of the run's step 1: the 16 debates the prior played before
  any update;
- ``final_accuracy``: summary.json ``debate.team_accuracy``, the mean of the last ``summary_window``
  steps;
- ``collapsed``: team accuracy 0 in every step of that window (no debate of the last 160 right; in
  the pilot such runs had lost the turn format, e.g. ``" 111111"`` for ``" 1"``). Collapsed runs are
  kept: counted in the table, and their final accuracy (0) is in every mean and test.
"""

from __future__ import annotations

import csv
import math
import statistics
import sys
from pathlib import Path

from scipy import stats

CSV = Path(__file__).parent / "results" / "debate_sweep.csv"
BASELINE = "identity"
ALPHA, POWER = 0.05, 0.8


def read(path: Path = CSV) -> tuple[dict[str, str], list[dict[str, str]]]:
    """(the ``# key: value`` header comments, the rows)."""
    lines = path.read_text().splitlines()
    header = {}
    for line in lines:
        if not line.startswith("#"):
            break
        key, _, value = line[1:].partition(":")
        header[key.strip()] = value.strip()
    rows = list(csv.DictReader(line for line in lines if not line.startswith("#")))
    return header, rows


def _arms(rows: list[dict[str, str]]) -> dict[str, list[dict[str, str]]]:
    out: dict[str, list[dict[str, str]]] = {}
    for row in rows:
        out.setdefault(row["arm"], []).append(row)
    return {arm: sorted(runs, key=lambda r: int(r["seed"])) for arm, runs in out.items()}


def _col(runs: list[dict[str, str]], key: str) -> list[float]:
    return [float(r[key]) for r in runs]


def _mean_ci(values: list[float]) -> str:
    mean = statistics.fmean(values)
    if len(values) < 2:
        return f"{mean:.3f}"
    half = stats.t.ppf(0.975, len(values) - 1) * statistics.stdev(values) / math.sqrt(len(values))
    return f"{mean:.3f} [{mean - half:.3f}, {mean + half:.3f}]"


def _welch(a: list[float], b: list[float]) -> tuple[float, float, float, float]:
    """(mean a − mean b, its 95% interval low, high, Welch's two-sided p)."""
    va, vb = statistics.variance(a) / len(a), statistics.variance(b) / len(b)
    diff = statistics.fmean(a) - statistics.fmean(b)
    if va + vb == 0:
        return diff, diff, diff, 1.0 if diff == 0 else 0.0
    df = (va + vb) ** 2 / (va**2 / (len(a) - 1) + vb**2 / (len(b) - 1))
    half = stats.t.ppf(0.975, df) * math.sqrt(va + vb)
    p = 2 * stats.t.sf(abs(diff) / math.sqrt(va + vb), df)
    return diff, diff - half, diff + half, float(p)


def holm(p_values: dict[str, float]) -> dict[str, float]:
    """Holm-Bonferroni adjusted p-values (step-down, made monotone)."""
    ordered = sorted(p_values.items(), key=lambda kv: kv[1])
    m, running, out = len(ordered), 0.0, {}
    for rank, (name, p) in enumerate(ordered):
        running = max(running, min(1.0, (m - rank) * p))
        out[name] = running
    return out


def detectable(sd: float, n: int, alpha: float, paired: bool = False) -> float:
    """The smallest true difference a two-sided t-test at ``alpha`` finds with POWER, for n seeds per
    arm and per-seed standard deviation ``sd`` (paired: one arm, its per-seed gains)."""
    df = n - 1 if paired else 2 * n - 2
    scale = sd / math.sqrt(n) if paired else sd * math.sqrt(2 / n)
    return float((stats.t.ppf(1 - alpha / 2, df) + stats.t.ppf(POWER, df)) * scale)


def table(rows: list[dict[str, str]]) -> str:
    arms = _arms(rows)
    base = _col(arms[BASELINE], "final_accuracy")
    raw = {a: _welch(_col(r, "final_accuracy"), base)[3] for a, r in arms.items() if a != BASELINE}
    adjusted = holm(raw)
    lines = [
        "| arm | seeds | collapsed | start accuracy (step 1) | final accuracy, mean [95% t CI] "
        "| final − start, paired t p | − identity [95% Welch CI] | Welch p | Holm p | verdict |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for arm, runs in arms.items():
        start, final = _col(runs, "start_accuracy"), _col(runs, "final_accuracy")
        gain = statistics.fmean(final) - statistics.fmean(start)
        p_gain = float(stats.ttest_rel(final, start).pvalue) if len(runs) > 1 else math.nan
        collapsed = sum(r["collapsed"] == "True" for r in runs)
        row = (
            f"| {arm} | {len(runs)} | {collapsed} | {statistics.fmean(start):.3f} | {_mean_ci(final)} "
            f"| {gain:+.3f}, p = {p_gain:.2g} "
        )
        if arm == BASELINE:
            lines.append(row + "| (baseline) | | | |")
            continue
        diff, low, high, p = _welch(final, base)
        verdict = "no evidence"
        if adjusted[arm] < ALPHA and (low > 0 or high < 0):
            verdict = "better" if diff > 0 else "worse"
        lines.append(
            row + f"| {diff:+.3f} [{low:+.3f}, {high:+.3f}] | {p:.3f} | {adjusted[arm]:.3f} | {verdict} |"
        )
    return "\n".join(lines) + "\n\n" + _design(arms)


def _design(arms: dict[str, list[dict[str, str]]]) -> str:
    """What differences this design can detect, from the spread the runs showed."""
    n = min(len(r) for r in arms.values())
    finals = [_col(r, "final_accuracy") for r in arms.values()]
    pooled = math.sqrt(statistics.fmean(statistics.variance(f) for f in finals))
    gains = [
        f - s for f, s in zip(_col(arms[BASELINE], "final_accuracy"), _col(arms[BASELINE], "start_accuracy"))
    ]
    m = len(arms) - 1
    return (
        f"Design: {n} seeds per arm; per-seed standard deviation of the final accuracy, pooled over "
        f"the {len(arms)} arms: {pooled:.3f}. Smallest difference from identity found with "
        f"{POWER:.0%} power (two-sided Welch/t): {detectable(pooled, n, ALPHA / m):.3f} at Holm's "
        f"strictest step (α = {ALPHA}/{m}), {detectable(pooled, n, ALPHA):.3f} at its last (α = {ALPHA}). "
        f"Identity's rise from its start (paired, per-seed gain sd {statistics.stdev(gains):.3f}): "
        f"{detectable(statistics.stdev(gains), n, ALPHA, paired=True):.3f} at α = {ALPHA}."
    )


def main() -> None:
    _, rows = read(Path(sys.argv[1]) if len(sys.argv) > 1 else CSV)
    print(table(rows))


if __name__ == "__main__":
    main()
