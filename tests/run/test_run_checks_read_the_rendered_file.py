"""`run`'s refusals before any start judge the file the trainer reads: a template that writes a key
by hand (`num_processes: 2`, `vllm_mode: server`) which the spec's config does not hold was never
judged, since the checks read the lock's config alone."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from sweepgen.cli import main

SPEC = """\
sweepgen: 1
name: t
template: ../templates/t.yaml.j2
output: "{{ variant.name }}.yaml"
base: {model_name_or_path: m, learning_rate: 1.0e-6, beta: 0.0, output_dir: out}
grid: {beta: [0.0, 0.1]}
derived: {output_dir: "runs/t/{{ variant.name }}"}
"""


def _render(root: Path, by_hand: str) -> None:
    (root / "specs").mkdir()
    (root / "templates").mkdir()
    (root / "specs" / "t.yaml").write_text(SPEC)
    (root / "templates" / "t.yaml.j2").write_text("{{ config | to_yaml }}\n" + by_hand)
    rendered = CliRunner().invoke(main, ["render", "specs/t.yaml"])
    assert rendered.exit_code == 0, rendered.output


@pytest.mark.parametrize(
    ("by_hand", "args", "said"),
    [
        ("num_processes: 2\n", ("--gpus", "0,1"), "asks accelerate for 2 processes (num_processes)"),
        ("use_vllm: true\nvllm_mode: server\n", ("--jobs", "2"), "would share the vLLM server"),
    ],
    ids=["processes", "vllm-server"],
)
def test_a_key_the_template_writes_by_hand_is_judged(tmp_path, monkeypatch, by_hand, args, said):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))  # no accelerate default config of the person's
    _render(tmp_path, by_hand)
    command = ("--command", "trl grpo --config {config}")
    result = CliRunner().invoke(main, ["run", "generated/t", *command, *args, "--dry-run"])
    assert result.exit_code == 2, result.output
    shown = " ".join(result.output.split())
    assert said in shown and "generated/t/" in shown and "Traceback" not in shown
