"""git's own folder is never written: a `.git/hooks/pre-commit` or a `.git/config` holding
`core.fsmonitor` is run by git, so an output root, a run_dir or a config's output_dir that lies in a
`.git` folder (any case, reached through a link too) is exit 2 before anything is written."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner
from run_support import make_config_sweep
from spec_support import write_project

from sweepgen.cli import main


def cli(*args: str):
    return CliRunner().invoke(main, list(args))


def _git_files(root: Path) -> set[str]:
    return {str(p.relative_to(root)) for p in (root / ".git").rglob("*")}


@pytest.fixture
def repo(project: Path) -> Path:
    (project / ".git" / "hooks").mkdir(parents=True)
    (project / ".git" / "config").write_text("[core]\n")
    return project


@pytest.mark.parametrize("output", [".git", ".git/hooks", "a/.GIT/b", "link/x"])
def test_render_never_writes_into_git_s_folder_whichever_way_it_is_named(repo, output):
    (repo / "link").symlink_to(".git", target_is_directory=True)
    write_project(repo, "grid: {training.seed: [1, 2]}\n")
    before = _git_files(repo)
    result = cli("render", "specs/demo.yaml", "-o", output)
    assert result.exit_code == 2, result.output
    assert "lies in git's own .git folder" in result.stderr and "Traceback" not in result.output
    assert _git_files(repo) == before


def test_a_run_dir_in_git_s_folder_is_refused_at_the_spec_s_line(repo):
    spec = write_project(repo, "run_dir: '.git/hooks/{{ variant.name }}'\ngrid: {training.seed: [1, 2]}\n")
    before = _git_files(repo)
    result = cli("render", "specs/demo.yaml")
    assert result.exit_code == 2, result.output
    line = spec.read_text().splitlines().index("run_dir: '.git/hooks/{{ variant.name }}'") + 1
    assert result.stderr.startswith(f"specs/demo.yaml:{line}:") and "git's own .git folder" in result.stderr
    assert _git_files(repo) == before and not (repo / "generated").exists()


@pytest.mark.parametrize("where", ["config", "lock"])
def test_run_refuses_a_run_folder_in_git_s_folder_from_a_config_or_a_forged_lock(repo, monkeypatch, where):
    monkeypatch.chdir(repo)
    config = {"output_dir": ".git/hooks/a", "seed": 1} if where == "config" else {"seed": 1}
    make_config_sweep(repo, {"a": config}, sweep="t", values={"a": {"seed": 1}})
    if where == "lock":  # a lock is data anyone may edit: its run_dir is checked again by `run`
        lock_path = repo / "generated" / "t" / "sweep.lock.json"
        lock = json.loads(lock_path.read_text())
        lock["files"][0]["run_dir"] = ".git/hooks"
        lock_path.write_text(json.dumps(lock))
    before = _git_files(repo)
    result = cli("run", "generated/t", "--command", f"{sys.executable} -c pass {{config}}")
    assert result.exit_code == 2, result.output
    assert "git's own .git folder" in result.stderr and "Traceback" not in result.output
    assert _git_files(repo) == before and not os.path.exists(repo / "runs")
