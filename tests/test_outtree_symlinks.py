"""The output tree is never read or written through a
symlink, FIFO or device; ``check`` reports them and never prints bytes of a file that is not generated
output; nothing outside the output folder is ever created, changed or deleted."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest
from fs_support import cli, leftovers, outside_project, remove_chain, snapshot, sweepgen, write_spec

NESTED = "s{{ training.seed }}/c.yaml"


@pytest.fixture
def proj(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """tmp_path/proj is the project (and cwd); tmp_path/outside holds files that must stay untouched."""
    proj = outside_project(tmp_path, monkeypatch)
    (tmp_path / "outside" / "c.yaml").write_text("not sweepgen's\n")
    return proj


def test_a_symlinked_subfolder_is_refused_and_nothing_is_created_outside(proj: Path, tmp_path: Path) -> None:
    write_spec(proj, 2, output=NESTED)
    sweep = proj / "generated/demo"
    sweep.mkdir(parents=True)
    (sweep / "s1").symlink_to(tmp_path / "outside")  # git can commit this
    before = snapshot(tmp_path)
    rc, out = cli("render", "specs/demo.yaml")
    assert rc == 2, out
    assert "generated/demo/s1 is a symlink" in out and "never writes through symlinks" in out
    assert "hint:" in out
    assert snapshot(tmp_path) == before  # nothing written anywhere, outside included
    rc, out = cli("check", "specs/demo.yaml")
    assert rc == 1, out
    assert "generated/demo/s1: unsafe: a symlink inside a generated folder" in out
    assert snapshot(tmp_path) == before


def test_a_symlinked_subfolder_matching_the_lock_is_neither_overwritten_nor_deleted(
    proj: Path, tmp_path: Path
) -> None:
    write_spec(proj, 2, output=NESTED)
    assert cli("render", "specs/demo.yaml")[0] == 0
    sweep = proj / "generated/demo"
    outside = tmp_path / "outside"
    # the outside file has exactly the bytes the lock records for s2/c.yaml
    (outside / "c.yaml").write_bytes((sweep / "s2/c.yaml").read_bytes())
    (sweep / "s2/c.yaml").unlink()
    (sweep / "s2").rmdir()
    (sweep / "s2").symlink_to(outside)
    inputs = (proj / "specs", proj / "templates")
    before = snapshot(tmp_path, *inputs)
    write_spec(proj, 1, output=NESTED)  # s2/c.yaml would now be removed
    rc, out = cli("render", "specs/demo.yaml")
    assert rc == 2 and "generated/demo/s2 is a symlink" in out, out
    write_spec(proj, 2, output=NESTED, template="changed: {{ training.seed }}\n")  # ... or updated
    rc, out = cli("render", "specs/demo.yaml")
    assert rc == 2 and "generated/demo/s2 is a symlink" in out, out
    assert snapshot(tmp_path, *inputs) == before
    assert (outside / "c.yaml").exists()


def test_a_dangling_symlink_at_an_output_path_is_an_error_not_replaced(proj: Path, tmp_path: Path) -> None:
    write_spec(proj, 2)
    sweep = proj / "generated/demo"
    sweep.mkdir(parents=True)
    target = tmp_path / "outside" / "created-by-sweepgen.yaml"
    (sweep / "seed1.yaml").symlink_to(target)
    before = snapshot(tmp_path)
    rc, out = cli("render", "specs/demo.yaml")
    assert rc == 2, out
    assert "generated/demo/seed1.yaml is a symlink where sweepgen must write a file" in out
    assert snapshot(tmp_path) == before
    assert os.readlink(sweep / "seed1.yaml") == str(target) and not target.exists()
    rc, out = cli("check", "specs/demo.yaml")
    assert rc == 1 and "generated/demo/seed1.yaml: unsafe: a symlink where the spec's file belongs" in out


def test_a_symlinked_sweep_folder_is_refused(proj: Path, tmp_path: Path) -> None:
    write_spec(proj, 2)
    (proj / "generated").mkdir()
    (proj / "generated/demo").symlink_to(tmp_path / "outside")
    before = snapshot(tmp_path)
    rc, out = cli("render", "specs/demo.yaml")
    assert rc == 2 and "generated/demo is a symlink where the sweep folder belongs" in out, out
    rc, out = cli("check", "specs/demo.yaml")
    assert rc == 1 and "generated/demo: unsafe: a symlink where the sweep folder belongs" in out, out
    assert snapshot(tmp_path) == before


def test_a_lock_symlinked_to_a_secret_is_never_read_or_printed(proj: Path, tmp_path: Path) -> None:
    write_spec(proj, 2)
    assert cli("render", "specs/demo.yaml")[0] == 0
    secret = tmp_path / "outside" / "creds.json"
    secret.write_text('{"token": "SECRET-9f8e7d"}\n')
    lock = proj / "generated/demo/sweep.lock.json"
    lock.unlink()
    lock.symlink_to(secret)
    before = snapshot(tmp_path)
    for fmt in ("text", "json", "github"):
        rc, out = cli("check", "--format", fmt, "specs/demo.yaml")
        assert rc == 1, out
        assert "SECRET-9f8e7d" not in out
        assert "sweep.lock.json" in out and "symlink" in out
    rc, out = cli("render", "specs/demo.yaml")
    assert rc == 2 and "SECRET-9f8e7d" not in out and "sweep.lock.json is a symlink" in out
    assert snapshot(tmp_path) == before


def test_a_symlink_to_dev_zero_is_not_read(proj: Path, tmp_path: Path) -> None:
    """Before: ``check`` read /dev/zero until memory ran out. Subprocess with a timeout: a hang fails."""
    write_spec(proj, 2)
    assert cli("render", "specs/demo.yaml")[0] == 0  # set-up: in-process
    out_file = proj / "generated/demo/seed1.yaml"
    out_file.unlink()
    out_file.symlink_to("/dev/zero")
    before = snapshot(tmp_path)
    done = sweepgen(proj, "check", "specs/demo.yaml", timeout=60)
    assert done.returncode == 1, done.stderr
    assert "generated/demo/seed1.yaml: unsafe: a symlink where the spec's file belongs" in done.stdout
    done = sweepgen(proj, "render", "specs/demo.yaml", timeout=60)
    assert done.returncode == 2 and "seed1.yaml is a symlink" in done.stderr
    assert "Traceback" not in done.stderr
    assert snapshot(tmp_path) == before


@pytest.mark.parametrize("where", ["seed1.yaml", "extra.fifo", "sweep.lock.json"])
def test_a_fifo_in_the_output_tree_never_hangs(proj: Path, tmp_path: Path, where: str) -> None:
    write_spec(proj, 2)
    assert cli("render", "specs/demo.yaml")[0] == 0  # set-up: in-process
    fifo = proj / "generated/demo" / where
    fifo.unlink(missing_ok=True)
    os.mkfifo(fifo)
    before = snapshot(tmp_path)
    done = sweepgen(proj, "check", "specs/demo.yaml", timeout=60)
    assert done.returncode == 1, done.stdout + done.stderr
    assert f"generated/demo/{where}: unsafe: a FIFO" in done.stdout
    done = sweepgen(proj, "render", "specs/demo.yaml", timeout=60)
    if where == "extra.fifo":  # not on a path render needs: render works, check keeps reporting it
        assert done.returncode == 0, done.stderr
    else:
        assert done.returncode == 2 and f"generated/demo/{where} is a FIFO" in done.stderr, done.stderr
        assert snapshot(tmp_path) == before
    assert stat.S_ISFIFO((proj / "generated/demo" / where).lstat().st_mode)
    assert leftovers(proj / "generated") == []


def test_a_device_in_the_output_tree_is_reported_not_opened(proj: Path, tmp_path: Path) -> None:
    write_spec(proj, 2)
    assert cli("render", "specs/demo.yaml")[0] == 0
    dev = proj / "generated/demo/zero"
    try:
        os.mknod(dev, stat.S_IFCHR | 0o600, os.makedev(1, 5))  # /dev/zero's numbers
    except PermissionError:
        pytest.skip("creating a device node needs root (CAP_MKNOD)")
    done = sweepgen(proj, "check", "specs/demo.yaml", timeout=60)
    assert done.returncode == 1
    assert "generated/demo/zero: unsafe: a device inside a generated folder" in done.stdout


def test_a_symlink_elsewhere_in_the_tree_is_reported_by_check(proj: Path, tmp_path: Path) -> None:
    write_spec(proj, 2)
    assert cli("render", "specs/demo.yaml")[0] == 0
    (proj / "generated/demo/notes").symlink_to(tmp_path / "outside/victim.txt")
    rc, out = cli("check", "specs/demo.yaml")
    assert rc == 1
    assert "generated/demo/notes: unsafe: a symlink inside a generated folder" in out
    assert "keep me" not in out  # never read


def test_orphan_sweep_symlink_is_reported(proj: Path, tmp_path: Path) -> None:
    write_spec(proj, 2)
    assert cli("render", "specs/demo.yaml")[0] == 0
    (proj / "generated/other").symlink_to(tmp_path / "outside")
    rc, out = cli("check")
    assert rc == 1 and "generated/other: unsafe: a symlink inside a generated folder" in out, out


def test_a_file_where_an_output_folder_belongs_is_an_error(proj: Path, tmp_path: Path) -> None:
    write_spec(proj, 2, output=NESTED)
    (proj / "generated/demo").mkdir(parents=True)
    (proj / "generated/demo/s1").write_text("mine\n")
    before = snapshot(tmp_path)
    rc, out = cli("render", "specs/demo.yaml")
    assert rc == 2 and "generated/demo/s1 is a file where sweepgen must create a folder" in out, out
    assert snapshot(tmp_path) == before


def test_a_folder_where_an_output_file_belongs_is_an_error(proj: Path, tmp_path: Path) -> None:
    write_spec(proj, 2)
    (proj / "generated/demo/seed1.yaml").mkdir(parents=True)
    before = snapshot(tmp_path)
    rc, out = cli("render", "specs/demo.yaml")
    assert rc == 2 and "generated/demo/seed1.yaml is a folder where sweepgen must write a file" in out, out
    assert "hint: move the folder away" in out
    rc, out = cli("check", "specs/demo.yaml")
    assert rc == 1 and "generated/demo/seed1.yaml: unsafe: a folder where the spec's file belongs" in out
    assert snapshot(tmp_path) == before


def test_an_output_that_was_a_file_becomes_a_folder(proj: Path) -> None:
    """The one case a file may stand where a folder belongs: sweepgen's own, removed first."""
    write_spec(proj, 2, output="{{ variant.name }}")
    assert cli("render", "specs/demo.yaml")[0] == 0
    write_spec(proj, 2, output="{{ variant.name }}/c.yaml")
    rc, out = cli("render", "specs/demo.yaml")
    assert rc == 0, out
    assert (proj / "generated/demo/seed1/c.yaml").is_file()
    assert cli("check", "specs/demo.yaml")[0] == 0


