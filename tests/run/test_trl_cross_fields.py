"""A schema-less sweep run by TRL's own script (`--command 'trl grpo --config {config}'`) was checked
for its keys' names alone: a config breaking a rule TRL or transformers raise for at each run's start
(both generation sizes, one generation, `save_steps: 2.5`, fp16 with bf16, ...) started every run,
each failing once trl had loaded. Now refused before any run starts, at the key's line, as
`schema: trl:grpo` refuses it at `check`; the oracle is GRPOConfig itself."""

from __future__ import annotations

import shlex
import sys
from typing import Any

import pytest
from click.testing import CliRunner
from run_support import make_config_sweep

from sweepgen.cli import main

pytestmark = pytest.mark.train  # the rules are read from the installed TRL's source; GRPOConfig is the oracle

GRPO = f"{shlex.quote(sys.executable)} -m trl.scripts.grpo --config {{config}}"

CASES: list[tuple[dict[str, Any], str, str]] = [
    ({"generation_batch_size": 8, "steps_per_generation": 2}, "steps_per_generation", "not both"),
    ({"num_generations": 1}, "num_generations", "at least 2 completions"),
    ({"save_steps": 2.5}, "save_steps", "whole number"),
    ({"fp16": True, "bf16": True}, "bf16", "at most one of fp16 and bf16"),
    (
        {"load_best_model_at_end": True, "eval_strategy": "steps", "eval_steps": 3, "save_steps": 4},
        "save_steps",
        "a multiple of eval_steps",
    ),
    ({"vllm_importance_sampling_clip_min": 5.0}, "vllm_importance_sampling_clip_min", "must be below"),
    ({"log_completions_hub_repo": "me/completions"}, "log_completions_hub_repo", "log_completions is true"),
    ({"auto_find_batch_size": True}, "auto_find_batch_size", "auto_find_batch_size"),
    ({"lr_scheduler_type": "reduce_lr_on_plateau"}, "lr_scheduler_type", "eval_strategy"),
    ({"dataloader_prefetch_factor": 2}, "dataloader_prefetch_factor", "dataloader_num_workers"),
    (
        {"vllm_importance_sampling_mode": "token_truncate", "vllm_importance_sampling_clip_max": None},
        "vllm_importance_sampling_clip_max",
        "needs vllm_importance_sampling_clip_min or vllm_importance_sampling_clip_max",
    ),
]


def _sweep(root, extra: dict[str, Any]) -> None:
    configs = {
        f"beta{b}": {"beta": b, "output_dir": f"runs/t/beta{b}", "use_cpu": True, **extra} for b in (1, 2)
    }
    make_config_sweep(root, configs, sweep="t", values={n: {"beta": c["beta"]} for n, c in configs.items()})


def _run(command: str = GRPO) -> tuple[int, str]:
    result = CliRunner().invoke(main, ["run", "generated/t", "--dry-run", "--command", command])
    return result.exit_code, " ".join(result.output.split())


# a person's own script parsing GRPOConfig as TRL's docs show (read, never run: it would exit 9)
OWN = f"{shlex.quote(sys.executable)} train.py --config {{config}}"
_OWN_SCRIPT = """from trl import GRPOConfig, ModelConfig, ScriptArguments, TrlParser

parser = TrlParser((ScriptArguments, GRPOConfig, ModelConfig))
raise SystemExit(9)
"""


@pytest.mark.parametrize("command", [GRPO, OWN], ids=["trl script", "own script"])
@pytest.mark.parametrize(("extra", "key", "said"), CASES)
def test_a_rule_trl_raises_for_is_refused_without_a_schema(tmp_path, monkeypatch, extra, key, said, command):
    """Also for `python train.py --config {config}`, a script of one's own parsing GRPOConfig with
    TrlParser: the class raises these while the script parses the config, and such runs met none
    of the rules before (the own-script cases fail on the previous commit)."""
    from trl import GRPOConfig

    with pytest.raises(ValueError):  # the oracle: TRL's own class refuses it at each run's start
        GRPOConfig(output_dir=str(tmp_path / "o"), use_cpu=True, **{"bf16": False, **extra})
    monkeypatch.chdir(tmp_path)
    (tmp_path / "train.py").write_text(_OWN_SCRIPT)
    _sweep(tmp_path, {"bf16": False, **extra})
    code, output = _run(command)
    assert code == 2, output
    assert "generated/t/beta1.yaml:" in output and f"(at `{key}`)" in output and said in output, output
    assert "Traceback" not in output
    assert ("GRPOConfig, which train.py parses, raises this" in output) is (command == OWN), output


def test_a_rule_of_a_class_one_s_own_script_may_not_parse_is_left_to_it(tmp_path, monkeypatch):
    """ModelConfig's lora_target_modules as one comma-joined string (PEFT reads a regular
    expression): refused for `trl grpo`, whose script hands it to PEFT, but a person's script that
    parses GRPOConfig may never parse ModelConfig or hand it on: not refused there."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "train.py").write_text(_OWN_SCRIPT)
    _sweep(tmp_path, {"bf16": False, "lora_target_modules": "q_proj,v_proj"})
    assert _run()[0] == 2
    code, output = _run(OWN)
    assert code == 0, output


def test_the_command_lines_value_is_judged_at_the_command_and_a_good_config_passes(tmp_path, monkeypatch):
    from trl import GRPOConfig

    good = {"bf16": False, "num_generations": 4, "save_steps": 2.0, "steps_per_generation": 2}
    GRPOConfig(output_dir=str(tmp_path / "o"), use_cpu=True, **good)  # the oracle takes it
    monkeypatch.chdir(tmp_path)
    _sweep(tmp_path, good)
    assert _run() == (0, _run()[1])
    code, output = _run(GRPO + " --num_generations 1")  # TRL's parser: the flag over the file
    assert code == 2 and "--command: error: run 'beta1': GRPO and RLOO compare at least 2" in output, output
