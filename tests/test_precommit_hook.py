"""The published pre-commit hook, installed by pre-commit itself from this repository
(`pre-commit try-repo`), on a project whose specs do not live in specs/."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]

SPEC = """\
sweepgen: 1
name: lr
template: ../../templates/t.yaml.j2
output: "{{ variant.name }}.yaml"
base: {training: {lr: 0.1}}
grid: {training.lr: [0.1, 0.2]}
"""


def _git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True)


@pytest.mark.slow  # pre-commit builds a virtualenv and pip-installs sweepgen into it (~1 min)
def test_try_repo_checks_specs_in_a_non_default_layout(tmp_path):
    project = tmp_path / "project"
    (project / "experiments" / "rl").mkdir(parents=True)
    (project / "templates").mkdir()
    (project / "templates" / "t.yaml.j2").write_text("{{ config | to_yaml }}\n")
    spec = project / "experiments" / "rl" / "lr.sweep.yaml"
    spec.write_text(SPEC)
    env = {
        **os.environ,
        "PRE_COMMIT_HOME": str(tmp_path / "pc-home"),
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@t",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@t",
    }
    subprocess.run([sys.executable, "-m", "sweepgen", "render", str(spec)], cwd=project, check=True)
    _git(project, "init", "-q")
    _git(project, "add", "-A")
    # the hook repository must be a git repository: a throwaway copy of this one's tracked files
    hooks = tmp_path / "hooks"
    files = subprocess.run(["git", "ls-files"], cwd=REPO, capture_output=True, text=True, check=True)
    for rel in files.stdout.split():
        if rel.startswith(("generated/", "tests/", "benchmarks/")):
            continue
        (hooks / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(REPO / rel, hooks / rel)
    _git(hooks, "init", "-q")
    _git(hooks, "add", "-A")
    subprocess.run(["git", "commit", "-qm", "hooks"], cwd=hooks, check=True, env=env)

    def try_repo() -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "pre_commit", "try-repo", str(hooks), "sweepgen-check", "--all-files"],
            cwd=project,
            env=env,
            capture_output=True,
            text=True,
            timeout=600,
        )

    ok = try_repo()
    assert ok.returncode == 0, ok.stdout + ok.stderr
    assert "sweepgen check" in ok.stdout and "Passed" in ok.stdout
    # a hand edit of a generated file is caught through the hook
    out = project / "generated" / "lr" / "lr0.2.yaml"
    out.write_text(out.read_text().replace("0.2", "0.3"))
    _git(project, "add", "-A")
    bad = try_repo()
    assert bad.returncode == 1, bad.stdout + bad.stderr
    assert "edited by hand" in bad.stdout or "hand" in bad.stdout, bad.stdout
