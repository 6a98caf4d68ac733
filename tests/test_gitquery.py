"""The one git query: real answers from a real repository, and a repository's fsmonitor never run."""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

import pytest

from sweepgen import gitquery
from sweepgen.errors import UserError


def _git(repo: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    _git(tmp_path, "init", "-q")
    (tmp_path / ".gitignore").write_text("*.log\n")
    (tmp_path / "kept.json").write_text("{}\n")
    (tmp_path / "loose.json").write_text("{}\n")
    _git(tmp_path, "add", "kept.json", ".gitignore")
    return tmp_path


def test_tracked_tells_a_committed_file_from_a_loose_one(repo: Path) -> None:
    assert gitquery.tracked(str(repo), "kept.json")
    assert not gitquery.tracked(str(repo), "loose.json")
    assert not gitquery.tracked(str(repo), "absent.json")


def test_ignored_answers_from_the_repositorys_rules(repo: Path) -> None:
    assert gitquery.ignored(str(repo), ["a.log", "kept.json", "sub/b.log", "x.py"]) == {"a.log", "sub/b.log"}
    assert gitquery.ignored(str(repo), []) == set()


def test_outside_a_work_tree_git_says_nothing(tmp_path: Path) -> None:
    (tmp_path / "a.log").write_text("")
    assert not gitquery.tracked(str(tmp_path), "a.log")
    assert gitquery.ignored(str(tmp_path), ["a.log"]) == set()


def test_a_repositorys_fsmonitor_program_is_never_started(repo: Path) -> None:
    marker = repo / "fsmonitor-ran"
    hook = repo / "hook.sh"
    hook.write_text(f"#!/bin/sh\ntouch {marker}\n")
    hook.chmod(0o755)
    _git(repo, "config", "core.fsmonitor", str(hook))
    # plain git starts it (so the test can fail): proven first, then the marker cleared
    subprocess.run(["git", "-C", str(repo), "status", "--porcelain"], capture_output=True, check=False)
    assert marker.exists(), "this git does not start core.fsmonitor: the test proves nothing here"
    marker.unlink()
    assert gitquery.tracked(str(repo), "kept.json")
    assert gitquery.ignored(str(repo), ["a.log"]) == {"a.log"}
    assert not marker.exists()


def test_without_git_nothing_is_ignored_and_tracked_cannot_be_told(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", "")
    assert gitquery.tracked(str(repo), "kept.json") is None  # inside a work tree: unknown, not "no"
    assert gitquery.ignored(str(repo), ["a.log"]) == set()


def test_a_repository_git_refuses_is_unknown_not_untracked(repo: Path) -> None:
    _git(repo, "config", "core.repositoryformatversion", "1")
    _git(repo, "config", "extensions.hostile", "x")  # git exits 128 on every command here
    assert gitquery.tracked(str(repo), "kept.json") is None
    assert gitquery.tracked(str(repo / "sub"), "x.json") is None


def test_git_stalled_on_a_fifo_is_unknown_and_not_asked_again(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    os.mkfifo(repo / "cfg")
    _git(repo, "config", "include.path", str(repo / "cfg"))  # git blocks opening it
    monkeypatch.setattr(gitquery, "_DEADLINE_S", 1)
    monkeypatch.setattr(gitquery, "_stalled", [])
    assert gitquery.tracked(str(repo), "kept.json") is None
    started = time.monotonic()
    assert gitquery.tracked(str(repo), "kept.json") is None
    assert gitquery.ignored(str(repo), ["a.log"]) == set()
    assert time.monotonic() - started < 0.5  # not asked again


@pytest.mark.parametrize("where", [".gitignore", "sub/.gitignore", "sub/deeper/.gitignore", ".git/index"])
def test_a_fifo_where_git_reads_is_refused_before_git_blocks_on_it(repo: Path, where: str) -> None:
    (repo / "sub" / "deeper").mkdir(parents=True)
    target = repo / where
    target.unlink(missing_ok=True)
    os.mkfifo(target)
    with pytest.raises(UserError, match="not a regular file"):
        gitquery.ignored(str(repo / "sub"), ["deeper/x.log"])
    with pytest.raises(UserError, match="not a regular file"):
        gitquery.tracked(str(repo / "sub" / "deeper"), "x.log")
