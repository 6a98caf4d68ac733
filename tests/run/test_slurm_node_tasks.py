"""The node tasks file (run/slurm/node_tasks.py): what a Slurm array task runs is read as data,
proven by the digest its batch script carries; a file changed after the submission, a FIFO or a
link in its place runs nothing. In-process (no Slurm): the real-cluster test with a planted pickle is
in test_slurm_submit_windows.py."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from sweepgen.run.core.base import RunState, RunStatus
from sweepgen.run.core.shape import RunShape
from sweepgen.run.slurm import node_tasks, task


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