RUN_TEMPLATE = "output_dir: runs/{{ variant.name }}\nseed: {{ training.seed }}\n"


@pytest.mark.parametrize("swap", ["fifo", "dev-zero", "symlink-out"])
def test_run_never_reads_through_the_generated_folder(proj: Path, tmp_path: Path, swap: str) -> None:
    write_spec(proj, 2, template=RUN_TEMPLATE)
    assert cli("render", "specs/demo.yaml")[0] == 0
    target = proj / "generated/demo/seed1.yaml"
    target.unlink()
    if swap == "fifo":
        os.mkfifo(target)
    else:
        target.symlink_to("/dev/zero" if swap == "dev-zero" else tmp_path / "outside/victim.txt")
    before = snapshot(tmp_path)
    done = sweepgen(proj, "run", "generated/demo", "--dry-run", "--command", "echo {config}", timeout=60)
    assert done.returncode == 2, done.stdout + done.stderr
    kind = "FIFO" if swap == "fifo" else "symlink"
    assert f"generated/demo/seed1.yaml is a {kind}; sweepgen never reads through it" in done.stderr
    assert "keep me" not in done.stdout + done.stderr
    assert snapshot(tmp_path) == before


def test_run_refuses_a_lock_path_that_leaves_the_folder(proj: Path, tmp_path: Path) -> None:
    write_spec(proj, 2, template=RUN_TEMPLATE)
    assert cli("render", "specs/demo.yaml")[0] == 0
    lock = proj / "generated/demo/sweep.lock.json"
    lock.write_text(lock.read_text().replace('"path": "seed1.yaml"', '"path": "../../../outside/victim.txt"'))
    done = sweepgen(proj, "run", "generated/demo", "--dry-run", "--command", "echo {config}", timeout=60)
    assert done.returncode == 2
    assert "leaves the folder generated/demo" in done.stderr


