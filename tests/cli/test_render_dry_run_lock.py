"""`render --dry-run` says what it would do to the lock: a new sweep's lock is created, not updated."""

from __future__ import annotations

import re

from click.testing import CliRunner

from sweepgen.cli import main

SPEC = 'sweepgen: 1\nname: d\ntemplate: ../templates/t.j2\noutput: "{{ variant.name }}.yaml"\n'


def _lock_action(output: str) -> str:
    (row,) = [line for line in output.splitlines() if "sweep.lock.json" in line]
    return re.findall(r"\b(create|update|unchanged)\b", row)[-1]


def test_the_lock_of_a_new_sweep_is_created_then_updated(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "specs").mkdir()
    (tmp_path / "templates").mkdir()
    (tmp_path / "templates" / "t.j2").write_text("{{ config | to_yaml }}\n")
    spec = tmp_path / "specs" / "d.yaml"
    spec.write_text(SPEC + "base: {a: 1}\ngrid: {a: [1, 2]}\n")
    runner = CliRunner()
    dry = runner.invoke(main, ["render", "--dry-run", "specs/d.yaml"], terminal_width=200)
    assert dry.exit_code == 0, dry.output
    assert _lock_action(dry.output) == "create"
    assert runner.invoke(main, ["render", "specs/d.yaml"]).exit_code == 0
    assert _lock_action(runner.invoke(main, ["render", "--dry-run", "specs/d.yaml"]).output) == "unchanged"
    spec.write_text(SPEC + "base: {a: 1}\ngrid: {a: [1, 3]}\n")
    assert _lock_action(runner.invoke(main, ["render", "--dry-run", "specs/d.yaml"]).output) == "update"
