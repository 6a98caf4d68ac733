"""`trl:dpo` (and `trl:DPOConfig`) against the installed trl: a string option transformers casts to
an enum in `TrainingArguments.__post_init__` (`eval_strategy`, `optim`, `lr_scheduler_type`, ...)
takes exactly what `trl dpo --config` takes, and `fsdp: true` (its help's own words) is taken;
TRL's own parser is the oracle."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from schema_support import init_in_process, share_schema_cache

pytestmark = pytest.mark.train  # imports trl

BASE = "output_dir: out\nbf16: false\n"
CASES = [
    (
        "eval_strategy: step\n",
        "`eval_strategy`: must be one of ['no', 'steps', 'epoch']; did you mean 'steps'?",
    ),
    ("lr_scheduler_type: cosin\n", "did you mean 'cosine'?"),
    ("hub_strategy: every\n", "did you mean 'every_save'?"),
    ("optim: adamw\n", "`optim`: must be one of ['adamw_torch',"),
    (
        'eval_strategy: steps\nsave_strategy: "no"\nhub_strategy: end\noptim: adamw_torch_fused\n'
        "lr_scheduler_type: cosine_with_min_lr\nlogging_strategy: epoch\nfsdp: true\n",
        None,
    ),
]


def _trl_takes(path: Path) -> bool:
    """What `trl dpo --config PATH` does before it trains: its parser builds the dataclasses, and
    TrainingArguments.__post_init__ casts the strategies to their enums."""
    from trl.scripts.dpo import make_parser

    try:
        make_parser().parse_args_and_config(["--config", str(path)], return_remaining_strings=True)
    except ValueError:
        return False
    return True


@pytest.mark.parametrize("schema", ["trl:dpo", "trl:DPOConfig"])
@pytest.mark.parametrize(("extra", "refused"), CASES, ids=["eval", "scheduler", "hub", "optim", "accepted"])
def test_an_option_transformers_casts_to_an_enum_is_refused_exactly_where_trl_raises(
    tmp_path, monkeypatch, schema, extra, refused
):
    (tmp_path / "dpo.yaml").write_text(BASE + extra)
    assert _trl_takes(tmp_path / "dpo.yaml") == (refused is None)
    done = init_in_process(tmp_path, monkeypatch, "--from", "dpo.yaml", "--schema", schema)
    if refused is None:
        assert done.exit_code == 0, done.stderr
        return
    assert done.exit_code == 2 and refused in done.stderr, done.stderr
    assert "dpo.yaml:3:" in done.stderr and "Traceback" not in done.stderr


@pytest.mark.parametrize(
    "value", ["tensorbaord", "wandb,tensorboard", ["tensorboard", "wandb"], ["wandbb"], "none", "all", None]
)
def test_report_to_takes_exactly_the_trackers_transformers_builds_callbacks_for(tmp_path, monkeypatch, value):
    """`report_to: tensorbaord` passed `check` and the Trainer raised once built, after the model
    loaded; transformers' own `get_reporting_integration_callbacks` is the oracle."""
    from transformers.integrations.integration_utils import get_reporting_integration_callbacks
    from trl import DPOConfig

    from sweepgen.compile.schema import export, jsonschema_subset, trl_cli
    from sweepgen.compile.schema.validate import _class_validator
    from sweepgen.errors import Location

    try:
        get_reporting_integration_callbacks(value)
        trl_takes = True
    except ValueError:
        trl_takes = False
    share_schema_cache(tmp_path, monkeypatch)
    for schema in (trl_cli.command_schema("dpo", Location("t")), export.export("trl:DPOConfig", DPOConfig)):
        problems = jsonschema_subset.validate({"report_to": value}, {**schema, "required": []})
        assert (problems == []) == trl_takes, (value, problems)
        assert trl_takes or "did you mean" in problems[0][1] or isinstance(value, list)
    if not isinstance(value, list):  # the class route (`schema: trl:DPOConfig`) holds a name alike
        check = _class_validator(DPOConfig, "trl:DPOConfig", Location("t"))
        assert (check({"report_to": value}) == []) == trl_takes, value


