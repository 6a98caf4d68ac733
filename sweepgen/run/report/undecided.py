"""Why a comparison cannot be decided and how many seeds would decide it: the sentences the terminal
prints after the statistics table and report.html shows under its own, written once here so the two
say the same (before, page.js built its own, and a proportion's "no difference the metric can take is
detectable" was said in the terminal only)."""

from __future__ import annotations

from sweepgen.run.report.compared import AT_BEST_START, WINDOW_START
from sweepgen.run.report.stats.verdicts import CALIBRATED, Comparison, Statistics


def sentences(statistics: Statistics) -> list[str]:
    """Every comparison's sentences, in the statistics' order."""
    bounds = statistics.methods.bounds
    return [line for c in statistics.comparisons for line in for_comparison(c, bounds)]


def for_comparison(c: Comparison, bounds: tuple[float, float] | None) -> list[str]:
    """Why ``c`` cannot be decided, then how many seeds would decide it: a verdict of no evidence read
    alone would pass for evidence of no difference."""
    out = []
    if c.reason is not None:
        out.append(f"{c.name}: cannot decide: {c.reason}")
    if c.verdict in ("no evidence", "cannot decide") and c.test is not None and not bias_only(c):
        out.append(seeds_sentence(c, bounds))
    return out


def bias_only(c: Comparison) -> bool:
    """--at best's "cannot decide" (compared.AT_BEST_REASON), or --at last:K's over runs logged at
    different intervals (compared.WINDOW_REASON), or runs of different lengths (compared.LENGTH_REASON):
    a bias, which more seeds do not remove, so no count of them is said."""
    return (c.reason or "").startswith((AT_BEST_START, WINDOW_START))  # LENGTH_REASON starts as WINDOW


def seeds_sentence(c: Comparison, bounds: tuple[float, float] | None = None) -> str:
    """An undecided comparison: how many seeds would detect its difference, and what the seeds it
    has could detect (for a metric in ``bounds``, Welch's test that detects nothing inside them)."""
    need = (
        f"about {c.seeds_needed} seeds per group would detect a difference of {number(abs(c.diff))} "
        f"with 80% power at the spread these seeds show{_spread_top_words(c)}"
        if c.seeds_needed is not None
        else "no seed count up to 1,000 would detect the observed difference"
    )
    now = (
        f"; with the seeds it has and the spread they show, the smallest difference detectable with 80% "
        f"power is {number(c.detectable)}"
        if c.detectable is not None
        else ""
    )
    if c.detectable is None and bounds is not None and c.verdict == "no evidence" and c.test == CALIBRATED:
        # stats._needed dropped a detectable difference as wide as the metric's range or wider
        now = (
            f"; with the seeds it has, no difference the metric can take (at most {bounds[1] - bounds[0]:g}) "
            "is detectable with 80% power"
        )
    # a comparison these seeds cannot decide (the permutation test's floor) is not "no evidence yet"
    status = "no evidence yet" if c.verdict == "no evidence" else "cannot decide with these seeds"
    return f"{c.name}: {status}: {need} at the adjusted alpha{now}"


def _spread_top_words(c: Comparison) -> str:
    """How many seeds the same power takes if the true spread is at the top of its 80% interval: a
    spread from 2-5 seeds is itself uncertain (stats.Comparison.seeds_needed_high)."""
    if c.seeds_needed_high == c.seeds_needed:
        return ""
    high = "more than 1,000" if c.seeds_needed_high is None else str(c.seeds_needed_high)
    return (
        f" ({high} if the true spread is at the top of its 80% interval: a spread from few seeds is "
        "uncertain)"
    )


def number(value: float | None) -> str:
    """A number as the terminal's statistics table writes it (3 decimals, small ones in e-notation)."""
    if value is None:
        return "-"
    return f"{value:.3f}" if abs(value) >= 1e-3 or value == 0 else f"{value:.2e}"
