"""A shared runs folder's result files that are not this user's alone (another user's, or writable by
others): `report` and `status` say which runs hold them, and `run`, which takes such a run as finished
and starts it no more, says so instead of skipping it silently (run/report/committed.py)."""

from __future__ import annotations

import json
import os
from pathlib import Path

from sweepgen.fs import runfs
from sweepgen.run.core.base import Decision, RunState, RunTask, effective_state, is_finished, read_status
from sweepgen.run.report import committed
from sweepgen.run.sweep import grid


def _finished(run_dir: Path) -> None:
    run_dir.mkdir(parents=True)
    (run_dir / "sweepgen_status.json").write_text(json.dumps({"state": "finished", "executor": "local"}))
    (run_dir / "summary.json").write_text('{"final_reward": 0.9}\n')
    for name in ("sweepgen_status.json", "summary.json"):
        os.chmod(run_dir / name, 0o644)


def test_result_files_another_user_could_have_written_are_named(tmp_path, monkeypatch):
    """Before, a summary.json and metrics planted in a group-writable runs folder were listed and
    ranked (and the run skipped by `run`) like this user's own, with nothing said."""
    mine, planted, theirs, linked = (tmp_path / n for n in ("mine", "planted", "theirs", "linked"))
    for folder in (mine, planted, theirs, linked):
        _finished(folder)
    os.chmod(planted / "summary.json", 0o666)
    (planted / "metrics.jsonl").write_text('{"step": 1, "acc": 1.0}\n')
    os.chmod(planted / "metrics.jsonl", 0o664)
    (linked / "summary.json").unlink()
    (linked / "summary.json").symlink_to(planted / "summary.json")  # a link is never read: not counted
    real_lstat = runfs.lstat

    def lstat(path):
        info = real_lstat(path)
        uid = os.geteuid() + 1 if Path(path).parent == theirs else info.st_uid
        return os.stat_result((info[0], *info[1:4], uid, *info[5:]))

    monkeypatch.setattr(runfs, "lstat", lstat)
    assert committed.foreign_files(mine) == [] and committed.foreign_files(linked) == []
    said = committed.foreign_files(planted)
    assert said[0] == "summary.json (writable by every user)", said
    if not runfs.private_group(os.geteuid(), os.stat(planted / "metrics.jsonl").st_gid):
        assert said[1] == "metrics.jsonl (writable by its group)", said
    assert committed.foreign_files(theirs)[0].startswith("sweepgen_status.json (owned by ")
    warning = committed.foreign_warning([("mine", mine), ("planted", planted), ("theirs", theirs)])
    assert len(warning) == 1 and warning[0].startswith("2 run(s) hold result files that are not yours alone")
    task = RunTask(
        name="planted", variant="planted", config_path=tmp_path / "c.yaml", run_dir=planted, argv=("true",)
    )
    skipped = [Decision(task, False, RunState.FINISHED, "finished")]
    assert (
        "planted is taken as finished from files that are not yours alone"
        in grid._finished_by_others(skipped)[0]
    )
    assert grid._finished_by_others([Decision(task, True, RunState.FAILED, "failed")]) == []


def test_a_done_file_the_status_names_is_in_the_ownership_check(tmp_path, monkeypatch):
    """`run --command ... --done-file final/model.bin`: the done file's being there makes the run
    finished (and `run` starts it no more), yet only the bundled trainer's files were checked: a
    world-writable done file, or a link to one another user planted, was taken silently. The done
    file the status names is checked now (a link by its owner: a link's mode is every user's)."""
    run = tmp_path / "run"
    _finished(run)
    (run / "sweepgen_status.json").write_text(
        json.dumps({"state": "finished", "executor": "local", "done_file": "final/model.bin"})
    )
    os.chmod(run / "sweepgen_status.json", 0o644)
    (run / "final").mkdir()
    (run / "final" / "model.bin").write_text("w")
    os.chmod(run / "final" / "model.bin", 0o644)
    assert committed.foreign_files(run) == []
    os.chmod(run / "final" / "model.bin", 0o666)
    assert committed.foreign_files(run) == ["final/model.bin (writable by every user)"]
    (run / "final" / "model.bin").unlink()
    (run / "final" / "model.bin").symlink_to(tmp_path / "elsewhere.bin")
    assert committed.foreign_files(run) == []  # this user's own link
    real_lstat = runfs.lstat

    def lstat(path):  # the link as another user's
        info = real_lstat(path)
        uid = os.geteuid() + 1 if Path(path).name == "model.bin" else info.st_uid
        return os.stat_result((info[0], *info[1:4], uid, *info[5:]))

    monkeypatch.setattr(runfs, "lstat", lstat)
    assert committed.foreign_files(run)[0].startswith("final/model.bin (owned by ")


def test_a_done_file_behind_a_linked_folder_does_not_finish_the_run(tmp_path, monkeypatch):
    """`--done-file final/model.bin` with `final` (or the run folder) a link to a folder elsewhere
    (another user's, its model.bin writable by all): `is_finished` followed the link and took the run
    as finished (`run` started it no more, `report` ranked it), while the ownership check, which walks
    without following a link, never looked there and said nothing. Now the done file counts only
    where it is reached as every run file is (no link on the way), and the status says why not."""
    monkeypatch.chdir(tmp_path)
    run = tmp_path / "runs" / "c"
    _finished(run)
    status = {"state": "finished", "executor": "local", "done_file": "final/model.bin"}
    (run / "sweepgen_status.json").write_text(json.dumps(status))
    (tmp_path / "theirs").mkdir()
    (tmp_path / "theirs" / "model.bin").write_text("planted")
    os.chmod(tmp_path / "theirs" / "model.bin", 0o666)
    (run / "final").symlink_to(tmp_path / "theirs")
    assert not is_finished(Path("runs/c"), "final/model.bin")
    state, reason = effective_state(Path("runs/c"), read_status(Path("runs/c")), lambda status: False)
    assert state is RunState.FAILED, (state, reason)
    assert reason is not None and "final/model.bin is behind a symbolic link" in reason, reason
    assert committed.foreign_files(Path("runs/c")) == []  # both agree: the planted file counts nowhere
    (run / "final").unlink()
    (run / "final").mkdir()
    (run / "final" / "model.bin").write_text("mine")
    assert is_finished(Path("runs/c"), "final/model.bin")
