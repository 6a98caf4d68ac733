"""`sweepgen run --until-decided`: seeds run in rounds, each run started once, the looks recorded and
replayed, a changed rule refused, a round that fails takes no look and resumes with --rerun-failed,
and `report` shows the boundary each comparison crossed."""

from __future__ import annotations

import json
import shlex
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from click.testing import CliRunner
from run_support import ARMS_SPEC as SPEC

from sweepgen.cli import main
from sweepgen.compile.output.lockfile.lock import DECIDE_STATE_NAME

# a trainer that logs eval_acc = its arm's level + a fixed jitter by seed (and eval_loss = 1 - that),
# and records each start;
# it fails while FAIL names its run
TRAINER = """\
import json, os, pathlib, sys
import yaml
cfg = yaml.safe_load(open(sys.argv[1]))
out = pathlib.Path(sys.argv[2])
out.mkdir(parents=True, exist_ok=True)
with open("starts.log", "a") as f:
    f.write(out.name + "\\n")
if os.path.exists("FAIL") and open("FAIL").read().strip() == out.name:
    sys.exit(3)
seed = cfg["training"]["seed"]
noise = [0.01, -0.02, 0.015, -0.005, 0.02, -0.01, 0.0, 0.005][seed - 1]
acc = cfg["arm"]["level"] + noise
(out / "metrics.jsonl").write_text(json.dumps({"step": 1, "eval_acc": acc, "eval_loss": 1 - acc}) + "\\n")
"""


@pytest.fixture
def arms(cli_cwd: Path) -> Path:
    (cli_cwd / "specs").mkdir()
    (cli_cwd / "templates").mkdir()
    (cli_cwd / "specs/arms.yaml").write_text(textwrap.dedent(SPEC))
    (cli_cwd / "templates/t.yaml.j2").write_text("{{ config | to_yaml }}\n")
    (cli_cwd / "trainer.py").write_text(TRAINER)
    assert CliRunner().invoke(main, ["render", "specs/arms.yaml"]).exit_code == 0
    return cli_cwd


def run(*args: str):
    return CliRunner().invoke(main, ["run", "generated/arms", *args])


FIRST = (
    "--command",
    f"{shlex.quote(sys.executable)} trainer.py {{config}} {{run_dir}}",
    "--done-file",
    "metrics.jsonl",
    "--metric",
    "eval_acc",
    "--until-decided",
    "--compare",
    "base",
)


def starts(root: Path) -> list[str]:
    return (root / "starts.log").read_text().split()


def test_rounds_stop_adding_seeds_to_a_decided_arm_and_run_each_seed_once(arms):
    result = run(*FIRST)
    assert result.exit_code == 0, result.output
    started = starts(arms)
    assert len(started) == len(set(started))  # every run started exactly once
    # looks after 2, 4, 6, 8 seeds: `good` (8 sd) crosses at the second, `same` never does
    assert sorted(s for s in started if s.startswith("good")) == [f"good_seed{i}" for i in range(1, 5)]
    assert {s for s in started if s.startswith(("base", "same"))} == {
        f"{g}_seed{i}" for g in ("base", "same") for i in range(1, 9)
    }
    assert "look 2 of 4: 4 seed(s) per group" in result.stdout
    assert "good: better against base (sequential test)" in result.stdout
    assert "no evidence within 8 seeds per group against base: same" in result.stdout
    state = json.loads((arms / "generated/arms" / DECIDE_STATE_NAME).read_text())
    assert state["rule"]["baseline"] == "base" and state["rule"]["spending"] == "obf"
    assert [x["seeds"] for x in state["looks"]] == [2, 4, 6, 8]
    assert sum(x["alpha"] for x in state["looks"]) == pytest.approx(0.05)
    good = [c for x in state["looks"] for c in x["crossings"] if c["name"] == "good"]
    assert [c["verdict"] for c in good] == ["open", "better"] and good[1]["p"] < good[1]["boundary"]
    # `check` knows the record is run state, not an orphan
    assert CliRunner().invoke(main, ["check", "specs/arms.yaml"]).exit_code == 0

    again = run("--until-decided")  # the recorded rule and command line: the looks replayed, nothing run
    assert again.exit_code == 0, again.output
    assert starts(arms) == started
    assert "good: better against base (sequential test)" in again.stdout

    changed = run("--until-decided", "--spending", "pocock")
    assert changed.exit_code == 2 and "no longer keeps its error rate" in changed.stderr

    # the report names the sequential test, its boundary and where each comparison crossed it
    report = CliRunner().invoke(
        main, ["report", "generated/arms", "--no-plot", "--metric", "eval_acc", "--compare", "base"]
    )
    assert report.exit_code == 0, report.output
    text = " ".join(report.output.split())
    assert "sequential test (run --until-decided" in text
    assert "good: better at look 2 of 4 (4 seeds per group): p" in text


