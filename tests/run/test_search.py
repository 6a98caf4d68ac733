"""Adaptive search on the local executor with a fast fake trainer: a known objective plus
seeded noise, logged step by step. Real processes (the sweepgen CLI, the trainer), a real study."""

from __future__ import annotations

import json
import math
import random
import signal
import time
from pathlib import Path
from typing import get_args

import optuna
import pytest
from search_support import (
    PRUNED_BASE,
    PRUNED_SEARCH,
    RUN_ARGS,
    assert_t1_pruned_and_stopped,
    cli,
    kill_run_once_trial_trains,
    logged_steps,
    study,
    sweepgen,
    write_search_project,
)

from sweepgen import paths
from sweepgen.compile.output.lockfile import lock
from sweepgen.compile.spec.sampling.search_block import PruneMethod, Sampler
from sweepgen.run.core.base import RunState, read_status
from sweepgen.run.search import best_value

SWEEP = Path("generated") / "fake_search"


def _finished_states(root: Path) -> list[str]:
    return [t.state.name for t in study(root).get_trials() if t.state.name != "RUNNING"]


def _run(root: Path, *extra: str):
    done = sweepgen(root, "run", str(SWEEP), *RUN_ARGS, *extra)
    assert "Traceback" not in done.stderr, done.stderr
    return done


def test_render_writes_the_sweep_with_no_trials(tmp_path):
    write_search_project(tmp_path, {})
    done = cli(tmp_path, "render", "specs/s.yaml")
    assert done.returncode == 0, done.stderr
    recorded = lock.read(str(tmp_path / SWEEP), "x")
    assert recorded is not None and recorded.files == []
    assert not (tmp_path / SWEEP / ".search").exists()  # the study is made by the first `run`


@pytest.mark.parametrize(
    ("search", "extra", "message"),
    [
        ({"axes": {"xx": {"uniform": [0.0, 1.0]}}}, {}, "did you mean"),
        ({}, {"grid": {"seed": [0, 1]}}, "cannot also have `grid:`"),
        ({"repeats": 2}, {}, "needs `search.seed_path`"),
        ({}, {"constraints": [{"expr": "x > 2", "message": "never"}]}, "no probed point"),
        ({}, {"schema": "s.json"}, "search probe at"),
    ],
    ids=["axis-typo", "with-grid", "repeats-without-seed", "constraints-admit-nothing", "schema-at-bound"],
)
def test_render_refuses_a_search_that_cannot_work(tmp_path, search, extra, message):
    (tmp_path / "specs").mkdir()
    # the schema refuses x above 0.9: the high bound (1.0) is probed and fails
    schema = {"type": "object", "properties": {"x": {"type": "number", "maximum": 0.9}}}
    (tmp_path / "specs" / "s.json").write_text(json.dumps(schema))
    write_search_project(tmp_path, search, **extra)
    done = cli(tmp_path, "render", "specs/s.yaml")
    assert done.returncode == 2, done.stdout
    assert message in done.stderr and "specs/s.yaml:" in done.stderr and "Traceback" not in done.stderr


