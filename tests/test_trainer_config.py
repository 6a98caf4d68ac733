"""RunConfig and its file loader: explicit defaults, unknown keys, bad rewards, clear locations."""

from __future__ import annotations

import dataclasses

import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st

from sweepgen.errors import ConfigError
from trainer.config import GRPOConfig, RunConfig
from trainer.configfile import load_config, validate_config
from trainer.grpo_args import grpo_kwargs
from trainer.outputs import config_yaml


def minimal(**extra):
    return {"run_name": "r", "output_dir": "runs/r", **extra}


def write(tmp_path, text: str):
    path = tmp_path / "cfg.yaml"
    path.write_text(text)
    return path


def test_defaults_are_the_validated_gpu_profile_and_loss_type_is_ours():
    cfg = RunConfig.model_validate(minimal())
    g = cfg.grpo
    assert (g.beta, g.batch_size, g.num_generations, g.learning_rate, g.max_steps) == (
        0.02, 32, 16, 1e-5, 2000)
    assert g.loss_type == "grpo"  # TRL's own default is dapo


def test_resolved_config_round_trips_and_writes_every_default():
    cfg = RunConfig.model_validate(minimal())
    dumped = yaml.safe_load(config_yaml(cfg))
    assert RunConfig.model_validate(dumped) == cfg
    # Every field of every section is written, nothing left implicit.
    assert set(dumped["grpo"]) == set(GRPOConfig.model_fields)
    assert dumped["model"]["tiny"]["vocab_size"] == 512
    assert dumped["reward"]["params"] == {"cap": 4, "word": "happy", "case_sensitive": False}


def test_unknown_key_names_line_column_and_suggests(tmp_path):
    path = write(tmp_path, "run_name: r\noutput_dir: runs/r\ngrpo:\n  lerning_rate: 1e-5\n")
    with pytest.raises(ConfigError) as info:
        load_config(path)
    err = info.value
    assert (err.location.line, err.location.col) == (4, 3)
    assert "unknown key `grpo.lerning_rate`" in err.message
    assert "did you mean `learning_rate`" in err.hint


def test_unknown_top_level_section(tmp_path):
    path = write(tmp_path, "run_name: r\noutput_dir: runs/r\ngrpoo: {}\n")
    with pytest.raises(ConfigError) as info:
        load_config(path)
    assert info.value.location.line == 3 and "did you mean `grpo`" in info.value.hint


def test_yaml_12_float_and_duplicate_key(tmp_path):
    cfg = load_config(write(tmp_path, "run_name: r\noutput_dir: o\ngrpo: {learning_rate: 3e-6}\n"))
    assert cfg.grpo.learning_rate == 3e-6
    with pytest.raises(ConfigError) as info:
        load_config(write(tmp_path, "run_name: r\nrun_name: s\noutput_dir: o\n"))
    assert info.value.location.line == 2


def test_unknown_reward_lists_known_ones(tmp_path):
    path = write(tmp_path, "run_name: r\noutput_dir: o\nreward:\n  name: hapy_count\n")
    with pytest.raises(ConfigError) as info:
        load_config(path)
    msg = info.value.message
    assert "unknown reward `hapy_count`" in msg and "happy_count" in msg and "exact_answer" in msg
    assert info.value.location.line == 4


def test_unknown_reward_param_lists_its_params():
    with pytest.raises(ConfigError) as info:
        validate_config(minimal(reward={"name": "happy_count", "params": {"cp": 2}}))
    assert "'cp'" in info.value.message and "cap, word, case_sensitive" in info.value.message
    assert info.value.key == "reward.params.cp"


def test_reward_errors_point_at_the_offending_line(tmp_path):
    path = write(tmp_path, "run_name: r\noutput_dir: o\nreward:\n  name: happy_count\n"
                           "  params:\n    cap: 2\n    wrd: sad\n")
    with pytest.raises(ConfigError) as info:
        load_config(path)
    assert (info.value.location.line, info.value.location.col) == (7, 5)


def test_reward_param_of_wrong_type_is_rejected():
    with pytest.raises(ConfigError, match="cap"):
        validate_config(minimal(reward={"name": "happy_count", "params": {"cap": "4"}}))


def test_weighted_sum_terms_are_resolved_and_checked():
    cfg = validate_config(minimal(reward={"name": "weighted_sum", "params": {"terms": [
        {"name": "exact_answer"}, {"name": "happy_count", "weight": 0.5}]}}))
    terms = cfg.reward.params["terms"]
    assert terms[0] == {"name": "exact_answer", "params": {"answer_field": "answer",
                                                           "which": "last"}, "weight": 1.0}
    assert terms[1]["weight"] == 0.5
    with pytest.raises(ConfigError, match="unknown reward `nope`"):
        validate_config(minimal(reward={"name": "weighted_sum",
                                        "params": {"terms": [{"name": "nope"}]}}))


