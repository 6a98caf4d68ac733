"""Run folders are walked by descriptor (sweepgen/fs/runfs.py): no link below the working
directory (or a folder named on the command line) is followed by any read, write, mkdir, listing or
removal, so a folder swapped for a link after a check is refused instead of used."""

from __future__ import annotations

import errno
import os
import threading
from pathlib import Path

import pytest

from sweepgen.errors import UserError
from sweepgen.fs import runfs
from sweepgen.run.core import runfiles
from sweepgen.run.core.base import write_json_atomic
from sweepgen.run.slurm import ranks

CANARY = b"CANARY outside the project\n"


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """``project/`` (the working directory) beside ``outside/`` holding a canary file."""
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "summary.json").write_bytes(CANARY)
    root = tmp_path / "project"
    (root / "runs").mkdir(parents=True)
    monkeypatch.chdir(root)
    return root


def _outside(project: Path) -> dict[str, bytes]:
    folder = project.parent / "outside"
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir()) if p.is_file()}


def test_a_linked_run_folder_is_never_read_through(project: Path) -> None:
    os.symlink("../../outside", project / "runs" / "a")
    with pytest.raises(runfiles.RunFileError) as err:
        runfiles.read_bytes(Path("runs/a/summary.json"), limit=1 << 20)
    assert "symbolic link" in err.value.reason and err.value.path == Path(os.getcwd(), "runs", "a")
    assert runfiles.read_end(Path("runs/a/summary.json"), 100) == b""
    with pytest.raises(runfiles.RunFileError):
        runfiles.regular_size(Path("runs/a/summary.json"))


def test_a_linked_folder_higher_up_is_refused_too(project: Path) -> None:
    os.symlink("../outside", project / "linked")
    with pytest.raises(runfiles.RunFileError, match="symbolic link"):
        runfiles.read_bytes(project / "linked" / "summary.json", limit=1 << 20)


def test_writes_appends_and_mkdirs_never_follow_a_linked_folder(project: Path) -> None:
    os.symlink("../../outside", project / "runs" / "a")
    before = _outside(project)
    for action in (
        lambda: runfs.write_atomic(Path("runs/a/sweepgen_status.json"), b"{}"),
        lambda: runfs.write_atomic(Path("runs/a/new/deeper.json"), b"{}"),
        lambda: runfiles.open_append(Path("runs/a/run.log")),
        lambda: runfs.makedirs(Path("runs/a/sub")),
        lambda: runfs.unlink(Path("runs/a/summary.json")),
        lambda: runfs.listdir(Path("runs/a")),
    ):
        with pytest.raises(OSError) as err:
            action()
        assert err.value.errno == errno.ELOOP, err.value
    assert _outside(project) == before
    assert sorted(os.listdir(project.parent / "outside")) == ["summary.json"]


def test_a_link_at_the_file_is_replaced_never_written_through(project: Path) -> None:
    (project / "runs" / "a").mkdir()
    os.symlink("../../../outside/summary.json", project / "runs" / "a" / "sweepgen_status.json")
    write_json_atomic(Path("runs/a/sweepgen_status.json"), {"state": "done"})
    assert not (project / "runs" / "a" / "sweepgen_status.json").is_symlink()
    assert _outside(project) == {"summary.json": CANARY}


def test_a_hard_link_is_never_appended_to(project: Path) -> None:
    """A run's log is appended in place: a hard link at `run.log` (a shared runs folder's writer
    made it, where hard links to others' files are allowed) had the log written into the file
    outside the project it is another name for."""
    (project / "runs" / "a").mkdir()
    outside = project.parent / "outside" / "summary.json"
    before = outside.read_bytes()
    os.link(outside, project / "runs" / "a" / "run.log")
    with pytest.raises(OSError) as err:
        runfiles.open_append(Path("runs/a/run.log"))
    assert err.value.errno == errno.EMLINK and "a hard link" in str(err.value)
    assert outside.read_bytes() == before
    os.close(runfiles.open_append(Path("runs/a/new.log")))  # a file of one name is appended to


