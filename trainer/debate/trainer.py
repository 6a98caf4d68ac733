"""DebateGRPOTrainer: GRPO on two-role debates with per-turn shaped advantages on every token.

Hooks used, and why:
- generation: TRL's ``rollout_func`` (``sweepgen_trainer.debate.rollout``), the documented multi-turn hook;
- advantages: ``_generate_and_score_completions`` is overridden to replace TRL's per-sequence
  advantages (shape [B]) with per-token ones (shape [B, T]): each generated token gets the shaped
  advantage of the turn that produced it (for role-level strategies, its role's). TRL 1.16's loss
  accepts [B, T] advantages as they are (``_compute_loss`` only unsqueezes 1-D ones, "to support
  subclasses"), so the loss is TRL's, unchanged, and ``env_mask`` keeps role prompts out of it.

The rollout also returns the regenerated counterfactual transcripts the strategy needs
(``debate_counterfactuals``; debate/branching.py), which become each Group's ``counterfactuals``.

TRL still scores the rollouts with the config's reward applied to the solver's final turn: that is
the team reward G it logs as ``reward``; the strategies re-derive G from the same function on the
same text, and a disagreement stops the run.
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, cast

import torch

from sweepgen.errors import ConfigError
from sweepgen_trainer import rewards
from sweepgen_trainer.debate import shaping as registry
from sweepgen_trainer.debate.group import ROLES, Group, RoleValues, Turn, TurnValues, final_answer
from sweepgen_trainer.debate.metrics import debate_metrics
from sweepgen_trainer.debate.rollout import DebateRollout
from sweepgen_trainer.debate.transcript import turn_token_advantages
from sweepgen_trainer.rundir.outputs import read_jsonl
from sweepgen_trainer.training.grpo import SweepgenGRPOTrainer

# Keys the rollout adds to each batch row; everything else in a row is a dataset column.
DEBATE_KEYS = (
    "debate_turns",
    "debate_token_roles",
    "debate_token_turns",
    "debate_counterfactuals",
    "debate_counterfactual_tokens",
)
_NOT_COLUMNS = {"prompt", "completion", "completion_ids", *DEBATE_KEYS}

if TYPE_CHECKING:  # annotations only
    from sweepgen_trainer.config import RunConfig
    from sweepgen_trainer.training.grpo import RewardFunc

Score = Callable[[str], float]  # a text's reward, for one prompt and its dataset columns


@dataclass(frozen=True)
class Shaping:
    """One generation batch shaped: its groups, each role's raw values and advantages, per turn too."""

    groups: list[Group]
    shaped: list[list[RoleValues]]  # per group, per rollout: the strategy's raw per-role values
    advantages: list[list[RoleValues]]  # per group, per rollout: each role's advantage
    turn_advantages: list[list[TurnValues]]  # per group, per rollout: each turn's advantage


