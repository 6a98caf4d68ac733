"""The config fingerprint the executors compare covers the data file a trainer config
names, so changed data makes a run stale as a changed config does."""

from __future__ import annotations

import os
import sys

import pytest

from sweepgen.run.core.plan.tasks import config_fingerprint


def test_changed_data_changes_the_fingerprint(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "d.jsonl").write_text('{"prompt": "a", "answer": 1}\n')
    config = tmp_path / "c.yaml"
    text = b"run_name: r\noutput_dir: runs/r\ndata: {source: d.jsonl}\n"
    first = config_fingerprint(config, text)
    assert config_fingerprint(config, text) == first
    (tmp_path / "d.jsonl").write_text('{"prompt": "a", "answer": 2}\n')
    os.utime(tmp_path / "d.jsonl", ns=(1, 1))  # a new mtime even on a coarse clock
    changed = config_fingerprint(config, text)
    assert changed != first
    (tmp_path / "d.jsonl").unlink()
    assert config_fingerprint(config, text) not in (first, changed)


def test_a_config_without_a_data_file_keeps_its_fingerprint(tmp_path):
    # builtin data: the fingerprint is the config's alone, as it always was (no finished run goes stale)
    config = tmp_path / "c.yaml"
    a = config_fingerprint(config, b"run_name: r\ndata: {source: 'builtin:arithmetic'}\n")
    b = config_fingerprint(config, b"run_name: r\ndata: {source: 'builtin:arithmetic'}  # comment\n")
    assert a == b and a.startswith("yaml:")


OPENED: list[str] | None = None


def _record_opens(event: str, args: tuple) -> None:
    if OPENED is not None and event == "open" and isinstance(args[0], (str, bytes, os.PathLike)):
        OPENED.append(os.fsdecode(args[0]))


sys.addaudithook(_record_opens)


def _opened_while(call):
    global OPENED
    OPENED = []
    try:
        return call(), OPENED
    finally:
        OPENED = None


@pytest.mark.parametrize("how", ["climbs out", "absolute", "a link inside leading out"])
def test_a_data_file_outside_the_project_is_never_opened(tmp_path, monkeypatch, how):
    # the path comes from a generated config a pull request may have written: `report` and `status`
    # on it must read nothing outside the project (SECURITY.md), and the fingerprint says so
    project, outside = tmp_path / "project", tmp_path / "outside"
    project.mkdir()
    outside.mkdir()
    (project / "pyproject.toml").write_text("")
    secret = outside / "secret.jsonl"
    secret.write_text('{"prompt": "a", "answer": 1}\n')
    (project / "in.jsonl").symlink_to(secret)
    monkeypatch.chdir(project)
    source = {
        "climbs out": "../outside/secret.jsonl",
        "absolute": str(secret),
        "a link inside leading out": "in.jsonl",
    }[how]
    text = f"run_name: r\ndata: {{source: '{source}'}}\n".encode()
    first, opened = _opened_while(lambda: config_fingerprint(project / "c.yaml", text))
    assert opened == []
    secret.write_text('{"prompt": "a", "answer": 2}\n')
    assert config_fingerprint(project / "c.yaml", text) == first  # the words alone, as for Hub data
    other = f"run_name: r\ndata: {{source: '{source}x.jsonl'}}\n".encode()
    assert config_fingerprint(project / "c.yaml", other) != first


def test_a_data_file_inside_the_project_is_hashed_from_a_subfolder(tmp_path, monkeypatch):
    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "sub").mkdir()
    data = tmp_path / "d.jsonl"
    data.write_text('{"prompt": "a", "answer": 1}\n')
    monkeypatch.chdir(tmp_path / "sub")
    text = b"run_name: r\ndata: {source: ../d.jsonl}\n"
    first, opened = _opened_while(lambda: config_fingerprint(tmp_path / "c.yaml", text))
    assert "d.jsonl" in opened  # opened by name from its folder (runfs)
    data.write_text('{"prompt": "a", "answer": 2}\n')
    os.utime(data, ns=(1, 1))
    assert config_fingerprint(tmp_path / "c.yaml", text) != first
