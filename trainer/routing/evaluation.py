"""The routing eval: sample completions with the adapters at given scales; task reward, hack rate, diversity.

Modes: ``both`` (1,1), ``retain_only`` (1,0), ``forget_only`` (0,1); a baseline has only ``both``.
Each mode samples ``eval_generations`` completions for each of the first ``eval_prompts`` dataset rows,
from a fixed seed inside ``torch.random.fork_rng``, so (1) every mode and every eval step sees the same
sampling noise, and (2) running the eval does not change the training run's random stream.

Result, flattened for metrics.jsonl and summary.json (``routing/<mode>/<metric>``)::

    routing/retain_only/task_reward   mean task reward of the mode's completions
    routing/retain_only/hack_rate     fraction the detector flags
    routing/retain_only/unique_ratio  distinct completions / completions
    routing/retain_only/mean_pairwise_jaccard
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import torch

from trainer.diversity import diversity
from trainer.routing.dual_lora import scales

PREFIX = "routing"
METRICS = ("task_reward", "hack_rate", "unique_ratio", "mean_pairwise_jaccard")


def metric_key(mode: str, metric: str) -> str:
    return f"{PREFIX}/{mode}/{metric}"


@torch.no_grad()
def sample_completions(
    model,
    tokenizer,
    prompts: Sequence[str],
    *,
    generations: int,
    max_new_tokens: int,
    temperature: float,
    seed: int,
    top_p: float = 1.0,
    top_k: int = 0,
    repetition_penalty: float = 1.0,
) -> list[str]:
    """``generations`` sampled completions per prompt, prompt-major order, decoded like TRL does."""
    device = next(model.parameters()).device
    # Tokenised as TRL does for plain-text prompts, then left-padded for batched generation.
    ids = tokenizer(text=list(prompts))["input_ids"]
    width = max(len(x) for x in ids)
    pad = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else tokenizer.eos_token_id
    input_ids = torch.tensor([[pad] * (width - len(x)) + list(x) for x in ids], device=device)
    attention = torch.tensor([[0] * (width - len(x)) + [1] * len(x) for x in ids], device=device)
    was_training = model.training
    model.eval()
    devices = [device] if device.type == "cuda" else []
    try:
        with torch.random.fork_rng(devices=devices):
            torch.manual_seed(seed)
            out = model.generate(
                input_ids=input_ids,
                attention_mask=attention,
                do_sample=True,
                temperature=temperature,
                top_p=top_p,
                top_k=top_k or None,
                repetition_penalty=repetition_penalty,
                max_new_tokens=max_new_tokens,
                num_return_sequences=generations,
                pad_token_id=pad,
            )
    finally:
        model.train(was_training)
    return tokenizer.batch_decode(out[:, width:], skip_special_tokens=True)


def evaluate_modes(
    model,
    tokenizer,
    rows: Sequence[dict[str, Any]],
    *,
    modes: dict[str, tuple[float, float]],
    task_reward: Callable[[list[str], dict], list[float]],
    detector: Callable[[list[str], dict], list[bool]],
    prompt_field: str = "prompt",
    generations: int,
    max_new_tokens: int,
    temperature: float,
    seed: int,
    **sampling: Any,
) -> dict[str, float]:
    """Flat ``routing/<mode>/<metric>`` dict for each mode (retain scale, forget scale)."""
    prompts = [row[prompt_field] for row in rows]
    # Dataset columns repeated per completion, as TRL passes them to reward functions.
    columns = {k: [row[k] for row in rows for _ in range(generations)] for k in rows[0] if k != prompt_field}
    result: dict[str, float] = {}
    for mode, (retain, forget) in modes.items():
        with scales(model, retain, forget):
            texts = sample_completions(
                model,
                tokenizer,
                prompts,
                generations=generations,
                max_new_tokens=max_new_tokens,
                temperature=temperature,
                seed=seed,
                **sampling,
            )
        rewards = task_reward(texts, columns)
        hacks = detector(texts, columns)
        div = diversity(texts)
        result[metric_key(mode, "task_reward")] = sum(rewards) / len(rewards)
        result[metric_key(mode, "hack_rate")] = sum(hacks) / len(hacks)
        result[metric_key(mode, "unique_ratio")] = div["unique_ratio"]
        result[metric_key(mode, "mean_pairwise_jaccard")] = div["mean_pairwise_jaccard"]
    return result