def test_missing_required_keys():
    with pytest.raises(ConfigError) as info:
        validate_config({"run_name": "r"})
    assert "missing required key `output_dir`" in info.value.message


def test_group_must_fit_the_batch():
    with pytest.raises(ConfigError, match="not a multiple of num_generations"):
        validate_config(minimal(grpo={"batch_size": 12, "num_generations": 8}))
    ok = validate_config(minimal(grpo={"batch_size": 4, "num_generations": 8,
                                       "gradient_accumulation_steps": 2}))
    assert ok.grpo.batch_size == 4


def test_checkpoints_must_end_a_generation_cycle():
    with pytest.raises(ConfigError, match="save_steps = 5 is not a multiple of grpo.num_iterations = 2"):
        validate_config(minimal(grpo={"num_iterations": 2}, logging={"save_steps": 5}))
    ok = validate_config(minimal(grpo={"num_iterations": 2}, logging={"save_steps": 4}))
    assert ok.logging.save_steps == 4


def test_tiny_shape_only_with_builtin_model():
    with pytest.raises(ConfigError, match="only applies to path `builtin:tiny`"):
        validate_config(minimal(model={"path": "models/x", "tiny": {"hidden_size": 32}}))
    assert validate_config(minimal(model={"path": "models/x"})).model.tiny is None


def test_data_source_must_be_builtin_or_jsonl():
    with pytest.raises(ConfigError, match="unknown built-in dataset"):
        validate_config(minimal(data={"source": "builtin:storys"}))
    with pytest.raises(ConfigError, match="must be a builtin"):
        validate_config(minimal(data={"source": "prompts.csv"}))


def test_every_grpo_field_reaches_trl_kwargs():
    cfg = RunConfig.model_validate(minimal())
    kwargs = grpo_kwargs(cfg, "ck")
    for name, value in cfg.grpo.model_dump().items():
        trl_name = {"batch_size": "per_device_train_batch_size"}.get(name, name)
        assert kwargs[trl_name] == value, name
    assert kwargs["seed"] == cfg.seed and kwargs["shuffle_dataset"] is True


@pytest.mark.train
def test_trl_config_gets_our_values_not_trl_defaults():
    trl = pytest.importorskip("trl")
    defaults = {f.name: f.default for f in dataclasses.fields(trl.GRPOConfig)}
    assert defaults["loss_type"] == "dapo"  # if TRL changes this, re-read its release notes
    from trainer.grpo_args import make_grpo_config

    cfg = RunConfig.model_validate(minimal())
    args = make_grpo_config(cfg, "/nonexistent/ck")
    assert args.loss_type == "grpo" and args.beta == 0.02 and args.scale_rewards == "group"
    assert args.learning_rate == 1e-5 and args.num_generations == 16
    assert args.bf16 is False and args.gradient_checkpointing is False
    assert args.activation_checkpointing is False and args.epsilon_high == 0.2
    assert args.max_completion_length == 64 and args.temperature == 1.0


def test_config_and_preflight_modules_do_not_import_torch():
    import subprocess
    import sys

    code = ("import sys, trainer.config, trainer.configfile, trainer.run, trainer.__main__; "
            "heavy = sorted(m for m in ('torch', 'trl', 'transformers', 'datasets') "
            "if m in sys.modules); print(heavy); sys.exit(1 if heavy else 0)")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stdout + proc.stderr


@given(st.integers(1, 64), st.integers(1, 4), st.integers(2, 32))
def test_batch_accepted_iff_whole_groups_fit(batch, accumulation, generations):
    data = minimal(grpo={"batch_size": max(batch, 2), "gradient_accumulation_steps": accumulation,
                         "num_generations": generations})
    fits = (max(batch, 2) * accumulation) % generations == 0
    if fits:
        assert validate_config(data).grpo.num_generations == generations
    else:
        with pytest.raises(ConfigError, match="not a multiple of num_generations"):
            validate_config(data)


def test_json_schema_has_help_text_for_editors():
    schema = RunConfig.model_json_schema()
    grpo = schema["$defs"]["GRPOConfig"]["properties"]
    assert "TRL's default would be `dapo`" in grpo["loss_type"]["description"]
    assert schema["additionalProperties"] is False
