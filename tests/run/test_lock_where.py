"""`run` refuses what it finds in a lock (a launcher this machine cannot start) at the spec's line
that wrote it, while that spec is unchanged; at the lock's own line after
the spec changed or when the lock was edited; nothing runs either way."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from sweepgen.cli import main

SPEC = """\
sweepgen: 1
name: s
template: ../templates/t.yaml.j2
output: "{{ variant.name }}.yaml"
run_name: "r_{{ variant.name }}"
derived:
  output_dir: "runs/{{ variant.run_name }}"
base:
  lr: 1
  output_dir: null
grid:
  lr: [1, 2]
resources:
  gpus_per_node: 0
  launcher: srun
  time: "1:30:00"
"""


def _project(root: Path, spec: str = SPEC) -> None:
    (root / "pyproject.toml").write_text("")
    (root / "specs").mkdir()
    (root / "templates").mkdir()
    (root / "specs" / "s.yaml").write_text(spec)
    template = "lr: {{ config.lr }}\noutput_dir: {{ config.output_dir }}\n"
    (root / "templates" / "t.yaml.j2").write_text(template)
    rendered = CliRunner().invoke(main, ["render", "specs/s.yaml"])
    assert rendered.exit_code == 0, rendered.output


def _run(*extra: str) -> str:
    result = CliRunner().invoke(main, ["run", "generated/s", "--command", "true {config}", *extra])
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output
    return result.output


def test_a_lock_value_run_refuses_is_placed_at_the_spec_line(cli_cwd):
    _project(cli_cwd)
    out = _run()
    assert "specs/s.yaml:15:3: error" in out and "resources.launcher" in out
    assert not (cli_cwd / "runs").exists()


def test_after_the_spec_changed_the_lock_line_is_named(cli_cwd):
    _project(cli_cwd)
    spec = cli_cwd / "specs" / "s.yaml"
    spec.write_text("# a comment moves every line\n" + SPEC.replace("lr: [1, 2]", "lr: [1, 3]"))
    out = _run()
    # the spec's lines no longer say what rendered the lock: the lock's own key is named
    lock_text = (cli_cwd / "generated" / "s" / "sweep.lock.json").read_text()
    line = next(i for i, text in enumerate(lock_text.splitlines(), 1) if '"resources"' in text)
    assert f"generated/s/sweep.lock.json:{line}:" in out and "specs/s.yaml:" not in out


def test_a_hand_edited_lock_is_placed_at_its_own_line(cli_cwd):
    _project(cli_cwd)
    path = cli_cwd / "generated" / "s" / "sweep.lock.json"
    lock = json.loads(path.read_text())
    lock["resources"]["time"] = "1:30:99"  # a value render refuses: the lock was edited
    lock["spec_sha256"] = "0" * 64
    path.write_text(json.dumps(lock, indent=2, sort_keys=True) + "\n")
    out = _run()
    line = next(i for i, text in enumerate(path.read_text().splitlines(), 1) if '"time"' in text)
    assert f"generated/s/sweep.lock.json:{line}:5: error" in out and "not a Slurm time" in out
