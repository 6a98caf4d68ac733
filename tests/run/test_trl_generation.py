"""`trl grpo` / `trl rloo` runs whose generation batch holds no whole groups of `num_generations` at
the process count they start with (`per_device_train_batch_size: 2`, `num_generations: 4`, one
process): every run started and failed in GRPOConfig's __post_init__; refused before any starts."""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from run_support import make_config_sweep

from sweepgen.cli import main

ONE_GPU = ("--gpus", "0", "--per-gpu", "1")  # one GPU a run: accelerate starts one process


def _sweep(root: Path, extra: dict[str, Any]) -> None:
    configs = {f"beta{b}": {"beta": b, "output_dir": f"runs/t/beta{b}", **extra} for b in (1, 2)}
    make_config_sweep(root, configs, sweep="t", values={n: {"beta": c["beta"]} for n, c in configs.items()})


def _run(command: str, *args: str) -> tuple[int, str]:
    result = CliRunner().invoke(main, ["run", "generated/t", "--dry-run", "--command", command, *args])
    return result.exit_code, " ".join(result.output.split())


def _trl_takes(path: Path, command: str, flags: tuple[str, ...] | list[str] = ()) -> bool:
    """TRL's own parser, one process (this test's), as `trl <command> --config PATH FLAGS` parses."""
    import importlib

    parser = importlib.import_module(f"trl.scripts.{command}").make_parser()
    try:
        parser.parse_args_and_config(["--config", str(path), *flags], return_remaining_strings=True)
    except ValueError:
        return False
    return True


CASES = [
    {"per_device_train_batch_size": 2, "num_generations": 4},
    {"per_device_train_batch_size": 2, "num_generations": 4, "gradient_accumulation_steps": 2},
    {"per_device_train_batch_size": 2, "num_generations": 4, "steps_per_generation": 3},
    {"per_device_train_batch_size": 3, "num_generations": 4, "generation_batch_size": 12},
    {"per_device_train_batch_size": 4, "num_generations": 4, "generation_batch_size": 6},
    {"per_device_train_batch_size": 4, "num_generations": 3, "generation_batch_size": 8},
    {"num_generations": 3},  # the class's default batch (8)
    {},
    # the eval batch (an eval_strategy): per_device_eval_batch_size x processes in whole groups of
    # num_generations_eval (unset: num_generations, default 8)
    {"eval_strategy": "steps", "per_device_eval_batch_size": 2},
    {"eval_strategy": "steps", "per_device_eval_batch_size": 2, "num_generations_eval": 2},
    {"eval_strategy": "epoch", "per_device_train_batch_size": 3, "num_generations": 3},
    {"per_device_eval_batch_size": 3},  # no evaluation
]


@pytest.mark.train  # TRL's parser is the oracle
@pytest.mark.parametrize("command", ["grpo", "rloo"])
@pytest.mark.parametrize("extra", CASES, ids=[json.dumps(c, separators=(",", ":")) for c in CASES])
def test_the_generation_batch_is_refused_exactly_where_trl_raises_at_one_process(
    tmp_path, monkeypatch, command, extra
):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))  # no accelerate default config of the person's
    _sweep(tmp_path, {"bf16": False, **extra})
    # TRL's script run by this interpreter: the classes installed here are the run's (their defaults)
    code, said = _run(f"{shlex.quote(sys.executable)} -m trl.scripts.{command} --config {{config}}", *ONE_GPU)
    assert (code == 0) == _trl_takes(Path("generated/t/beta1.yaml"), command), said
    assert code == 0 or ("would fail at its start" in said and "GRPOConfig's and RLOOConfig's" in said)
    assert "Traceback" not in said


def test_the_process_count_the_command_asks_for_is_the_one_judged(tmp_path, monkeypatch):
    """2 a device x 2 processes = 4, a whole group of 4; at one process, 2 is none."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    # every size set: judged without the installed classes' defaults (the core lane has no trl)
    _sweep(
        tmp_path, {"per_device_train_batch_size": 2, "num_generations": 4, "gradient_accumulation_steps": 1}
    )
    code, said = _run("accelerate launch --num_processes 2 -m trl.scripts.grpo --config {config}")
    assert code == 0, said
    code, said = _run("accelerate launch --num_processes 1 -m trl.scripts.grpo --config {config}")
    assert code == 2 and "the generation batch 2 holds no whole groups of num_generations 4" in said, said
    line = Path("generated/t/beta1.yaml").read_text().splitlines().index("num_generations: 4") + 1
    assert f"generated/t/beta1.yaml:{line}:1:" in said


def test_the_eval_batch_is_judged_at_the_process_count_the_command_asks_for(tmp_path, monkeypatch):
    """GRPO's eval batch: 2 a device x 2 processes = 4, whole groups of 4; at one process 2 is none,
    refused at per_device_eval_batch_size's line (before: every run failed in GRPOConfig)."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    sizes = {"per_device_train_batch_size": 4, "num_generations": 4, "gradient_accumulation_steps": 1}
    _sweep(tmp_path, {**sizes, "eval_strategy": "steps", "per_device_eval_batch_size": 2})
    code, said = _run("accelerate launch --num_processes 2 -m trl.scripts.grpo --config {config}")
    assert code == 0, said
    code, said = _run("accelerate launch --num_processes 1 -m trl.scripts.grpo --config {config}")
    assert code == 2 and "the eval batch holds no whole groups of 4 generations (num_generations)" in said, (
        said
    )
    line = Path("generated/t/beta1.yaml").read_text().splitlines().index("per_device_eval_batch_size: 2") + 1
    assert f"generated/t/beta1.yaml:{line}:1:" in said and "Traceback" not in said


