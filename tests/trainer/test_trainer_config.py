"""RunConfig and its file loader: explicit defaults, unknown keys, bad rewards, clear locations."""

from __future__ import annotations

import dataclasses

import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st
from trainer_support import grpo_config

from sweepgen.errors import ConfigError
from sweepgen_trainer.config import GRPOConfig, RunConfig
from sweepgen_trainer.configfile import load_config, validate_config
from sweepgen_trainer.grpo_args import grpo_kwargs
from sweepgen_trainer.rundir.outputs import config_yaml


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
        0.02,
        32,
        16,
        1e-5,
        2000,
    )
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
    path = write(
        tmp_path,
        "run_name: r\noutput_dir: o\nreward:\n  name: happy_count\n  params:\n    cap: 2\n    wrd: sad\n",
    )
    with pytest.raises(ConfigError) as info:
        load_config(path)
    assert (info.value.location.line, info.value.location.col) == (7, 5)


def test_reward_param_of_wrong_type_is_rejected():
    with pytest.raises(ConfigError, match="cap"):
        validate_config(minimal(reward={"name": "happy_count", "params": {"cap": "4"}}))


def test_weighted_sum_terms_are_resolved_and_checked():
    cfg = validate_config(
        minimal(
            reward={
                "name": "weighted_sum",
                "params": {"terms": [{"name": "exact_answer"}, {"name": "happy_count", "weight": 0.5}]},
            }
        )
    )
    terms = cfg.reward.params["terms"]
    assert terms[0] == {
        "name": "exact_answer",
        "params": {"answer_field": "answer", "which": "last"},
        "weight": 1.0,
    }
    assert terms[1]["weight"] == 0.5
    with pytest.raises(ConfigError, match="unknown reward `nope`"):
        validate_config(minimal(reward={"name": "weighted_sum", "params": {"terms": [{"name": "nope"}]}}))


def test_missing_required_keys():
    with pytest.raises(ConfigError) as info:
        validate_config({"run_name": "r"})
    assert "missing required key `output_dir`" in info.value.message


def test_group_must_fit_the_batch():
    with pytest.raises(ConfigError, match="not a multiple of num_generations"):
        validate_config(minimal(grpo={"batch_size": 12, "num_generations": 8}))
    ok = validate_config(
        minimal(grpo={"batch_size": 4, "num_generations": 8, "gradient_accumulation_steps": 2})
    )
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
    import trl

    defaults = {f.name: f.default for f in dataclasses.fields(trl.GRPOConfig)}
    assert defaults["loss_type"] == "dapo"  # if TRL changes this, re-read its release notes
    cfg = RunConfig.model_validate(minimal())
    args = grpo_config(cfg, "/nonexistent/ck")
    assert args.loss_type == "grpo" and args.beta == 0.02 and args.scale_rewards == "group"
    assert args.learning_rate == 1e-5 and args.num_generations == 16
    assert args.bf16 is False and args.gradient_checkpointing is False
    assert args.activation_checkpointing is False and args.epsilon_high == 0.2
    assert args.max_completion_length == 64 and args.temperature == 1.0


