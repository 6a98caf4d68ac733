"""The node tasks file (run/slurm/node_tasks.py): what a Slurm array task runs is read as data,
proven by the digest its batch script carries; a file changed after the submission, a FIFO or a
link in its place runs nothing. In-process (no Slurm): the real-cluster test with a planted pickle is
in test_slurm_submit_windows.py."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from sweepgen.errors import UserError
from sweepgen.run.core.base import RunState, RunStatus
from sweepgen.run.core.shape import RunShape
from sweepgen.run.slurm import executor, node_tasks, task
from sweepgen.run.slurm import query as slurm_query


def _task(name: str, shape: RunShape | None = None) -> task.NodeTask:
    status = RunStatus(RunState.RUNNING, "slurm", reason="submitted to Slurm", ids={"job_name": "j"})
    return task.NodeTask(name, ("train", "--x", "1"), "/w", f"runs/{name}", status, {"A": "1"}, shape)


@pytest.fixture
def written(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    tasks = [_task("a"), _task("b", RunShape(nodes=2, procs_per_node=4, launcher="torchrun"))]
    path, digest = node_tasks.write(Path(".sweepgen_slurm"), [t.to_json() for t in tasks])
    ran: list[task.NodeTask] = []
    monkeypatch.setattr(task, "run_on_node", ran.append)
    return tasks, path, digest, ran


def test_each_array_task_runs_its_own_entry_as_written(written, monkeypatch):
    tasks, path, digest, ran = written
    for index in (0, 1):
        monkeypatch.setenv("SLURM_ARRAY_TASK_ID", str(index))
        assert task.main([str(path), digest]) == 0
    assert ran == tasks
    assert f"-m sweepgen.run.slurm.task {path} {digest}" in node_tasks.command(path, digest)


@pytest.mark.parametrize("how", ["changed", "fifo", "link", "missing"])
def test_a_tasks_file_not_the_one_submitted_runs_nothing(written, how, capsys):
    """Before, the node unpickled whatever file stood at the job's pickle path; now anything but the
    bytes `run` wrote (a changed argv, a FIFO, which must not hang the job, a link) runs nothing,
    exit 3, said in the job's log naming the file."""
    _, path, digest, ran = written
    text = path.read_text()
    path.unlink()
    if how == "changed":
        path.write_text(text.replace('"train"', '"curl"'))
    elif how == "fifo":
        os.mkfifo(path)
    elif how == "link":
        Path("copy.json").write_text(text)
        path.symlink_to(Path("copy.json").resolve())
    assert task.main([str(path), digest]) == 3
    err = capsys.readouterr().err
    assert ran == [] and str(path) in err and "nothing was run" in err and "Traceback" not in err, err
    # a missing file is what a job requeued after `run` removed its array's file finds: said so
    assert ("scontrol requeue" in err) == (how == "missing"), err


def _journal_naming(root: Path, *entries: tuple[str, object]) -> None:
    arrays = [{"array_job_id": a, "runs": {f"{a}_0": "a"}, "tasks_file": f} for a, f in entries]
    (root / "jobs.json").write_text(json.dumps({"arrays": arrays}))