def _linked_run(project: Path, mode: int) -> Path:
    """``runs/a`` (of ``mode``) whose run files are hard links to the canary outside."""
    run = project / "runs" / "a"
    run.mkdir()
    for name in ("run.log", "config.yaml", "summary.json"):
        os.link(project.parent / "outside" / "summary.json", run / name)
    run.chmod(mode)
    return run


@pytest.mark.parametrize("mode", [0o757, 0o1777, 0o775])
def test_a_hard_link_anyone_else_could_have_made_is_never_read(project: Path, mode: int) -> None:
    """Where a user may link files they cannot read (macOS, fs.protected_hardlinks=0), another user of
    a shared runs folder gave a file of the person's a run file's name: `status` printed it as the
    run's log, `report` tabulated it as the run's config. In a folder others can write, a file of
    more than one name is never read."""
    run = _linked_run(project, mode)
    if mode & 0o020 and runfs.private_group(os.geteuid(), os.stat(run).st_gid):
        if os.geteuid() != 0:
            pytest.skip("the folder's group is the user's own: a group of others needs chown")
        os.chown(run, -1, 54321)  # no such group: others may be in it, as far as anyone can tell
    with pytest.raises(runfiles.RunFileError) as err:
        runfiles.read_bytes(run / "config.yaml", limit=1 << 20)
    assert "is a hard link in a folder others can write or another user owns" in str(err.value)
    assert "copy the file there instead of linking it" in (err.value.hint or "")
    with pytest.raises(runfiles.RunFileError, match="hard link"):
        os.close(runfiles.open_regular(run / "summary.json"))
    assert runfiles.read_end(run / "run.log", 1000) == b""
    (run / "own.json").write_bytes(b"{}")  # a file of one name there is read as before
    assert runfiles.read_json(run / "own.json") == {}


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="chown needs root")
def test_a_hard_link_in_a_folder_of_another_user_is_never_read(project: Path) -> None:
    """The folder is writable by its owner alone, but its owner is not the file's: they named it."""
    run = _linked_run(project, 0o755)
    os.chown(run, 12345, -1)
    with pytest.raises(runfiles.RunFileError, match="hard link"):
        runfiles.read_bytes(run / "config.yaml", limit=1 << 20)
    os.chown(run, os.geteuid(), -1)
    assert runfiles.read_bytes(run / "config.yaml", limit=1 << 20) == CANARY


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="chown needs root")
def test_a_group_writable_folder_of_the_owners_private_group_is_theirs(project: Path) -> None:
    """Debian, Ubuntu and Fedora give each user a group of their own and a umask of 002: every
    folder is group-writable, by nobody but its owner. root's group `root` is such a group here."""
    import grp
    import pwd

    root_own = grp.getgrgid(0).gr_mem in ([], ["root"]) and pwd.getpwuid(0).pw_gid == 0
    assert runfs.private_group(0, 0) == root_own
    run = _linked_run(project, 0o775)
    if runfs.private_group(0, 0):
        assert runfiles.read_bytes(run / "config.yaml", limit=1 << 20) == CANARY
    os.chown(run, -1, 54321)
    with pytest.raises(runfiles.RunFileError, match="hard link"):
        runfiles.read_bytes(run / "config.yaml", limit=1 << 20)


def test_a_backup_made_with_cp_al_is_read(project: Path) -> None:
    """`cp -al runs backup` (or rsync --link-dest): every file two names, in folders their owner alone
    writes, so only they could have linked them: read as any file."""
    run = project / "runs" / "a"
    run.mkdir()
    (run / "summary.json").write_bytes(b'{"final_reward": 0.5}')
    (run / "run.log").write_bytes(b"step 1\n")
    backup = project / "backup" / "a"
    backup.mkdir(parents=True)
    for name in ("summary.json", "run.log"):
        os.link(run / name, backup / name)
    assert runfiles.read_json(backup / "summary.json") == {"final_reward": 0.5}
    assert runfiles.read_end(backup / "run.log", 100) == b"step 1\n"
    assert runfiles.read_json(run / "summary.json") == {"final_reward": 0.5}


