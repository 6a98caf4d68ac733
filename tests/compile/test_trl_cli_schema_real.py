"""`trl:grpo` against the installed trl: the classes `trl grpo` parses with, enums from their types,
and one import of trl per installed version (the cache)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import typing
from enum import Enum
from pathlib import Path

import pytest
from schema_support import init_in_process, share_schema_cache

pytestmark = pytest.mark.train  # imports trl

TRL_CONFIG = """\
model_name_or_path: Qwen/Qwen2-0.5B-Instruct
dataset_name: trl-lib/tldr
reward_funcs: [think_format_reward]
output_dir: out/grpo
learning_rate: 1.0e-6
beta: 0.04
loss_type: dr_grpo
dtype: bfloat16
use_peft: true
lora_target_modules: all-linear
env: {WANDB_PROJECT: grpo}
scale_rewards: false
accelerate_config: zero2
num_processes: 2
"""


def _sweepgen(cwd: Path, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "sweepgen", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )


def test_a_trl_grpo_config_exports_checks_and_is_cached_per_version(tmp_path):
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "cache")}
    (tmp_path / "grpo.yaml").write_text(TRL_CONFIG)
    done = _sweepgen(tmp_path, env, "schema", "--export", "trl:grpo", "-o", "schemas/new/grpo.json")
    assert done.returncode == 0, done.stderr  # the folder is made
    schema = json.loads((tmp_path / "schemas/new/grpo.json").read_text())
    props = schema["properties"]
    # script arguments, ModelConfig and GRPOConfig: exactly what `trl grpo --config` parses
    assert {"dataset_name", "reward_funcs", "model_name_or_path", "beta", "loss_type", "env"} <= set(props)
    # str in TRL: its values come from the trainer's code that raises for any other, never from the
    # help text (which quotes 'sequence' too)
    assert {"grpo", "dr_grpo", "dapo"} <= set(props["loss_type"]["enum"])
    assert "sequence" not in props["loss_type"]["enum"]
    assert "trl/trainer/grpo_trainer.py:" in props["loss_type"]["$comment"]
    assert any("bfloat16" in b.get("enum", []) for b in props["dtype"].get("anyOf", [props["dtype"]]))
    # ModelConfig makes a one-item list its item: the string PEFT reads is taken as TRL takes it
    assert {"type": "string"} in props["lora_target_modules"]["anyOf"]
    assert schema["x-sweepgen"]["version"] and "GRPOConfig" in " ".join(schema["x-sweepgen"]["classes"])
    # a second use reads the cache: trl made unimportable, the spec still initialises and renders
    shadow = tmp_path / "shadow"
    (shadow / "trl").mkdir(parents=True)
    (shadow / "trl" / "__init__.py").write_text("raise ImportError('trl imported again')\n")
    env2 = {**env, "PYTHONPATH": os.pathsep.join([str(shadow), env.get("PYTHONPATH", "")])}
    init = _sweepgen(tmp_path, env2, "init", "--from", "grpo.yaml", "--schema", "trl:grpo")
    assert init.returncode == 0, init.stderr
    assert _sweepgen(tmp_path, env2, "render").returncode == 0
    # a misspelled loss type, which TRL itself accepts until its loss raises after the first batch
    typo = tmp_path / "typo"
    typo.mkdir()
    (typo / "grpo.yaml").write_text(TRL_CONFIG.replace("loss_type: dr_grpo", "loss_type: grpoo"))
    refused = _sweepgen(typo, env2, "init", "--from", "grpo.yaml", "--schema", "trl:grpo")
    assert refused.returncode == 2, refused.stderr
    assert "grpo.yaml:7:12" in refused.stderr and "did you mean 'grpo'?" in refused.stderr
    assert "trl/trainer/grpo_trainer.py:" in refused.stderr and "Traceback" not in refused.stderr


def test_the_conversions_trl_s_own_classes_make_are_found():
    """The premise of one_or_list, against the installed trl: DPOConfig wraps `loss_type: sigmoid`,
    ModelConfig unwraps a one-item `lora_target_modules`; GRPO's `reward_funcs` converts nothing."""
    from trl import DPOConfig, ModelConfig
    from trl.scripts.grpo import GRPOScriptArguments

    from sweepgen.compile.schema.one_or_list import one_or_list_fields

    assert "loss_type" in one_or_list_fields(DPOConfig)
    assert "lora_target_modules" in one_or_list_fields(ModelConfig)
    assert "reward_funcs" not in one_or_list_fields(GRPOScriptArguments)


