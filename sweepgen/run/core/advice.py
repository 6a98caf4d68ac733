"""The advice a run's reason ends with, made in one place and worded for both kinds of sweep.

A grid starts failed and cancelled runs again with `run --rerun-failed`; a search refuses that flag
(start.py): each trial's end is told to the study, which cannot take a told trial back, and a failed
one counts among its `n`. Its next plain `sweepgen run` resumes the runs of trials still open
(interrupted, cancelled with the whole search, preempted while no controller ran); for more trials,
raise `search.n`.

Every executor, supervisor and reader that makes a reason giving such advice takes the advice's
words from here (``Advice.grid``), so the search's wording of each one (``Advice.search``) is made
beside it, not guessed from the text afterwards. The status files keep the grid's words (a
search's controller compares them, and a status file does not know which sweep reads it);
``for_search`` says a reason the search's way where a search shows it or tells it to its study.
"""

from __future__ import annotations

from dataclasses import dataclass

# a search's next plain `sweepgen run`, and what it does with a trial
_RESUMES = (
    "a search's next `sweepgen run DIR` resumes it while its trial is open (a trial told failed is "
    "never run again: raise search.n for more trials)"
)
_NO_RERUN = "a search runs no failed trial again: raise search.n for more trials"


@dataclass(frozen=True)
class Advice:
    """One piece of advice, as a grid's reason gives it and as a search's says it instead."""

    grid: str
    search: str


# "...; resume with --rerun-failed": a cancelled, interrupted or preempted run
RESUME = Advice("resume with --rerun-failed", _RESUMES)
# "...; retry with --rerun-failed": a run its node failed under
RETRY = Advice("retry with --rerun-failed", _RESUMES)
# "...; start it with --rerun-failed": a run cancelled while its start was under way
START = Advice("start it with --rerun-failed", _RESUMES)
# "failed before; use --rerun-failed to retry": a grid's plan skipping a run that failed before
USE = Advice("use --rerun-failed to retry", f"use `sweepgen run DIR` ({_NO_RERUN}) to retry")
# "(raise resources.mem, then --rerun-failed)": a run out of memory, failed for good in a search
THEN_RERUN = Advice(", then --rerun-failed)", f"; {_NO_RERUN})")
# a lost run's "`sweepgen cancel --only RUN` ... records it cancelled (then ...)"
AFTER_CANCEL = Advice(" (then `--rerun-failed` starts it again)", " (then its search goes on)")
# a lost run whose rank may still train: "so let it end, then ..., or `sweepgen cancel` it"
LET_IT_END = Advice("let it end, then `--rerun-failed`, or", "let it end, or")

# a lost run whose trainer had started: "... may have finished: ...; look at its outputs before ..."
LOOK_FIRST = Advice(
    "look at its outputs before `--rerun-failed` starts it again",
    "look at its outputs: the search's next `sweepgen run DIR` resumes it while its trial is open",
)

ADVICE = (RESUME, RETRY, START, USE, THEN_RERUN, AFTER_CANCEL, LET_IT_END, LOOK_FIRST)


def for_search(reason: str) -> str:
    """``reason`` with each piece of advice it gives said as a search does it (a reason without
    any: as it is)."""
    for advice in ADVICE:
        reason = reason.replace(advice.grid, advice.search)
    return reason