def test_a_loss_without_mode_is_lowered_and_the_rule_records_min(arms):
    by_loss = [w if w != "eval_acc" else "eval_loss" for w in FIRST]
    result = run(*by_loss)
    assert result.exit_code == 0, result.output
    assert "good: better against base (sequential test)" in result.stdout  # its loss is the lower
    # the direction the name gave is said beside the verdicts, with how to turn it (it was not)
    said = "compared: `eval_loss` (final), min is better: `eval_loss` names something lowered; --mode max"
    assert said in result.stdout
    state = json.loads((arms / "generated/arms" / DECIDE_STATE_NAME).read_text())
    assert (state["rule"]["metric"], state["rule"]["mode"]) == ("eval_loss", "min")
    again = run("--until-decided")  # resumed: the recorded rule's direction
    assert "compared: `eval_loss` (final), min is better (the recorded rule's)" in again.stdout


def test_a_round_with_a_failed_run_takes_no_look_and_resumes_with_rerun_failed(arms):
    (arms / "FAIL").write_text("same_seed3")
    first = run(*FIRST)
    assert first.exit_code == 1, first.output
    state = json.loads((arms / "generated/arms" / DECIDE_STATE_NAME).read_text())
    assert [x["seeds"] for x in state["looks"]] == [2]  # round 2 did not finish: no look
    assert "round 2 did not finish" in first.stderr
    (arms / "FAIL").unlink()
    resumed = run("--until-decided", "--rerun-failed")
    assert resumed.exit_code == 0, resumed.output
    state = json.loads((arms / "generated/arms" / DECIDE_STATE_NAME).read_text())
    assert [x["seeds"] for x in state["looks"]] == [2, 4, 6, 8]
    started = starts(arms)
    assert started.count("same_seed3") == 2  # the failed attempt and its retry
    assert len(started) == len(set(started)) + 1


def test_options_that_cannot_hold_are_exit_2(arms):
    assert run("--compare", "base").exit_code == 2  # belongs to --until-decided
    assert run(*FIRST[:6], "--dry-run").exit_code == 0  # --metric without --until-decided only shows it
    only = run(*FIRST, "--only", "base_seed1")
    assert only.exit_code == 2 and "cannot be combined with --only" in only.stderr
    too_many = run(*FIRST, "--max-seeds", "9")
    assert too_many.exit_code == 2 and "has 8 seed(s) rendered" in too_many.stderr
    unknown = run(*FIRST[:-1], "bas")
    assert unknown.exit_code == 2 and "did you mean base" in unknown.stderr
    best = run(*FIRST, "--at", "best")
    assert best.exit_code == 2 and "biased upward" in best.stderr
    bad_at = run(*FIRST, "--at", "last:0")
    assert bad_at.exit_code == 2 and "--at last:0" in bad_at.stderr
    assert not (arms / "starts.log").exists()
    assert not (arms / "generated/arms" / DECIDE_STATE_NAME).exists()


def test_a_metric_no_run_logs_stops_after_the_first_round(arms):
    typo = [*FIRST]
    typo[typo.index("eval_acc")] = "eval_accc"
    result = run(*typo)
    assert result.exit_code == 2 and "no run of this round has a value of eval_accc" in result.stderr
    assert len(starts(arms)) == 6  # round 1 only: 2 seeds of 3 groups