def test_exactly_n_trials_each_differing_from_the_base_only_in_the_axes(tmp_path):
    write_search_project(tmp_path, {"n": 5, "sampler": "random"})
    assert cli(tmp_path, "render", "specs/s.yaml").returncode == 0
    done = _run(tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    trials = study(tmp_path).get_trials()
    assert [t.state.name for t in trials] == ["COMPLETE"] * 5
    recorded = lock.read(str(tmp_path / SWEEP), "x")
    assert recorded is not None and [f.variant for f in recorded.files] == [f"t000{i}" for i in range(5)]
    for trial, entry in zip(trials, recorded.files):
        # the only differences: the two axes (layer search) and the derived output_dir
        assert set(entry.set) == {"x", "y", "output_dir"}
        assert {entry.layers[p] for p in ("x", "y")} == {"search"} and entry.layers["output_dir"] == "derived"
        assert entry.set["x"] == trial.params["x"] and entry.set["y"] == trial.params["y"]
        summary = json.loads((tmp_path / "runs" / "fake_search" / entry.variant / "summary.json").read_text())
        assert summary["score"] == pytest.approx(trial.value)
    # a second run has nothing to do; `check` knows the trials as generated files
    again = _run(tmp_path)
    assert again.returncode == 0 and "started" not in again.stdout
    assert len(study(tmp_path).get_trials()) == 5
    checked = cli(tmp_path, "check", "specs/s.yaml")
    assert checked.returncode == 0, checked.stdout + checked.stderr
    (tmp_path / SWEEP / "t0001.yaml").write_text("x: 1\n")
    edited = cli(tmp_path, "check", "specs/s.yaml")
    assert edited.returncode == 1 and "t0001.yaml" in edited.stdout + edited.stderr


def test_each_trial_is_drawn_with_the_seed_of_its_own_number(tmp_path):
    """Trial k's point is the spec's sampler seeded by (seed, k), whatever ran beside it: with two
    slots, a count of finished + running trials gave trial 2 the seed of number 3 and, once two trials
    ended together, gave trial 3 that same seed again (two trials, one point)."""
    # trials of uneven length (steps is an axis), so a slot frees while the other trial runs
    axes = {"x": {"uniform": [0.0, 1.0]}, "y": {"uniform": [0.0, 1.0]}, "steps": {"int_uniform": [2, 16]}}
    write_search_project(tmp_path, {"n": 6, "parallel": 2, "sampler": "random", "seed": 7, "axes": axes})
    assert cli(tmp_path, "render", "specs/s.yaml").returncode == 0
    done = _run(tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    trials = study(tmp_path).get_trials()
    dists = {name: optuna.distributions.FloatDistribution(0.0, 1.0) for name in ("x", "y")}
    dists["steps"] = optuna.distributions.IntDistribution(2, 16)
    for trial in trials:
        alone = optuna.create_study(sampler=optuna.samplers.RandomSampler(seed=7 * 1_000_003 + trial.number))
        assert alone.ask(dists).params == trial.params, trial.number
    assert len({tuple(t.params.values()) for t in trials}) == 6


def test_a_point_failing_a_constraint_is_told_failed_and_never_run(tmp_path):
    constraint = {"expr": "x < 0.5", "message": "x stays below one half"}
    write_search_project(tmp_path, {"n": 8, "sampler": "random"}, constraints=[constraint])
    assert cli(tmp_path, "render", "specs/s.yaml").returncode == 0
    _run(tmp_path)
    trials = study(tmp_path).get_trials()
    assert len(trials) == 8
    refused = [t for t in trials if t.params["x"] >= 0.5]
    assert refused, "the seeded draw has points on both sides of the constraint"
    for t in trials:
        name = f"t{t.number:04d}"
        if t in refused:
            assert t.state.name == "FAIL" and "x stays below one half" in t.user_attrs["sweepgen_reason"]
            assert not (tmp_path / "runs" / "fake_search" / name).exists()
            assert not (tmp_path / SWEEP / f"{name}.yaml").exists()
        else:
            assert t.state.name == "COMPLETE"
    shown = cli(tmp_path, "status", str(SWEEP))  # refused points have no run: status names them
    assert shown.returncode == 0, shown.stdout + shown.stderr
    assert f"t{refused[0].number:04d} failed: refused before it ran" in shown.stdout


def test_pruned_trials_are_stopped_with_their_checkpoint_and_marked(tmp_path):
    base = {"x": 0.5, "y": 0.5, "steps": 30, "step_s": 0.05, "seed": 0, "noise": 0.0, "output_dir": None}
    prune = {"method": "asha", "min_steps": 2, "reduction": 3}
    write_search_project(tmp_path, {"n": 8, "parallel": 2, "sampler": "random", "prune": prune}, base=base)
    assert cli(tmp_path, "render", "specs/s.yaml").returncode == 0
    done = _run(tmp_path)
    trials = study(tmp_path).get_trials()
    assert len(trials) == 8 and all(t.state.name in ("COMPLETE", "PRUNED") for t in trials)
    pruned = [t for t in trials if t.state.name == "PRUNED"]
    assert pruned, done.stdout
    for t in pruned:
        run = tmp_path / "runs" / "fake_search" / f"t{t.number:04d}"
        status = read_status(run)
        assert status is not None and status.state is RunState.CANCELLED
        assert status.reason is not None and status.reason.startswith("pruned at step")
        steps = [json.loads(line)["step"] for line in (run / "metrics.jsonl").read_text().splitlines()]
        assert steps[-1] < 30 and not (run / "summary.json").exists()
        assert json.loads((run / "checkpoint.json").read_text())["step"] == steps[-1]  # SIGTERM: saved
        assert "pruned at step" in t.user_attrs["sweepgen_reason"]


def _assert_exactly_once(root: Path, n: int, last_step: int = 6) -> None:
    trials = study(root).get_trials()
    assert len(trials) == n, [(t.number, t.state.name) for t in trials]
    assert sorted(t.number for t in trials) == list(range(n))
    # nothing prunes or refuses here, and the fake trainer never fails: every trial completes
    assert all(t.state.name == "COMPLETE" for t in trials), [(t.number, t.user_attrs) for t in trials]
    for t in trials:
        run = root / "runs" / "fake_search" / f"t{t.number:04d}"
        steps = [json.loads(line)["step"] for line in (run / "metrics.jsonl").read_text().splitlines()]
        assert steps == sorted(set(steps)), f"{run.name} logged a step twice: {steps}"
        assert steps[-1] == last_step


def test_sigkill_at_random_moments_then_run_again_reaches_exactly_n(tmp_path):
    n = 6
    write_search_project(tmp_path, {"n": n, "parallel": 2})
    assert cli(tmp_path, "render", "specs/s.yaml").returncode == 0
    rng = random.Random(23)
    for _ in range(4):
        proc = sweepgen(tmp_path, "run", str(SWEEP), *RUN_ARGS, wait=False)
        time.sleep(rng.uniform(0.3, 2.0))
        proc.send_signal(signal.SIGKILL)  # the controller only: its trainers go on, as after a crash
        proc.communicate()
    done = _run(tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    _assert_exactly_once(tmp_path, n)
    checked = cli(tmp_path, "check", "specs/s.yaml")
    assert checked.returncode == 0, checked.stdout + checked.stderr


def test_two_runs_share_the_study_without_duplicates(tmp_path):
    n = 6
    write_search_project(tmp_path, {"n": n, "parallel": 2})
    assert cli(tmp_path, "render", "specs/s.yaml").returncode == 0
    procs = [sweepgen(tmp_path, "run", str(SWEEP), *RUN_ARGS, wait=False) for _ in range(2)]
    for proc in procs:
        out, err = proc.communicate(timeout=120)
        assert proc.returncode == 0 and "Traceback" not in err, out + err
    _assert_exactly_once(tmp_path, n)
    for t in study(tmp_path).get_trials():
        starts = (tmp_path / "runs" / "fake_search" / f"t{t.number:04d}" / "starts.jsonl").read_text()
        assert len(starts.splitlines()) == 1, f"t{t.number:04d} started more than once"


def test_the_study_reopens_in_optuna_with_the_best_trial(tmp_path):
    write_search_project(tmp_path, {"n": 4})
    assert cli(tmp_path, "render", "specs/s.yaml").returncode == 0
    done = _run(tmp_path)
    best = study(tmp_path).best_trial
    assert f"best: t{best.number:04d}" in done.stdout
    assert set(best.params) == {"x", "y"} and best.value == max(t.value for t in study(tmp_path).get_trials())


def test_a_journal_line_cut_by_a_kill_is_dropped_before_the_next_append(tmp_path):
    import optuna

    from sweepgen.compile.spec.sampling.search_block import SearchBlock
    from sweepgen.run.search import study as search_study

    block = SearchBlock.model_validate({"n": 3, "metric": "m", "axes": {"x": {"uniform": [0.0, 1.0]}}})
    first = search_study.open_study(tmp_path, block)
    first.tell(first.ask({"x": optuna.distributions.FloatDistribution(0, 1)}), 0.5)
    journal = search_study.journal_path(tmp_path)
    with open(journal, "ab") as fh:
        fh.write(b'{"op_code": 4, "worker_id": "cut-by-a-ki')  # a writer SIGKILLed mid-append
    again = search_study.open_study(tmp_path, block)
    again.tell(again.ask({"x": optuna.distributions.FloatDistribution(0, 1)}), 0.7)
    reread = search_study.load_study(tmp_path)
    assert reread is not None and [t.value for t in reread.get_trials()] == [0.5, 0.7]


def test_the_lock_written_trial_by_trial_is_byte_for_byte_the_pipeline_lock():
    from sweepgen.compile.output.lockfile import lock_digest
    from sweepgen.compile.output.lockfile.lock import Lock
    from sweepgen.run.search.lock import LockText

    base = {"x": 0.5, "y": 0.5, "seed": 0, "output_dir": None}
    head = Lock(3, "0.1.0", "s", "specs/s.yaml", "ab", {"specs/s.yaml": "ab"}, [], None, base, [])
    text = LockText(head)
    entries = []
    for i, (x, layers) in enumerate(
        [(0.1, "search"), (0.1, "search"), (0.7, "search:seed"), (0.2, "search"), (math.inf, "search")]
    ):  # the last: a value JSON cannot spell, tagged as lock.dumps tags it
        config = {**base, "x": x, "y": 0.25 * i, "output_dir": f"runs/t{i}", "seed": i}
        entry = lock.entry_for(
            path=f"t{i:04d}.yaml",
            variant=f"t{i:04d}",
            run_name=f"t{i:04d}",
            sha256=str(i),
            layers={"x": "search", "y": "search", "seed": layers, "output_dir": "derived"},
            config=config,
            differing=sorted(paths.diff_at(base, config, (("x",), ("y",), ("seed",), ("output_dir",)))),
            run_dir=f"runs/t{i}",
        )
        entries.append(entry)
        text.put([entry])
        # the rule of pipeline.varying_paths: a path whose value is not the same in every entry
        values = {p: [e.set.get(p, base.get(p)) for e in entries] for p in ("x", "y", "seed", "output_dir")}
        varying = sorted(p for p, vs in values.items() if len({repr(v) for v in vs}) > 1)
        expected = lock_digest.seal(
            lock.dumps(
                lock.build(
                    sweep="s",
                    spec="specs/s.yaml",
                    spec_sha256="ab",
                    inputs={"specs/s.yaml": "ab"},
                    varying=varying,
                    base=base,
                    files=sorted(entries, key=lambda e: e.variant),
                    resources=None,
                )
            )
        )
        assert text.text() == expected, i


def test_repeats_run_each_trial_with_k_seeds_and_tell_the_mean(tmp_path):
    write_search_project(
        tmp_path, {"n": 2, "parallel": 1, "repeats": 2, "seed_path": "seed", "sampler": "random"}
    )
    assert cli(tmp_path, "render", "specs/s.yaml").returncode == 0
    done = _run(tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    recorded = lock.read(str(tmp_path / SWEEP), "x")
    assert recorded is not None
    assert [f.variant for f in recorded.files] == ["t0000_r0", "t0000_r1", "t0001_r0", "t0001_r1"]
    for t in study(tmp_path).get_trials():
        finals = []
        for r in (0, 1):
            entry = next(f for f in recorded.files if f.variant == f"t{t.number:04d}_r{r}")
            assert recorded.config(entry)["seed"] == r and entry.layers["seed"] == "search:seed"
            run = tmp_path / "runs" / "fake_search" / entry.variant
            finals.append(json.loads((run / "summary.json").read_text())["score"])
        assert finals[0] != finals[1]  # the seeds give different noise
        assert t.value == pytest.approx(sum(finals) / 2)
        assert t.user_attrs["sweepgen_values"] == pytest.approx(finals)
    shown = cli(tmp_path, "status", str(SWEEP))
    assert shown.returncode == 0 and "search: 2/2 trials finished (2 complete" in shown.stdout
    best = max(study(tmp_path).get_trials(), key=lambda t: t.value)
    low, high = best_value.interval(best.user_attrs["sweepgen_values"], family=2)
    shown_interval = f"mean of 2 seeds; 95% interval [{low:.6g}, {high:.6g}], wide enough for all 2 trials"
    assert shown_interval in shown.stdout


@pytest.mark.parametrize(
    "sampler",  # Optuna's GP sampler runs on torch: the full lane
    [pytest.param(s, marks=pytest.mark.train) if s == "gp" else s for s in get_args(Sampler)],
)
@pytest.mark.parametrize("method", get_args(PruneMethod))
def test_every_sampler_and_pruner_of_the_block_drives_a_study(sampler, method):
    import optuna

    from sweepgen.compile.spec.sampling.search_block import SearchBlock
    from sweepgen.run.search import study as search_study

    block = SearchBlock.model_validate(
        {
            "n": 6,
            "parallel": 2,
            "sampler": sampler,
            "metric": "m",
            "axes": {"x": {"uniform": [0.0, 1.0]}, "k": {"int_uniform": [1, 4]}, "c": {"choice": ["a", "b"]}},
            "prune": {"method": method, "min_steps": 2},
        }
    )
    study = optuna.create_study(direction="maximize", pruner=search_study.pruner(block))
    for i in range(6):
        study.sampler = search_study.sampler(block, salt=i)
        trial = study.ask(search_study.distributions(block))
        assert (
            0.0 <= trial.params["x"] <= 1.0 and trial.params["k"] in range(1, 5) and trial.params["c"] in "ab"
        )
        for step in range(1, 4):
            trial.report(trial.params["x"] * step, step)
        study.tell(trial, trial.params["x"])
    assert len(study.trials) == 6


def test_ctrl_c_stops_the_trials_with_a_checkpoint_and_the_next_run_resumes_them(tmp_path):
    # 200 steps of 0.05 s: still training when the checkpoints are seen, however loaded the machine
    base = {"x": 0.5, "y": 0.5, "steps": 200, "step_s": 0.05, "seed": 0, "noise": 0.0, "output_dir": None}
    write_search_project(tmp_path, {"n": 3, "parallel": 2, "sampler": "random"}, base=base)
    assert cli(tmp_path, "render", "specs/s.yaml").returncode == 0
    proc = sweepgen(tmp_path, "run", str(SWEEP), *RUN_ARGS, wait=False)
    runs = tmp_path / "runs" / "fake_search"
    deadline = time.monotonic() + 120

    # the state the stop must keep: a step trained (SIGTERM then checkpoints it), never a fixed sleep
    while not all(logged_steps(runs / f"t000{i}") for i in (0, 1)):
        assert time.monotonic() < deadline and proc.poll() is None, "the first two trials never trained"
        time.sleep(0.05)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, out + err
    assert [t.state.name for t in study(tmp_path).get_trials()] == ["RUNNING", "RUNNING"]
    for i in (0, 1):
        assert json.loads((runs / f"t000{i}" / "checkpoint.json").read_text())["step"] > 0
    done = _run(tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    _assert_exactly_once(tmp_path, 3, last_step=200)
    for i in (0, 1):  # resumed from their checkpoints, in their run directories
        starts = [json.loads(line) for line in (runs / f"t000{i}" / "starts.jsonl").read_text().splitlines()]
        assert len(starts) == 2 and starts[1]["from_step"] > 0


def test_a_trial_re_attached_after_its_controller_died_is_still_pruned_and_stopped(tmp_path):
    # the first controller is SIGKILLed while t1 trains, before its rung; the next `run` re-attaches
    # t1 (its trainer outlived the controller), reports its steps and stops it when ASHA prunes it.
    # 100 steps: t1 must still train when the next `run` (its start-up slow on a loaded machine)
    # reads its steps; a run that finished first is pruned at its rung all the same, but not stopped
    write_search_project(tmp_path, PRUNED_SEARCH, base={**PRUNED_BASE, "steps": 100})
    assert cli(tmp_path, "render", "specs/s.yaml").returncode == 0
    seen = kill_run_once_trial_trains(tmp_path, "t0001", *RUN_ARGS)
    assert seen[-1] < 10, "the controller must die before t1 reaches the rung"
    done = _run(tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "t0001: taken over from a stopped controller" in done.stdout
    assert "t0001: pruned at step 10 (asha)" in done.stdout  # its rung, however late it was read
    assert_t1_pruned_and_stopped(tmp_path, done.stdout, steps_all=100)
    shown = cli(tmp_path, "status", str(SWEEP))
    assert shown.returncode == 0 and "PRUNED" in shown.stdout, shown.stdout + shown.stderr


def test_a_trial_whose_controller_died_inside_ask_gets_the_rest_of_its_point(tmp_path):
    # Optuna's ask writes the new trial, then each param, as journal lines of their own: a SIGKILL in
    # between leaves a running trial with part of its point; the next `run` draws the rest
    from sweepgen.compile.spec.sampling.search_block import SearchBlock
    from sweepgen.run.search import study as search_study

    write_search_project(tmp_path, {"n": 3, "sampler": "random"})
    assert cli(tmp_path, "render", "specs/s.yaml").returncode == 0
    axes = {"x": {"uniform": [0.0, 1.0]}, "y": {"uniform": [0.0, 1.0]}}
    block = SearchBlock.model_validate({"n": 3, "metric": "score", "mode": "max", "axes": axes})
    cut = search_study.open_study(tmp_path / SWEEP, block).ask()
    x = cut.suggest_float("x", 0.0, 1.0)  # the controller died before y was drawn
    done = _run(tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    trials = study(tmp_path).get_trials()
    assert [t.state.name for t in trials] == ["COMPLETE"] * 3
    assert trials[0].params["x"] == x and 0.0 <= trials[0].params["y"] <= 1.0
    config = lock.read(str(tmp_path / SWEEP), "x")
    assert config is not None and config.files[0].set["y"] == trials[0].params["y"]


def test_a_trial_pruned_by_a_controller_killed_before_it_saw_the_stop_is_never_resumed(tmp_path):
    # half-second steps: the trainer takes up to one step to stop after SIGTERM, and the controller
    # is SIGKILLed as soon as it says it pruned t1, so it never records the run's end; the decision
    # is in the study, so the next `run` records t1 pruned instead of resuming it from its checkpoint
    base = {**PRUNED_BASE, "steps": 16, "step_s": 0.5}
    write_search_project(tmp_path, PRUNED_SEARCH, base=base)
    assert cli(tmp_path, "render", "specs/s.yaml").returncode == 0
    proc = sweepgen(tmp_path, "run", str(SWEEP), *RUN_ARGS, wait=False)
    assert proc.stdout is not None
    seen = []
    for line in proc.stdout:
        seen.append(line)
        if line.startswith("t0001: pruned at step"):
            proc.send_signal(signal.SIGKILL)
            break
    proc.communicate()
    assert proc.returncode == -signal.SIGKILL, "".join(seen)
    done = _run(tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "t0001: taken over from a stopped controller" in done.stdout
    assert_t1_pruned_and_stopped(tmp_path, done.stdout, steps_all=16)


def test_a_run_that_finished_before_its_trials_pruning_says_so_in_status(tmp_path):
    """Runs that finish between two polls of their controller (fast trials): the pruner still
    decides at the step it would have stopped them (Optuna's semantics), so the trial is pruned
    while its run finished. The run keeps its true end, and says why the search does not count it;
    before, `status` listed it as a plain FINISHED run beside a summary counting it pruned."""
    base = {"x": 0.5, "y": 0.5, "steps": 6, "step_s": 0.0, "seed": 0, "noise": 0.0, "output_dir": None}
    prune = {"method": "asha", "min_steps": 1, "reduction": 2}
    search = {"n": 6, "parallel": 1, "sampler": "random", "prune": prune}
    write_search_project(tmp_path, search, base=base)
    assert cli(tmp_path, "render", "specs/s.yaml").returncode == 0
    done = _run(tmp_path)
    pruned = [t for t in study(tmp_path).get_trials() if t.state.name == "PRUNED"]
    outrun = []
    for t in pruned:
        status = read_status(tmp_path / "runs" / "fake_search" / f"t{t.number:04d}")
        assert status is not None, t.number
        if status.state is RunState.FINISHED:
            outrun.append(t.number)
            assert "the trial is pruned at step" in (status.reason or ""), status
        else:
            assert status.state is RunState.CANCELLED and status.reason.startswith("pruned at step"), status
    assert outrun, done.stdout  # (instant runs: each pruned trial's run ended before its poll)
    shown = cli(tmp_path, "status", str(SWEEP), "--format", "json")
    rows = {row["run"]: row for row in json.loads(shown.stdout)}
    for number in outrun:
        assert "pruned" in rows[f"t{number:04d}"]["reason"], rows


@pytest.mark.parametrize("prune", [None, {"method": "median", "min_steps": 1}])
def test_a_trials_unreadable_trainer_state_fails_that_trial_not_the_search(tmp_path, prune):
    """A trial whose trainer left a broken trainer_state.json ended the whole search (exit 2 at its
    tell, or at a pruner's poll); now that trial fails with the file's reason and the others run."""
    base = {"x": 0.5, "y": 0.5, "steps": 3, "step_s": 0.01, "seed": 0, "noise": 0.0, "output_dir": None}
    base["garbage_state_below"] = 0.5
    search: dict = {"n": 6, "sampler": "random"} | ({"prune": prune} if prune else {})
    write_search_project(tmp_path, search, base=base)
    assert cli(tmp_path, "render", "specs/s.yaml").returncode == 0
    done = _run(tmp_path)
    trials = study(tmp_path).get_trials()
    assert len(trials) == 6, done.stdout + done.stderr
    broken = [t for t in trials if t.params["x"] < 0.5]
    assert broken and len(broken) < 6, "the seeded draw has points on both sides of x = 0.5"
    for t in trials:
        if t in broken:
            assert t.state.name == "FAIL", (t.number, t.state.name)
            assert "trainer_state.json" in t.user_attrs["sweepgen_reason"]
        else:
            assert t.state.name in ("COMPLETE", "PRUNED"), (t.number, t.state.name)