def test_an_output_that_was_in_a_folder_becomes_a_file(proj: Path, tmp_path: Path) -> None:
    """The folder in the way holds only sweepgen's files (and empty folders): removed, then written."""
    write_spec(proj, 2, output="{{ variant.name }}/c.yaml")
    assert cli("render", "specs/demo.yaml")[0] == 0
    (proj / "generated/demo/seed1/empty/deeper").mkdir(parents=True)
    write_spec(proj, 2, output="{{ variant.name }}")
    rc, out = cli("render", "specs/demo.yaml")
    assert rc == 0, out
    assert (proj / "generated/demo/seed1").is_file()
    assert cli("check", "specs/demo.yaml")[0] == 0


def test_a_folder_holding_a_foreign_file_is_not_removed_to_make_room(proj: Path, tmp_path: Path) -> None:
    write_spec(proj, 2, output="{{ variant.name }}/c.yaml")
    assert cli("render", "specs/demo.yaml")[0] == 0
    (proj / "generated/demo/seed1/notes.md").write_text("mine\n")
    write_spec(proj, 2, output="{{ variant.name }}")
    before = snapshot(tmp_path, proj / "specs")
    rc, out = cli("render", "specs/demo.yaml")
    assert rc == 2 and "generated/demo/seed1 is a folder where sweepgen must write a file" in out, out
    assert snapshot(tmp_path, proj / "specs") == before


