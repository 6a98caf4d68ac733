"""The search controller decides as Optuna used directly decides: the real SearchController (study,
asks, renders, reports, pruner, tells) in this process, with an executor whose trainer logs every
step at once (the whole curve is on disk when the controller first looks), so any decision that
depends on when the controller polls shows up as a difference from Optuna's own on the same values.
NaN and infinite values are told as Optuna tells them."""

from __future__ import annotations

import json
import math
import os
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import optuna
import pytest
from search_support import cli, write_search_project

from sweepgen.compile.spec.model import load_spec
from sweepgen.run.core.base import Executor, ExecutorOptions, RunState, RunStatus, RunTask
from sweepgen.run.core.plan.tasks import read_lock
from sweepgen.run.search import stop as search_stop
from sweepgen.run.search.controller import OWNER_ATTR, SearchController
from sweepgen.run.search.trials import TrialRenderer

SWEEP = Path("generated") / "fake_search"
STEPS = 30
Curve = Callable[[RunTask], list[float]]  # a run's metric at steps 1..len


def noisy_curve(task: RunTask) -> list[float]:
    """A rising curve toward the fake objective, with noise large enough that rungs reorder trials."""
    x, y = task.config["x"], task.config["y"]
    target = 1.0 - (x - 0.3) ** 2 - (y - 0.7) ** 2
    rng = __import__("random").Random(int(x * 1e9) ^ int(y * 1e9))
    return [target * (1 - math.exp(-s / 6)) + rng.gauss(0, 0.05) for s in range(1, STEPS + 1)]


class BurstExecutor(Executor):
    """Each run logs its whole curve at once and finishes, before the controller's next poll."""

    name = "burst"
    curve: Curve = staticmethod(noisy_curve)

    def __init__(self, options: ExecutorOptions) -> None:
        super().__init__(options)
        self._status: dict[str, RunStatus] = {}
        self.hold = False  # True: runs stay RUNNING (nothing logged) until released

    def describe(self, tasks: Sequence[RunTask]) -> list[str]:
        return []

    def start(self, tasks: Sequence[RunTask], planned: Mapping[str, RunStatus | None] | None = None) -> None:
        for t in tasks:
            t.run_dir.mkdir(parents=True, exist_ok=True)
            if self.hold:
                self._status[t.name] = RunStatus(RunState.RUNNING, "local")
                continue
            lines = [json.dumps({"step": s, "score": v}) for s, v in enumerate(type(self).curve(t), 1)]
            (t.run_dir / "metrics.jsonl").write_text("\n".join(lines) + "\n")
            (t.run_dir / "summary.json").write_text("{}")
            self._status[t.name] = RunStatus(RunState.FINISHED, "local", exit_code=0)

    def poll(self) -> dict[str, RunStatus]:
        return dict(self._status)

    def done(self) -> bool:
        return all(s.state is not RunState.RUNNING for s in self._status.values())

    def cancel(self) -> None:
        self.cancel_all("cancelled")

    def cancel_all(self, reason: str) -> None:
        for name, s in self._status.items():
            if s.state is RunState.RUNNING:
                self._status[name] = RunStatus(RunState.CANCELLED, "local", reason=reason)

    def stop(self, names: Sequence[str], reason: str) -> None:
        for name in names:
            self._status[name] = RunStatus(RunState.CANCELLED, "local", reason=reason)

    def wait(self, timeout_s: float) -> None:
        return None

    @classmethod
    def is_alive(cls, status: RunStatus) -> bool:
        return False


def _controller(
    root: Path,
    search: dict[str, Any],
    monkeypatch: pytest.MonkeyPatch,
    executor_type: type[BurstExecutor] = BurstExecutor,
) -> SearchController:
    monkeypatch.chdir(root)
    spec_path = write_search_project(root, search)
    done = cli(root, "render", str(spec_path))
    assert done.returncode == 0, done.stderr
    spec = load_spec(str(spec_path), "generated")
    renderer = TrialRenderer(SWEEP, spec, command=("python", "{config}"), done_file="summary.json")
    options = ExecutorOptions(sweep_dir=SWEEP, lock=read_lock(SWEEP))
    return SearchController(SWEEP, spec, lambda: executor_type(options), renderer)


