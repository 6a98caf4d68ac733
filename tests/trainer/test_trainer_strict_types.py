"""Every trainer config section is strict (no lax coercion); errors name key and line."""

from __future__ import annotations

from pathlib import Path

import pytest

from sweepgen.errors import ConfigError
from sweepgen_trainer.configfile import load_config, validate_config

pytestmark = pytest.mark.train

BASE = {"run_name": "r", "output_dir": "runs/r"}

DEBATE = {"debate": {"max_turns": 3}, "reward_shaping": {"strategy": "identity"}}


@pytest.mark.parametrize(
    ("section", "key", "value"),
    [
        ("grpo", "beta", True),  # bool for a number
        ("grpo", "learning_rate", "0.005"),  # string for a number
        ("data", "shuffle", "no"),  # string for a bool
        ("grpo", "max_steps", 2.0),  # float for an int
        ("grpo", "mask_truncated_completions", 1),  # int for a bool
        ("logging", "summary_window", "10"),
        ("model", "dtype", 32),
        ("debate", "max_turns", 3.0),
        ("debate", "max_turn_tokens", True),
    ],
)
def test_lax_coercions_are_errors_naming_the_key(section, key, value):
    data = {**BASE, **DEBATE}
    data[section] = {**data.get(section, {}), key: value}
    with pytest.raises(ConfigError) as err:
        validate_config(data)
    assert err.value.key == f"{section}.{key}"
    assert f"{section}.{key}" in err.value.message


def test_routing_section_is_strict():
    routing = {
        "mode": "classic",
        "detector": {"name": "happy_count"},
        "task_reward": {"name": "sentence_length"},
        "retain_rank": "4",
    }
    data = {**BASE, "routing": routing}
    with pytest.raises(ConfigError) as err:
        validate_config(data)
    assert err.value.key == "routing.retain_rank"


def test_an_int_is_accepted_where_a_float_is_expected():
    # YAML writes 1 for 1.0; the widening is exact, so it stays allowed.
    cfg = validate_config({**BASE, "grpo": {"learning_rate": 1, "temperature": 2}})
    assert cfg.grpo.learning_rate == 1.0 and isinstance(cfg.grpo.learning_rate, float)
    assert cfg.grpo.temperature == 2.0


def test_strict_shaping_params():
    data = {**BASE, "debate": {}, "reward_shaping": {"strategy": "reward_mixing", "params": {"alpha": True}}}
    with pytest.raises(ConfigError) as err:
        validate_config(data)
    assert "alpha" in err.value.message


def test_error_from_a_file_names_file_and_line(tmp_path: Path):
    path = tmp_path / "c.yaml"
    path.write_text("run_name: r\noutput_dir: runs/r\ngrpo:\n  max_steps: 5\n  beta: true\n")
    with pytest.raises(ConfigError) as err:
        load_config(path)
    text = err.value.format()
    assert f"{path}:5" in text, text
    assert "grpo.beta" in text
