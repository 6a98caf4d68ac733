"""What `sweepgen run` decides to start (sweepgen.run.core.base.plan) and how it reads a sweep's lock
(sweepgen.run.core.plan.tasks): pure rules, no processes."""

from __future__ import annotations

import hashlib
import itertools
import json
from pathlib import Path

import pytest
from run_support import FAKE_COMMAND, make_config_sweep, make_sweep

from sweepgen.errors import ConfigError, UserError
from sweepgen.run.core.base import (
    STATUS_FILE,
    SUMMARY_FILE,
    RunState,
    RunStatus,
    RunTask,
    decide,
    read_status,
    write_status,
)
from sweepgen.run.core.plan.tasks import DEFAULT_COMMAND, load_sweep, parse_command, select


def _task(tmp_path: Path) -> RunTask:
    return RunTask(
        name="r", variant="r", config_path=tmp_path / "c.yaml", run_dir=tmp_path / "run", argv=("x",)
    )


STORED = [None, RunState.PENDING, RunState.RUNNING, RunState.FINISHED, RunState.FAILED, RunState.CANCELLED]


@pytest.mark.parametrize(
    "summary,stored,alive,rerun", list(itertools.product([False, True], STORED, [False, True], [False, True]))
)
def test_plan_rules_over_every_combination(tmp_path, summary, stored, alive, rerun):
    task = _task(tmp_path)
    task.run_dir.mkdir()
    if summary:
        (task.run_dir / SUMMARY_FILE).write_text("{}")
    if stored is not None:
        write_status(task.run_dir, RunStatus(stored, "local", ids={"pid": 1}))
    d = decide(task, rerun_failed=rerun, is_alive=lambda s: alive)

    if summary:  # the trainer's proof of success wins over anything else
        assert (d.start, d.state) == (False, RunState.FINISHED)
    elif stored in (None, RunState.PENDING):
        assert (d.start, d.state) == (True, RunState.PENDING)
    elif stored is RunState.RUNNING and alive:  # owned by a live process: never started twice
        assert (d.start, d.state) == (False, RunState.SKIPPED)
    elif stored in (RunState.FAILED, RunState.CANCELLED) and alive:
        # recorded its stop, but its job lives on (a requeued Slurm job): never started twice either
        assert (d.start, d.state) == (False, RunState.SKIPPED)
        assert "alive" in d.reason
    else:
        # failed, cancelled, lost (running but dead) and "finished" without its summary: retried
        # only on request
        expected = RunState.CANCELLED if stored is RunState.CANCELLED else RunState.FAILED
        assert (d.start, d.state) == (rerun, expected)
        assert ("--rerun-failed" in d.reason) == (not rerun)


def test_status_round_trips_and_is_written_atomically(tmp_path):
    status = RunStatus(
        RunState.FAILED, "local", exit_code=3, reason="exit code 3", ids={"pid": 12, "gpu": "1"}
    )
    write_status(tmp_path, status)
    assert read_status(tmp_path) == status
    assert json.loads((tmp_path / STATUS_FILE).read_text())["state"] == "failed"
    assert [p.name for p in tmp_path.iterdir()] == [STATUS_FILE]  # no temp file left behind


def test_broken_status_file_names_the_file(tmp_path):
    (tmp_path / STATUS_FILE).write_text('{"state": ')
    with pytest.raises(ConfigError) as err:
        read_status(tmp_path)
    assert str(tmp_path / STATUS_FILE) in err.value.format()
    (tmp_path / STATUS_FILE).write_text('{"state": "exploded", "executor": "local"}')
    with pytest.raises(ConfigError, match="unreadable run status"):
        read_status(tmp_path)