def _drive(controller: SearchController, limit: int = 10_000) -> None:
    for _ in range(limit):
        if not controller.step():
            return
    raise AssertionError("the search did not end")


def _optuna_direct(
    curves: list[list[float]], pruner: optuna.pruners.BasePruner, direction: str = "maximize"
) -> optuna.Study:
    """The same curves, one trial after another, through Optuna's own loop: report every step,
    ask ``should_prune`` after each, tell the final value (a NaN fails, as in ``optimize``)."""
    # the study's name as sweepgen names it: Hyperband draws each trial's bracket from it
    study = optuna.create_study(study_name="sweepgen", direction=direction, pruner=pruner)
    for values in curves:
        trial = study.ask()
        for step, value in enumerate(values, 1):
            trial.report(value, step)
            if trial.should_prune():
                study.tell(trial, state=optuna.trial.TrialState.PRUNED)
                break
        else:
            study.tell(trial, values[-1], skip_if_finished=False)
    return study


def _curves_of(controller: SearchController) -> list[list[float]]:
    trials = controller.study.get_trials(deepcopy=False)
    tasks = controller.renderer.tasks_of([f"t{t.number:04d}" for t in trials])
    return [BurstExecutor.curve(t) for t in tasks]


@pytest.mark.parametrize(
    "prune",
    [
        {"method": "asha", "min_steps": 3, "reduction": 3},
        {"method": "hyperband", "min_steps": 3, "reduction": 3},
        {"method": "median", "min_steps": 5},
    ],
)
def test_a_trainer_logging_all_steps_at_once_is_pruned_as_optuna_prunes_it(tmp_path, monkeypatch, prune):
    controller = _controller(
        tmp_path, {"n": 14, "parallel": 1, "sampler": "random", "seed": 3, "prune": prune}, monkeypatch
    )
    _drive(controller)
    ours = controller.study.get_trials()
    pruner = {
        "asha": lambda: optuna.pruners.SuccessiveHalvingPruner(min_resource=3, reduction_factor=3),
        "hyperband": lambda: optuna.pruners.HyperbandPruner(min_resource=3, reduction_factor=3),
        # n_startup_trials: sweepgen's is `parallel`, 1 here
        "median": lambda: optuna.pruners.MedianPruner(n_startup_trials=1, n_warmup_steps=5),
    }[prune["method"]]()
    theirs = _optuna_direct(_curves_of(controller), pruner).get_trials()
    pruned = [t.number for t in theirs if t.state.name == "PRUNED"]
    assert pruned, "the premise: Optuna prunes some of these trials"
    assert len(pruned) < len(theirs), "the premise: and keeps some"
    assert [t.number for t in ours if t.state.name == "PRUNED"] == pruned
    for mine, other in zip(ours, theirs, strict=True):
        assert mine.state == other.state
        assert mine.value == other.value  # a pruned trial's value: its value at the step it stopped
        # each trial reported up to the step it stopped at, and no further (from min_steps on)
        assert mine.intermediate_values == {
            s: v for s, v in other.intermediate_values.items() if s >= prune["min_steps"]
        }
        if mine.state.name == "PRUNED":
            step = max(mine.intermediate_values)
            assert mine.user_attrs["sweepgen_reason"] == f"pruned at step {step} ({prune['method']})"


def _scripted(curves: dict[str, list[float]]) -> Curve:
    def curve(task: RunTask) -> list[float]:
        return curves[task.name]

    return curve


NAN, INF = math.nan, math.inf
RISING = [0.1 * s for s in range(1, 10)]