@pytest.mark.parametrize(
    "content",
    [
        "not json",
        '{"version": 1, "rule": {"baseline": "base", "per_round": "2"}, "looks": []}',
        '{"version": 1, "rule": {"baseline": "base"}, "looks": [{"seeds": 2, "alpha": 0.01, '
        '"crossings": [{"name": "good", "n_arm": 2, "n_base": 2, "diff": 0.4, "p": "low", '
        '"boundary": 0.01, "verdict": "open"}]}]}',
        "link",
    ],
)
def test_a_damaged_record_is_exit_2_naming_it_and_runs_nothing(arms, content):
    state = arms / "generated/arms" / DECIDE_STATE_NAME
    if content == "link":
        (arms / "elsewhere.json").write_text('{"version": 1, "rule": {}, "looks": []}')
        state.symlink_to(arms / "elsewhere.json")
    else:
        state.write_text(content)
    result = run(*FIRST)
    assert result.exit_code == 2, result.output
    assert DECIDE_STATE_NAME in result.stderr and "Traceback" not in result.output
    assert not (arms / "starts.log").exists()


MID = "  mid:\n    arm.level: 0.518\n  same:\n"  # +0.018 in every seed: between the looks and fixed-n


def _mid_sweep(root: Path, spec: str) -> None:
    (root / "specs").mkdir()
    (root / "templates").mkdir()
    (root / "specs/arms.yaml").write_text(spec)
    (root / "templates/t.yaml.j2").write_text("{{ config | to_yaml }}\n")
    (root / "trainer.py").write_text(TRAINER)
    assert CliRunner().invoke(main, ["render", "specs/arms.yaml"]).exit_code == 0
    result = run(*FIRST)
    assert result.exit_code == 0, result.output


def _statistics(root: Path, *more: str) -> dict:
    out = root / "out"
    report = CliRunner().invoke(
        main,
        ["report", "generated/arms", "--no-plot", "--metric", "eval_acc", "--compare", "base", *more]
        + ["--format", "json", "--report-dir", str(out)],
    )
    assert report.exit_code == 0, report.output
    return json.loads((out / "statistics.json").read_text())


def test_the_report_table_gives_the_sequential_verdict_not_a_fixed_n_one(cli_cwd):
    # `mid` never crosses its boundary over the four looks, but the fixed-n test on the 8 seeds it
    # ran calls it better (p 0.02 under Holm's 0.025): the table said "better" beside the sequential
    # lines saying "no crossing", a verdict with no known error rate
    _mid_sweep(cli_cwd, SPEC.replace("  same:\n", MID))
    body = _statistics(cli_cwd)
    verdicts = {g["group"]: g["verdict"] for g in body["groups"]}
    assert verdicts == {"base": "baseline", "good": "better", "mid": "no evidence", "same": "no evidence"}
    said = " ".join(" ".join(body["notes"]).split())
    assert "the verdicts are the sequential test's (run --until-decided)" in said
    assert "would have said otherwise for mid (fixed-n: better)" in said
    # each interval is its arm's last look's repeated-confidence interval, so it agrees with the
    # verdict (before: mid's fixed-n interval excluded 0 beside "no evidence"), at 95% over the looks
    for g in body["groups"]:
        if g["verdict"] != "baseline":
            holds_zero = g["diff_ci_low"] <= 0 <= g["diff_ci_high"]
            assert holds_zero == (g["verdict"] == "no evidence"), g
            assert g["diff_ci_level"] == pytest.approx(0.95), g
    assert "are the looks' repeated-confidence intervals" in said
    # the best mean's test is a fixed-n one on the seeds the looks chose: it claimed "the best, with
    # that error rate", a rate it does not keep there; now it says why it is not run
    assert "better than every other group" not in said
    assert "which group is best is not tested: the seeds each group ran were chosen by" in said


