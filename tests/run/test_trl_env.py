"""A TRL config's `env:` block choosing the GPUs a run sees: TRL's parser sets it inside the run,
over the GPUs `sweepgen run` gives each run, so every run would train on the config's GPUs."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from run_support import make_config_sweep

from sweepgen.cli import main

TRL = "trl dpo --config {config}"


def _sweep(root: Path, extra: dict[str, Any]) -> None:
    configs = {f"beta{b}": {"beta": b, "output_dir": f"runs/t/beta{b}", **extra} for b in (1, 2)}
    make_config_sweep(root, configs, sweep="t", values={n: {"beta": c["beta"]} for n, c in configs.items()})


def _run(*args: str):
    return CliRunner().invoke(main, ["run", "generated/t", "--dry-run", *args])


@pytest.mark.parametrize("key", ["CUDA_VISIBLE_DEVICES", "HIP_VISIBLE_DEVICES"])
def test_an_env_block_choosing_the_gpus_is_refused_where_run_gives_each_run_its_own(
    tmp_path, monkeypatch, key
):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)
    _sweep(tmp_path, {"env": {"TOKENIZERS_PARALLELISM": "false", key: "0"}})
    result = _run("--command", TRL, "--gpus", "0,1")
    assert result.exit_code == 2, result.output
    said = " ".join(result.output.split())
    line = Path("generated/t/beta1.yaml").read_text().splitlines().index(f"  {key}: '0'") + 1
    assert f"generated/t/beta1.yaml:{line}:3: error: the config of run 'beta1' sets env.{key} to '0'" in said
    assert "every run would train on the config's GPUs" in said and f"(at `env.{key}`)" in said
    assert f"remove {key} from the config's env: block" in said and "Traceback" not in said


@pytest.mark.parametrize(
    ("env", "args"),
    [
        ({"CUDA_VISIBLE_DEVICES": "0"}, ()),  # no --gpus: no GPUs handed out, none overridden
        ({"TOKENIZERS_PARALLELISM": "false"}, ("--gpus", "0,1")),  # another variable
        ({"CUDA_VISIBLE_DEVICES": "0"}, ("--gpus", "0,1", "--command", "python train.py {config}")),
    ],
)
def test_other_env_blocks_and_commands_are_left_alone(tmp_path, monkeypatch, env, args):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)
    _sweep(tmp_path, {"env": env})
    command = () if "--command" in args else ("--command", TRL)
    result = _run(*command, *args)
    assert result.exit_code == 0, result.output


def test_each_run_s_rendered_config_is_read_once_at_the_start_checks(tmp_path, monkeypatch):
    """The vLLM server, process count and env: judgments share one read of each run's rendered
    file (before, each read and parsed it again: three times per run)."""
    from sweepgen.run.start import config_where

    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))  # no accelerate default config of the person's
    _sweep(tmp_path, {"env": {"TOKENIZERS_PARALLELISM": "false"}})
    read: list[str] = []
    real = config_where._bytes
    monkeypatch.setattr(config_where, "_bytes", lambda d, t: read.append(t.name) or real(d, t))
    result = _run("--command", TRL, "--gpus", "0,1", "--per-gpu", "1")
    assert result.exit_code == 0, result.output
    assert sorted(read) == ["beta1", "beta2"]
