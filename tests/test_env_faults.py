"""The environment's faults: a full or read-only disk, permissions, names the file system
refuses, a file where a folder belongs, a full or closed stdout. Each is exit 2 with the path and a
hint, never a traceback; nothing outside the output folder changes and nothing is left behind.

The disks are real: tmpfs mounts (the harness is root), remounted read-only or filled up.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner
from fs_support import ENV, cli, leftovers, outside_project, remount, snapshot, tmpfs, write_spec

from sweepgen.cli import main

BIG = "seed: {{ training.seed }}\npad: '" + "x" * 8000 + "'\n"  # 8 KB per file


@pytest.fixture
def proj(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    return outside_project(tmp_path, monkeypatch)


def test_a_full_disk_is_exit_2_and_the_next_render_finishes(proj: Path, tmp_path: Path) -> None:
    with tmpfs(proj / "generated", "256k") as gen:
        write_spec(proj, 60, template=BIG)  # 480 KB of files on a 256 KB disk
        inputs = (gen, proj / "specs", proj / "templates")
        before = snapshot(tmp_path, *inputs)
        rc, out = cli("render", "specs/demo.yaml")
        assert rc == 2, out
        assert "error: cannot write generated/demo/" in out and "No space left on device" in out
        assert "hint: the disk is full: free some space" in out
        assert snapshot(tmp_path, *inputs) == before
        # the disk filled while the files were staged, before anything was put in place: the staged
        # files and the sweep folder this render made are gone, no journal is needed
        assert leftovers(gen) == []
        rc, out = cli("check", "specs/demo.yaml")
        assert rc == 1 and "missing" in out and "interrupted" not in out and "edited" not in out, out
        remount(gen, "size=4m")  # space freed
        rc, out = cli("render", "specs/demo.yaml")
        assert rc == 0, out
        assert cli("check", "specs/demo.yaml") == (0, "checked 1 spec(s), 60 generated file(s): ok\n")
        assert leftovers(gen) == []


def test_after_a_full_disk_the_old_spec_renders_again(proj: Path) -> None:
    with tmpfs(proj / "generated", "256k") as gen:
        write_spec(proj, 20)
        assert cli("render", "specs/demo.yaml")[0] == 0
        write_spec(proj, 60, template=BIG)
        assert cli("render", "specs/demo.yaml")[0] == 2
        write_spec(proj, 20)  # revert the change
        # nothing of the failed render was put in place: the old render is whole
        assert cli("check", "specs/demo.yaml") == (0, "checked 1 spec(s), 20 generated file(s): ok\n")
        remount(gen, "size=4m")
        rc, out = cli("render", "specs/demo.yaml")
        assert rc == 0, out
        assert cli("check", "specs/demo.yaml")[0] == 0
        assert sorted(os.listdir(gen / "demo")) == sorted(
            [f"seed{i}.yaml" for i in range(1, 21)] + ["sweep.lock.json"]
        )


def test_a_read_only_disk_is_exit_2_and_nothing_changes(proj: Path, tmp_path: Path) -> None:
    with tmpfs(proj / "generated", "1m") as gen:
        write_spec(proj, 3)
        assert cli("render", "specs/demo.yaml")[0] == 0
        write_spec(proj, 4, template="changed: {{ training.seed }}\n")
        remount(gen, "ro")
        before = snapshot(tmp_path)
        rc, out = cli("render", "specs/demo.yaml")
        assert rc == 2, out
        assert "cannot write generated/demo/seed1.yaml: Read-only file system" in out  # the first staged
        assert "hint: the file system is read-only" in out
        assert snapshot(tmp_path) == before
        rc, out = cli("check", "specs/demo.yaml")  # reading works on a read-only disk
        assert rc == 1 and "stale" in out and "missing" in out
        remount(gen, "rw")
        assert cli("render", "specs/demo.yaml")[0] == 0
        assert leftovers(gen) == []


def test_a_read_only_disk_for_a_new_output_root(proj: Path, tmp_path: Path) -> None:
    with tmpfs(tmp_path / "ro", "64k") as ro:
        remount(ro, "ro")
        write_spec(proj, 2)
        rc, out = cli("render", "-o", str(ro / "gen"), "specs/demo.yaml")
        assert rc == 2 and "Read-only file system" in out and "hint:" in out, out


def test_a_file_where_the_sweep_folder_belongs(proj: Path, tmp_path: Path) -> None:
    write_spec(proj, 2)
    (proj / "generated").mkdir()
    (proj / "generated/demo").write_text("a file\n")
    before = snapshot(tmp_path)
    rc, out = cli("render", "specs/demo.yaml")
    assert rc == 2, out
    assert "generated/demo is a file where the sweep folder belongs" in out
    assert "hint: move the file away" in out
    rc, out = cli("check", "specs/demo.yaml")
    assert rc == 1 and "generated/demo: unsafe: a file where the sweep folder belongs" in out, out
    assert snapshot(tmp_path) == before


def test_a_file_where_the_output_root_belongs(proj: Path, tmp_path: Path) -> None:
    write_spec(proj, 2)
    (proj / "generated").write_text("a file\n")
    before = snapshot(tmp_path)
    rc, out = cli("render", "specs/demo.yaml")
    # the render creates the sweep folder to stage its files (compile.staging): it names that step
    assert rc == 2 and "cannot create folder generated: Not a directory" in out, out
    rc, out = cli("render", "-o", "generated/sub", "specs/demo.yaml")
    assert rc == 2, out
    assert "cannot open folder generated/sub: Not a directory" in out
    assert "hint: a file is where a folder belongs" in out
    assert snapshot(tmp_path) == before


def test_an_output_name_as_long_as_the_file_system_allows_renders(proj: Path) -> None:
    """Temp names do not grow with the output name: a name at the spec's 200-byte cap renders (the
    longest the file system allows is refused earlier, by that cap)."""
    name = "n" * 194  # + "1.yaml": 200 bytes
    write_spec(proj, 2, output=name + "{{ training.seed }}.yaml")
    rc, out = cli("render", "specs/demo.yaml")
    assert rc == 0, out
    assert cli("check", "specs/demo.yaml")[0] == 0
    assert leftovers(proj / "generated") == []


def test_an_output_name_too_long_for_the_file_system_is_exit_2_before_writing(
    proj: Path, tmp_path: Path
) -> None:
    write_spec(proj, 2, output="n" * 300 + "{{ training.seed }}.yaml")
    before = snapshot(tmp_path)
    rc, out = cli("render", "specs/demo.yaml")
    assert rc == 2, out
    assert "nnnnnnnn" in out and "longer than" in out and "hint:" in out  # refused by the name cap
    assert snapshot(tmp_path) == before


def test_stdout_on_dev_full_is_exit_2(proj: Path) -> None:
    write_spec(proj, 2)
    for args in (["render", "specs/demo.yaml"], ["check", "specs/demo.yaml"], ["list", "specs/demo.yaml"]):
        with open("/dev/full", "w") as full:
            done = subprocess.run(
                [sys.executable, "-m", "sweepgen", *args],
                env=ENV,
                stdout=full,
                stderr=subprocess.PIPE,
                text=True,
                timeout=120,
                check=False,
            )
        assert done.returncode == 2, (args, done.stderr)
        assert "<stdout>: error: cannot write to standard output: No space left on device" in done.stderr
        assert "hint: standard output goes to a full disk (or /dev/full)" in done.stderr
        assert "Traceback" not in done.stderr and "Exception ignored" not in done.stderr
    assert cli("check", "specs/demo.yaml")[0] == 0  # the render itself went through


def test_a_closed_stdout_pipe_is_exit_2(proj: Path) -> None:
    write_spec(proj, 3000)
    for fmt in ("text", "json"):
        proc = subprocess.Popen(
            [sys.executable, "-m", "sweepgen", "list", "--format", fmt, "specs/demo.yaml"],
            env=ENV,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        assert proc.stdout is not None
        proc.stdout.close()  # the reader is gone before sweepgen writes
        _, err = proc.communicate(timeout=120)
        assert proc.returncode == 2, err
        assert "<stdout>: error: cannot write to standard output: Broken pipe" in err
        assert "Traceback" not in err and "Exception ignored" not in err


NO_DAC = [
    "setpriv",
    "--bounding-set",
    "-dac_override,-dac_read_search",
    "--inh-caps",
    "-dac_override,-dac_read_search",
    "--",
]


def without_root_override(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """sweepgen as root without CAP_DAC_OVERRIDE: file modes apply to it, as to any user."""
    if os.geteuid() != 0 or shutil.which("setpriv") is None:
        pytest.skip("needs root and setpriv (util-linux) to drop the permission-override capability")
    return subprocess.run(
        [*NO_DAC, sys.executable, "-m", "sweepgen", *args],
        cwd=cwd,
        env=ENV,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_permission_denied_is_exit_2_with_the_path(proj: Path, tmp_path: Path) -> None:
    write_spec(proj, 2)
    assert cli("render", "specs/demo.yaml")[0] == 0
    write_spec(proj, 2, template="changed: {{ training.seed }}\n")
    os.chmod(proj / "generated/demo", 0o555)
    try:
        before = snapshot(tmp_path)
        done = without_root_override(proj, "render", "specs/demo.yaml")
        assert done.returncode == 2, done.stderr
        assert "cannot write generated/demo/seed1.yaml: Permission denied" in done.stderr  # the first staged
        assert "hint: permission denied: check the owner and mode" in done.stderr
        assert "Traceback" not in done.stderr
        assert snapshot(tmp_path) == before
        done = without_root_override(proj, "check", "specs/demo.yaml")
        assert done.returncode == 1 and "stale" in done.stdout, done.stderr
    finally:
        os.chmod(proj / "generated/demo", 0o755)


def test_an_unreadable_generated_file_is_exit_2(proj: Path) -> None:
    write_spec(proj, 2)
    assert cli("render", "specs/demo.yaml")[0] == 0
    os.chmod(proj / "generated/demo/seed1.yaml", 0o000)
    for command in ("check", "render"):
        done = without_root_override(proj, command, "specs/demo.yaml")
        assert done.returncode == 2, done.stdout + done.stderr
        assert "cannot read generated/demo/seed1.yaml: Permission denied" in done.stdout + done.stderr
        assert "Traceback" not in done.stderr


@pytest.mark.parametrize(
    "err,rc,text",
    [
        (
            PermissionError(13, "Permission denied", "runs/x/status.json"),
            2,
            "runs/x/status.json: error: Permission denied",
        ),
        (OSError(28, "No space left on device", "runs/x/metrics.jsonl"), 2, "hint: the disk is full"),
        (IsADirectoryError(21, "Is a directory", "runs/x/summary.json"), 2, "hint: a folder is where a file"),
        (OSError(30, "Read-only file system", "runs/x"), 2, "runs/x: error: Read-only file system"),
        (OSError(36, "File name too long", "runs/" + "x" * 300), 2, "hint: a file name is longer than"),
        (OSError(9, "Bad file descriptor"), 70, "internal error: this is a bug in sweepgen"),
    ],
)
def test_the_cli_funnel_sorts_os_errors_into_faults_and_bugs(
    proj: Path, monkeypatch: pytest.MonkeyPatch, err: OSError, rc: int, text: str
) -> None:
    """Any OSError that reaches the CLI: the machine's fault (exit 2, path, hint) or a bug (exit 70)."""
    from sweepgen.compile import api

    def fail(*args: object, **kwargs: object) -> None:
        raise err

    write_spec(proj, 2)
    monkeypatch.setattr(api, "render", fail)
    result = CliRunner().invoke(main, ["render", "specs/demo.yaml"])
    assert result.exit_code == rc
    assert text in result.output


