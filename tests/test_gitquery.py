"""The one git query: real answers from a real repository, and a repository's fsmonitor never run."""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

import pytest

from sweepgen.errors import UserError
from sweepgen.fs import gitquery


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
    monkeypatch.setattr(gitquery, "_refuse_config_named", lambda top: None)  # so that git meets it
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


def _fifo_elsewhere(tmp_path: Path) -> Path:
    fifo = tmp_path.parent / f"{tmp_path.name}-fifo"
    os.mkfifo(fifo)
    return fifo


@pytest.mark.parametrize(
    "config",
    [
        ("include.path", "FIFO"),  # named in .git/config itself
        ("includeIf.gitdir:/nowhere/.path", "FIFO"),  # checked whatever the condition
        ("include.path", "../team.gitconfig"),  # a work-tree file (regular) whose include is the link
        ("core.excludesFile", "team-ignore"),  # relative to the work tree: a committed link
    ],
)
def test_a_fifo_a_repositorys_config_names_is_refused_before_git_blocks(
    repo: Path, monkeypatch: pytest.MonkeyPatch, config: tuple[str, str]
) -> None:
    # what a pull request can do: commit links at work-tree paths the team's config names
    fifo = _fifo_elsewhere(repo)
    (repo / "team.gitconfig").write_text("[include]\n\tpath = deeper.gitconfig\n")
    (repo / "deeper.gitconfig").symlink_to(fifo)
    (repo / "team-ignore").symlink_to(fifo)
    key, value = config
    _git(repo, "config", key, str(fifo) if value == "FIFO" else value)
    monkeypatch.setattr(gitquery, "_DEADLINE_S", 5)  # the old code stalled here, and answered None
    monkeypatch.setattr(gitquery, "_stalled", [])
    with pytest.raises(UserError, match="not a regular file") as err:
        gitquery.ignored(str(repo), ["a.log"])
    assert err.value.location is not None and Path(err.value.location.path).name in {
        fifo.name,
        "deeper.gitconfig",
        "team-ignore",
    }
    with pytest.raises(UserError, match="not a regular file"):
        gitquery.tracked(str(repo), "kept.json")
    assert not gitquery._stalled  # refused before git was asked


def test_a_link_at_git_config_to_a_fifo_is_refused(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(gitquery, "_DEADLINE_S", 5)
    monkeypatch.setattr(gitquery, "_stalled", [])
    config = repo / ".git" / "config"
    config.rename(repo / ".git" / "config.real")
    config.symlink_to(_fifo_elsewhere(repo))
    with pytest.raises(UserError, match="not a regular file"):
        gitquery.tracked(str(repo), "kept.json")


def test_plain_config_names_leave_the_answers_unchanged(repo: Path) -> None:
    (repo / "team.gitconfig").write_text("[core]\n\texcludesFile = team-ignore\n")
    (repo / "team-ignore").write_text("*.tmp\n")
    _git(repo, "config", "include.path", "../team.gitconfig")
    assert gitquery.ignored(str(repo), ["a.log", "b.tmp", "c.py"]) == {"a.log", "b.tmp"}
    assert gitquery.tracked(str(repo), "kept.json")


def test_filters_hooks_and_helpers_a_config_names_are_never_run(repo: Path) -> None:
    # the facts behind "fsmonitor off is enough" (git 2.39, strace): ls-files and check-ignore run
    # no filter (a committed .gitattributes names one, the config defines it), no hook, no pager,
    # credential helper or editor; a program each of those keys names would leave the marker
    marker = repo / "ran"
    program = repo / "prog.sh"
    program.write_text(f'#!/bin/sh\necho "$0 $*" >> {marker}\n')
    program.chmod(0o755)
    hooks = repo / "hooks"
    hooks.mkdir()
    for hook in ("post-index-change", "reference-transaction", "post-checkout", "pre-commit"):
        (hooks / hook).symlink_to(program)
    (repo / ".gitattributes").write_text("* filter=evil diff=evil\n")
    _git(repo, "add", ".gitattributes")  # committed with the pull request, before the config
    for key in ("filter.evil.clean", "filter.evil.smudge", "filter.evil.process", "diff.evil.textconv"):
        _git(repo, "config", key, str(program))
    for key in ("core.pager", "core.editor", "credential.helper", "core.askPass", "diff.external"):
        _git(repo, "config", key, str(program))
    _git(repo, "config", "core.hooksPath", str(hooks))
    _git(repo, "config", "core.fsmonitor", str(program))
    subprocess.run(["git", "-C", str(repo), "status"], capture_output=True, check=False)
    assert marker.exists(), "plain git runs none of them: the test proves nothing here"
    marker.unlink()
    assert gitquery.tracked(str(repo), "kept.json")
    assert gitquery.ignored(str(repo), ["a.log", "kept.json"]) == {"a.log"}
    assert not marker.exists(), marker.read_text()
