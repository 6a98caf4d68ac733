"""The pre-commit tests' helpers: a throwaway hook repository (this one's tracked files) and the
environment pre-commit runs in (its own home, a git identity)."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True)


def hook_env(tmp_path: Path) -> dict[str, str]:
    return {
        **os.environ,
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
