"""Helpers for file-system safety and fault tests: tree snapshots, real tmpfs mounts, CLI subprocesses."""

from __future__ import annotations

import contextlib
import os
import stat
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
# subprocesses must run this checkout's code, not whatever copy is installed in the environment
ENV = dict(os.environ, PYTHONPATH=str(ROOT))
ENV.pop("CI", None)  # CI=true turns check's fast path off; tests that want that set it
TEMPLATE = "seed: {{ training.seed }}\n"


def snapshot(root: Path, *skip: Path) -> dict[str, tuple[str, bytes | str, int]]:
    """Every entry under ``root`` (never following symlinks): kind, content or link target, mode.

    ``skip``: subtrees left out (the output folder, which a render may change; edited specs).
    """
    out: dict[str, tuple[str, bytes | str, int]] = {}
    for folder, dirs, files in os.walk(root):
        here = Path(folder)
        dirs[:] = [d for d in dirs if here / d not in skip]
        for name in dirs + files:
            p = here / name
            if p in skip:
                continue
            st = p.lstat()
            rel = str(p.relative_to(root))
            if stat.S_ISLNK(st.st_mode):
                out[rel] = ("link", os.readlink(p), 0)
            elif stat.S_ISREG(st.st_mode):
                out[rel] = ("file", p.read_bytes(), stat.S_IMODE(st.st_mode))
            elif stat.S_ISDIR(st.st_mode):
                out[rel] = ("dir", b"", stat.S_IMODE(st.st_mode))
            else:
                out[rel] = ("special", b"", st.st_mode)
    return out


def leftovers(folder: Path) -> list[str]:
    """Temp files and journals under ``folder``: what a finished render must not leave behind."""
    if not folder.exists():
        return []
    return sorted(
        str(p.relative_to(folder))
        for p in folder.rglob("*")
        if p.name.endswith(".tmp") or p.name == ".sweepgen-journal.json"
    )


def write_spec(
    project: Path,
    seeds: int,
    *,
    template: str = TEMPLATE,
    output: str = "{{ variant.name }}.yaml",
    name: str = "demo",
) -> Path:
    """A spec rendering ``seeds`` files (seed1.yaml …), with the given template."""
    (project / "specs").mkdir(exist_ok=True)
    (project / "templates").mkdir(exist_ok=True)
    (project / "templates" / "t.yaml.j2").write_text(template)
    spec = project / "specs" / f"{name}.yaml"
    spec.write_text(
        f"sweepgen: 1\nname: {name}\ntemplate: ../templates/t.yaml.j2\noutput: {output!r}\n"
        "base: {training: {seed: 0}}\n"
        f"grid: {{training.seed: [{', '.join(str(i) for i in range(1, seeds + 1))}]}}\n"
    )
    return spec


def sweepgen(
    cwd: Path, *args: str, timeout: float = 120, **kwargs: object
) -> subprocess.CompletedProcess[str]:
    """Run the real CLI in a subprocess (a hang fails the test after ``timeout`` seconds)."""
    return subprocess.run(
        [sys.executable, "-m", "sweepgen", *args],
        cwd=cwd,
        env=ENV,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
        **kwargs,  # type: ignore[arg-type]
    )


def _mount(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["mount", *args], capture_output=True, text=True, check=False)


@contextlib.contextmanager
def tmpfs(path: Path, size: str) -> Iterator[Path]:
    """A real tmpfs of ``size`` at ``path`` (skips the test, saying why, where mounting is refused)."""
    path.mkdir(parents=True, exist_ok=True)
    done = _mount("-t", "tmpfs", "-o", f"size={size},mode=0755", "tmpfs", str(path))
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here (needs root): {done.stderr.strip()}")
    try:
        yield path
    finally:
        _mount("-o", "remount,rw", str(path))
        subprocess.run(["umount", "-l", str(path)], capture_output=True, check=False)


def remount(path: Path, options: str) -> None:
    done = _mount("-o", f"remount,{options}", str(path))
    assert done.returncode == 0, done.stderr


def outside_project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """tmp_path/proj is the project (and cwd); tmp_path/outside holds a file that must stay untouched."""
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "victim.txt").write_text("keep me\n")
    proj = tmp_path / "proj"
    proj.mkdir()
    monkeypatch.chdir(proj)
    return proj


def cli(*args: str) -> tuple[int, str]:
    """The CLI in-process: exit code and output, which never holds a traceback."""
    from click.testing import CliRunner

    from sweepgen.cli import main

    result = CliRunner().invoke(main, list(args))
    assert "Traceback" not in result.output
    return result.exit_code, result.output


def chain(folder: Path, depth: int, name: str = "d") -> Path:
    """``folder/name/name/...``, ``depth`` folders deep, each made and entered by descriptor (by path,
    every step resolves the whole chain again; ``os.makedirs`` recurses once a level); remove it
    with ``remove_chain``."""
    fd = os.open(folder, os.O_DIRECTORY)
    try:
        for _ in range(depth):
            os.mkdir(name, dir_fd=fd)
            below = os.open(name, os.O_DIRECTORY, dir_fd=fd)
            os.close(fd)
            fd = below
    finally:
        os.close(fd)
    return folder.joinpath(*[name] * depth)


def remove_chain(path: Path) -> None:
    """Remove a file at the end of a chain of single folders (``chain``), bottom up by descriptor:
    pytest's own clean-up (shutil.rmtree) recurses once a folder and fails past ~1,000 levels, on
    every later session."""
    name, parts = path.parent.name, list(path.parent.parts)
    depth = 0
    while parts and parts[-1] == name:
        parts.pop()
        depth += 1
    fd = os.open(Path(*parts), os.O_DIRECTORY)
    try:
        for _ in range(depth):
            below = os.open(name, os.O_DIRECTORY, dir_fd=fd)
            os.close(fd)
            fd = below
        with contextlib.suppress(FileNotFoundError):
            os.unlink(path.name, dir_fd=fd)
        for _ in range(depth):
            above = os.open("..", os.O_DIRECTORY, dir_fd=fd)
            os.close(fd)
            fd = above
            os.rmdir(name, dir_fd=fd)
    finally:
        os.close(fd)
