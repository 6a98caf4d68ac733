"""What an interrupted `run` says it left: a run that ended before the stop reached it stays
finished and is not offered to `--rerun-failed` (on the lent GPU a stop reached a run at its last step
and the old words said every run was cancelled)."""

from __future__ import annotations

from sweepgen.run.core.base import RunState
from sweepgen.run.sweep.grid import interrupted_note

RERUN = "sweepgen run generated/pack --rerun-failed"


def test_a_run_finished_before_the_stop_is_said_finished_and_the_rest_resumable():
    states = {"a": RunState.FINISHED, "b": RunState.CANCELLED, "c": RunState.FAILED}
    note = interrupted_note(["a", "b", "c"], states, RERUN)
    assert note.startswith("interrupted: 2 of the 3 run(s) this command started were stopped")
    assert "1 of them had finished before the stop reached it" in note and RERUN in note


def test_every_run_finished_before_the_stop_leaves_nothing_to_resume():
    note = interrupted_note(["a"], {"a": RunState.FINISHED}, RERUN)
    assert note == "interrupted: the 1 run(s) this command started had finished; nothing to resume"


def test_all_cancelled_names_no_finished_run():
    note = interrupted_note(["a", "b"], {"a": RunState.CANCELLED, "b": RunState.CANCELLED}, RERUN)
    assert "2 of the 2 run(s)" in note and "finished" not in note and RERUN in note