def test_config_and_preflight_modules_do_not_import_torch():
    import subprocess
    import sys

    code = (
        "import sys, sweepgen_trainer.config, sweepgen_trainer.configfile, "
        "sweepgen_trainer.run, sweepgen_trainer.__main__; "
        "heavy = sorted(m for m in ('torch', 'trl', 'transformers', 'datasets') "
        "if m in sys.modules); print(heavy); sys.exit(1 if heavy else 0)"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stdout + proc.stderr


@given(st.integers(1, 64), st.integers(1, 4), st.integers(2, 32))
def test_batch_accepted_iff_whole_groups_fit(batch, accumulation, generations):
    data = minimal(
        grpo={
            "batch_size": max(batch, 2),
            "gradient_accumulation_steps": accumulation,
            "num_generations": generations,
        }
    )
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


# Every trl.GRPOConfig field must be either set by grpo_kwargs or listed here as not changing results
# (bookkeeping, hub/tracking, distributed/vLLM plumbing, options of features we never turn on). A TRL
# upgrade that adds a field fails this test until someone decides which side it belongs on.
TRL_FIELDS_THAT_DO_NOT_CHANGE_RESULTS = frozenset(
    [
        "lr_scheduler_kwargs",
        "optim_args",
        "optim_target_modules",
        "average_tokens_across_devices",
        "bf16_full_eval",
        "fp16_full_eval",
        "activation_checkpointing_kwargs",
        "gradient_checkpointing_kwargs",
        "torch_compile_backend",
        "torch_compile_mode",
        "liger_kernel_config",
        "use_cache",
        "torch_empty_cache_steps",
        "auto_find_batch_size",
        "logging_strategy",
        "logging_first_step",
        "log_on_each_node",
        "logging_nan_inf_filter",
        "include_num_input_tokens_seen",
        "log_level",
        "log_level_replica",
        "run_name",
        "project",
        "trackio_space_id",
        "trackio_bucket_id",
        "trackio_static_space_id",
        "eval_strategy",
        "eval_steps",
        "eval_delay",
        "per_device_eval_batch_size",
        "prediction_loss_only",
        "eval_on_start",
        "eval_do_concat_batches",
        "eval_use_gather_object",
        "eval_accumulation_steps",
        "include_for_metrics",
        "batch_eval_metrics",
        "save_on_each_node",
        "enable_jit_checkpoint",
        "hub_token",
        "hub_private_repo",
        "hub_model_id",
        "hub_strategy",
        "hub_always_push",
        "hub_revision",
        "load_best_model_at_end",
        "metric_for_best_model",
        "greater_is_better",
        "ignore_data_skip",
        "restore_callback_states_from_checkpoint",
        "full_determinism",
        "use_cpu",
        "accelerator_config",
        "parallelism_config",
        "dataloader_drop_last",
        "dataloader_pin_memory",
        "dataloader_persistent_workers",
        "dataloader_prefetch_factor",
        "dataloader_multiprocessing_context",
        "dataloader_in_order",
        "label_names",
        "train_sampling_strategy",
        "length_column_name",
        "ddp_find_unused_parameters",
        "ddp_bucket_cap_mb",
        "ddp_broadcast_buffers",
        "ddp_static_graph",
        "ddp_backend",
        "ddp_timeout",
        "fsdp",
        "fsdp_config",
        "deepspeed",
        "debug",
        "skip_memory_metrics",
        "do_train",
        "do_eval",
        "do_predict",
        "resume_from_checkpoint",
        "local_rank",
        "model_init_kwargs",
        "trust_remote_code",
        "router_aux_loss_coef",
        "num_generations_eval",
        "ds3_gather_for_generation",
        "pad_to_multiple_of",
        "chat_template_kwargs",
        "vllm_mode",
        "vllm_model_impl",
        "vllm_enable_sleep_mode",
        "vllm_structured_outputs_regex",
        "vllm_server_base_url",
        "vllm_server_host",
        "vllm_server_port",
        "vllm_server_timeout",
        "vllm_group_port",
        "vllm_gpu_memory_utilization",
        "vllm_max_model_length",
        "vllm_tensor_parallel_size",
        "vespo_k_pos",
        "vespo_lambda_pos",
        "vespo_k_neg",
        "vespo_lambda_neg",
        "ref_model_mixup_alpha",
        "ref_model_sync_steps",
        "entropy_coef_min",
        "entropy_coef_max",
        "entropy_coef_delta",
        "entropy_target",
        "max_tool_calling_iterations",
        "vllm_importance_sampling_correction",
        "vllm_importance_sampling_mode",
        "vllm_importance_sampling_clip_max",
        "vllm_importance_sampling_clip_min",
        "log_multimodal",
        "num_completions_to_print",
        "log_unique_prompts",
        "log_completions_hub_repo",
        "use_transformers_paged",
        "vllm_importance_sampling_cap",
    ]
)


@pytest.mark.train
def test_every_trl_grpo_field_is_mapped_or_declared_result_neutral():
    import trl

    mapped = set(grpo_kwargs(RunConfig.model_validate(minimal()), "ck"))
    fields = {f.name for f in dataclasses.fields(trl.GRPOConfig)}
    unclassified = fields - mapped - TRL_FIELDS_THAT_DO_NOT_CHANGE_RESULTS
    assert not unclassified, (
        f"decide: map in sweepgen_trainer.grpo_args or declare neutral: {sorted(unclassified)}"
    )
    assert not mapped & TRL_FIELDS_THAT_DO_NOT_CHANGE_RESULTS
    assert not (mapped | TRL_FIELDS_THAT_DO_NOT_CHANGE_RESULTS) - fields - {"per_device_train_batch_size"}


@pytest.mark.train
def test_loss_affecting_trl_options_are_pinned_to_trls_neutral_values():
    import trl

    from sweepgen_trainer.grpo_args import NEUTRAL_PINS

    defaults = {f.name: f.default for f in dataclasses.fields(trl.GRPOConfig)}
    for name, value in NEUTRAL_PINS.items():
        assert defaults[name] == value, name  # TRL moved a default: re-read its release notes
    cfg = RunConfig.model_validate(minimal())
    kwargs = grpo_kwargs(cfg, "ck")
    assert kwargs["use_bias_correction_kl"] is True and defaults["use_bias_correction_kl"] is True
    assert kwargs["sapo_temperature_pos"] == defaults["sapo_temperature_pos"] == 1.0
    assert kwargs["sapo_temperature_neg"] == defaults["sapo_temperature_neg"] == 1.05
    off = RunConfig.model_validate(minimal(grpo={"use_bias_correction_kl": False}))
    assert grpo_kwargs(off, "ck")["use_bias_correction_kl"] is False


@pytest.mark.train
def test_optim_names_are_transformers_optimizer_names():
    import typing

    from transformers import training_args

    ours = typing.get_args(GRPOConfig.model_fields["optim"].annotation)
    assert list(ours) == [o.value for o in training_args.OptimizerNames]


def test_optim_typo_is_a_config_error_naming_the_key():
    with pytest.raises(ConfigError, match="adamw_torch_fused") as info:
        validate_config(minimal(grpo={"optim": "adamw_torch_fusd"}))
    assert info.value.key == "grpo.optim"


@pytest.mark.train
def test_trl_rejection_is_a_config_error(monkeypatch):
    import trl

    def reject(**kwargs):
        raise ValueError("Your setup doesn't support bf16/gpu.")

    monkeypatch.setattr(trl, "GRPOConfig", reject)
    cfg = RunConfig.model_validate(minimal(grpo={"bf16": True}))
    with pytest.raises(ConfigError, match="TRL rejects this config: .*bf16") as info:
        grpo_config(cfg, "/nonexistent/ck")
    assert info.value.exit_code == 2


def _load(tmp_path, content: bytes):
    from sweepgen_trainer.config import DataConfig
    from sweepgen_trainer.data import load_rows

    path = tmp_path / "d.jsonl"
    path.write_bytes(content)
    return load_rows(DataConfig(source=str(path)))


def test_data_file_that_is_not_utf8_names_path_and_line(tmp_path):
    with pytest.raises(ConfigError, match="not valid UTF-8") as info:
        _load(tmp_path, b'{"prompt": "ok"}\n{"prompt": "a\xff"}\n')
    loc = info.value.location
    assert loc.path.endswith("d.jsonl") and loc.line == 2


def test_data_rows_must_share_fields_and_types(tmp_path):
    with pytest.raises(ConfigError, match="lacks answer") as info:
        _load(
            tmp_path,
            b'{"prompt": "a", "answer": 1}\n\n{"prompt": "b", "answer": 2}\n'
            b'{"prompt": "c"}\n{"prompt": "d", "x": 1}\n',
        )
    assert info.value.location.line == 4
    with pytest.raises(ConfigError, match="adds extra") as info:
        _load(tmp_path, b'{"prompt": "a"}\n{"prompt": "b", "extra": 1}\n')
    assert info.value.location.line == 2
    with pytest.raises(ConfigError, match="`answer` is a string here but a number on line 1") as info:
        _load(tmp_path, b'{"prompt":"a","answer":3}\n{"prompt":"b","answer":"x"}\n')
    assert info.value.location.line == 2
    rows = _load(
        tmp_path, b'{"prompt":"a","answer":3}\n{"prompt":"b","answer":null}\n{"prompt":"c","answer":2.5}\n'
    )
    assert [r["answer"] for r in rows] == [3, None, 2.5]