def test_tasks_files_are_removed_once_slurm_holds_none_of_their_jobs(tmp_path, monkeypatch):
    """Before, every submission's tasks file stayed in .sweepgen_slurm for good. Now the next `run`
    (``settle``) removes those of arrays Slurm holds no job of any more, and only files `run` wrote
    as the journal names them: a live (or requeued) array's stays, so does a file the journal does
    not name, a link (never followed: its target untouched), a file of another user, a name that
    is not a tasks file's; when squeue fails, all stay."""
    root = tmp_path / ".sweepgen_slurm"
    ended, live, link, foreign = (node_tasks.write(root, [{"n": i}])[0] for i in range(4))
    unnamed = node_tasks.write(root, [{"n": 9}])[0]
    outside = tmp_path / "mine.json"
    outside.write_text("{}")
    link.unlink()
    link.symlink_to(outside)
    (root / "notes.json").write_text("{}")
    named = (ended.name, live.name, link.name, foreign.name, "notes.json")
    _journal_naming(root, *((str(10 + i), name) for i, name in enumerate(named)))
    queue = {"11_0": slurm_query.JobInfo("11_0", "PENDING", source="squeue")}
    monkeypatch.setattr(slurm_query, "squeue", lambda ids: (_ for _ in ()).throw(UserError("down")))
    assert executor.prune_task_files(root) == [] and ended.exists()  # Slurm silent: nothing removed
    monkeypatch.setattr(slurm_query, "squeue", lambda ids: queue)
    # a `run` killed between writing its tasks file and recording its array (settle cancelled it)
    orphan = node_tasks.write(root, [{"n": 5}])[0]
    journal = json.loads((root / "jobs.json").read_text())
    (root / "jobs.json").write_text(json.dumps({**journal, executor.UNRECORDED_TASKS: [orphan.name]}))
    real_mine = node_tasks._written_by_me
    foreign_ino = foreign.stat().st_ino  # the file `foreign` as another user's
    monkeypatch.setattr(node_tasks, "_written_by_me", lambda i: i.st_ino != foreign_ino and real_mine(i))
    assert executor.prune_task_files(root) == []
    assert not ended.exists() and live.exists() and link.is_symlink() and outside.read_text() == "{}"
    assert foreign.exists() and unnamed.exists() and (root / "notes.json").exists() and not orphan.exists()
    assert executor.UNRECORDED_TASKS not in json.loads((root / "jobs.json").read_text())
    arrays = json.loads((root / "jobs.json").read_text())["arrays"]
    assert [("tasks_file" in a) for a in arrays] == [False, True, False, False, False]
    queue.clear()  # the live array ended too
    executor.prune_task_files(root)
    assert not live.exists() and unnamed.exists()


def test_a_tasks_file_is_never_removed_as_another_files_name_or_where_others_write(tmp_path, monkeypatch):
    """A journal may name a tasks file's name that is a hard link to a project file (removing it
    removed a name `run` never wrote), or one in a .sweepgen_slurm folder others can write (between
    the check and the unlink anyone there can rename another file of this user's, the journal say,
    to that name). Both stay now; in the person's own folder the ended array's file is removed."""
    monkeypatch.setattr(slurm_query, "squeue", lambda ids: {})
    root = tmp_path / ".sweepgen_slurm"
    kept = tmp_path / "train.yaml"
    kept.write_text("lr: 1\n")
    ended = node_tasks.write(root, [{"n": 0}])[0]
    hard = root / f"{node_tasks.PREFIX}{'a' * 32}.json"
    os.link(kept, hard)
    _journal_naming(root, ("10", hard.name), ("11", ended.name))
    root.chmod(0o777)
    executor.prune_task_files(root)
    assert ended.exists() and hard.exists()  # a folder anyone can write: nothing removed there
    root.chmod(0o755)
    _journal_naming(root, ("10", hard.name), ("11", ended.name))
    executor.prune_task_files(root)
    assert hard.exists() and kept.stat().st_nlink == 2 and not ended.exists()


def test_tasks_files_kept_in_a_folder_others_write_are_said_at_each_run(tmp_path, monkeypatch):
    """In a .sweepgen_slurm folder others can write nothing is removed (see above), and nothing said
    so: the ended arrays' tasks files piled up there for good, and the journal forgot them. Now each
    `run` says how many stay, where and why, and keeps naming them: once the folder is the person's
    alone, the next `run` removes them."""
    monkeypatch.setattr(slurm_query, "squeue", lambda ids: {})
    root = tmp_path / ".sweepgen_slurm"
    ended = node_tasks.write(root, [{"n": 0}])[0]
    _journal_naming(root, ("11", ended.name))
    root.chmod(0o777)
    for _ in range(2):  # said again at the next run: the journal still names it
        notes = executor.prune_task_files(root)
        assert (
            len(notes) == 1
            and f"1 node tasks file(s) of job arrays Slurm no longer holds stay in {root}" in notes[0]
        )
        assert "every user can write the folder" in notes[0] and f"chmod go-w {root}" in notes[0], notes
        assert ended.exists()
    root.chmod(0o755)
    assert executor.prune_task_files(root) == [] and not ended.exists()
