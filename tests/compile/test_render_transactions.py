"""Renders are transactions. A render interrupted anywhere (SIGKILL, Ctrl-C, a fault)
leaves a state from which the next render of the new spec or of the old one recovers without deleting
anything by hand; ``check`` explains it; temp files are cleaned up and explained, not "orphans".
"""

from __future__ import annotations

import fcntl
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from fs_support import ENV, cli, leftovers, outside_project, snapshot, write_spec

from sweepgen.compile.output.parallel import PARALLEL_MIN
from sweepgen.fs.outtree import OutputTree

NEW = "changed: {{ training.seed }}\n"
JOURNAL = ".sweepgen-journal.json"


@pytest.fixture
def proj(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    return outside_project(tmp_path, monkeypatch)


def green(proj: Path, files: int) -> None:
    assert cli("check", "specs/demo.yaml") == (0, f"checked 1 spec(s), {files} generated file(s): ok\n")
    assert leftovers(proj / "generated") == []


def interrupt_after(monkeypatch: pytest.MonkeyPatch, writes: int, exc: BaseException) -> None:
    """Make the ``writes``+1-th file write of the render raise ``exc`` (the journal is write 1; a
    rendered file is written to the staging folder first, then put in place: the write counted)."""
    real_write, real_place = OutputTree.write, OutputTree.place
    count = [0]

    def step() -> None:
        count[0] += 1
        if count[0] > writes:
            raise exc

    def write(self: OutputTree, rel: str, data: bytes) -> None:
        step()
        real_write(self, rel, data)

    def place(self: OutputTree, src_fd: int, src_name: str, rel: str) -> None:
        step()
        real_place(self, src_fd, src_name, rel)

    monkeypatch.setattr(OutputTree, "write", write)
    monkeypatch.setattr(OutputTree, "place", place)


@pytest.mark.parametrize("next_spec", ["new", "old"])
def test_ctrl_c_half_way_then_either_spec_renders(
    proj: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, next_spec: str
) -> None:
    write_spec(proj, 6)
    assert cli("render", "specs/demo.yaml")[0] == 0
    write_spec(proj, 8, template=NEW)
    with monkeypatch.context() as m:
        interrupt_after(m, 4, KeyboardInterrupt())  # journal + 3 files
        rc, out = cli("render", "specs/demo.yaml")
    assert rc == 130 and out.strip() == "aborted", out  # click turns Ctrl-C into Abort
    sweep = proj / "generated/demo"
    assert leftovers(proj / "generated") == [f"demo/{JOURNAL}"]  # no temp file left
    assert (sweep / "seed1.yaml").read_text().endswith("changed: 1\n")  # a real mix of old and new
    assert (sweep / "seed6.yaml").read_text().endswith("seed: 6\n")
    rc, out = cli("check", "specs/demo.yaml")
    assert rc == 1
    assert f"generated/demo/{JOURNAL}: interrupted: a render did not finish" in out
    assert "nothing needs deleting by hand" in out
    assert "edited" not in out
    if next_spec == "old":
        write_spec(proj, 6)
        rc, out = cli("check", "specs/demo.yaml")
        assert rc == 1 and "stale" in out and "edited" not in out, out
    rc, out = cli("render", "specs/demo.yaml")
    assert rc == 0, out
    green(proj, 6 if next_spec == "old" else 8)
    assert (tmp_path / "outside/victim.txt").read_text() == "keep me\n"


def test_a_second_interruption_still_knows_the_first_renders_files(
    proj: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Old -> new (interrupted) -> old (interrupted) -> new: the journals merge, nothing is 'edited'."""
    write_spec(proj, 6)
    assert cli("render", "specs/demo.yaml")[0] == 0
    write_spec(proj, 6, template=NEW)
    with monkeypatch.context() as m:
        interrupt_after(m, 4, KeyboardInterrupt())
        assert cli("render", "specs/demo.yaml")[0] == 130
    write_spec(proj, 6)
    with monkeypatch.context() as m:
        interrupt_after(m, 2, KeyboardInterrupt())  # seed1 back to old; seed2, seed3 still new
        assert cli("render", "specs/demo.yaml")[0] == 130
    write_spec(proj, 6, template=NEW)
    rc, out = cli("check", "specs/demo.yaml")
    assert rc == 1 and "edited" not in out, out
    assert cli("render", "specs/demo.yaml")[0] == 0
    green(proj, 6)


def full_disk_at(monkeypatch: pytest.MonkeyPatch, call: int) -> None:
    """Make the ``call``-th os.write of the render fail as a full disk does."""
    real = os.write
    calls = [0]

    def write(fd: int, data: bytes) -> int:
        calls[0] += 1
        if calls[0] == call:
            raise OSError(28, "No space left on device")
        return real(fd, data)

    monkeypatch.setattr(os, "write", write)


def test_a_full_disk_while_staging_writes_nothing_and_the_next_render_finishes(
    proj: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Files are written to the staging folder as they are rendered: a fault there (the 3rd file)
    deletes what was staged, and the previous render's files and lock are untouched."""
    write_spec(proj, 4)
    assert cli("render", "specs/demo.yaml")[0] == 0
    write_spec(proj, 4, template=NEW)
    before = snapshot(tmp_path)
    with monkeypatch.context() as m:
        full_disk_at(m, 3)
        rc, out = cli("render", "specs/demo.yaml")
    assert rc == 2 and "cannot write generated/demo/seed3.yaml: No space left on device" in out, out
    assert snapshot(tmp_path) == before  # no journal, no temp file, no staging folder
    assert cli("render", "specs/demo.yaml")[0] == 0
    green(proj, 4)
    assert (proj / "generated/demo/seed3.yaml").read_text().endswith("changed: 3\n")


def test_a_full_disk_on_a_fresh_folder_leaves_no_folder(
    proj: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_spec(proj, 4)
    before = snapshot(tmp_path)
    with monkeypatch.context() as m:
        full_disk_at(m, 2)
        assert cli("render", "specs/demo.yaml")[0] == 2
    assert snapshot(tmp_path) == before and not (proj / "generated").exists()


def test_a_full_disk_at_the_lock_leaves_a_journal_and_the_next_render_finishes(
    proj: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_spec(proj, 4)
    with monkeypatch.context() as m:
        full_disk_at(m, 6)  # 4 staged files, the journal, then the lock
        rc, out = cli("render", "specs/demo.yaml")
    assert rc == 2 and "cannot write generated/demo/sweep.lock.json: No space left on device" in out, out
    assert leftovers(proj / "generated") == [f"demo/{JOURNAL}"]  # the staged copies are gone
    assert sorted(os.listdir(proj / "generated/demo")) == [JOURNAL] + [f"seed{i}.yaml" for i in range(1, 5)]
    rc, out = cli("check", "specs/demo.yaml")
    assert rc == 1 and "interrupted: a render did not finish" in out and "edited" not in out, out
    assert cli("render", "specs/demo.yaml")[0] == 0
    green(proj, 4)


def test_leftover_temp_files_are_explained_and_removed(proj: Path) -> None:
    write_spec(proj, 2, output="s{{ training.seed }}/c.yaml")
    assert cli("render", "specs/demo.yaml")[0] == 0
    sweep = proj / "generated/demo"
    temps = [
        sweep / ".sweepgen-999999-0.tmp",
        sweep / "s1/.sweepgen-4242-7.tmp",
        sweep / "s2/.c.yaml.sweepgen-123-0.tmp",
    ]  # the last: the name older versions used
    for t in temps:
        t.write_text("half a fi")
    (sweep / "notes.tmp").write_text("someone's\n")  # not a sweepgen temp name: an orphan, kept
    rc, out = cli("check", "specs/demo.yaml")
    assert rc == 1
    for t in temps:
        shown = t.relative_to(proj)
        assert f"{shown}: interrupted: temporary file left by a render that did not finish" in out
    assert "generated/demo/notes.tmp: orphan: not produced by the spec" in out
    assert cli("render", "specs/demo.yaml")[0] == 0
    assert not any(t.exists() for t in temps)
    assert (sweep / "notes.tmp").read_text() == "someone's\n"
    rc, out = cli("check", "specs/demo.yaml")
    assert rc == 1 and out.count("\n") == 3 and "notes.tmp: orphan" in out, out


def test_a_damaged_journal_is_exit_2_with_a_hint(proj: Path, tmp_path: Path) -> None:
    write_spec(proj, 2)
    assert cli("render", "specs/demo.yaml")[0] == 0
    (proj / "generated/demo" / JOURNAL).write_text("{not json")
    before = snapshot(tmp_path)
    for command in ("render", "check"):
        rc, out = cli(command, "specs/demo.yaml")
        assert rc == 2, out
        assert f"generated/demo/{JOURNAL}" in out and "journal of an interrupted render is damaged" in out
        assert "hint: sweepgen writes it atomically, so it was edited: delete it" in out
    assert snapshot(tmp_path) == before


def test_a_journal_larger_than_the_sweep_could_write_is_refused_before_it_is_parsed(proj: Path) -> None:
    """A pull request commits a journal of millions of `"<n>":[]` entries: json.loads built a str, a
    list and a dict slot for every 8 bytes (200 MiB cost `check` 7.1 GB and 2 minutes). A journal
    is a path and about 70 bytes an entry for the sweep's files and its lock's: one far larger is
    refused, unparsed, with the damaged journal's hint."""
    write_spec(proj, 2)
    assert cli("render", "specs/demo.yaml")[0] == 0
    entries = ",".join(f'"{n:x}":[]' for n in range(400_000))  # 4 MiB; a 2-file sweep's is < 1 KiB
    (proj / "generated/demo" / JOURNAL).write_text('{"journal_version": 1, "files": {' + entries + "}}")
    for command in ("render", "check"):
        rc, out = cli(command, "specs/demo.yaml")
        assert rc == 2, out
        assert f"generated/demo/{JOURNAL}" in out, out
        assert "journal of an interrupted render is 4,330,130 bytes" in out, out
        assert "hint: sweepgen writes it atomically, so it was edited: delete it" in out


def test_a_first_render_interrupted_leaves_a_journal_the_next_render_takes(
    proj: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A journal's size is bounded by the entries the sweep's files take: with no lock yet (the first
    render was interrupted) the plan's files count, or a large sweep's own journal was refused."""
    from sweepgen.compile.output.write import journal

    monkeypatch.setattr(journal, "_SLACK", 0)  # the bound is the entries' alone, as in a large sweep
    write_spec(proj, 6)
    with monkeypatch.context() as m:
        interrupt_after(m, 4, KeyboardInterrupt())
        assert cli("render", "specs/demo.yaml")[0] == 130
    assert not (proj / "generated/demo/sweep.lock.json").exists()
    assert cli("render", "specs/demo.yaml")[0] == 0
    green(proj, 6)


def test_a_render_in_progress_holds_the_folder(proj: Path) -> None:
    write_spec(proj, 2)
    assert cli("render", "specs/demo.yaml")[0] == 0
    write_spec(proj, 2, template=NEW)
    fd = os.open(proj / "generated/demo", os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)  # what a running render holds
        rc, out = cli("render", "specs/demo.yaml")
        assert rc == 2 and "another sweepgen render is writing generated/demo" in out, out
        (proj / "generated/demo" / JOURNAL).write_text('{"journal_version": 1, "files": {}}\n')
        rc, out = cli("check", "specs/demo.yaml")
        assert rc == 1 and "interrupted: a render is writing this folder right now" in out, out
    finally:
        os.close(fd)
    assert cli("render", "specs/demo.yaml")[0] == 0
    green(proj, 2)


# -- real signals on a 4,000-file render ---------------------------------------------------------

# Twice PARALLEL_MIN: the render forks its workers (the path these kills must catch half-way), and it
# is still killed 5% in (200 placed, or the first file changed), far from its end. 10,000 files cost
# the CI's core lane about a minute of wall time more and tested nothing more.
N = 2 * PARALLEL_MIN


def start_render(proj: Path) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "sweepgen", "render", "specs/demo.yaml"],
        cwd=proj,
        env=ENV,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def placed(sweep: Path) -> list[str]:
    """The outputs in place (a render first stages every file under a temporary `.` name)."""
    return [n for n in os.listdir(sweep) if not n.startswith(".")] if sweep.is_dir() else []


def placed_more_than(sweep: Path, count: int) -> bool:
    """Whether more than ``count`` outputs are in place, listing no further than that: this is polled
    every 5 ms while the render writes, and a full listing of N names would take a core from it."""
    if not sweep.is_dir():
        return False
    with os.scandir(sweep) as entries:
        seen = 0
        for entry in entries:
            seen += not entry.name.startswith(".")
            if seen > count:
                return True
    return False


def kill_when(proc: subprocess.Popen[str], ready: Callable[[], bool], sig: int) -> None:
    deadline = time.monotonic() + 300
    while not ready():
        assert proc.poll() is None, f"render ended before the signal: {proc.communicate()}"
        assert time.monotonic() < deadline, "render never reached the point to interrupt"
        time.sleep(0.005)
    proc.send_signal(sig)


@pytest.mark.slow
def test_sigkill_during_a_fresh_parallel_render(proj: Path, tmp_path: Path) -> None:
    write_spec(proj, N)
    sweep = proj / "generated/demo"
    proc = start_render(proj)
    kill_when(proc, lambda: (sweep / JOURNAL).exists() and placed_more_than(sweep, 200), signal.SIGKILL)
    proc.communicate(timeout=60)
    assert proc.returncode == -signal.SIGKILL
    assert (sweep / JOURNAL).exists() and not (sweep / "sweep.lock.json").exists()
    assert 200 < len(placed(sweep)) < N
    rc, out = cli("check", "specs/demo.yaml")
    assert rc == 1 and "interrupted: a render did not finish" in out and "edited" not in out
    rc, out = cli("render", "specs/demo.yaml")
    assert rc == 0, out
    green(proj, N)
    assert (tmp_path / "outside/victim.txt").read_text() == "keep me\n"


@pytest.mark.slow
@pytest.mark.parametrize("next_spec", ["old", "new"])
def test_sigkill_during_a_parallel_update_then_either_spec_renders(proj: Path, next_spec: str) -> None:
    write_spec(proj, N)
    assert cli("render", "specs/demo.yaml")[0] == 0
    write_spec(proj, N, template=NEW)
    sweep = proj / "generated/demo"
    first = sweep / "seed1.yaml"
    proc = start_render(proj)
    kill_when(proc, lambda: (sweep / JOURNAL).exists() and b"changed" in first.read_bytes(), signal.SIGKILL)
    proc.communicate(timeout=60)
    assert proc.returncode == -signal.SIGKILL
    assert (sweep / JOURNAL).exists()
    updated = sum(b"changed" in (sweep / f"seed{i}.yaml").read_bytes() for i in range(1, N + 1))
    assert 0 < updated < N  # killed half-way: old and new files side by side
    if next_spec == "old":
        write_spec(proj, N)  # revert the template
    rc, out = cli("check", "--format", "json", "specs/demo.yaml")
    assert rc == 1 and '"kind": "edited"' not in out and '"kind": "interrupted"' in out
    rc, out = cli("render", "specs/demo.yaml")
    assert rc == 0, out
    green(proj, N)


@pytest.mark.slow
def test_sigint_during_a_parallel_render(proj: Path) -> None:
    write_spec(proj, N)
    sweep = proj / "generated/demo"
    proc = start_render(proj)
    kill_when(proc, lambda: (sweep / JOURNAL).exists() and placed_more_than(sweep, 200), signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130 and err.strip() == "aborted", err
    assert leftovers(proj / "generated") == [f"demo/{JOURNAL}"]  # the temp file in flight was removed
    rc, out = cli("render", "specs/demo.yaml")
    assert rc == 0, out
    green(proj, N)
