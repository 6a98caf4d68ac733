"""Debate rollouts: the policy plays solver and critic in turns; TRL's ``rollout_func`` hook.

Why ``rollout_func``: it is TRL 1.16's documented hook for custom multi-turn generation. It receives
the per-process prompts (already repeated ``num_generations`` times by TRL's sampler) and the
trainer, and returns prompt ids, completion ids and an ``env_mask`` that keeps inserted text (our
role prompts) out of the loss; every other key it returns reaches the reward functions and is merged
into the batch rows, which is how the turns and each token's role reach the advantage step
(see ``sweepgen_trainer.debate.trainer``).

Generation uses the trainer's own ``generation_config`` (temperature, top_p, top_k, repetition
penalty from the config), with ``max_new_tokens`` set to the turn budget; each turn ends at the
first EOS (kept, so the policy learns to end its turns) or after ``max_turn_tokens`` tokens.
"""

from __future__ import annotations

import copy
from typing import Any

import torch
from trl.models.utils import unwrap_model_for_generation

from sweepgen.errors import ConfigError
from sweepgen_trainer.debate import shaping as registry
from sweepgen_trainer.debate.branching import Plan, play
from sweepgen_trainer.debate.config import DebateConfig, RewardShapingConfig
from sweepgen_trainer.debate.group import Turn
from sweepgen_trainer.debate.transcript import assemble, plain_turns


def _as_rows(turns: tuple[Turn, ...]) -> list[dict[str, Any]]:
    return [{"role": x.role, "text": x.text, "n_tokens": x.n_tokens} for x in turns]


class DebateRollout:
    """``rollout_func(prompts, trainer) -> dict`` playing one debate per prompt row, and the
    counterfactual branches the shaping strategy needs (debate/branching.py), batched with them."""

    def __init__(self, debate: DebateConfig, shaping: RewardShapingConfig | None = None) -> None:
        self.debate = debate
        self.shaping = shaping

    def __call__(self, prompts: list[Any], trainer: Any) -> dict[str, Any]:
        if any(not isinstance(p, str) for p in prompts):
            raise ConfigError(
                "debate rollouts need plain-text prompts; this dataset has conversational (chat) prompts",
                key="data",
                hint="use a JSONL file whose prompt field is a string, or builtin:arithmetic",
            )
        tokenizer = trainer.processing_class
        prompt_ids = [list(ids) for ids in tokenizer(text=prompts)["input_ids"]]
        schedule = [(role, self._role_ids(tokenizer, text)) for role, text in self.debate.schedule()]
        self._check_budget(schedule, trainer.max_completion_length)
        generation_config = copy.deepcopy(trainer.generation_config)
        generation_config.max_new_tokens = self.debate.max_turn_tokens
        played = play(
            prompt_ids,
            schedule,
            lambda contexts, _keys: self._generate(trainer, contexts, generation_config),
            lambda ids: tokenizer.decode(ids, skip_special_tokens=True),
            self._plan(tokenizer),
        )
        transcripts = [assemble(t) for t in played.debates]
        return {
            "prompt_ids": prompt_ids,
            "completion_ids": [t.completion_ids for t in transcripts],
            "logprobs": None,  # TRL recomputes log-probs itself when not generating with vLLM
            "env_mask": [t.env_mask for t in transcripts],
            "debate_token_roles": [t.token_roles for t in transcripts],
            "debate_token_turns": [t.token_turns for t in transcripts],
            "debate_turns": [_as_rows(t.turns) for t in transcripts],
            # [row][turn][k]: the regenerated counterfactual transcripts of each turn
            "debate_counterfactuals": [
                [[_as_rows(plain_turns(z)) for z in per_turn] for per_turn in row] for row in played.branches
            ],
            "debate_counterfactual_tokens": played.counterfactual_tokens,
        }

    def _plan(self, tokenizer: Any) -> Plan:
        if self.shaping is None:
            return Plan()
        mode = registry.get(self.shaping.strategy).counterfactuals
        if mode == "sample":
            return Plan("sample", k=self.shaping.params["counterfactuals"])
        if mode == "default":
            text = self.shaping.params["default_text"]
            return Plan("default", default_ids=tuple(self._role_ids(tokenizer, text)), default_text=text)
        return Plan()

    @staticmethod
    def _role_ids(tokenizer: Any, text: str) -> list[int]:
        return list(tokenizer(text=text, add_special_tokens=False)["input_ids"]) if text else []

    def _check_budget(self, schedule: list[tuple[str, list[int]]], max_completion_length: int) -> None:
        # The whole transcript (role prompts included) is the completion; the config check could not
        # count role-prompt tokens without the tokenizer, so the full count is checked here.
        longest = sum(len(ids) for _, ids in schedule) + self.debate.max_turns * self.debate.max_turn_tokens
        if longest > max_completion_length:
            raise ConfigError(
                f"a debate transcript can reach {longest} tokens (role prompts included), more than "
                f"grpo.max_completion_length = {max_completion_length}",
                key="grpo.max_completion_length",
                hint="raise grpo.max_completion_length, "
                "or shorten the role prompts or debate.max_turn_tokens",
            )

    @staticmethod
    def _generate(trainer: Any, contexts: list[list[int]], generation_config: Any) -> list[list[int]]:
        tokenizer = trainer.processing_class
        device = trainer.accelerator.device
        width = max(len(c) for c in contexts)
        pad = tokenizer.pad_token_id
        input_ids = torch.tensor([[pad] * (width - len(c)) + c for c in contexts], device=device)
        attention = torch.tensor([[0] * (width - len(c)) + [1] * len(c) for c in contexts], device=device)
        with (
            unwrap_model_for_generation(
                trainer.model_wrapped, trainer.accelerator, generation_kwargs=trainer.generation_kwargs
            ) as model,
            torch.no_grad(),
        ):
            out = model.generate(
                input_ids=input_ids, attention_mask=attention, generation_config=generation_config
            )
        eos = set(trainer.eos_token_ids)
        generated = []
        for row in out[:, width:].tolist():
            cut = next((k + 1 for k, tok in enumerate(row) if tok in eos), len(row))
            generated.append(row[:cut])
        return generated