def test_an_unknown_process_count_is_not_judged(tmp_path, monkeypatch):
    """No --gpus and no count asked for: accelerate starts as many processes as it sees GPUs."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    _sweep(tmp_path, {"per_device_train_batch_size": 2, "num_generations": 4})
    code, said = _run("trl grpo --config {config}")
    assert code == 0, said


def test_another_environment_s_defaults_are_not_taken(tmp_path, monkeypatch):
    """A `trl` not beside sweepgen's interpreter may be another release, with other defaults: a
    field the config leaves unset is not judged by the classes installed here."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    _sweep(tmp_path, {"num_generations": 3})  # 8 (this trl's default batch) holds no groups of 3
    code, said = _run("/opt/other-env/bin/trl grpo --config {config}", *ONE_GPU)
    assert code == 0, said


@pytest.mark.parametrize(
    "flag", ["--num_generations 2", "--per_device_train_batch_size=4", "--num-generations 2"]
)
def test_a_size_the_command_line_sets_is_not_judged_from_the_config_alone(tmp_path, monkeypatch, flag):
    """`... --config {config} --num_generations 2`: TRL takes the flag over the config, so the
    config's 4 (no whole group in a batch of 2 at one process) is not what the run sizes."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    _sweep(
        tmp_path, {"per_device_train_batch_size": 2, "num_generations": 4, "gradient_accumulation_steps": 1}
    )
    code, said = _run(f"accelerate launch --num_processes 1 -m trl.scripts.grpo --config {{config}} {flag}")
    assert code == 0, said


# a batch of whole groups in the config (2 x 1 process x 1 step, groups of 2), resized on the command line
_WHOLE = {"per_device_train_batch_size": 2, "num_generations": 2, "gradient_accumulation_steps": 1}
_RESIZED = [
    ("--num_generations 4", "the generation batch 2 holds no whole groups of num_generations 4"),
    ("--per_device_train_batch_size=3", "the generation batch 3 holds no whole groups of num_generations 2"),
    ("--per-device-train-batch-size 3", "the generation batch 3 holds no whole groups of num_generations 2"),
    ("--steps_per_generation 3 --num_generations 4", "the generation batch 6 holds no whole groups"),
    ("--generation_batch_size 3", "the generation batch 3 is not a multiple of the global batch 2"),
    ("--num_generations 3 --num_generations 4", "holds no whole groups of num_generations 4"),  # the last
]


@pytest.mark.parametrize(("flags", "refused"), _RESIZED, ids=[f for f, _ in _RESIZED])
def test_a_size_the_command_line_sets_is_judged_over_the_config(tmp_path, monkeypatch, flags, refused):
    """`... --config {config} --num_generations 4`: TRL's parser takes the flag over the config (the
    last of a flag wins), so the merged sizes are the run's: judged, and named on the command line."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    _sweep(tmp_path, _WHOLE)
    code, said = _run(f"accelerate launch --num_processes 1 -m trl.scripts.grpo --config {{config}} {flags}")
    assert code == 2 and refused in said, said
    assert "--command:" in said and "over the config's" in said and "Traceback" not in said


@pytest.mark.parametrize(
    "flags",
    [
        "--num_generations {name}",
        "--steps_per_generation {variant}",
        "--reward_funcs rewards.{name}",
        "--dataset_name ./data/{name}",
    ],
)
def test_a_value_filled_per_run_on_the_command_line_is_not_judged(tmp_path, monkeypatch, flags):
    """`--dataset_name ./data/{name}`: `run` fills the placeholder with each run's own value, so the
    command's words as written are no run's value (no folder `./data/{name}`, no size)."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    _sweep(tmp_path, _WHOLE)
    code, said = _run(f"accelerate launch --num_processes 1 -m trl.scripts.grpo --config {{config}} {flags}")
    assert code == 0, said


def test_a_size_the_parser_refuses_on_the_command_line_is_refused(tmp_path, monkeypatch):
    """argparse refuses `--num_generations four` ("invalid int value") at each run's start."""
    monkeypatch.chdir(tmp_path)
    _sweep(tmp_path, _WHOLE)
    code, said = _run("trl grpo --config {config} --num_generations four")
    assert code == 2 and "invalid int value: 'four'" in said and "--command:" in said, said
    code, said = _run("trl grpo --config {config} --num_generations 2 --generation_batch_size none")
    assert code == 0, said  # `int | None`: TRL's parser reads none as None


_TRL_FLAGS = [
    "--num_generations 4",
    "--generation_batch_size 3",
    "--num_generations 3 --steps_per_generation 3",
]


@pytest.mark.train  # TRL's parser is the oracle
@pytest.mark.parametrize("flags", _TRL_FLAGS)
def test_the_merged_sizes_are_refused_exactly_where_trl_raises(tmp_path, monkeypatch, flags):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    _sweep(tmp_path, {"bf16": False, **_WHOLE})
    script = f"{shlex.quote(sys.executable)} -m trl.scripts.grpo --config {{config}}"
    code, said = _run(f"{script} {flags}", *ONE_GPU)
    assert (code == 0) == _trl_takes(Path("generated/t/beta1.yaml"), "grpo", flags.split()), said
