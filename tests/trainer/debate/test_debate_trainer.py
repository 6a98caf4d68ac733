"""DebateGRPOTrainer on the tiny model: per-token advantages carry each role's shaped value."""

from __future__ import annotations

import pytest
from trainer_support import debate_trainer, generate_shaped, tiny_dict

pytestmark = pytest.mark.train

# sentence_length gives graded scores on the tiny model's babble, so roles and rollouts differ
# (exact_answer is almost always 0 before training, which would make every check trivially 0 == 0).
GRADED = {"name": "sentence_length", "params": {"target_words": 3}}


def make_trainer(tmp_path, shaping, reward=GRADED):
    from sweepgen_trainer.config import RunConfig

    cfg = RunConfig.model_validate(
        tiny_dict(
            tmp_path / "run",
            data={"source": "builtin:arithmetic"},
            reward=reward,
            grpo={"num_generations": 4, "batch_size": 8, "max_completion_length": 64, "max_steps": 2},
            debate={"max_turns": 3, "max_turn_tokens": 8},
            reward_shaping=shaping,
        )
    )
    trainer, rows = debate_trainer(cfg, tmp_path / "run")
    batch = [dict(rows[k]) for k in (0, 1) for _ in range(4)]  # two groups of 4, as TRL's sampler makes them
    return trainer, batch


def test_every_token_gets_its_roles_shaped_advantage(tmp_path, tiny_cache):
    from sweepgen_trainer.debate.group import ROLES
    from sweepgen_trainer.debate.trainer import DebateGRPOTrainer

    trainer, batch = make_trainer(tmp_path, {"strategy": "reward_mixing", "params": {"alpha": 0.5}})
    assert isinstance(trainer, DebateGRPOTrainer)
    out, shaping, trl_advantages = generate_shaped(trainer, batch)
    adv = out["advantages"]
    assert adv.shape == out["completion_ids"].shape  # [B, T]: per token, not per sequence
    expected = [a for group in shaping.advantages for a in group]
    differs = False
    for i, row in enumerate(batch):
        roles = row["debate_token_roles"]
        for t in range(adv.shape[1]):
            if t >= len(roles):  # right padding
                assert adv[i, t].item() == 0.0 and out["completion_mask"][i, t] == 0
            elif roles[t] < 0:  # inserted role prompt: no role, no advantage, not in the loss
                assert adv[i, t].item() == 0.0 and out["tool_mask"][i, t] == 0
            else:
                assert adv[i, t].item() == pytest.approx(expected[i][ROLES[roles[t]]], abs=1e-6)
                assert out["tool_mask"][i, t] == 1
        differs |= abs(expected[i]["solver"] - expected[i]["critic"]) > 1e-3
    assert differs, "the roles never got different advantages: the attribution check proved nothing"

    # TRL's loss consumes the [B, T] advantages as they are: with beta 0 and one iteration its gradient
    # is that of the per-token policy-gradient surrogate -mean_i sum_t A_it m_it logp_it / sum_t m_it,
    # where m masks padding and role prompts. A per-sequence advantage would give another gradient.
    import torch

    mask = (out["completion_mask"] * out["tool_mask"]).float()
    params = [p for p in trainer.model.parameters() if p.requires_grad]
    trainer.current_gradient_accumulation_steps = 1  # set by the training loop, which is not running
    trl_grad = torch.autograd.grad(trainer.compute_loss(trainer.model, out), params)
    input_ids = torch.cat([out["prompt_ids"], out["completion_ids"]], dim=1)
    attention = torch.cat([out["prompt_mask"], out["completion_mask"]], dim=1)
    logps, _, _ = trainer._get_per_token_logps_and_entropies(
        trainer.model, input_ids, attention, out["completion_ids"].size(1)
    )

    def surrogate(a):
        return -((a * mask * logps).sum(-1) / mask.sum(-1).clamp(min=1.0)).mean()

    ours = torch.autograd.grad(surrogate(adv), params, retain_graph=True)
    per_sequence = trl_advantages.unsqueeze(1).expand_as(adv)
    plain = torch.autograd.grad(surrogate(per_sequence), params)
    for g_trl, g_ours in zip(trl_grad, ours):
        torch.testing.assert_close(g_trl, g_ours, rtol=1e-4, atol=1e-6)
    assert any(not torch.allclose(a, b, atol=1e-5) for a, b in zip(ours, plain)), (
        "shaping changed no gradient"
    )