def test_an_arm_the_last_look_could_not_test_cannot_be_decided():
    # accuracy at its cap in every seed of both groups: no test at any look, so the seeds spent
    # leave it undecidable, not "no evidence" of a difference (as report's table says)
    from sweepgen.cli._run_display import _open_lines
    from sweepgen.run.report.stats import sequential
    from sweepgen.run.report.stats.sequential_record import Look, Rule
    from sweepgen.run.sweep.decide import DecideResult

    crossings = (
        sequential.Crossing("capped", 4, 4, 0.0, None, 0.025, sequential.OPEN),
        sequential.Crossing("same", 4, 4, 0.01, 0.4, 0.05, sequential.OPEN),
    )
    result = DecideResult(0, Rule(baseline="base", max_seeds=4), [Look(4, 0.05, crossings)], 1)
    result.verdicts = {"capped": sequential.OPEN, "same": sequential.OPEN}
    lines = _open_lines(result, "against base")
    assert lines[0] == "no evidence within 4 seeds per group against base: same"
    assert lines[1].startswith("cannot decide within 4 seeds per group against base (no test (")
    assert lines[1].endswith("at the last look): capped") and len(lines) == 2


def test_held_out_seeds_keep_their_fixed_n_table(cli_cwd):
    # the looks tested every seed they ran; a report of the test seeds alone is another comparison,
    # whose table stays the fixed-n one (the sequential lines still say what the looks decided)
    split = "seed: {path: training.seed, tune: [1, 2, 3, 4], test: [5, 6, 7, 8]}"
    _mid_sweep(cli_cwd, SPEC.replace("  same:\n", MID).replace("seed: training.seed", split))
    body = _statistics(cli_cwd, "--seeds", "test")
    said = " ".join(" ".join(body["notes"]).split())
    assert "the verdicts are the sequential test's" not in said
    assert "the 1 without a value counted: not run, pruned or failed" in said  # good: decided on 1-4


