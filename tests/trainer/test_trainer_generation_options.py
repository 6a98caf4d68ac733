"""The generation-speed options (docs/TRAINER.md "Fast generation") reach the objects TRL generates
with: the trainer's ``GenerationConfig``, its ``ContinuousBatchingConfig``, its accelerator's compile
plugin. Defaults hand TRL exactly its own defaults. Also pinned here: TRL 1.16's hard-coded
``disable_compile=True``, which no public argument undoes (the reason the docs give)."""

from __future__ import annotations

import pytest

from sweepgen.errors import ConfigError
from sweepgen_trainer.config import RunConfig
from sweepgen_trainer.configfile import validate_config
from sweepgen_trainer.grpo_args import grpo_kwargs
from tests.trainer_support import grpo_config, tiny_dict

CB = {"use_transformers_continuous_batching": True}
SIZED = {"num_blocks": 16, "max_batch_tokens": 256, "use_cuda_graph": True, "default_compile_level": 1}


def small(tmp_path, **grpo):
    return tiny_dict(tmp_path / "run", grpo={"num_generations": 4, "batch_size": 4, "max_steps": 1, **grpo})


def build(tmp_path, **grpo):
    from datasets import Dataset

    from sweepgen_trainer import data as data_mod
    from sweepgen_trainer import models
    from sweepgen_trainer.run import build_trainer
    from sweepgen_trainer.rundir.outputs import RunDir

    cfg = RunConfig.model_validate(small(tmp_path, **grpo))
    run_dir = RunDir(cfg.output_dir)
    run_dir.start(cfg, grpo_kwargs(cfg, str(run_dir.checkpoints)))
    model, tok = models.load_model_and_tokenizer(models.ensure_model_dir(cfg.model), "float32")
    return build_trainer(
        cfg,
        run_dir,
        model=model,
        tokenizer=tok,
        train_dataset=Dataset.from_list(data_mod.load_rows(cfg.data)),
        grpo_config=grpo_config(cfg, run_dir.checkpoints),
    )


def test_defaults_hand_trl_its_own_generation_defaults(tmp_path):
    kwargs = grpo_kwargs(RunConfig.model_validate(small(tmp_path)), "ck")
    assert kwargs["transformers_continuous_batching_config"] is None
    assert kwargs["torch_compile"] is False
    assert kwargs["use_transformers_continuous_batching"] is False and kwargs["cache_implementation"] is None


def test_only_the_batching_options_that_are_set_are_passed(tmp_path):
    cfg = RunConfig.model_validate(
        small(tmp_path, **CB, transformers_continuous_batching_config={"num_blocks": 8})
    )
    assert grpo_kwargs(cfg, "ck")["transformers_continuous_batching_config"] == {"num_blocks": 8}


@pytest.mark.parametrize(
    ("options", "key", "words"),
    [
        ({"seed": 1}, "grpo.transformers_continuous_batching_config.seed", "unknown key"),
        ({"num_blocks": 0}, "grpo.transformers_continuous_batching_config.num_blocks", "greater than"),
        ({"use_cuda_graph": "yes"}, "grpo.transformers_continuous_batching_config.use_cuda_graph", "bool"),
        (
            {"default_compile_level": 4},
            "grpo.transformers_continuous_batching_config.default_compile_level",
            "3",
        ),
        ({"max_memory_percent": 1.5}, "grpo.transformers_continuous_batching_config.max_memory_percent", "1"),
    ],
)
def test_bad_batching_options_are_refused_naming_the_key(tmp_path, options, key, words):
    with pytest.raises(ConfigError, match=words) as info:
        validate_config(small(tmp_path, **CB, transformers_continuous_batching_config=options))
    assert info.value.key == key


def test_batching_options_without_continuous_batching_are_refused(tmp_path):
    with pytest.raises(ConfigError, match="use_transformers_continuous_batching: true") as info:
        validate_config(small(tmp_path, transformers_continuous_batching_config={"num_blocks": 8}))
    assert info.value.key == "grpo.transformers_continuous_batching_config"


def test_torch_compile_must_be_a_bool(tmp_path):
    with pytest.raises(ConfigError) as info:
        validate_config(small(tmp_path, torch_compile="yes"))
    assert info.value.key == "grpo.torch_compile"


@pytest.mark.train
def test_default_trainer_generates_with_trls_own_config(tmp_path, tiny_cache):
    trainer = build(tmp_path)
    assert trainer.generation_config.cache_implementation is None
    assert trainer.generation_config.disable_compile is True  # TRL's, whatever we pass
    assert trainer.continuous_batching_config is None
    assert trainer.accelerator.state.dynamo_plugin.backend.value == "NO"


@pytest.mark.train
def test_static_cache_reaches_trls_generation_config(tmp_path, tiny_cache):
    trainer = build(tmp_path, cache_implementation="static")
    assert trainer.generation_config.cache_implementation == "static"
    assert trainer.generation_config.disable_compile is True  # so no CUDA graphs through generate


@pytest.mark.train
def test_batching_options_reach_trls_continuous_batching_config(tmp_path, tiny_cache):
    trainer = build(tmp_path, **CB, transformers_continuous_batching_config=SIZED)
    got = trainer.continuous_batching_config
    assert (got.num_blocks, got.max_batch_tokens) == (16, 256)
    assert got.use_cuda_graph is True and got.default_compile_level == 1
    assert got.max_memory_percent == 0.5  # unset: TRL's training-aware default stays
    assert got.seed is None  # drawn from the run's seeded generator at each generation


@pytest.mark.train
def test_torch_compile_reaches_the_accelerators_compile_plugin(tmp_path, tiny_cache):
    trainer = build(tmp_path, torch_compile=True)
    assert trainer.args.torch_compile is True
    assert trainer.accelerator.state.dynamo_plugin.backend.value == "INDUCTOR"


@pytest.mark.train
def test_continuous_batching_with_sized_cache_trains_a_step_on_cpu(tmp_path, tiny_cache):
    trainer = build(
        tmp_path, **CB, transformers_continuous_batching_config={"num_blocks": 16, "max_batch_tokens": 128}
    )
    trainer.train()
    assert trainer.state.global_step == 1
    (row,) = [log for log in trainer.state.log_history if "loss" in log]
    assert 1 <= row["completions/mean_length"] <= 16


@pytest.mark.train
def test_trl_refuses_disable_compile_through_generation_kwargs(tmp_path, tiny_cache):
    """Why a static cache brings no CUDA graphs: TRL 1.16 passes ``disable_compile=True`` beside
    ``generation_kwargs`` (grpo_trainer.py:1173), so ``{"disable_compile": False}`` is a TypeError."""
    import trl

    from sweepgen_trainer import models

    cfg = RunConfig.model_validate(small(tmp_path))
    kwargs = {**grpo_kwargs(cfg, str(tmp_path / "ck")), "generation_kwargs": {"disable_compile": False}}
    model, tok = models.load_model_and_tokenizer(models.ensure_model_dir(cfg.model), "float32")
    from datasets import Dataset

    with pytest.raises(TypeError, match="multiple values for keyword argument 'disable_compile'"):
        trl.GRPOTrainer(
            model=model,
            reward_funcs=[lambda completions, **_: [0.0] * len(completions)],
            args=trl.GRPOConfig(**kwargs),
            train_dataset=Dataset.from_list([{"prompt": "a"}]),
            processing_class=tok,
        )
