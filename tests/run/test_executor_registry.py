"""The executor registry is the one seam: `--executor` offers exactly its names, `status` asks each
executor's own observer (never Slurm by name), and an executor added to the registry is observed,
timed and logged through the interface alone."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pytest
from click.testing import CliRunner
from run_support import make_sweep

from sweepgen.cli import main
from sweepgen.errors import UserError
from sweepgen.run.core import registry
from sweepgen.run.core.base import RunState, RunStatus, RunTask, write_status
from sweepgen.run.core.plan.tasks import load_sweep
from sweepgen.run.core.run_view import RunView
from sweepgen.run.local.executor import LocalExecutor
from sweepgen.run.sweep import status as sweep_status


def test_executor_is_a_choice_over_the_registry(cli_cwd):
    make_sweep(cli_cwd, {"a": {"steps": 1}})
    result = CliRunner().invoke(main, ["run", "generated/fake", "--executor", "kubernetes", "--dry-run"])
    assert result.exit_code == 2
    assert "'kubernetes' is not one of 'local', 'slurm'" in result.output
    assert tuple(registry.EXECUTORS) == registry.NAMES


class Watched(LocalExecutor):
    """A stand-in for a new executor (Ray, Kubernetes): its observer, its records, its own log."""

    name = "watched"
    observer = "the stand-in scheduler"
    asked: list[str] = []
    persisted: list[bool] = []

    @classmethod
    def observe(cls, tasks: Sequence[RunTask], *, persist: bool = True) -> list[RunView]:
        cls.asked.extend(t.name for t in tasks)
        cls.persisted.append(persist)
        return [
            RunView(t, RunStatus(RunState.RUNNING, "watched", reason="as the scheduler says")) for t in tasks
        ]

    @classmethod
    def vanished(
        cls, tasks: Sequence[RunTask], gone: Sequence[RunTask], answer_s: float
    ) -> dict[str, RunView]:
        return {
            t.name: RunView(t, RunStatus(RunState.FAILED, "watched", reason="its folder is gone"))
            for t in gone
        }

    @classmethod
    def failure_log(cls, status: RunStatus) -> Path | None:
        return Path("scheduler.log")


@pytest.fixture
def watched(monkeypatch):
    monkeypatch.setitem(registry.EXECUTORS, "watched", f"{__name__}:Watched")
    monkeypatch.setattr(registry, "NAMES", (*registry.NAMES, "watched"))
    Watched.asked = []
    Watched.persisted = []
    return Watched


def test_status_asks_each_executors_observer_through_the_registry(cli_cwd, watched):
    import shutil

    make_sweep(cli_cwd, {"a": {"steps": 1}, "b": {"steps": 1}, "c": {"steps": 1}})
    write_status(cli_cwd / "runs/fake/a", RunStatus(RunState.RUNNING, "watched"))
    write_status(cli_cwd / "runs/fake/b", RunStatus(RunState.FAILED, "local", exit_code=1))
    (cli_cwd / "runs/fake/c").mkdir(parents=True)
    shutil.rmtree(cli_cwd / "runs/fake/c")
    tasks = load_sweep(Path("generated/fake")).tasks
    views = {v.task.name: v for v in sweep_status.collect(tasks, persist=False)}
    assert watched.asked == ["a"]  # only its own runs; the local run is read from its files
    sweep_status.collect(tasks)  # a writer's look (`run`, `cancel`)
    assert watched.persisted == [False, True]  # a reader never asks its observer to record
    assert views["a"].status is not None and views["a"].status.reason == "as the scheduler says"
    assert views["b"].label == "FAILED"
    assert views["c"].status is not None and views["c"].status.reason == "its folder is gone"
    # a run that died before writing run.log: the executor's own log is shown instead
    (cli_cwd / "scheduler.log").write_text("node lost\n")
    path, tail = sweep_status.log_tail(views["a"])
    assert path == Path("scheduler.log") and tail == ["node lost"]


def test_a_hung_observer_is_named_and_its_runs_shown_as_their_files_say(cli_cwd, watched, monkeypatch):
    import time

    make_sweep(cli_cwd, {"a": {"steps": 1}})
    write_status(cli_cwd / "runs/fake/a", RunStatus(RunState.RUNNING, "watched"))

    def hung(tasks):
        time.sleep(30)
        raise AssertionError("not reached in time")

    monkeypatch.setattr(Watched, "observe", classmethod(lambda cls, tasks, persist=True: hung(tasks)))
    views = sweep_status.collect(load_sweep(Path("generated/fake")).tasks, answer_s=0.3)
    assert "the stand-in scheduler did not answer within 0.3 s" in (views[0].note or "")
    assert views[0].label == "RUNNING"


def test_every_executor_declares_its_resources_section_under_its_registry_name():
    from sweepgen.compile.run_api import EXECUTOR_RESOURCES
    from sweepgen.run.slurm.resources import known_keys

    assert tuple(EXECUTOR_RESOURCES) == registry.NAMES
    assert registry.resource_keys("slurm") == known_keys()
    assert "partition" in known_keys() and "partition" not in registry.resource_keys("local")
    with pytest.raises(UserError, match="unknown executor 'ray'"):
        registry.resource_keys("ray")
