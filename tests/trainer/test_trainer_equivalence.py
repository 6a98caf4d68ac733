"""The trainer adds no hidden behaviour: with the same arguments, seed, model and data, its per-step
rewards (and losses) equal those of a plain ``trl.GRPOTrainer`` script."""

from __future__ import annotations

import pytest
from trainer_support import read_jsonl, tiny_dict

from sweepgen_trainer.config import RunConfig

pytestmark = [pytest.mark.train, pytest.mark.slow]

STEPS = 6


def plain_trl_rewards(model_dir, output_dir):
    """What a user would write by hand with TRL alone: every argument spelled out literally."""
    import datasets
    import trl
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from sweepgen_trainer.data import BUILTIN_DIR

    dataset = datasets.load_dataset("json", data_files=str(BUILTIN_DIR / "stories.jsonl"), split="train")

    def happy_count(prompts, completions, **kwargs):
        import re

        return [min(len(re.findall(r"\bhappy\b", c, re.IGNORECASE)), 4) / 4 for c in completions]

    args = trl.GRPOConfig(
        output_dir=str(output_dir),
        seed=0,
        data_seed=0,
        loss_type="grpo",
        beta=0.02,
        scale_rewards="group",
        learning_rate=5e-3,
        lr_scheduler_type="constant",
        num_generations=8,
        per_device_train_batch_size=16,
        gradient_accumulation_steps=1,
        max_steps=STEPS,
        max_completion_length=16,
        temperature=1.0,
        top_p=1.0,
        top_k=0,
        epsilon=0.2,
        epsilon_high=0.2,
        bf16=False,
        activation_checkpointing=False,
        optim="adamw_torch_fused",
        weight_decay=0.0,
        max_grad_norm=1.0,
        logging_steps=1,
        save_strategy="no",
        report_to="none",
        disable_tqdm=True,
    )
    trainer = trl.GRPOTrainer(
        model=AutoModelForCausalLM.from_pretrained(model_dir),
        reward_funcs=[happy_count],
        args=args,
        train_dataset=dataset,
        processing_class=AutoTokenizer.from_pretrained(model_dir),
    )
    trainer.train()
    return [(h["reward"], h["loss"]) for h in trainer.state.log_history if "reward" in h]


def test_per_step_rewards_equal_plain_trl(tiny_cache, tmp_path):
    from sweepgen_trainer.models import ensure_model_dir
    from sweepgen_trainer.run import run

    cfg = RunConfig.model_validate(tiny_dict(tmp_path / "ours", grpo={"max_steps": STEPS, "beta": 0.02}))
    run(cfg)
    ours = [(r["reward_mean"], r["loss"]) for r in read_jsonl(tmp_path / "ours" / "metrics.jsonl")]
    plain = plain_trl_rewards(ensure_model_dir(cfg.model), tmp_path / "plain")
    assert len(ours) == len(plain) == STEPS
    assert ours == plain
    assert len({r for r, _ in ours}) > 1  # a real signal, not a constant that matches trivially