def test_fifo_is_refused_without_blocking(project: Path) -> None:
    (project / "runs" / "a").mkdir()
    os.mkfifo(project / "runs" / "a" / "run.log")
    done: list[object] = []

    def attempt() -> None:
        for call in (
            lambda: runfiles.read_bytes(Path("runs/a/run.log"), limit=10),
            lambda: runfiles.open_append(Path("runs/a/run.log")),
        ):
            try:
                call()
            except (OSError, runfiles.RunFileError) as err:
                done.append(err)

    worker = threading.Thread(target=attempt, daemon=True)
    worker.start()
    worker.join(30)
    assert not worker.is_alive(), "a FIFO blocked a run-file open"
    assert len(done) == 2


def test_a_folder_named_on_the_command_line_is_used_as_given(project: Path, tmp_path: Path) -> None:
    real = tmp_path / "elsewhere" / "runs" / "a"
    real.mkdir(parents=True)
    (real / "summary.json").write_bytes(b"{}")
    os.symlink(tmp_path / "elsewhere", project / "named")
    with pytest.raises(runfiles.RunFileError):  # not named: a link below the working directory
        runfiles.read_bytes(Path("named/runs/a/summary.json"), limit=100)
    with runfs.trust(Path("named")):
        assert runfiles.read_bytes(Path("named/runs/a/summary.json"), limit=100) == b"{}"
        os.symlink(tmp_path / "outside", real.parent / "b")  # below the named folder: never followed
        with pytest.raises(runfiles.RunFileError, match="symbolic link"):
            runfiles.read_bytes(Path("named/runs/b/summary.json"), limit=1 << 20)
    with pytest.raises(runfiles.RunFileError):
        runfiles.read_bytes(Path("named/runs/a/summary.json"), limit=100)


def test_a_folder_swapped_for_a_link_after_the_walk_started_is_not_followed(project: Path) -> None:
    """The check-then-use window: the folder is opened once; swapping its path afterwards changes
    nothing the descriptor reaches, and a later open through the path refuses the link."""
    run = project / "runs" / "a"
    run.mkdir()
    with runfs.parent(Path("runs/a/run.log"), create=True) as (folder, name):
        os.rename(run, project / "runs" / "moved")
        os.symlink("../../outside", run)
        fd = os.open(name, os.O_WRONLY | os.O_CREAT | os.O_NOFOLLOW, 0o644, dir_fd=folder)
        os.close(fd)
    assert (project / "runs" / "moved" / "run.log").is_file()
    assert _outside(project) == {"summary.json": CANARY}
    with pytest.raises(OSError) as err:
        runfiles.open_append(Path("runs/a/run.log"))
    assert err.value.errno == errno.ELOOP


def test_participant_notes_in_a_linked_folder_are_neither_written_nor_read(project: Path) -> None:
    run = project / "runs" / "a"
    run.mkdir()
    (project.parent / "outside" / "1.0.rank1.json").write_text('{"label": "rank1", "exit_code": 3}')
    os.symlink("../../../outside", run / ranks.NOTES_DIR)
    with pytest.raises(OSError) as err:
        ranks.write_note(Path("runs/a"), "1.0", "rank0", 1)
    assert err.value.errno == errno.ELOOP
    assert ranks.notes(Path("runs/a"), "1.0", besides="rank0") == []
    assert sorted(os.listdir(project.parent / "outside")) == ["1.0.rank1.json", "summary.json"]


def test_participant_notes_that_are_links_fifos_huge_or_garbage_are_not_notes(project: Path) -> None:
    notes = project / "runs" / "a" / ranks.NOTES_DIR
    notes.mkdir(parents=True)
    os.symlink("../../../../outside/summary.json", notes / "1.0.link.json")
    os.mkfifo(notes / "1.0.fifo.json")
    (notes / "1.0.huge.json").write_bytes(b" " * (ranks.NOTE_BYTES + 1))
    (notes / "1.0.garbage.json").write_bytes(b"\xff[not json")
    (notes / "1.0.list.json").write_bytes(b"[1, 2]")
    ranks.write_note(Path("runs/a"), "1.0", "rank2", 7)
    assert [(n.label, n.exit_code) for n in ranks.notes(Path("runs/a"), "1.0", besides="rank0")] == [
        ("rank2", 7)
    ]