ORACLE_CONFIG = """\
model_name_or_path: Qwen/Qwen2-0.5B-Instruct
dataset_name: trl-lib/tldr
reward_funcs: [think_format_reward]
output_dir: out/grpo
bf16: false
scale_rewards: false
accelerate_config: zero2
num_processes: 2
mixed_precision: "no"
main_process_port: 29501
"""


def _trl_takes(path: Path) -> bool:
    """What `trl grpo --config PATH` does before it trains: the dataclasses take their keys, and the
    rest go to `accelerate launch` (trl/cli/commands/training.py), which refuses what it lacks and
    launches the script named after the options."""
    from accelerate.commands.launch import launch_command_parser
    from trl.cli.accelerate_config import resolve_accelerate_config_argument
    from trl.scripts.grpo import make_parser

    *_, from_config, from_cli = make_parser().parse_args_and_config(
        ["--config", str(path)], return_remaining_strings=True, separate_remaining_strings=True
    )
    launch = resolve_accelerate_config_argument(from_config + from_cli)
    try:
        args = launch_command_parser().parse_args([*launch, "grpo.py"])
    except SystemExit:
        return False
    return bool(args.training_script == "grpo.py")  # not a value a switch left behind


@pytest.mark.parametrize(
    "extra", ["", "num_procesess: 2\n", "multi_gpu: true\n"], ids=["accepted", "typo", "switch"]
)
def test_trl_grpo_and_its_schema_agree_on_the_keys_it_hands_to_accelerate(tmp_path, monkeypatch, extra):
    """`num_processes: 2` and `accelerate_config: zero2` in a `trl grpo` config (as TRL's docs write
    them) are taken by both; a misspelled option or a switch (`--multi_gpu True` makes `True` the
    script) by neither. `scale_rewards: false` is GRPOConfig's own mapping to "none"."""
    from sweepgen.compile.schema import jsonschema_subset, trl_cli
    from sweepgen.errors import Location

    share_schema_cache(tmp_path, monkeypatch)
    path = tmp_path / "grpo.yaml"
    path.write_text(ORACLE_CONFIG + extra)
    config = __import__("yaml").safe_load(path.read_text())
    schema = trl_cli.command_schema("grpo", Location("spec.yaml"))
    assert (jsonschema_subset.validate(config, schema) == []) is (extra == "")
    assert _trl_takes(path) is (extra == "")


def _training_commands() -> list[str]:
    """Every `trl <command>` that trains (a script module with make_parser), as installed."""
    import pkgutil

    import trl.scripts

    names = [m.name for m in pkgutil.iter_modules(trl.scripts.__path__) if not m.name.startswith("_")]
    return [n for n in names if n not in ("env", "utils", "vllm_serve")]


def _as_yaml_reads(value: object) -> object:
    """A default as a config file would spell it: enums by value, tuples as lists."""
    if isinstance(value, Enum):
        return value.value
    if isinstance(value, (list, tuple)):
        return [_as_yaml_reads(v) for v in value]
    if isinstance(value, dict):
        return {k: _as_yaml_reads(v) for k, v in value.items()}
    return value


def test_every_trl_command_s_schema_loads_and_takes_trl_s_own_defaults(tmp_path, monkeypatch):
    """`--schema trl:rloo` failed on the first command: RLOOConfig's `tuple[float, float]` exports as
    `prefixItems`, which the validator refused to load. Each command's schema must load, and every
    field's default (the values TRL itself starts from) must fit it."""
    import importlib

    from sweepgen.compile.schema import jsonschema_subset, trl_cli
    from sweepgen.errors import Location

    share_schema_cache(tmp_path, monkeypatch)
    commands = _training_commands()
    assert {"grpo", "rloo", "sft", "dpo"} <= set(commands)
    for command in commands:
        schema = trl_cli.command_schema(command, Location("test"))
        jsonschema_subset.check_schema(schema)
        optional = {**schema, "required": []}
        for cls in importlib.import_module(f"trl.scripts.{command}").make_parser().dataclass_types:
            for name, default in _defaults(cls):
                assert jsonschema_subset.validate({name: default}, optional) == [], (command, name)


def _defaults(cls: type) -> list[tuple[str, object]]:
    import dataclasses

    out: list[tuple[str, object]] = []
    for f in (f for f in dataclasses.fields(cls) if f.init):  # type: ignore[arg-type]
        if f.default is not dataclasses.MISSING:
            out.append((f.name, _as_yaml_reads(f.default)))
        elif f.default_factory is not dataclasses.MISSING:
            out.append((f.name, _as_yaml_reads(f.default_factory())))
    return out