def test_a_committed_sequential_test_is_never_replayed(arms):
    """A pull request that commits its own .sweepgen-decide.json (a look in it saying `same: better`)
    decided the arms of a reviewer's `run --until-decided` without running them: recorded looks are
    replayed only from a file git does not track."""
    git = shutil.which("git")
    assert git is not None, "the test image has git"
    assert run(*FIRST).exit_code == 0
    state = arms / "generated/arms" / DECIDE_STATE_NAME
    for args in (
        ["init", "-q"],
        ["add", str(state)],
        ["-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "pr"],
    ):
        subprocess.run([git, *args], cwd=arms, check=True, capture_output=True)
    started = starts(arms)
    again = run("--until-decided")
    assert again.exit_code == 2, again.output
    assert (
        "is committed to git and records the sequential test" in again.stderr and "4 look(s)" in again.stderr
    )
    assert "better against base" not in again.stdout and starts(arms) == started
    subprocess.run([git, "rm", "-q", "--cached", str(state)], cwd=arms, check=True)
    assert run("--until-decided").exit_code == 0  # this machine's own record: replayed
    state.chmod(0o666)  # a shared sweep folder's record: anyone could have written its looks
    planted = run("--until-decided")
    assert planted.exit_code == 2 and "not yours alone (writable by every user)" in planted.stderr, (
        planted.output
    )
    assert starts(arms) == started


def test_a_new_test_on_runs_that_already_have_values_says_its_error_rate_counts_it_alone(arms):
    # the test of a deleted record (or a report of a plain run) already looked at these values: a
    # new test of them spends alpha anew, so its "at most 0.05" holds for it alone; said at its start
    first = run(*FIRST)
    assert first.exit_code == 0, first.output
    assert "already have a value" not in first.stderr  # nothing ran before the first test
    (arms / "generated/arms" / DECIDE_STATE_NAME).unlink()
    again = run(*FIRST)
    assert again.exit_code == 0, again.output
    said = " ".join(again.stderr.split())
    assert "run(s) of this test's groups already have a value of the metric compared" in said
    assert "whose alpha this one does not count" in said
    assert len(starts(arms)) == len(set(starts(arms)))  # no run started twice


def test_looks_another_run_recorded_meanwhile_are_kept_not_written_over(arms, monkeypatch):
    """Two `run --until-decided` of one sweep: B ran the whole test while A waited for B's runs of
    round 2. A's older list of looks once replaced B's record (looks 3-4 and their verdicts lost
    where A died next); now A takes B's looks from the record, takes none again, starts nothing."""
    from sweepgen.run.sweep import decide

    assert run(*FIRST).exit_code == 0  # B: the whole test, 4 looks
    state_path = arms / "generated/arms" / DECIDE_STATE_NAME
    full = state_path.read_text()
    started = starts(arms)
    as_a_saw = json.loads(full)
    as_a_saw["looks"] = as_a_saw["looks"][:1]  # A began after B's first look
    state_path.write_text(json.dumps(as_a_saw))
    rounds: list[tuple[str, ...]] = []
    real = decide.run_sweep

    def beside_b(request, display):
        rounds.append(request.only)
        if len(rounds) > 1:  # old code: A goes on to round 3 and is interrupted there
            raise KeyboardInterrupt
        out = real(request, display)  # A's round 2: its runs are B's, waited for, none started here
        state_path.write_text(full)  # meanwhile B recorded looks 2-4
        return out

    monkeypatch.setattr(decide, "run_sweep", beside_b)
    a = run("--until-decided")
    assert a.exit_code == 0, a.output
    assert len(rounds) == 1
    assert [x["seeds"] for x in json.loads(state_path.read_text())["looks"]] == [2, 4, 6, 8]
    assert "recorded by another `sweepgen run --until-decided`" in a.stderr
    assert "good: better against base (sequential test)" in a.stdout
    assert starts(arms) == started  # no run started twice


# `sweepgen run --until-decided` SIGKILLed at a known point: before the look of round 2 is recorded
# (its runs all finished), or after it is recorded and before round 3's runs start
KILLED_AT = """\
import os, signal, sys
from sweepgen.run.sweep import decide
where, rounds = sys.argv[1], []
real_look, real_round = decide._look, decide.run_sweep
def look(*args):
    if where == "look" and args[4] == 4:  # round 2's runs all finished: its look taken, not recorded
        os.kill(os.getpid(), signal.SIGKILL)
    return real_look(*args)
def round_(*args):
    rounds.append(1)
    if where == "round" and len(rounds) == 3:  # look 2 recorded, round 3's runs not started
        os.kill(os.getpid(), signal.SIGKILL)
    return real_round(*args)
decide._look, decide.run_sweep = look, round_
from sweepgen.cli import main
main(["run", "generated/arms", *sys.argv[2:]], prog_name="sweepgen")
"""


@pytest.mark.parametrize("where", ["look", "round"])
def test_a_run_killed_between_looks_runs_each_seed_once_and_counts_each_look_once(arms, where):
    (arms / "killed_at.py").write_text(KILLED_AT)
    killed = subprocess.run(
        [sys.executable, "killed_at.py", where, *FIRST], cwd=arms, capture_output=True, text=True, timeout=600
    )
    assert killed.returncode == -9, killed.stderr
    state_path = arms / "generated/arms" / DECIDE_STATE_NAME
    looks = [x["seeds"] for x in json.loads(state_path.read_text())["looks"]]
    assert looks == ([2] if where == "look" else [2, 4])
    again = run("--until-decided")  # in-process: the process that died is the one above
    assert again.exit_code == 0, again.output
    started = starts(arms)
    assert len(started) == len(set(started))  # every run started exactly once, whoever died
    assert sorted(s for s in started if s.startswith("good")) == [f"good_seed{i}" for i in range(1, 5)]
    state = json.loads(state_path.read_text())
    assert [x["seeds"] for x in state["looks"]] == [2, 4, 6, 8]  # each look once
    assert sum(x["alpha"] for x in state["looks"]) == pytest.approx(0.05)
    assert "good: better against base (sequential test)" in again.stdout
    status = CliRunner().invoke(main, ["status", "generated/arms"])
    assert status.exit_code == 0, status.output


def test_an_arm_whose_runs_trained_to_another_step_is_not_decided_by_a_look(arms):
    """The report calls runs that logged the metric to different last steps "cannot decide" (their
    values come from different lengths of training); the looks did not, and `good`, stopped one step
    later than `base`, was called better by the test the report then refused: the looks agree now."""
    (arms / "trainer.py").write_text(TRAINER.replace('{"step": 1,', '{"step": 2 if acc > 0.8 else 1,'))
    result = run(*FIRST, "--max-seeds", "4")
    assert result.exit_code == 0, result.output
    text = " ".join(result.stdout.split())
    assert "good: better" not in text
    assert "good: cannot decide at this look (open): the runs of these two groups logged `eval_acc`" in text
    assert "cannot decide within 4 seeds per group against base: good: the runs of these two groups" in text
    state = json.loads((arms / "generated/arms" / DECIDE_STATE_NAME).read_text())
    good = [c for x in state["looks"] for c in x["crossings"] if c["name"] == "good"]
    assert [(c["verdict"], c["p"]) for c in good] == [("open", None), ("open", None)]
    assert "different last steps (1, 2)" in state["looks"][-1]["reasons"]["good"]  # beside, not in, it
    # the report's lines of the recorded test say it too, beside its own "cannot decide"
    report = CliRunner().invoke(
        main, ["report", "generated/arms", "--no-plot", "--metric", "eval_acc", "--compare", "base"]
    )
    assert report.exit_code == 0, report.output
    assert "good: cannot decide at look 2 of 2 (4 seeds per group)" in " ".join(report.output.split())


def test_the_looks_at_last_k_test_the_mean_of_each_runs_last_k_values(arms):
    # --at last:K through the looks: each run's value is the mean of its last K logged values, the
    # same value `report --at last:K` compares; here a run's step 1 is 2 x acc - 0.5 and its step 2
    # acc, so at last:2 every difference is 1.5 x the final one
    two_steps = TRAINER.replace(
        '(out / "metrics.jsonl").write_text(json.dumps({"step": 1, "eval_acc": acc, '
        '"eval_loss": 1 - acc}) + "\\n")',
        'rows = [{"step": 1, "eval_acc": 2 * acc - 0.5}, {"step": 2, "eval_acc": acc}]\n'
        '(out / "metrics.jsonl").write_text("".join(json.dumps(r) + "\\n" for r in rows))',
    )
    assert two_steps != TRAINER
    (arms / "trainer.py").write_text(two_steps)
    result = run(*FIRST, "--at", "last:2", "--max-seeds", "2")
    assert result.exit_code == 0, result.output
    state = json.loads((arms / "generated/arms" / DECIDE_STATE_NAME).read_text())
    assert state["rule"]["at"] == "last:2"
    (look,) = state["looks"]
    noise = [0.01, -0.02]
    final = {lvl: sum(lvl + n for n in noise) / 2 for lvl in (0.5, 0.9, 0.51)}
    diffs = {c["name"]: c["diff"] for c in look["crossings"]}
    assert diffs["good"] == pytest.approx(1.5 * (final[0.9] - final[0.5]))
    assert diffs["same"] == pytest.approx(1.5 * (final[0.51] - final[0.5]))
    # the report of the same value shows the looks; of the final value, says they compared last:2
    args = ["report", "generated/arms", "--no-plot", "--metric", "eval_acc", "--compare", "base"]
    same = " ".join(CliRunner().invoke(main, [*args, "--at", "last:2"]).output.split())
    assert "the verdicts are the sequential test's (run --until-decided)" in same
    assert "note: sequential test (run --until-decided, obf alpha-spending" in same
    other = " ".join(CliRunner().invoke(main, args).output.split())
    assert "comparing eval_acc (last:2, max is better) against base" in other
    assert "the verdicts are the sequential test's" not in other