def test_the_search_journal_refuses_a_file_swapped_in(project: Path) -> None:
    from sweepgen.run.search.journal_file import NoFollowJournal
    from sweepgen.run.search.study import _FlockLock

    state = project / "generated" / "demo" / ".search"
    state.mkdir(parents=True)
    path = Path("generated/demo/.search/study.journal")
    backend = NoFollowJournal(str(path), lock_obj=_FlockLock(path))
    backend.append_logs([{"op_code": 0, "worker_id": "w", "study_name": "s", "directions": [0]}])
    assert len(list(backend.read_logs(0))) == 1
    other = state / "other"
    other.write_bytes(b'{"op_code": 0}\n{"op_code": 0}\n')
    os.replace(other, state / "study.journal")
    with pytest.raises(Exception, match="replaced by another file"):
        list(backend.read_logs(0))
    with pytest.raises(Exception, match="replaced by another file"):
        backend.append_logs([{"op_code": 0}])


def test_the_search_journal_is_never_a_hard_link_written_through(project: Path) -> None:
    """`.search/study.journal` is appended in place: a hard link there had the study's operations
    appended to the file outside the project it is another name for."""
    from sweepgen.run.search.journal_file import NoFollowJournal
    from sweepgen.run.search.study import _FlockLock

    (project / "generated" / "demo" / ".search").mkdir(parents=True)
    path = Path("generated/demo/.search/study.journal")
    os.link(project.parent / "outside" / "summary.json", path)
    before = _outside(project)
    with pytest.raises(Exception, match="study.journal is a hard link"):
        NoFollowJournal(str(path), lock_obj=_FlockLock(path))
    assert _outside(project) == before


def test_the_search_journal_is_read_bounded(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A runs folder is shared: a journal grown to 3 GB of zeros (sparse: free for whoever wrote it)
    was read as one line, 6 GB of memory for `status`. Past its size limit it is refused from its
    size alone; a line past the operation limit is refused at its line, before it is read whole."""
    from sweepgen.run.search import journal_file
    from sweepgen.run.search.study import _FlockLock

    (project / "generated" / "demo" / ".search").mkdir(parents=True)
    path = Path("generated/demo/.search/study.journal")
    backend = journal_file.NoFollowJournal(str(path), lock_obj=_FlockLock(path))
    backend.append_logs([{"op_code": 0, "worker_id": "w", "study_name": "s", "directions": [0]}])
    with open(path, "ab") as fh:
        fh.write(b"0" * 5000)  # no newline: one long line
    monkeypatch.setattr(journal_file, "MAX_OP_BYTES", 4096)
    with pytest.raises(ValueError, match="line 2: longer than 4,096 bytes"):
        list(backend.read_logs(0))
    os.truncate(path, journal_file.MAX_JOURNAL_BYTES + 1)  # sparse
    with pytest.raises(ValueError, match=r"1,073,741,825 bytes, more than a study holds"):
        list(backend.read_logs(0))


def test_a_sweep_folders_files_are_read_bounded(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A sweep folder may be shared: a 3 GB sparse sweep.lock.json (free to whoever made it) was read
    whole by `status`, `run`, `report`, `check` and `render` (6 GB of memory). A lock or generated
    file past the read limit is refused from its size, exit 2 naming it."""
    from sweepgen.compile.output.lockfile import lock
    from sweepgen.fs import outtree

    sweep = project / "generated" / "demo"
    sweep.mkdir(parents=True)
    monkeypatch.setattr(outtree, "MAX_READ_BYTES", 1 << 20)
    for name in ("sweep.lock.json", "a.yaml"):
        with open(sweep / name, "wb") as fh:
            fh.truncate((1 << 20) + 1)  # sparse
    with pytest.raises(UserError, match=r"1,048,577 bytes, more than sweepgen reads"):
        lock.read(str(sweep), "generated/demo")
    with pytest.raises(UserError, match=r"is 1,048,577 bytes, more than sweepgen reads of a file"):
        outtree.read_inside(str(sweep), "a.yaml")
    assert outtree.read_inside(str(sweep), "missing.yaml") is None