_IS, _CORRECTION = "vllm_importance_sampling_mode", "vllm_importance_sampling_correction"
GUARDED = [
    # GRPO's scale_rewards is closed only under the default multi_objective_aggregation
    ("scale_rewards: batc\n", "`scale_rewards`: must be one of ['batch', 'group', 'none'] or boolean"),
    ("scale_rewards: batc\nmulti_objective_aggregation: normalize_then_sum\n", None),
    ("scale_rewards: false\n", None),
    # vllm_mode is closed by the VLLMGeneration the trainer builds only with use_vllm
    ("vllm_mode: colocte\nuse_vllm: true\n", "`vllm_mode`: must be one of ['colocate', 'server']"),
    ("vllm_mode: colocte\n", None),
    # vllm_importance_sampling_mode is closed only with use_vllm and the correction (on by default)
    (f"{_IS}: token_mask\nuse_vllm: true\n", None),
    (f"{_IS}: tokn_mask\nuse_vllm: true\n", f"`{_IS}`: must be one of ['sequence_mask', 'sequence_truncate'"),
    (f"{_IS}: tokn_mask\nuse_vllm: true\nvllm_importance_sampling_correction: false\n", None),
    (f"{_IS}: tokn_mask\n", None),
]


@pytest.mark.parametrize("schema", ["trl:grpo", "trl:GRPOConfig"])
@pytest.mark.parametrize(
    ("extra", "refused"),
    GUARDED,
    ids=["scale", "scale-other", "scale-bool", "vllm", "no-vllm", "is", "is-typo", "is-off", "is-no-vllm"],
)
def test_options_trl_closes_under_another_option_are_refused_exactly_where_trl_raises(
    tmp_path, monkeypatch, schema, extra, refused
):
    """TRL accepts `scale_rewards: batc` and `vllm_mode: colocte` until the first batch (or the
    vLLM start) raises; under the other aggregation, or without vLLM, it never reads them."""
    (tmp_path / "grpo.yaml").write_text("output_dir: out\nlearning_rate: 1.0e-6\n" + extra)
    done = init_in_process(tmp_path, monkeypatch, "--from", "grpo.yaml", "--schema", schema)
    if refused is None:
        assert done.exit_code == 0, done.stderr
        return
    assert done.exit_code == 2 and refused in done.stderr, done.stderr
    assert "grpo.yaml:3:" in done.stderr and "did you mean" in done.stderr and "Traceback" not in done.stderr


def _is_chain_raises(use_vllm: bool, correction: bool, mode: str) -> bool:
    """The oracle: GRPOTrainer's own importance-sampling block, cut from its source and run on tiny
    tensors with a stand-in `self` holding the config's values: does it raise for ``mode``?"""
    import ast
    import math
    import types

    import torch
    from trl.trainer import grpo_trainer

    tree = ast.parse(Path(grpo_trainer.__file__).read_text())
    block = next(
        n
        for n in ast.walk(tree)
        if isinstance(n, ast.If)
        and ast.unparse(n.test) == "self.use_vllm and self.vllm_importance_sampling_correction"
        and any(isinstance(r, ast.Raise) for r in ast.walk(n))
    )
    code = compile(ast.Module([block], type_ignores=[]), grpo_trainer.__file__, "exec")
    fields = {"vllm_importance_sampling_clip_min": 0.5, "vllm_importance_sampling_clip_max": 2.0}
    fields |= {"use_vllm": use_vllm, "vllm_importance_sampling_correction": correction, _IS: mode}
    logps, mask = torch.zeros(1, 2), torch.ones(1, 2)
    names = {"self": types.SimpleNamespace(**fields), "torch": torch, "math": math, "tool_mask": None}
    names |= {"completion_mask": mask, "old_per_token_logps": logps, "sampling_per_token_logps": logps}
    try:
        exec(code, names)
    except ValueError:
        return True
    return False


