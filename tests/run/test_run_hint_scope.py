"""The hints `run` and `cancel` print choose the same runs as the command they follow: a round of
`run --until-decided` (its hints go on round by round, never the whole grid) and `--only NAME`.
Before, each named the grid's plain command line: followed, it ran every seed of every arm."""

from __future__ import annotations

import json
import shlex
from pathlib import Path

import test_run_until_decided as decided
from click.testing import CliRunner
from test_run_until_decided import FIRST, run, starts

from sweepgen.cli import main
from sweepgen.compile.output.lockfile.lock import DECIDE_STATE_NAME

arms = decided.arms  # the fixture: a rendered sweep of three arms and eight seeds


def test_the_retry_hint_of_a_round_goes_on_with_the_rounds_never_the_whole_grid(arms):
    """A round's run failed; the next `run --until-decided` leaves it alone and says how to retry it.
    That command, as printed, retries it and goes on round by round (before, it named the grid's
    plain command line: it ran every seed of every arm, 8 of `good` where the test stops at 4)."""
    (arms / "FAIL").write_text("same_seed3")
    assert run(*FIRST).exit_code == 1
    (arms / "FAIL").unlink()
    again = run("--until-decided")
    assert again.exit_code == 1, again.output
    said = " ".join(again.stderr.split())
    hint = said.split("retry with `", 1)[1].split("`", 1)[0]
    assert "--until-decided" in hint and "--rerun-failed" in hint, hint
    words = shlex.split(hint)
    assert words[:3] == ["sweepgen", "run", "generated/arms"], words
    done = CliRunner().invoke(main, words[1:])
    assert done.exit_code == 0, done.output
    state = json.loads((arms / "generated/arms" / DECIDE_STATE_NAME).read_text())
    assert [x["seeds"] for x in state["looks"]] == [2, 4, 6, 8]
    started = starts(arms)
    assert sorted(s for s in started if s.startswith("good")) == [f"good_seed{i}" for i in range(1, 5)]
    assert started.count("same_seed3") == 2 and len(started) == len(set(started)) + 1


def test_the_retry_hint_of_a_run_with_only_keeps_its_only(arms):
    """`run --only NAME` whose run failed before: the retry hint keeps `--only` (before, it retried
    NAME and started every other run of the sweep too)."""
    (arms / "FAIL").write_text("base_seed1")
    assert run(*FIRST[:4], "--only", "base_seed1").exit_code == 1
    (arms / "FAIL").unlink()
    again = run("--only", "base_seed1")
    said = " ".join(again.stderr.split())
    hint = said.split("retry with `", 1)[1].split("`", 1)[0]
    assert hint.endswith("--only base_seed1 --rerun-failed"), hint
    done = CliRunner().invoke(main, shlex.split(hint)[1:])
    assert done.exit_code == 0, done.output
    assert starts(arms) == ["base_seed1", "base_seed1"]


def test_the_resume_line_of_cancel_chooses_the_same_runs(arms):
    """`cancel`'s "resume them with" of a sweep run in rounds goes on round by round, and of
    `cancel --only NAME` keeps `--only` (before, both named the grid's command line with
    --rerun-failed, which starts every run of the sweep). ``_resume_line`` is what `cancel` prints."""
    from sweepgen.run.sweep import watch

    sweep = Path("generated/arms")
    run_line = watch._resume_line(sweep, {}, searched=False, only=("base_seed1",))
    assert run_line.endswith("--only base_seed1 --rerun-failed"), run_line
    assert run(*FIRST).exit_code == 0  # the rule and its looks recorded
    rounds = watch._resume_line(sweep, {}, searched=False, only=("base_seed1",))
    assert rounds.endswith("--until-decided --rerun-failed"), rounds