@pytest.mark.parametrize("mode", ["max", "min"])
def test_nan_and_infinite_final_values_are_told_as_optuna_tells_them(tmp_path, monkeypatch, mode):
    curves = {
        "t0000": RISING,
        "t0001": [*RISING[:-1], NAN],  # diverged at its last step
        "t0002": [*RISING[:-1], INF],
        "t0003": [*RISING[:-1], -INF],
    }
    monkeypatch.setattr(BurstExecutor, "curve", staticmethod(_scripted(curves)))
    controller = _controller(
        tmp_path, {"n": 4, "parallel": 1, "sampler": "random", "mode": mode}, monkeypatch
    )
    _drive(controller)
    ours = {t.number: t for t in controller.study.get_trials()}
    direction = "maximize" if mode == "max" else "minimize"
    theirs = _optuna_direct(list(curves.values()), optuna.pruners.NopPruner(), direction).get_trials()
    assert [ours[t.number].state for t in theirs] == [t.state for t in theirs]
    assert [ours[t.number].value for t in theirs] == [t.value for t in theirs]
    assert ours[1].state.name == "FAIL"  # NaN final: failed with the reason, never its last finite value
    assert (
        ours[1].user_attrs["sweepgen_reason"].startswith("its final `score` is not a number (nan at step 9)")
    )
    assert (ours[2].state.name, ours[2].value) == ("COMPLETE", INF)  # as Optuna's tell
    assert (ours[3].state.name, ours[3].value) == ("COMPLETE", -INF)
    assert ours[0].intermediate_values == {}  # without a pruner nothing is reported


def test_nan_intermediate_values_are_reported_and_pruned_as_optuna_prunes_them(tmp_path, monkeypatch):
    higher = [v + 1 for v in RISING]
    curves = {
        "t0000": RISING,
        "t0001": [0.5, 0.5, *[NAN] * 7],  # NaN from the first rung on
        "t0002": [*higher[:4], NAN, *higher[5:]],  # one NaN between rungs, ahead at both rungs
    }
    monkeypatch.setattr(BurstExecutor, "curve", staticmethod(_scripted(curves)))
    prune = {"method": "asha", "min_steps": 3, "reduction": 3}
    controller = _controller(
        tmp_path, {"n": 3, "parallel": 1, "sampler": "random", "prune": prune}, monkeypatch
    )
    _drive(controller)
    ours = {t.number: t for t in controller.study.get_trials()}
    pruner = optuna.pruners.SuccessiveHalvingPruner(min_resource=3, reduction_factor=3)
    theirs = _optuna_direct(list(curves.values()), pruner).get_trials()
    assert [ours[t.number].state.name for t in theirs] == [t.state.name for t in theirs]
    assert [t.state.name for t in theirs] == ["COMPLETE", "PRUNED", "COMPLETE"]  # the premise
    assert ours[1].user_attrs["sweepgen_reason"] == "pruned at step 3 (asha)"  # a NaN at a rung
    assert math.isnan(ours[1].intermediate_values[3])
    assert math.isnan(ours[2].intermediate_values[5])  # reported like any value
    assert ours[2].value == higher[-1]


def test_no_pruner_nan_final_still_fails(tmp_path, monkeypatch):
    monkeypatch.setattr(BurstExecutor, "curve", staticmethod(_scripted({"t0000": [1.0, NAN]})))
    controller = _controller(tmp_path, {"n": 1, "parallel": 1, "sampler": "random"}, monkeypatch)
    _drive(controller)
    [trial] = controller.study.get_trials()
    assert trial.state.name == "FAIL"
    assert trial.user_attrs["sweepgen_reason"].startswith("its final `score` is not a number (nan at step 2)")


def test_a_freed_slot_is_refilled_in_the_round_its_trial_ends(tmp_path, monkeypatch):
    """Each round sees the previous round's trial finished: it is told and the next one asked in
    that same round, so n trials at parallel 1 take n + 1 rounds (not 2 n)."""
    controller = _controller(tmp_path, {"n": 5, "parallel": 1, "sampler": "random"}, monkeypatch)
    rounds = 0
    while controller.step():
        rounds += 1
        assert len(controller.live) == 1 or controller.finished == 5
    assert rounds == 5
    assert [t.state.name for t in controller.study.get_trials()] == ["COMPLETE"] * 5