@pytest.mark.parametrize("use_vllm", [True, False])
@pytest.mark.parametrize("correction", [True, False])
@pytest.mark.parametrize("mode", ["tokn_mask", "token_mask", "sequence_truncate"])
def test_the_importance_sampling_mode_is_refused_exactly_where_trl_s_own_block_raises(
    tmp_path, monkeypatch, use_vllm, correction, mode
):
    """TRL accepts `vllm_importance_sampling_mode: tokn_mask` and raises at the first batch, only
    when both `use_vllm` and `vllm_importance_sampling_correction` are true: sweepgen refuses it
    before any run exactly there, and nowhere else."""
    raises = _is_chain_raises(use_vllm, correction, mode)
    assert raises == (use_vllm and correction and mode == "tokn_mask")  # the oracle reads as said
    flags = f"use_vllm: {str(use_vllm).lower()}\n{_CORRECTION}: {str(correction).lower()}\n"
    config = "output_dir: out\n" + flags
    (tmp_path / "grpo.yaml").write_text(config + f"{_IS}: {mode}\n")
    done = init_in_process(tmp_path, monkeypatch, "--from", "grpo.yaml", "--schema", "trl:GRPOConfig")
    assert done.exit_code == (2 if raises else 0), done.stderr
    if raises:
        assert "grpo.yaml:4:" in done.stderr and "trl/trainer/grpo_trainer.py:" in done.stderr, done.stderr
        assert "did you mean 'token_mask'" in done.stderr and "Traceback" not in done.stderr


DPO_LOSSES = [
    ("loss_type: sigmoidd\n", "did you mean 'sigmoid'?"),
    ("loss_type: [sigmoid, hinnge]\n", "item 1: must be one of"),
    ("loss_type: [sigmoid, sft]\nloss_weights: [1.0, 0.5]\n", None),
    ("loss_type: ipo\n", None),
]


@pytest.mark.parametrize("schema", ["trl:dpo", "trl:DPOConfig"])
@pytest.mark.parametrize(("extra", "refused"), DPO_LOSSES, ids=["typo", "typo-in-list", "list", "one"])
def test_dpo_loss_types_are_refused_item_by_item_where_trl_s_loss_raises(
    tmp_path, monkeypatch, schema, extra, refused
):
    """DPOConfig takes `loss_type: sigmoidd` (its __post_init__ makes it a list), and the loss raises
    `Unknown loss type` at the first batch, from a loop over the list the chain reader did not
    follow: every item is held to the values that loop handles, named as TRL's own message does."""
    (tmp_path / "dpo.yaml").write_text("output_dir: out\nlearning_rate: 1.0e-6\n" + extra)
    done = init_in_process(tmp_path, monkeypatch, "--from", "dpo.yaml", "--schema", schema)
    if refused is None:
        assert done.exit_code == 0, done.stderr
        return
    assert done.exit_code == 2 and refused in done.stderr, done.stderr
    assert "dpo.yaml:3:" in done.stderr and "trl/trainer/dpo_trainer.py:" in done.stderr
    assert "Traceback" not in done.stderr


def test_the_dpo_loss_types_found_are_those_trl_s_own_message_lists():
    """The oracle: TRL's DPOConfig accepts a misspelled loss (it is checked late), and the values
    read from the loss's chain are exactly the list its `Unknown loss type` message names."""
    import ast
    import re

    from trl import DPOConfig
    from trl.trainer import dpo_trainer

    from sweepgen.compile.schema import code_choices

    assert DPOConfig(output_dir="out", loss_type="sigmoidd", bf16=False).loss_type == ["sigmoidd"]
    source = Path(dpo_trainer.__file__).read_text()
    named = re.search(r"Unknown loss type: \{loss_type\}\. Should be one of (\[.*?\])\"\n", source, re.S)
    assert named is not None
    listed = ast.literal_eval(re.sub(r"\"\s*\"", "", named.group(1)))
    found = code_choices.items_closed_in(["trl.trainer.dpo_config"], ["loss_type"])
    assert found["loss_type"][0] == sorted(listed)


SFT_PADDING_FREE = [
    ("padding_free: true\n", True),
    ("padding_free: true\nmax_length: 512\n", True),
    ("padding_free: true\npacking: true\n", False),
    ("padding_free: true\nmax_length: null\n", False),
    ("padding_free: false\n", False),
]


@pytest.mark.parametrize("schema", ["trl:sft", "trl:SFTConfig"])
@pytest.mark.parametrize(
    ("extra", "refused"), SFT_PADDING_FREE, ids=["unset", "set", "packed", "null", "off"]
)
def test_sft_padding_free_without_packing_is_refused_where_the_trainer_raises(
    tmp_path, monkeypatch, schema, extra, refused
):
    """SFTConfig takes `padding_free: true` alone; SFTTrainer raises once the model is loaded, as
    max_length (1024 unset) is not enforced without packing. The oracle's words are in its source."""
    from trl.trainer import sft_trainer

    said = "When `padding_free=True` without packing, `max_length` is not enforced"
    assert said in Path(sft_trainer.__file__).read_text()
    (tmp_path / "sft.yaml").write_text("output_dir: out\n" + extra)
    done = init_in_process(tmp_path, monkeypatch, "--from", "sft.yaml", "--schema", schema)
    if not refused:
        assert done.exit_code == 0, done.stderr
        return
    assert done.exit_code == 2 and "sft.yaml:2:" in done.stderr, done.stderr
    assert "add `packing: true`, or `max_length: null`" in done.stderr and "Traceback" not in done.stderr
    # a vision dataset: TRL raises for padding_free whatever max_length is; the one fix for both
    vision = "Padding-free training is yet not supported for vision datasets"
    assert vision in Path(sft_trainer.__file__).read_text() and "`padding_free: false`" in done.stderr


