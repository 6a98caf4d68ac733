"""A run's reason as a search sweep's reader should act on it: the executors' advice to use
`run --rerun-failed`, a grid's way to start failed runs again, said the search's way.

A search refuses `--rerun-failed` (start.py): each trial's end is told to the study, which cannot
take a told trial back, and a failed one counts among its `n`. Its next plain `sweepgen run` resumes
the runs of trials still open (interrupted, cancelled with the whole search, preempted while no
controller ran); for more trials, raise `search.n`. The status files keep the executors' words (the
controller compares them); only what is shown or told to the study is rewritten.
"""

from __future__ import annotations

import re

# a search's next plain `sweepgen run`, and what it does with a trial
_RESUMES = (
    "a search's next `sweepgen run DIR` resumes it while its trial is open (a trial told failed is "
    "never run again: raise search.n for more trials)"
)
_NO_RERUN = "a search runs no failed trial again: raise search.n for more trials"
_REWRITES: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"(resume|retry|start it) with `?--rerun-failed`?"), _RESUMES),
    (re.compile(r", then `?--rerun-failed`?\)"), f"; {_NO_RERUN})"),
    (re.compile(r" \(then `--rerun-failed` starts it again\)"), " (then its search goes on)"),
    (re.compile(r"let it end, then `--rerun-failed`, or"), "let it end, or"),
    (re.compile(r"`?--rerun-failed`?"), f"`sweepgen run DIR` ({_NO_RERUN})"),  # any other
)


def for_search(reason: str) -> str:
    """``reason`` with each piece of advice to use `--rerun-failed` said as a search does it."""
    if "--rerun-failed" not in reason:
        return reason
    for pattern, words in _REWRITES:
        reason = pattern.sub(words, reason)
    return reason