def test_a_stop_request_ends_the_search_and_leaves_its_cancelled_trials_open(tmp_path, monkeypatch):
    """`sweepgen cancel` writes the request, then stops the runs: the controller asks nothing more
    and tells nothing of the cancelled trials (they stay running in the study, to be resumed)."""
    controller = _controller(tmp_path, {"n": 6, "parallel": 2, "sampler": "random"}, monkeypatch)
    controller.step()  # the first round starts the executor with two trials
    executor = controller.executor
    assert isinstance(executor, BurstExecutor) and len(controller.live) == 2
    # the next ones are held running, as on a cluster
    executor.hold = True
    trials_before = len(controller.study.get_trials())
    for _ in range(3):
        controller.step()
    assert len(controller.live) == 2
    search_stop.request(controller.state_dir)
    executor.cancel_all("cancelled by scancel")
    _drive(controller, limit=5)
    trials = controller.study.get_trials()
    assert len(trials) == trials_before + 2  # the two held ones asked before the cancel; none since
    open_ = [t for t in trials if t.state.name == "RUNNING"]
    assert [f"t{t.number:04d}" for t in open_] == controller.left_open
    assert len(open_) == 2
    assert all(t.state.name in ("COMPLETE", "RUNNING") for t in trials)  # nothing told failed
    controller.close()
    # the next `run` withdraws the request: it goes on with the search
    again = SearchController(SWEEP, controller.spec, controller._make_executor, controller.renderer)
    assert not search_stop.requested(again.state_dir)
    again.close()


class HeldExecutor(BurstExecutor):
    """Its runs stay running (nothing logged), as on a cluster, until its controller dies."""

    def __init__(self, options: ExecutorOptions) -> None:
        super().__init__(options)
        self.hold = True


def test_a_trial_taken_over_asks_slurm_how_its_unrecorded_run_ended_and_tells_it_once(tmp_path, monkeypatch):
    """A trial's `run` died while its Slurm job ran; the job then ran past its time limit before
    its node could record the end (only Slurm knows: TIMEOUT). The next `run` takes the trial over:
    before, it judged the run by its status file alone (`running`, its job gone: lost) and started
    it again; now it asks Slurm as `status` does (Executor.observe), records the TIMEOUT and tells
    the trial failed, as the controller that started it would have, starting nothing."""
    import pwd

    from sweepgen.run.core.base import read_status, utc_now, write_status
    from sweepgen.run.slurm import executor as slurm
    from sweepgen.run.slurm import query as slurm_query

    first = _controller(tmp_path, {"n": 1, "parallel": 1, "sampler": "random"}, monkeypatch, HeldExecutor)
    first.step()  # t0000 asked and "submitted"; its `run` then dies
    (task,) = first.live[0].tasks
    # claimed by a controller that is gone (this process's own name would still be alive)
    first.live[0].trial.set_user_attr(OWNER_ATTR, "gone-host.1")
    name = "sweepgen-fake_search"
    ids = {"job_id": "7_0", "job_name": name}
    write_status(task.run_dir, RunStatus(RunState.RUNNING, "slurm", started=utc_now(), ids=ids))
    first.close()
    me = pwd.getpwuid(os.getuid()).pw_name
    ended = slurm_query.JobInfo("7_0", "TIMEOUT", name=name, source="sacct", user=me, workdir=str(tmp_path))
    monkeypatch.setattr(slurm_query, "query_jobs", lambda ids: ({"7_0": ended}, None))
    monkeypatch.setattr(slurm_query, "squeue", lambda ids: {})  # gone from the queue
    monkeypatch.setattr(slurm, "_ALIVE_CACHE", {})
    again = _controller(tmp_path, {"n": 1, "parallel": 1, "sampler": "random"}, monkeypatch)
    try:
        _drive(again, limit=20)
    finally:
        again.close()
    (trial,) = again.study.get_trials()
    assert trial.state.name == "FAIL", trial
    assert not (task.run_dir / "summary.json").exists()  # never started again
    status = read_status(task.run_dir)
    assert status.state is RunState.FAILED and status.ids.get("slurm_state") == "TIMEOUT", status