def test_tasks_come_from_the_lock_with_the_command_filled_in(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    make_sweep(tmp_path, {"a": {}, "b": {}})
    (tmp_path / "generated" / "fake" / "stray.yaml").write_text("output_dir: runs/stray\n")
    sweep = load_sweep(Path("generated/fake"), command=parse_command(FAKE_COMMAND))
    assert [t.name for t in sweep.tasks] == ["a", "b"]  # the stray file is not in the lock
    assert sweep.tasks[0].run_dir == Path("runs/fake/a")
    assert sweep.tasks[0].argv[-1] == "generated/fake/a.yaml"


def test_default_command_is_the_bundled_trainer(tmp_path, monkeypatch):
    import sys

    monkeypatch.chdir(tmp_path)
    make_sweep(tmp_path, {"a": {}})
    (task,) = load_sweep(Path("generated/fake")).tasks
    assert task.argv == (*DEFAULT_COMMAND[:-1], "generated/fake/a.yaml")
    assert task.argv[0] == sys.executable and "sweepgen_trainer" in " ".join(task.argv)


def test_a_folder_without_lock_is_refused(tmp_path):
    (tmp_path / "x.yaml").write_text("output_dir: r\n")
    with pytest.raises(UserError, match="no sweep.lock.json") as err:
        load_sweep(tmp_path)
    assert "sweepgen render" in err.value.hint


def test_a_hand_edited_config_is_refused(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    folder = make_sweep(tmp_path, {"a": {}})
    with open(folder / "a.yaml", "a") as fh:
        fh.write("# tweak\n")
    with pytest.raises(UserError, match="differs from what sweepgen rendered") as err:
        load_sweep(Path("generated/fake"))
    assert err.value.location.path == "generated/fake/a.yaml"


def test_two_runs_sharing_an_output_dir_are_refused(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    make_config_sweep(
        tmp_path, {"a": {"output_dir": "runs/same"}, "b": {"output_dir": "runs/same"}}, sweep="s", values={}
    )
    with pytest.raises(ConfigError, match="share the output directory"):
        load_sweep(Path("generated/s"))


@pytest.mark.parametrize("pair", [("runs/Same", "runs/same"), ("runs/x/", "runs/./x")])
def test_two_runs_whose_output_dirs_are_one_folder_are_refused(tmp_path, monkeypatch, pair):
    # one folder on macOS and Windows (case), or everywhere (spelling): the second run would take the
    # first's folder, its lock and its finished state
    monkeypatch.chdir(tmp_path)
    configs = {"a": {"output_dir": pair[0]}, "b": {"output_dir": pair[1]}}
    make_config_sweep(tmp_path, configs, sweep="s", values={})
    with pytest.raises(ConfigError, match="share the output directory"):
        load_sweep(Path("generated/s"))


def test_the_run_dir_is_the_rendered_yaml_output_dir(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    folder = make_config_sweep(tmp_path, {"a": {"output_dir": "runs/base"}}, sweep="s", values={})
    # a template that computes output_dir: the trainer reads the rendered file, so that decides
    text = "output_dir: runs/s/a\n"
    (folder / "a.yaml").write_text(text)
    lock = json.loads((folder / "sweep.lock.json").read_text())
    lock["files"][0]["sha256"] = hashlib.sha256(text.encode()).hexdigest()
    (folder / "sweep.lock.json").write_text(json.dumps(lock))
    assert load_sweep(Path("generated/s")).tasks[0].run_dir == Path("runs/s/a")
    text = "seed: 1\n"
    (folder / "a.yaml").write_text(text)
    lock["files"][0]["sha256"] = hashlib.sha256(text.encode()).hexdigest()
    (folder / "sweep.lock.json").write_text(json.dumps(lock))
    with pytest.raises(ConfigError, match="rendered config has no output_dir") as err:
        load_sweep(Path("generated/s"))
    assert err.value.location.path == "generated/s/a.yaml"


@pytest.mark.parametrize(
    "command,message",
    [("", "empty"), ("python train.py", "must contain {config}"), ("python t.py {config} {cfg}", "{cfg}")],
)
def test_bad_commands_are_refused(command, message):
    with pytest.raises(UserError, match="placeholder|empty|must contain") as err:
        parse_command(command)
    assert message in err.value.message


def test_command_placeholders_and_literal_braces(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    make_sweep(tmp_path, {"a": {}})
    (task,) = load_sweep(
        Path("generated/fake"), command=parse_command("t --cfg {config} --out {run_dir} '{{x}}' {name}")
    ).tasks
    assert task.argv == ("t", "--cfg", "generated/fake/a.yaml", "--out", "runs/fake/a", "{x}", "a")


def test_only_selects_by_name_and_rejects_typos(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    make_sweep(tmp_path, {"seed1": {}, "seed2": {}, "seed3": {}})
    tasks = load_sweep(Path("generated/fake")).tasks
    assert [t.name for t in select(tasks, ["seed3,seed1"])] == ["seed1", "seed3"]  # lock order
    assert [t.name for t in select(tasks, [])] == ["seed1", "seed2", "seed3"]
    with pytest.raises(UserError, match="names no run") as err:
        select(tasks, ["sed2"])
    assert "seed2" in err.value.hint


@pytest.mark.parametrize("only", [[""], [","], [" , "], ["", ","]])
def test_an_only_that_names_nothing_is_refused_not_every_run(tmp_path, monkeypatch, only):
    monkeypatch.chdir(tmp_path)
    make_sweep(tmp_path, {"seed1": {}, "seed2": {}})
    tasks = load_sweep(Path("generated/fake")).tasks
    with pytest.raises(UserError, match="--only names no run") as err:
        select(tasks, only)
    assert err.value.hint


@pytest.mark.parametrize(
    "command",
    [
        "t {config",
        "t config}",
        "t '{config}",
        't "{config}',
        "t {config!r}",
        "t {config:>40}",
        "t {config!s:x}",
    ],
)
def test_a_malformed_command_is_a_user_error_not_a_crash(command):
    with pytest.raises(UserError, match="--command") as err:
        parse_command(command)
    assert err.value.hint


def test_local_liveness_tells_a_recycled_pid_from_the_run(tmp_path):
    import os

    from sweepgen.run.core.base import this_host
    from sweepgen.run.local.executor import LocalExecutor
    from sweepgen.run.local.liveness import proc_start_ticks as _proc_start_ticks

    me, host = os.getpid(), this_host()

    def alive(**ids):
        return LocalExecutor.is_alive(RunStatus(RunState.RUNNING, "local", ids=ids))

    assert alive(pid=me, host=host, proc_start=_proc_start_ticks(me))
    assert not alive(pid=me, host=host, proc_start=_proc_start_ticks(me) - 1)  # same pid, other process
    dead = __import__("subprocess").Popen(["true"])
    dead.wait()
    assert not alive(pid=dead.pid, host=host, proc_start=None)
    assert alive(pid=1, host=host + "-elsewhere")  # another machine: never assumed dead


def test_status_files_get_the_umask_mode_not_mkstemps_private_one(tmp_path):
    import os
    import stat

    mask = os.umask(0o022)
    try:
        write_status(tmp_path, RunStatus(RunState.PENDING, "local"))
        assert stat.S_IMODE((tmp_path / STATUS_FILE).stat().st_mode) == 0o644
    finally:
        os.umask(mask)


@pytest.mark.parametrize("summary", [False, True])
def test_a_run_of_another_config_version_is_stale_whatever_its_state(tmp_path, summary):
    from dataclasses import replace

    task = replace(_task(tmp_path), fingerprint="yaml:new")
    task.run_dir.mkdir()
    if summary:
        (task.run_dir / SUMMARY_FILE).write_text("{}")
    write_status(
        task.run_dir,
        RunStatus(RunState.FINISHED if summary else RunState.FAILED, "local", config_fingerprint="yaml:old"),
    )
    d = decide(task, rerun_failed=True, is_alive=lambda s: False)
    assert d.stale and not d.start
    write_status(task.run_dir, RunStatus(RunState.FAILED, "local", config_fingerprint="yaml:new"))
    assert not decide(task, rerun_failed=True, is_alive=lambda s: False).stale


def test_fingerprints_ignore_yaml_comments_but_not_values(tmp_path):
    from sweepgen.run.core.plan.tasks import config_fingerprint

    yml, sh = tmp_path / "c.yaml", tmp_path / "c.sh"
    assert config_fingerprint(yml, b"# v1\na: 1\n") == config_fingerprint(yml, b"a: 1  # v2\n")
    assert config_fingerprint(yml, b"a: 1\n") != config_fingerprint(yml, b"a: 2\n")
    assert config_fingerprint(sh, b"# v1\necho\n") != config_fingerprint(sh, b"# v2\necho\n")


def test_status_applies_runs_staleness_rule_to_a_finished_run_of_a_changed_spec(tmp_path, monkeypatch):
    """`run` and `report` refuse a run directory made from another version of the config; `status`
    must not show it as this config's FINISHED result either."""
    from click.testing import CliRunner

    from sweepgen.cli import main

    monkeypatch.chdir(tmp_path)
    make_sweep(tmp_path, {"a": {"steps": 1}, "b": {"steps": 1}})
    tasks = {t.name: t for t in load_sweep(Path("generated/fake")).tasks}
    for name, fingerprint in (("a", "yaml:an-older-config"), ("b", tasks["b"].fingerprint)):
        run_dir = tasks[name].run_dir
        run_dir.mkdir(parents=True)
        (run_dir / SUMMARY_FILE).write_text("{}")
        write_status(run_dir, RunStatus(RunState.FINISHED, "local", config_fingerprint=fingerprint))
    result = CliRunner().invoke(main, ["status", "generated/fake", "--format", "json"])
    rows = {r["run"]: r for r in json.loads(result.stdout)}
    assert rows["a"]["state"] == "STALE" and "another version of its config" in rows["a"]["reason"]
    assert rows["b"]["state"] == "FINISHED"
    assert result.exit_code == 1  # a problem, like a failed run
    run = CliRunner().invoke(main, ["run", "generated/fake", "--command", FAKE_COMMAND])
    assert run.exit_code == 2 and "another version of the config" in run.output


def test_status_from_another_directory_finds_the_runs_or_says_why(tmp_path, monkeypatch):
    from click.testing import CliRunner

    from sweepgen.cli import main

    project = tmp_path / "project"
    make_sweep(project, {"a": {"steps": 1}})
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    sweep = str(project / "generated" / "fake")
    never = CliRunner().invoke(main, ["status", sweep])
    assert never.exit_code == 2 and "relative to where `sweepgen run` was started" in never.output
    run_dir = project / "runs" / "fake" / "a"
    run_dir.mkdir(parents=True)
    (run_dir / SUMMARY_FILE).write_text("{}")
    write_status(run_dir, RunStatus(RunState.FINISHED, "local"))
    found = CliRunner().invoke(main, ["status", sweep, "--format", "json"])
    assert found.exit_code == 0, found.output
    assert json.loads(found.stdout)[0]["state"] == "FINISHED"
    assert f"run directories found under {project}" in found.stderr


def test_eta_follows_the_pace_so_far():
    from sweepgen.cli._run_display import eta_seconds

    assert eta_seconds({"step": 10, "elapsed_s": 20.0}, 100, 5.0) == 180.0  # trainer's own clock first
    assert eta_seconds({"step": 10}, 100, 5.0) == 45.0  # else this attempt's wall time
    assert eta_seconds({"step": 100}, 100, 5.0) == 0.0
    assert eta_seconds(None, 100, 5.0) is None and eta_seconds({"step": 3}, None, 5.0) is None


def test_run_status_and_report_share_one_set_of_state_words(tmp_path, monkeypatch):
    """A run that never started is `not started` in run's plan as in status (which prints the same
    words in capitals); a started run's word is its state's own name everywhere."""
    from click.testing import CliRunner
    from run_support import make_config_sweep

    from sweepgen.cli import main
    from sweepgen.run.core.base import RunState, state_word

    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("COLUMNS", "200")
    make_config_sweep(tmp_path, {"a": {"output_dir": "runs/a"}}, sweep="w", values={})
    plan = CliRunner().invoke(main, ["run", "generated/w", "--dry-run", "--command", "true {config}"])
    assert plan.exit_code == 0, plan.output
    assert "not started" in plan.stdout and "pending" not in plan.stdout
    status = CliRunner().invoke(main, ["status", "generated/w", "--format", "json"])
    assert json.loads(status.stdout)[0]["state"] == "NOT STARTED"
    assert [state_word(s) for s in RunState] == [s.value for s in RunState]


@pytest.mark.parametrize(
    "output_dir",
    ["runs/fake/a$(touch pwned)", "runs/fake/a;rm -rf x", "runs/fake/a b", "runs/fake/`id`", "-runs/x"],
)
def test_a_value_a_shell_would_act_on_never_becomes_a_placeholder(tmp_path, monkeypatch, output_dir):
    """`--command 'bash -c "train --out {run_dir}"'` pastes the value into a script unquoted: a spec
    (or a lock) that puts `$(...)` there would choose what that shell runs."""
    monkeypatch.chdir(tmp_path)
    make_config_sweep(tmp_path, {"a": {"output_dir": output_dir}}, sweep="fake", values={"a": {}})
    with pytest.raises(UserError, match="characters a command would act on") as err:
        load_sweep(Path("generated/fake"), command=parse_command("sh -c 'true {run_dir}' {config}"))
    assert err.value.key == "run_dir"
    make_config_sweep(
        tmp_path, {"a": {"output_dir": "runs/lr=0.1,bs=32/a+b@c%d:e-f_g.h"}}, sweep="fake", values={"a": {}}
    )
    (task,) = load_sweep(
        Path("generated/fake"), command=parse_command("sh -c 'true {run_dir}' {config}")
    ).tasks
    assert task.argv[-2] == "true runs/lr=0.1,bs=32/a+b@c%d:e-f_g.h"
