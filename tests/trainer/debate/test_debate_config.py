"""The debate and reward_shaping sections of RunConfig: rejected before anything trains."""

from __future__ import annotations

import pydantic
import pytest

from sweepgen_trainer.config import RunConfig
from sweepgen_trainer.debate.config import DebateConfig


def config(**sections):
    base = {
        "run_name": "d",
        "output_dir": "runs/d",
        "data": {"source": "builtin:arithmetic"},
        "reward": {"name": "exact_answer"},
        "grpo": {"num_generations": 4, "batch_size": 8, "max_completion_length": 64},
        "debate": {"max_turns": 3, "max_turn_tokens": 12},
        "reward_shaping": {"strategy": "identity"},
    }
    base.update(sections)
    return base


def error_of(data) -> str:
    with pytest.raises(pydantic.ValidationError) as err:
        RunConfig.model_validate(data)
    return str(err.value)


def test_a_valid_debate_config_resolves_every_default():
    cfg = RunConfig.model_validate(
        config(
            reward_shaping={
                "strategy": "potential_based",
                "params": {"gamma": 0.99, "potential_type": "debate_length"},
            }
        )
    )
    dumped = cfg.model_dump(mode="json")
    assert dumped["debate"]["final_prompt"] == "\nFinal answer:"
    assert dumped["reward_shaping"]["params"] == {
        "gamma": 0.99,
        "potential_type": "debate_length",
        "length_scale": 100.0,
    }


def test_leave_one_out_group_size_must_equal_num_generations():
    ok = config(reward_shaping={"strategy": "leave_one_out", "params": {"n_rollouts_per_prompt": 4}})
    RunConfig.model_validate(ok)
    bad = config(reward_shaping={"strategy": "leave_one_out", "params": {"n_rollouts_per_prompt": 8}})
    assert "n_rollouts_per_prompt is 8 but grpo.num_generations is 4" in error_of(bad)


def test_debate_needs_reward_shaping_and_back():
    assert "`debate` is set but `reward_shaping` is not" in error_of(config(reward_shaping=None))
    assert "`reward_shaping` is set but `debate` is not" in error_of(config(debate=None))


def test_the_solver_must_answer_last():
    assert "must be odd" in error_of(config(debate={"max_turns": 2}))


def test_the_turn_budget_must_fit_the_completion_length():
    assert "3 × debate.max_turn_tokens = " not in error_of(
        config(debate={"max_turns": 3, "max_turn_tokens": 30})
    )
    assert "more than grpo.max_completion_length = 64" in error_of(
        config(debate={"max_turns": 3, "max_turn_tokens": 30})
    )


def test_unknown_keys_and_strategies_are_rejected():
    assert "Extra inputs are not permitted" in error_of(config(debate={"max_turn": 3}))
    known = "coma, coma_rescore, difference_rewards, difference_rewards_rescore, identity"
    assert f"known reward-shaping strategies: {known}" in error_of(
        config(reward_shaping={"strategy": "idenity"})
    )


def test_debate_cannot_be_combined_with_routing():
    routing = {
        "mode": "baseline",
        "detector": {"name": "happy_count", "params": {}},
        "task_reward": {"name": "exact_answer"},
    }
    try:
        RunConfig.model_validate(config(debate=None, reward_shaping=None, routing=routing))
    except pydantic.ValidationError as err:  # the routing section changed shape: say so, do not pass
        pytest.fail(f"minimal routing section no longer valid: {err}")
    assert "`debate` and `routing` cannot be combined" in error_of(config(routing=routing))


def test_schedule_alternates_roles_and_ends_with_the_final_answer():
    d = DebateConfig(max_turns=5, solver_prompt="S:", critic_prompt="C:", final_prompt="F:")
    assert d.schedule() == [
        ("solver", "S:"),
        ("critic", "C:"),
        ("solver", "S:"),
        ("critic", "C:"),
        ("solver", "F:"),
    ]
    assert DebateConfig(max_turns=1, final_prompt="F:").schedule() == [("solver", "F:")]