class DebateGRPOTrainer(SweepgenGRPOTrainer):
    # ---- construction -------------------------------------------------------------------------
    @classmethod
    def rewards_for(cls, cfg: RunConfig) -> list[RewardFunc]:
        """The config's reward, applied to the text of the solver's final turn (the team reward G)."""
        bound = rewards.bind(cfg.reward.name, cfg.reward.params)

        def final_answer(
            prompts: list[Any] | None = None,
            completions: list[Any] | None = None,
            debate_turns: list[list[dict[str, Any]]] | None = None,
            **columns: Any,
        ) -> list[float]:
            finals = [turns[-1]["text"] for turns in debate_turns or ()]
            return bound(prompts=prompts, completions=finals, **columns)

        final_answer.__name__ = final_answer.__qualname__ = cfg.reward.name
        return [final_answer]

    @classmethod
    def extra_init_kwargs(cls, cfg: RunConfig) -> dict[str, Any]:
        if cfg.debate is None:  # select_trainer_class picks this class only for a `debate` section
            raise ValueError("a debate run needs a debate section")
        return {"rollout_func": DebateRollout(cfg.debate, cfg.reward_shaping)}

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        if self.accelerator.num_processes > 1:
            # TRL spreads one prompt's group over processes; the strategies need whole groups.
            raise ConfigError(
                "debate training runs in one process; groups would be split across processes",
                key="debate",
                hint="run debate configs on one device (no accelerate/torchrun multi-process launch)",
            )
        cfg = self.run_config
        self._score = rewards.bind(cfg.reward.name, cfg.reward.params)
        shaping = cfg.reward_shaping
        if shaping is None:  # RunConfig requires it with `debate`
            raise ValueError("a debate run needs a reward_shaping section")
        self._strategy = shaping.strategy
        self._params = dict(shaping.params)
        self._grpo_args: Any = cast(Any, self.args)  # TRL's GRPOConfig (typed as its TrainingArguments base)
        self._debate_logs: deque[dict[str, Any]] = deque(maxlen=self._grpo_args.generation_batch_size)

    # ---- advantages ---------------------------------------------------------------------------
    def _generate_and_score_completions(
        self, inputs: list[dict[str, torch.Tensor | Any]]
    ) -> dict[str, torch.Tensor | Any]:
        # Kept: the loss's input changes (per-token shaped advantages); no public hook sets advantages.
        output = super()._generate_and_score_completions(inputs)
        mode = "train" if getattr(self.model, "training", False) else "eval"
        n = self.num_generations if mode == "train" else self.num_generations_eval
        if n is None:  # TRL sets both in __init__
            raise RuntimeError("TRL left the number of generations per prompt unset")
        shaping = self.shape(inputs, n)
        flat = [a for group in shaping.advantages for a in group]
        flat_turns = [a for group in shaping.turn_advantages for a in group]
        width = output["completion_ids"].size(1)
        per_token = torch.zeros((len(inputs), width), dtype=torch.float32)
        for i, (row, adv) in enumerate(zip(inputs, flat_turns, strict=True)):
            # the rollout put each token's turn index here (TRL types a row's values as tensors or Any)
            values = turn_token_advantages(cast(list[int], row["debate_token_turns"]), adv)
            per_token[i, : len(values)] = torch.tensor(values, dtype=torch.float32)
        output["advantages"] = per_token.to(output["completion_ids"].device)
        metrics = debate_metrics(shaping.groups, shaping.shaped, shaping.advantages)
        # the extra generation the counterfactuals cost, summed over this generation batch
        metrics["debate/counterfactual_tokens"] = float(
            sum(row["debate_counterfactual_tokens"] for row in inputs)
        )
        for key, value in metrics.items():
            self._metrics[mode][key].append(value)
        for row, role_adv, per_turn in zip(inputs, flat, flat_turns, strict=True):
            self._debate_logs.append(
                {"advantage": role_adv, "turn_advantages": per_turn, "turns": row["debate_turns"]}
            )
        return output

    def shape(self, inputs: list[dict[str, Any]], n: int) -> Shaping:
        """The batch's groups of ``n`` rollouts, checked against TRL's team reward, and the
        strategy's values and advantages for each role and turn."""
        groups = self._groups(inputs, n)
        self._check_team_reward(groups, inputs)
        scale = self._grpo_args.scale_rewards
        return Shaping(
            groups=groups,
            shaped=[registry.shaped_values(g, self._strategy, self._params) for g in groups],
            advantages=registry.advantages(groups, self._strategy, self._params, scale),
            turn_advantages=registry.turn_advantages(groups, self._strategy, self._params, scale),
        )

    def _groups(self, inputs: list[dict[str, Any]], n: int) -> list[Group]:
        if len(inputs) % n:
            raise RuntimeError(f"a batch of {len(inputs)} rows does not split into groups of {n}")
        groups = []
        for start in range(0, len(inputs), n):
            rows = inputs[start : start + n]
            if any(r["prompt"] != rows[0]["prompt"] for r in rows):
                # TRL's sampler repeats each prompt n times in a row; anything else breaks every baseline.
                raise RuntimeError("rows of one GRPO group have different prompts; cannot shape rewards")
            columns = {k: v for k, v in rows[0].items() if k not in _NOT_COLUMNS}
            score = self._turn_scorer(rows[0]["prompt"], columns)
            rollouts = tuple(_turns(r["debate_turns"], score) for r in rows)
            counterfactuals = tuple(
                tuple(tuple(_turns(z, score) for z in per_turn) for per_turn in r["debate_counterfactuals"])
                for r in rows
            )
            if not any(z for per_row in counterfactuals for per_turn in per_row for z in per_turn):
                counterfactuals = ()
            groups.append(Group(rollouts, _final_turn(score), ROLES, counterfactuals))
        return groups

    def _turn_scorer(self, prompt: str, columns: dict[str, Any]) -> Score:
        def score(text: str) -> float:
            return float(
                self._score(prompts=[prompt], completions=[text], **{k: [v] for k, v in columns.items()})[0]
            )

        return score

    def _check_team_reward(self, groups: list[Group], inputs: list[dict[str, Any]]) -> None:
        # TRL logged its reward for this batch last; the strategies must see the same G.
        logs: dict[str, Any] = self._logs  # TRL types it loosely (Collection)
        logged = list(logs["rewards"][self.reward_func_names[0]])[-len(inputs) :]
        ours = [g for group in groups for g in group.team_rewards()]
        if len(logged) != len(ours) or any(
            not math.isclose(a, b, abs_tol=1e-6) for a, b in zip(logged, ours)
        ):
            raise RuntimeError(f"team rewards disagree: TRL scored {logged}, the debate scored {ours}")

    # ---- outputs -----------------------------------------------------------------------------
    def summary_extras(self) -> dict[str, Any]:
        """summary.json's ``debate``: the debate metrics averaged like final_reward (last window)."""

        rows = read_jsonl(self.run_dir.metrics)  # all sessions of a resumed run
        # the same window as final_reward: the last summary_window generation steps
        generated = [r for r in rows if r.get("reward_mean") is not None]
        window = generated[-self.run_config.logging.summary_window :]
        return {"debate": _summarize_debate(window, self._strategy)}

    def sample_rows(self) -> list[dict[str, Any]]:
        """samples.jsonl rows with the per-role advantages actually applied and the debate's turns."""
        rows = super().sample_rows()
        extra = list(self._debate_logs)[-len(self._logs["prompt"]) :]
        for row, debate in zip(rows, extra, strict=False):
            row["advantage"] = debate["advantage"]
            row["turn_advantages"] = debate["turn_advantages"]
            row["turns"] = debate["turns"]
        return rows