@pytest.mark.parametrize(
    "value",
    [
        "q_proj,v_proj",
        "q_proj, v_proj",
        ["q_proj", "v_proj"],
        "all-linear",
        ["all-linear"],
        ["q_proj"],  # TRL makes it "q_proj": one pattern of a whole name
        "v_proj",
        [r".*\.q_proj"],
        ["lm_head"],  # a top-level module: its whole name
    ],
)
def test_lora_target_modules_as_a_comma_string_is_refused_as_peft_refuses_it(tmp_path, monkeypatch, value):
    """`lora_target_modules: "q_proj,v_proj"` (and `[q_proj]`, which TRL's ModelConfig makes the
    string "q_proj") passed `check`; PEFT reads one string as a regular expression a module's whole
    name must match, and raised after the model loaded. TRL's ModelConfig, then PEFT on the tests'
    tiny model, is the oracle."""
    from peft import LoraConfig, get_peft_model
    from transformers import AutoModelForCausalLM
    from trl import ModelConfig

    from sweepgen.compile.schema import jsonschema_subset, trl_cli
    from sweepgen.errors import Location
    from sweepgen_trainer.config import TinyModel
    from sweepgen_trainer.models import build_tiny_model

    model = AutoModelForCausalLM.from_pretrained(build_tiny_model(TinyModel()))
    try:
        as_trl_passes_it = ModelConfig(lora_target_modules=value).lora_target_modules
        get_peft_model(model, LoraConfig(target_modules=as_trl_passes_it, r=2))
        peft_takes = True
    except ValueError:
        peft_takes = False
    share_schema_cache(tmp_path, monkeypatch)
    schema = {**trl_cli.command_schema("sft", Location("t")), "required": []}
    problems = jsonschema_subset.validate({"lora_target_modules": value}, schema)
    assert (problems == []) == peft_takes, (value, problems)
    assert (
        peft_takes
        or "write a list, e.g. [q_proj, v_proj]" in problems[0][1]
        or ("a layer's short name alone matches no module" in problems[0][1])
    )


_STRATEGIES = [None, "no", "steps", "epoch"]


@pytest.mark.parametrize("eval_strategy", _STRATEGIES)
@pytest.mark.parametrize("save_strategy", [*_STRATEGIES, "best"])
def test_load_best_model_at_end_takes_exactly_the_strategies_transformers_takes(
    tmp_path, monkeypatch, eval_strategy, save_strategy
):
    """`load_best_model_at_end: true` with `eval_strategy: steps` and `save_strategy: epoch` passed
    `check`; transformers' TrainingArguments raises at every run's start. TRL's parser is the oracle."""
    from sweepgen.compile.schema import jsonschema_subset, trl_cli
    from sweepgen.errors import Location

    config: dict[str, object] = {"load_best_model_at_end": True, "output_dir": "out", "bf16": False}
    config.update(
        {k: v for k, v in (("eval_strategy", eval_strategy), ("save_strategy", save_strategy)) if v}
    )
    path = tmp_path / "dpo.yaml"
    path.write_text("".join(f"{k}: {json.dumps(v)}\n" for k, v in config.items()))
    share_schema_cache(tmp_path, monkeypatch)
    schema = {**trl_cli.command_schema("dpo", Location("t")), "required": []}
    problems = jsonschema_subset.validate(config, schema)
    assert (problems == []) == _trl_takes(path), problems
    assert not problems or "load_best_model_at_end needs save_strategy" in problems[0][1]
    assert not problems or problems[0][0] in ("save_strategy", "load_best_model_at_end")  # a key to name


@pytest.mark.parametrize("command", ["grpo", "rloo"])
@pytest.mark.parametrize(
    "extra",
    [
        {"generation_batch_size": 8, "steps_per_generation": 2},
        {"generation_batch_size": 8},
        {"steps_per_generation": 2},
        {"num_generations": 1},
        {"num_generations": None},
        {"num_generations": 2},
    ],
    ids=["both", "batch", "steps", "one", "null", "two"],
)
def test_the_generation_batch_takes_what_grpo_and_rloo_take_whatever_the_process_count(
    tmp_path, monkeypatch, command, extra
):
    """`generation_batch_size` and `steps_per_generation` both set, or `num_generations: 1`, passed
    `check` with `trl:grpo`; GRPOConfig raises at every run's start. TRL's parser is the oracle."""
    import importlib

    from sweepgen.compile.schema import jsonschema_subset, trl_cli
    from sweepgen.errors import Location

    config = {
        "output_dir": "out",
        "bf16": False,
        "per_device_train_batch_size": 4,
        "num_generations": 4,
        **extra,
    }
    path = tmp_path / "c.yaml"
    path.write_text("".join(f"{k}: {json.dumps(v)}\n" for k, v in config.items()))
    parser = importlib.import_module(f"trl.scripts.{command}").make_parser()
    try:
        parser.parse_args_and_config(["--config", str(path)], return_remaining_strings=True)
        trl_takes = True
    except (ValueError, TypeError):
        trl_takes = False
    share_schema_cache(tmp_path, monkeypatch)
    schema = {**trl_cli.command_schema(command, Location("t")), "required": []}
    problems = jsonschema_subset.validate(config, schema)
    assert (problems == []) == trl_takes, problems
