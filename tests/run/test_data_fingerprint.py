"""The config fingerprint the executors compare covers the data file a trainer config
names, so changed data makes a run stale as a changed config does."""

from __future__ import annotations

import os

from sweepgen.run.core.tasks import config_fingerprint


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