def _turns(rows: list[dict[str, Any]], score: Score) -> tuple[Turn, ...]:
    return tuple(Turn(t["role"], t["text"], t["n_tokens"], score(t["text"])) for t in rows)


def _final_turn(score: Score) -> Callable[[Sequence[Turn]], float]:
    def team_score(turns: Sequence[Turn]) -> float:
        # G: the reward of the solver's last turn, also in counterfactuals (never the critic's text).
        return score(final_answer(turns).text)

    return team_score


# The debate metrics that summary.json (and so `sweepgen report`) carries, by their summary names.
SUMMARY_KEYS = {
    "team_accuracy": "debate/team_accuracy",
    "reward_solver": "debate/reward/solver",
    "reward_critic": "debate/reward/critic",
    "zero_advantage_groups": "debate/zero_advantage_groups",
    "length_tokens": "debate/length_tokens",
    "counterfactual_tokens": "debate/counterfactual_tokens",
    # per-role advantage statistics: what each role was actually trained on
    "advantage_mean_solver": "debate/advantage_mean/solver",
    "advantage_mean_critic": "debate/advantage_mean/critic",
    "advantage_std_solver": "debate/advantage_std/solver",
    "advantage_std_critic": "debate/advantage_std/critic",
}


def _summarize_debate(rows: list[dict[str, Any]], strategy: str) -> dict[str, Any]:
    """Mean of each debate metric over ``rows`` (metrics.jsonl rows); None when no row has it."""
    out: dict[str, Any] = {"strategy": strategy}
    for name, key in SUMMARY_KEYS.items():
        values = [r[key] for r in rows if isinstance(r.get(key), (int, float))]
        out[name] = sum(values) / len(values) if values else None
    return out