def test_a_closed_stdout_is_exit_2_before_anything_is_written(proj: Path, tmp_path: Path) -> None:
    write_spec(proj, 2)
    before = snapshot(tmp_path)
    for command in ("render", "check"):
        done = subprocess.run(
            [sys.executable, "-m", "sweepgen", command, "specs/demo.yaml"],
            env=ENV,
            stderr=subprocess.PIPE,
            text=True,
            timeout=120,
            check=False,
            preexec_fn=lambda: os.close(1),  # `sweepgen … >&-`
        )
        assert done.returncode == 2, done.stderr
        assert "<stdout>: error: standard output is closed" in done.stderr
        assert "Traceback" not in done.stderr
    assert snapshot(tmp_path) == before


def test_a_full_disk_error_naming_no_file_is_not_blamed_on_a_stdout_with_room(tmp_path: Path) -> None:
    """An ENOSPC that names no file (a write to an open file, e.g. the study journal's append before
    it named it) was said to be standard output's ("cannot write to standard output") whatever stdout
    was. Now stdout is blamed only where it could be: /dev/full, or a file on a full disk; a pipe
    (as here) or a file with room is never the cause."""
    raise_it = (
        "import errno, sys; from sweepgen.cli import _os_fault; "
        "sys.exit(_os_fault(OSError(errno.ENOSPC, 'No space left on device')))"
    )
    with open("/dev/full", "w") as full:
        on_full = subprocess.run(
            [sys.executable, "-c", raise_it], env=ENV, stdout=full, stderr=subprocess.PIPE, text=True
        )
    piped = subprocess.run([sys.executable, "-c", raise_it], env=ENV, capture_output=True, text=True)
    assert on_full.returncode == 2 and "cannot write to standard output" in on_full.stderr, on_full.stderr
    assert piped.returncode == 2 and "Traceback" not in piped.stderr, piped.stderr
    assert "standard output" in piped.stderr and "cannot write to standard output" not in piped.stderr, (
        piped.stderr
    )
    assert "No space left on device" in piped.stderr and "hint:" in piped.stderr, piped.stderr