def test_a_folder_nested_deeper_than_the_recursion_limit_is_reported_by_check(proj: Path) -> None:
    """git holds a path 600 folders deep; the walk of the output tree lists it without recursing
    (it ended check and render with a RecursionError, exit 70)."""
    write_spec(proj, 2)
    assert cli("render", "specs/demo.yaml")[0] == 0
    deep = proj / "generated/demo" / os.path.join(*["d"] * 600)
    deep.mkdir(parents=True)
    (deep / "x.yaml").write_text("x: 1\n")
    try:
        rc, out = cli("check", "specs/demo.yaml")
        assert rc == 1 and "Traceback" not in out, out
        assert "generated/demo/d/d/d/" in out and "x.yaml" in out
        assert cli("render", "specs/demo.yaml")[0] == 0
    finally:
        remove_chain(deep / "x.yaml")


def test_the_walk_lists_folders_before_what_they_hold_sorted(tmp_path: Path) -> None:
    from sweepgen.fs.outtree import OutputTree

    for rel in ("b/z.yaml", "b/a/y.yaml", "a.yaml", "c/d/e/f.yaml"):
        (tmp_path / "t" / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / "t" / rel).write_text("x")
    tree = OutputTree.open(str(tmp_path), "t", "t", create=False)
    assert tree is not None
    assert list(tree.walk(folders=True)) == [
        ("a.yaml", "file"),
        ("b", "folder"),
        ("b/a", "folder"),
        ("b/a/y.yaml", "file"),
        ("b/z.yaml", "file"),
        ("c", "folder"),
        ("c/d", "folder"),
        ("c/d/e", "folder"),
        ("c/d/e/f.yaml", "file"),
    ]


def test_a_file_1500_folders_deep_is_written_read_and_listed(tmp_path: Path) -> None:
    """A spec's output (or a lock's entry) may name a path 1,500 folders deep (3,000 characters:
    the file system takes it); its folders are opened and made one at a time, without recursion
    (a RecursionError ended render and check with exit 70)."""
    from sweepgen.fs.outtree import OutputTree

    rel = "a/" * 1500 + "x.yaml"
    tree = OutputTree.open(str(tmp_path), "t", "t", create=True)
    assert tree is not None
    try:
        tree.write(rel, b"x: 1\n")
        again = OutputTree.open(str(tmp_path), "t", "t", create=False)
        assert again is not None
        assert again.read(rel) == b"x: 1\n"
        assert list(again.walk()) == [(rel, "file")]
    finally:
        remove_chain(tmp_path / "t" / rel)
