"""The ground-floor file-system module: one atomic writer for everyone, and the symlink-free tree."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest
from fs_support import remount, tmpfs

from sweepgen.fs import safefs
from sweepgen.fs.outtree import OutputTree, read_inside
from sweepgen.fs.safefs import UnsafePath, write_atomic
from sweepgen.run.core.base import write_json_atomic
from sweepgen_trainer.rundir.outputs import atomic_write_text


@pytest.mark.parametrize("mask,mode", [(0o022, 0o644), (0o027, 0o640), (0o002, 0o664)])
@pytest.mark.parametrize("writer", ["safefs", "run", "trainer"])
def test_every_atomic_writer_follows_the_umask(tmp_path: Path, mask: int, mode: int, writer: str) -> None:
    target = tmp_path / "sub" / "f.json"
    old = os.umask(mask)
    try:
        if writer == "safefs":
            write_atomic(target, b"{}\n")
        elif writer == "run":
            write_json_atomic(target, {})
        else:
            target.parent.mkdir()
            atomic_write_text(target, "{}\n")
    finally:
        os.umask(old)
    assert target.read_bytes() == b"{}\n"
    assert stat.S_IMODE(target.stat().st_mode) == mode
    assert os.listdir(target.parent) == ["f.json"]  # no temp file left


def test_write_atomic_replaces_a_symlink_never_writes_through_it(tmp_path: Path) -> None:
    victim = tmp_path / "victim.txt"
    victim.write_text("keep me\n")
    link = tmp_path / "out" / "f.yaml"
    link.parent.mkdir()
    link.symlink_to(victim)
    write_atomic(link, b"new\n")
    assert victim.read_text() == "keep me\n"
    assert not link.is_symlink() and link.read_bytes() == b"new\n"


def test_write_atomic_on_a_full_disk_raises_with_the_path_and_leaves_nothing(tmp_path: Path) -> None:
    with tmpfs(tmp_path / "disk", "64k") as disk:
        (disk / "f").write_bytes(b"old\n")
        with pytest.raises(OSError) as info:
            write_atomic(disk / "f", b"x" * 200_000)
        assert info.value.errno == 28 and info.value.filename == str(disk / "f")
        assert sorted(os.listdir(disk)) == ["f"] and (disk / "f").read_bytes() == b"old\n"


def test_write_atomic_on_a_read_only_disk(tmp_path: Path) -> None:
    with tmpfs(tmp_path / "disk", "64k") as disk:
        remount(disk, "ro")
        with pytest.raises(OSError) as info:
            write_atomic(disk / "f", b"x")
        assert info.value.errno == 30


def test_temp_names_do_not_grow_with_the_target_name(tmp_path: Path) -> None:
    name = "n" * 255  # the longest name ext4 and tmpfs allow
    write_atomic(tmp_path / name, b"ok\n")
    assert (tmp_path / name).read_bytes() == b"ok\n"


def test_the_walk_lists_every_kind_and_enters_only_real_folders(tmp_path: Path) -> None:
    root = tmp_path / "out"
    (root / "a/b").mkdir(parents=True)
    (root / "a/b/f.yaml").write_text("x")
    (root / "link").symlink_to(tmp_path)
    (root / "dangling").symlink_to(tmp_path / "nowhere")
    os.mkfifo(root / "a/pipe")
    tree = OutputTree.open(str(tmp_path), "out", "out", create=False)
    assert tree is not None
    with tree:
        assert list(tree.walk()) == [
            ("a/b/f.yaml", "file"),
            ("a/pipe", "FIFO"),
            ("dangling", "symlink"),
            ("link", "symlink"),
        ]
        assert tree.node("link/x.yaml").kind == "symlink" and tree.node("link/x.yaml").blocked
        assert tree.node("a/b/f.yaml/c").kind == "file" and tree.node("a/b/f.yaml/c").blocked
        assert tree.node("a/none/c").kind == "missing"
        with pytest.raises(UnsafePath, match="is a FIFO"):
            tree.read("a/pipe")
        with pytest.raises(UnsafePath, match="where sweepgen must create a folder"):
            tree.write("link/x.yaml", b"x")
    assert not (tmp_path / "x.yaml").exists()


def test_a_tree_keeps_few_folders_open(tmp_path: Path) -> None:
    """10,000 files in 2,000 folders: cached folder fds stay far below the open-file limit."""
    tree = OutputTree.open(str(tmp_path), "out", "out", create=True)
    assert tree is not None
    with tree:
        for i in range(2000):
            tree.write(f"d{i}/c.yaml", b"x")
        assert len(os.listdir(f"/proc/{os.getpid()}/fd")) < 200
    assert len(os.listdir(tmp_path / "out")) == 2000


def test_read_inside_refuses_paths_that_leave_the_folder(tmp_path: Path) -> None:
    (tmp_path / "in").mkdir()
    (tmp_path / "secret").write_text("s")
    for rel in ("../secret", "/etc/passwd", "a/../../secret", "", "a//b"):
        with pytest.raises(UnsafePath):
            read_inside(str(tmp_path / "in"), rel)
    assert read_inside(str(tmp_path / "in"), "none.yaml") is None


def test_environment_faults_get_a_hint_and_bugs_do_not() -> None:
    assert safefs.is_environment_fault(OSError(28, "No space left on device"))
    assert safefs.is_environment_fault(OSError(36, "File name too long"))
    assert not safefs.is_environment_fault(OSError(9, "Bad file descriptor"))  # EBADF: a bug
    err = safefs.fs_error(OSError(30, "Read-only file system"), "generated/demo/x.yaml", "write")
    assert err.format() == (
        "generated/demo/x.yaml: error: cannot write generated/demo/x.yaml: Read-only file system\n"
        "  hint: the file system is read-only: remount it read-write or choose another folder (-o DIR)"
    )
    assert err.exit_code == 2


def test_write_atomic_onto_a_folder_raises_eisdir_naming_it_and_leaves_nothing(tmp_path: Path) -> None:
    (tmp_path / "summary.json").mkdir()
    with pytest.raises(IsADirectoryError) as info:
        write_atomic(tmp_path / "summary.json", b"{}")
    assert info.value.filename == str(tmp_path / "summary.json")
    assert os.listdir(tmp_path) == ["summary.json"]