def test_identity_reproduces_trls_grpo_advantages(tmp_path, tiny_cache):
    trainer, batch = make_trainer(tmp_path, {"strategy": "identity"})
    out, _, trl = generate_shaped(trainer, batch)
    assert trl.abs().max() > 0, "all-zero TRL advantages would make this comparison vacuous"
    for i, row in enumerate(batch):
        for t, role in enumerate(row["debate_token_roles"]):
            if role >= 0:
                assert out["advantages"][i, t].item() == pytest.approx(trl[i].item(), abs=1e-5)


def test_rescored_difference_rewards_give_the_critic_nothing(tmp_path, tiny_cache):
    # The team reward reads the solver's final turn only; re-scoring without the critic's turns cannot
    # change it (the blindness `difference_rewards` no longer has, kept under an honest name).
    trainer, batch = make_trainer(tmp_path, {"strategy": "difference_rewards_rescore"})
    out, shaping, _ = generate_shaped(trainer, batch)
    for i, row in enumerate(batch):
        for t, role in enumerate(row["debate_token_roles"]):
            if role == 1:  # critic
                assert out["advantages"][i, t].item() == 0.0
    assert any(a["solver"] != 0.0 for g in shaping.advantages for a in g)


def test_metrics_reach_the_trainer_log(tmp_path, tiny_cache):
    trainer, batch = make_trainer(tmp_path, {"strategy": "coma_rescore"})
    _, shaping, _ = generate_shaped(trainer, batch)
    metrics = trainer._metrics["train"]
    for key in (
        "debate/team_accuracy",
        "debate/reward/solver",
        "debate/reward/critic",
        "debate/advantage_mean/solver",
        "debate/advantage_std/critic",
        "debate/zero_advantage_groups",
        "debate/length_tokens",
        "debate/turns",
    ):
        assert len(metrics[key]) == 1, key
    assert metrics["debate/turns"] == [3.0]
    # COMA on the real batch: the solver's advantages sum to zero per group (its counterfactual baseline
    # is the group's mean G), the critic's are 0 (re-scoring: the answer is the solver's).
    for group in shaping.advantages:
        assert sum(a["solver"] for a in group) == pytest.approx(0.0, abs=1e-9)
        assert all(a["critic"] == 0.0 for a in group)


@pytest.mark.parametrize(
    "shaping", [{"strategy": "coma", "params": {"counterfactuals": 2}}, {"strategy": "difference_rewards"}]
)
def test_regenerating_strategies_credit_each_turns_tokens(tmp_path, tiny_cache, shaping):
    """Each generated token gets its turn's advantage; the critic's is not 0; the cost is counted."""
    trainer, batch = make_trainer(tmp_path, shaping)
    out, applied, _ = generate_shaped(trainer, batch)
    turn_level = [a for g in applied.turn_advantages for a in g]
    for i, row in enumerate(batch):
        assert len(row["debate_counterfactuals"]) == 3  # one slot per turn
        k = 2 if shaping["strategy"] == "coma" else 1
        assert all(len(per_turn) == k for per_turn in row["debate_counterfactuals"])
        for t, turn in enumerate(row["debate_token_turns"]):
            expected = turn_level[i][turn] if turn >= 0 else 0.0
            assert out["advantages"][i, t].item() == pytest.approx(expected, abs=1e-6)
    critic = [a[1] for a in turn_level]
    assert any(abs(c) > 1e-6 for c in critic), "the critic's turn was never credited"
    assert trainer._metrics["train"]["debate/counterfactual_tokens"][0] > 0
