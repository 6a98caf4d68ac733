"""The pre-commit tests' helpers: a throwaway hook repository (this one's tracked files), the
environment pre-commit runs in (its own home, a git identity) and the ``precommit_wheels`` fixture
(tests/conftest.py registers this module as a plugin): the wheels pre-commit's pip installs the hook
from, built once per test session."""

from __future__ import annotations

import fcntl
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

REPO = Path(__file__).resolve().parents[1]
WHEELS_TIMEOUT_S = 900  # one resolution and download of sweepgen's dependencies, on a busy machine


def git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True)


def hook_env(tmp_path: Path, wheels: Path | None = None) -> dict[str, str]:
    """With ``wheels``, pre-commit's pip (the hook's plain `pip install .` and its isolated build)
    takes every distribution from that folder and never from an index (PIP_NO_INDEX): a wheel missing
    there fails the install loudly instead of being downloaded."""
    offline = {"PIP_NO_INDEX": "1", "PIP_FIND_LINKS": str(wheels)} if wheels is not None else {}
    return {
        **os.environ,
        **offline,
        "PRE_COMMIT_HOME": str(tmp_path / "pc-home"),
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@t",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@t",
    }


def hook_repo(tmp_path: Path, env: dict[str, str]) -> Path:
    """The hook repository must be a git repository: a throwaway copy of this one's tracked files."""
    hooks = tmp_path / "hooks"
    files = subprocess.run(["git", "ls-files"], cwd=REPO, capture_output=True, text=True, check=True)
    for rel in files.stdout.split():
        if rel.startswith(("generated/", "tests/", "benchmarks/")) or not (REPO / rel).exists():
            continue
        (hooks / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(REPO / rel, hooks / rel)
    git(hooks, "init", "-q")
    git(hooks, "add", "-A")
    subprocess.run(["git", "commit", "-qm", "hooks"], cwd=hooks, check=True, env=env)
    return hooks


def hook_requirements() -> list[str]:
    """What pre-commit's `pip install .` of the hook repository fetches: sweepgen's runtime
    dependencies and its build requirements (pip's isolated build installs those first)."""
    pyproject = tomllib.loads((REPO / "pyproject.toml").read_text())
    return [*pyproject["build-system"]["requires"], *pyproject["project"]["dependencies"]]


@contextmanager
def _exclusive(lock: Path) -> Iterator[None]:
    with open(lock, "w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)  # released when the file closes
        yield


@pytest.fixture(scope="session")
def precommit_wheels(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Wheels of everything the hook's install needs, built by `pip wheel` from the indexes pip is
    configured with, once per test session: each pre-commit test's own pip then installs from them
    only (hook_env), instead of resolving and downloading them all again (pip's cache is empty, HOME
    being per test). pytest-xdist workers share the folder: the first to ask builds it under a lock,
    the others wait for it; without xdist it lies in this session's own temp folder."""
    base = tmp_path_factory.getbasetemp()
    root = base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base  # the session's, shared
    wheels = root / "precommit-wheels"
    with _exclusive(root / "precommit-wheels.lock"):
        if wheels.is_dir():
            return wheels
        partial = root / "precommit-wheels.partial"
        shutil.rmtree(partial, ignore_errors=True)  # a worker that failed before this one
        home = root / "precommit-wheels-home"  # session fixtures start before _hermetic's HOME
        built = subprocess.run(
            [sys.executable, "-m", "pip", "wheel", "-q", "--no-cache-dir", "--wheel-dir", str(partial)]
            + hook_requirements(),
            env={**os.environ, "HOME": str(home), "XDG_CACHE_HOME": str(home / ".cache")},
            capture_output=True,
            text=True,
            timeout=WHEELS_TIMEOUT_S,
        )
        if built.returncode != 0:
            pytest.fail(f"pip wheel of the hook's requirements failed:\n{built.stdout}{built.stderr[-4000:]}")
        partial.rename(wheels)
    return wheels
