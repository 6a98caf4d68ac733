"""`trl <command>` runs whose configs name no output_dir: refused before any run starts, since
transformers then writes every run's checkpoints to one `trainer_output` folder."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from click.testing import CliRunner
from run_support import make_config_sweep

from sweepgen.cli import main


def _sweep(root: Path, configs: dict[str, dict[str, object]]) -> None:
    make_config_sweep(root, configs, sweep="t", values={n: {"beta": c["beta"]} for n, c in configs.items()})
    lock_path = root / "generated/t/sweep.lock.json"
    lock = json.loads(lock_path.read_text())
    for entry in lock["files"]:  # the spec's run_dir, as a spec without output_dir in its configs has
        entry["run_dir"] = f"runs/t/{entry['run_name']}"
    lock_path.write_text(json.dumps(lock))


@pytest.mark.parametrize("unset", [{}, {"output_dir": None}])
@pytest.mark.parametrize(
    "command",
    [
        "trl grpo --config {config}",
        # TRL's own scripts, as a module or a file: the same parser and the same default
        "accelerate launch --num_processes 2 -m trl.scripts.grpo --config {config}",
        "python -m trl.scripts.sft --config {config}",
        "python .venv/lib/python3.11/site-packages/trl/scripts/dpo.py --config {config}",
    ],
)
def test_trl_runs_whose_configs_name_no_output_dir_are_refused(tmp_path, monkeypatch, unset, command):
    monkeypatch.chdir(tmp_path)
    _sweep(tmp_path, {f"beta{b}": {"beta": b, **unset} for b in (1, 2)})
    result = CliRunner().invoke(main, ["run", "generated/t", "--command", command, "--dry-run"])
    assert result.exit_code == 2, result.output
    assert "generated/t/beta1.yaml:1:1:" in result.output
    assert "'trainer_output'" in result.output and "1 other run(s) of this sweep" in result.output
    assert not (tmp_path / "runs").exists()


def test_one_trl_run_without_output_dir_is_refused_too(tmp_path, monkeypatch):
    """Alone it overwrites nothing of this sweep, but writes outside its run folder, where `report`
    does not look and the next sweep's runs write too."""
    monkeypatch.chdir(tmp_path)
    _sweep(tmp_path, {"beta1": {"beta": 1}})
    result = CliRunner().invoke(
        main, ["run", "generated/t", "--command", "trl grpo --config {config}", "--dry-run"]
    )
    assert result.exit_code == 2 and "'trainer_output'" in result.output, result.output
    assert "other run(s)" not in result.output


@pytest.mark.parametrize(
    "command",
    [
        "trl grpo --config {config} --output_dir {run_dir}",  # the command names the folder
        "python train.py --config {config}",  # not trl: its defaults are not known here
        "python -m trl.scripts.vllm_serve --config {config}",  # TRL's, but no training command
        "python -m mytrl.scripts.grpo --config {config}",
    ],
)
def test_a_command_that_names_the_folder_or_is_no_trl_training_is_left_alone(tmp_path, monkeypatch, command):
    monkeypatch.chdir(tmp_path)
    _sweep(tmp_path, {f"beta{b}": {"beta": b} for b in (1, 2)})
    result = CliRunner().invoke(main, ["run", "generated/t", "--command", command, "--dry-run"])
    assert result.exit_code == 0, result.output


def test_trl_runs_with_their_own_output_dir_are_left_alone(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    make_config_sweep(
        tmp_path,
        {f"beta{b}": {"beta": b, "output_dir": f"runs/t/beta{b}"} for b in (1, 2)},
        sweep="t",
        values={f"beta{b}": {"beta": b} for b in (1, 2)},
    )
    result = CliRunner().invoke(
        main, ["run", "generated/t", "--command", "trl grpo --config {config}", "--dry-run"]
    )
    assert result.exit_code == 0, result.output


def test_a_search_trial_of_trl_without_output_dir_is_refused_before_it_runs(tmp_path, monkeypatch):
    """A search renders its trials one at a time: each is refused, told failed with the reason,
    and no `trl` is started (a stand-in on PATH that leaves a mark if it ever runs)."""
    from search_support import sweepgen, write_search_project

    stand_in = tmp_path / "bin" / "trl"
    stand_in.parent.mkdir()
    stand_in.write_text(f"#!/bin/sh\ntouch {tmp_path / 'trl-was-started'}\nexit 1\n")
    stand_in.chmod(0o755)
    monkeypatch.setenv("PATH", f"{stand_in.parent}{os.pathsep}{os.environ['PATH']}")

    base = {"x": 0.5, "y": 0.5, "steps": 2, "step_s": 0.01, "seed": 0, "noise": 0.0}
    spec = write_search_project(
        tmp_path,
        {"n": 1, "parallel": 1, "sampler": "random"},
        base=base,
        derived={},
        run_dir="runs/s/{{ variant.name }}",
    )
    assert sweepgen(tmp_path, "render", str(spec)).returncode == 0
    done = sweepgen(tmp_path, "run", "generated/fake_search", "--command", "trl grpo --config {config}")
    said = " ".join((done.stdout + done.stderr).split())
    assert "refused" in said and "sets no output_dir" in said and "'trainer_output'" in said, said
    assert "Traceback" not in said
    assert not list((tmp_path / "runs").glob("s/*/run.log"))  # nothing started
    assert not (tmp_path / "trl-was-started").exists()