@pytest.mark.parametrize("schema", ["trl:dpo", "trl:DPOConfig"])
@pytest.mark.parametrize(("flag", "refused"), [("true", True), ("false", False)])
def test_dpo_padding_free_which_the_trainer_turns_off_is_refused(
    tmp_path, monkeypatch, schema, flag, refused
):
    """TRL 1.16's DPOTrainer warns and pads whatever `padding_free` says: `padding_free: true` would
    make a padding-free run that is not one (a comparison of two identical runs)."""
    from trl.trainer import dpo_trainer

    assert "`padding_free=True` is temporarily unavailable" in Path(dpo_trainer.__file__).read_text()
    (tmp_path / "dpo.yaml").write_text(f"output_dir: out\npadding_free: {flag}\n")
    done = init_in_process(tmp_path, monkeypatch, "--from", "dpo.yaml", "--schema", schema)
    if not refused:
        assert done.exit_code == 0, done.stderr
        return
    assert done.exit_code == 2 and "dpo.yaml:2:" in done.stderr, done.stderr
    assert "turns padding_free off whatever it is, trl/trainer/dpo_trainer.py:" in done.stderr


def test_resume_from_checkpoint_true_is_taken_as_trl_takes_it(tmp_path, monkeypatch):
    """`resume_from_checkpoint: true` (resume from output_dir's last checkpoint) was refused by the
    exported schema ("expected string or null", the field's annotation), though TrlParser keeps it a
    bool and transformers' Trainer.train takes `str | bool | None`: a TRL user's `render` failed."""
    import inspect

    from transformers import Trainer
    from trl import GRPOConfig, TrlParser

    from sweepgen.compile.schema.one_or_list import accepted_hints

    monkeypatch.chdir(tmp_path)
    (tmp_path / "c.yaml").write_text(
        "output_dir: out\nresume_from_checkpoint: true\nbf16: false\nuse_cpu: true\n"
    )
    monkeypatch.setattr(sys, "argv", ["grpo", "--config", "c.yaml"])
    (args,) = TrlParser((GRPOConfig,)).parse_args_and_config()
    assert args.resume_from_checkpoint is True  # the oracle: TRL keeps it a bool ...
    assert bool in typing.get_args(
        inspect.signature(Trainer.train).parameters["resume_from_checkpoint"].annotation
    )
    hint = accepted_hints(GRPOConfig, {"resume_from_checkpoint": str | None})["resume_from_checkpoint"]
    assert set(typing.get_args(hint)) == {str, bool, type(None)}  # ... and so does the schema


@pytest.mark.parametrize(("command", "cls_name"), [("grpo", "GRPOConfig"), ("sft", "SFTConfig")])
def test_a_command_schema_refuses_what_its_config_class_raises_for_and_takes_the_rest(
    tmp_path, monkeypatch, command, cls_name
):
    """`trl:grpo`'s schema (a cache of format 10) holds GRPOConfig's own refusals and transformers'
    TrainingArguments' by the script's classes, never by key names: SFT takes auto_find_batch_size."""
    import warnings

    import trl

    from sweepgen.compile.schema import jsonschema_subset, trl_cli
    from sweepgen.errors import Location

    share_schema_cache(tmp_path, monkeypatch)
    schema = {**trl_cli.command_schema(command, Location("test")), "required": []}
    cases = [
        {"auto_find_batch_size": True},
        {"fp16": True, "bf16": True},
        {"bf16": True},
        {"lr_scheduler_type": "reduce_lr_on_plateau"},
        {"lr_scheduler_type": "reduce_lr_on_plateau", "eval_strategy": "epoch"},
        {"warmup_steps": -1},
    ]
    for case in cases:
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                getattr(trl, cls_name)(
                    **{"output_dir": str(tmp_path), "use_cpu": True, "bf16": False, **case}
                )
            raised = False
        except ValueError:
            raised = True
        assert bool(jsonschema_subset.validate(case, schema)) is raised, (command, case)
