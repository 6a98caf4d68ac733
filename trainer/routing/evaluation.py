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

import functools
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import torch

from sweepgen_trainer import rewards
from sweepgen_trainer.data import load_rows
from sweepgen_trainer.routing import detectors
from sweepgen_trainer.routing.dual_lora import scales
from sweepgen_trainer.rundir.diversity import diversity

if TYPE_CHECKING:  # annotations only
    from transformers import PreTrainedModel, PreTrainedTokenizerBase

    from sweepgen_trainer.config import RunConfig

PREFIX = "routing"
METRICS = ("task_reward", "hack_rate", "unique_ratio", "mean_pairwise_jaccard")


def _metric_key(mode: str, metric: str) -> str:
    return f"{PREFIX}/{mode}/{metric}"


@torch.no_grad()
def _sample_completions(
    model: Any,  # a PreTrainedModel; transformers types its eval() and generate() too loosely to call
    tokenizer: PreTrainedTokenizerBase,
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
    texts: list[str] = tokenizer.batch_decode(out[:, width:], skip_special_tokens=True)
    return texts


def evaluate_modes(
    model: PreTrainedModel,
    tokenizer: PreTrainedTokenizerBase,
    rows: Sequence[dict[str, Any]],
    *,
    modes: dict[str, tuple[float, float]],
    task_reward: Callable[[list[str], dict[str, Any]], list[float]],
    detector: Callable[[list[str], dict[str, Any]], list[bool]],
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
            texts = _sample_completions(
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
        result[_metric_key(mode, "task_reward")] = sum(rewards) / len(rewards)
        result[_metric_key(mode, "hack_rate")] = sum(hacks) / len(hacks)
        result[_metric_key(mode, "unique_ratio")] = div["unique_ratio"]
        result[_metric_key(mode, "mean_pairwise_jaccard")] = div["mean_pairwise_jaccard"]
    return result


def evaluate_run(
    model: PreTrainedModel,
    tokenizer: PreTrainedTokenizerBase,
    cfg: RunConfig,
    *,
    modes: dict[str, tuple[float, float]],
) -> dict[str, float]:
    """``evaluate_modes`` with ``cfg``'s routing-eval settings (prompts, task reward, detector, sampling),
    read in this one place: the training eval and ``python -m sweepgen_trainer.eval`` run the same eval."""
    r = cfg.routing
    assert r is not None, "a routing eval needs a routing section"
    return evaluate_modes(
        model,
        tokenizer,
        eval_rows(cfg)[: r.eval_prompts],
        modes=modes,
        task_reward=functools.partial(rewards.REWARDS[r.task_reward.name].fn, **r.task_reward.params),
        detector=detectors.build(r.detector.name, r.detector.params),
        generations=r.eval_generations,
        max_new_tokens=cfg.grpo.max_completion_length,
        temperature=r.eval_temperature,
        seed=cfg.seed,
        top_p=cfg.grpo.top_p,
        top_k=cfg.grpo.top_k,
        repetition_penalty=cfg.grpo.repetition_penalty,
    )


def eval_rows(cfg: RunConfig) -> list[dict[str, Any]]:
    """The routing eval's prompt rows: the held-out file ``routing.eval_data``, or the training data."""
    held_out = cfg.routing_eval_data()
    return load_rows(cfg.data if held_out is None else held_out)


def eval_prompts_origin(cfg: RunConfig) -> str:
    """Which prompts the routing eval used and how many, for summary.json (held out or also trained
    on). The count is the rows the eval really took: ``routing.eval_prompts`` or, for a shorter file,
    all of its rows (then said, so a figure is never read as over more prompts than it had)."""
    assert cfg.routing is not None
    asked = cfg.routing.eval_prompts
    used = len(eval_rows(cfg)[:asked])
    rows = f"{used} prompts (the first {used} rows" + (
        f"; routing.eval_prompts asks for {asked}, the file has only {used})" if used < asked else ")"
    )
    if cfg.routing.eval_data is None:
        return f"{rows} of the training data {cfg.data.source} (also trained on)"
    return f"{rows} of the held-out file {cfg.routing.eval_data}"
