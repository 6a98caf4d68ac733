"""The strategy registry and the reward_shaping config section reject what they do not know."""

from __future__ import annotations

import pydantic
import pytest

from sweepgen_trainer.debate.config import RewardShapingConfig, check_group_size
from sweepgen_trainer.debate.shaping import STRATEGIES, resolve


def test_the_strategies_are_registered():
    assert list(STRATEGIES) == [
        "identity",
        "difference_rewards",
        "difference_rewards_rescore",
        "potential_based",
        "coma",
        "coma_rescore",
        "leave_one_out",
        "reward_mixing",
    ]


def test_unknown_strategy_lists_what_exists():
    with pytest.raises(ValueError) as err:
        resolve("comma", {})
    assert "unknown reward-shaping strategy `comma`" in str(err.value)
    for name in STRATEGIES:
        assert name in str(err.value)


@pytest.mark.parametrize(
    ("name", "params", "message"),
    [
        (
            "identity",
            {"alpha": 0.5},
            "unknown parameter(s) 'alpha' for reward-shaping strategy `identity`; its parameters are: (none)",
        ),
        ("reward_mixing", {"alhpa": 0.5}, "its parameters are: alpha"),
        ("reward_mixing", {}, "alpha: Field required"),
        ("reward_mixing", {"alpha": 1.5}, "less than or equal to 1"),
        ("reward_mixing", {"alpha": True}, "alpha: Input should be a valid number"),
        ("reward_mixing", {"alpha": "0.5"}, "Input should be a valid number"),
        ("reward_mixing", {"alpha": float("nan")}, "Input should be a finite number"),
        ("potential_based", {"gamma": 0.99, "potential_type": "length"}, "Input should be 'debate_length'"),
        ("potential_based", {"gamma": 0.0, "potential_type": "debate_length"}, "should be greater than 0"),
        ("potential_based", {"potential_type": "debate_length"}, "gamma: Field required"),
        ("leave_one_out", {"n_rollouts_per_prompt": 4.0}, "Input should be a valid integer"),
        ("leave_one_out", {"n_rollouts_per_prompt": 1}, "greater than or equal to 2"),
    ],
)
def test_bad_params_are_rejected_with_what_exists(name, params, message):
    with pytest.raises(ValueError) as err:
        resolve(name, params)
    assert message in str(err.value)


def test_defaults_are_written_out():
    assert resolve("potential_based", {"gamma": 0.99, "potential_type": "debate_length"}) == {
        "gamma": 0.99,
        "potential_type": "debate_length",
        "length_scale": 100.0,
    }
    assert resolve("reward_mixing", {"alpha": 1}) == {"alpha": 1.0}


def test_config_section_reports_bad_strategy_at_its_key():
    with pytest.raises(pydantic.ValidationError) as err:
        RewardShapingConfig.model_validate({"strategy": "reward_mixing", "params": {"beta": 1}})
    assert "its parameters are: alpha" in str(err.value)
    with pytest.raises(pydantic.ValidationError, match="Extra inputs are not permitted"):
        RewardShapingConfig.model_validate({"strategy": "identity", "parmas": {}})


def test_config_section_resolves_params():
    cfg = RewardShapingConfig.model_validate(
        {"strategy": "potential_based", "params": {"gamma": 1, "potential_type": "debate_length"}}
    )
    assert cfg.params == {"gamma": 1.0, "potential_type": "debate_length", "length_scale": 100.0}
    assert cfg.model_dump()["params"]["length_scale"] == 100.0


def test_leave_one_out_group_size_must_equal_num_generations():
    cfg = RewardShapingConfig(strategy="leave_one_out", params={"n_rollouts_per_prompt": 4})
    check_group_size(cfg, 4)
    with pytest.raises(ValueError, match="n_rollouts_per_prompt is 4 but grpo.num_generations is 8"):
        check_group_size(cfg, 8)
    check_group_size(RewardShapingConfig(strategy="identity"), 8)


@pytest.mark.parametrize(
    ("shaping", "debate", "expected"),
    [
        (
            {"strategy": "reward_mixing", "params": {"alpha": 0.0}},
            {},
            "reward_mixing with alpha 0 reduces to identity",
        ),
        (
            {"strategy": "leave_one_out", "params": {"n_rollouts_per_prompt": 16}},
            {},
            "16/15 times identity's",
        ),
        ({"strategy": "coma_rescore"}, {}, "the critic's value is exactly 0 in every rollout"),
        ({"strategy": "difference_rewards_rescore"}, {}, "cannot credit the critic"),
        (
            {"strategy": "difference_rewards"},
            {"max_turns": 1},
            "difference_rewards with debate.max_turns 1 reduces",
        ),
        (
            {"strategy": "potential_based", "params": {"gamma": 1.0, "potential_type": "debate_length"}},
            {},
            "potential_based with gamma 1 reduces to identity",
        ),
    ],
)
def test_a_strategy_that_reduces_to_another_is_named_at_start(shaping, debate, expected):
    from sweepgen_trainer.config import RunConfig

    cfg = RunConfig.model_validate(
        {"run_name": "r", "output_dir": "runs/r", "debate": debate, "reward_shaping": shaping}
    )
    assert any(expected in w for w in cfg.warnings()), cfg.warnings()


@pytest.mark.parametrize(
    "shaping",
    [
        {"strategy": "identity"},
        {"strategy": "coma", "params": {"counterfactuals": 2}},
        {"strategy": "difference_rewards"},
        {"strategy": "reward_mixing", "params": {"alpha": 0.5}},
    ],
)
def test_strategies_that_can_differ_start_without_a_warning(shaping):
    from sweepgen_trainer.config import RunConfig

    cfg = RunConfig.model_validate(
        {"run_name": "r", "output_dir": "runs/r", "debate": {}, "reward_shaping": shaping}
    )
    assert cfg.warnings() == []
