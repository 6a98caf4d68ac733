"""`trl` runs that differ only in a value the trainer ignores (`num_train_epochs` under a positive
`max_steps`, `lora_r` without `use_peft: true`) trained alike while their names and the report
compared them; refused before any run starts, at the key's line."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from run_support import make_config_sweep

from sweepgen.cli import main

TRL = "trl sft --config {config}"


def _sweep(root: Path, key: str, values: list[Any], extra: dict[str, Any]) -> None:
    configs = {f"{key}{v}": {key: v, "output_dir": f"runs/t/{key}{v}", **extra} for v in values}
    make_config_sweep(root, configs, sweep="t", values={n: {key: c[key]} for n, c in configs.items()})


def _run(command: str = TRL) -> tuple[int, str]:
    result = CliRunner().invoke(main, ["run", "generated/t", "--dry-run", "--command", command])
    return result.exit_code, " ".join(result.output.split())


_IGNORED = [
    ("num_train_epochs", [1, 3], {"max_steps": 100}, "every run sets a positive max_steps"),
    ("lora_r", [8, 16], {}, "no run sets use_peft: true"),
    ("lora_alpha", [16, 32], {"use_peft": False}, "no run sets use_peft: true"),
    ("warmup_steps", [0, 50], {"lr_scheduler_type": "constant"}, "has no warmup"),
    (
        "warmup_steps",
        [0, 50],
        {"lr_scheduler_type": "reduce_lr_on_plateau", "eval_strategy": "steps"},
        "has no warmup",
    ),
    ("bnb_4bit_quant_type", ["fp4", "nf4"], {}, "no run sets load_in_4bit: true"),
]
_IGNORED_IDS = ["epochs", "lora", "lora-off", "warmup", "warmup-plateau", "bnb"]


@pytest.mark.parametrize(("key", "values", "extra", "why"), _IGNORED, ids=_IGNORED_IDS)
def test_runs_differing_only_in_a_value_trl_ignores_are_refused(
    tmp_path, monkeypatch, key, values, extra, why
):
    monkeypatch.chdir(tmp_path)
    _sweep(tmp_path, key, values, extra)
    code, said = _run()
    assert code == 2, said
    line = (
        Path(f"generated/t/{key}{values[0]}.yaml").read_text().splitlines().index(f"{key}: {values[0]}") + 1
    )
    assert f"generated/t/{key}{values[0]}.yaml:{line}:1:" in said and f"the runs differ in `{key}`" in said
    assert why in said and "they would train alike" in said and "Traceback" not in said


@pytest.mark.train
@pytest.mark.parametrize(("key", "values", "extra", "why"), _IGNORED, ids=_IGNORED_IDS)
def test_each_refused_sweep_is_one_trl_would_run(tmp_path, key, values, extra, why):
    """The oracle: each run's config passes `trl sft`'s own parser (ScriptArguments, SFTConfig,
    ModelConfig; bf16 off only because this machine has no GPU), so the refusal above is about the
    ignored value, not a config TRL refuses at start anyway (reduce_lr_on_plateau needs an
    eval_strategy)."""
    from trl import ModelConfig, ScriptArguments, SFTConfig, TrlParser

    parser = TrlParser((ScriptArguments, SFTConfig, ModelConfig))
    for value in values:
        parser.parse_dict({key: value, "output_dir": str(tmp_path / "out"), "bf16": False, **extra})


@pytest.mark.parametrize(
    ("key", "values", "extra", "command"),
    [
        ("num_train_epochs", [1, 3], {"max_steps": -1}, TRL),
        ("num_train_epochs", [1, 3], {}, TRL),
        ("lora_r", [8, 16], {"use_peft": True}, TRL),
        ("warmup_steps", [0, 50], {"lr_scheduler_type": "constant_with_warmup"}, TRL),
        ("bnb_4bit_quant_type", ["fp4", "nf4"], {"load_in_4bit": True}, TRL),
        ("num_train_epochs", [1, 3], {"max_steps": 100}, "python train.py {config}"),  # not TRL
    ],
    ids=["steps-off", "no-steps", "peft", "warmup", "bnb", "other-trainer"],
)
def test_runs_differing_in_a_value_trl_reads_are_left_alone(
    tmp_path, monkeypatch, key, values, extra, command
):
    monkeypatch.chdir(tmp_path)
    _sweep(tmp_path, key, values, extra)
    code, said = _run(command)
    assert code == 0, said


def test_a_value_ignored_in_some_runs_only_is_left_alone(tmp_path, monkeypatch):
    """A grid over use_peft and lora_r: the LoRA runs read lora_r."""
    monkeypatch.chdir(tmp_path)
    configs = {
        f"peft{p}-r{r}": {"use_peft": p, "lora_r": r, "output_dir": f"runs/t/peft{p}-r{r}"}
        for p in (True, False)
        for r in (8, 16)
    }
    values = {n: {"use_peft": c["use_peft"], "lora_r": c["lora_r"]} for n, c in configs.items()}
    make_config_sweep(tmp_path, configs, sweep="t", values=values)
    code, said = _run()
    assert code == 0, said


@pytest.mark.parametrize(
    ("key", "values", "extra", "flags"),
    [
        ("lora_r", [8, 16], {}, "--use_peft"),
        ("lora_r", [8, 16], {}, "--use-peft true"),
        ("num_train_epochs", [1, 3], {"max_steps": 100}, "--max_steps=-1"),
        ("warmup_steps", [0, 50], {"lr_scheduler_type": "constant"}, "--lr_scheduler_type cosine"),
        ("bnb_4bit_quant_type", ["fp4", "nf4"], {}, "--load_in_4bit"),
    ],
    ids=["use-peft-flag", "use-peft-hyphen", "max-steps", "scheduler", "load-in-4bit"],
)
def test_a_switch_the_command_line_sets_is_not_judged_from_the_config_alone(
    tmp_path, monkeypatch, key, values, extra, flags
):
    """`trl sft --config {config} --use_peft`: TRL's parser takes the command line over the config,
    so the LoRA values are read; judging the config alone refused a sweep that trains as asked."""
    monkeypatch.chdir(tmp_path)
    _sweep(tmp_path, key, values, extra)
    code, said = _run(f"{TRL} {flags}")
    assert code == 0, said
