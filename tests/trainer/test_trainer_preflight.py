"""What the config and the data can reveal is an exit-2 error before the model
loads; a reward returning None or NaN stops training with exit 2 naming reward, row and value; a start
that failed leaves nothing that blocks its corrected config; the run records its data."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from trainer_support import tiny_dict

from sweepgen.errors import ConfigError
from sweepgen_trainer import models, rewards
from sweepgen_trainer.config import RunConfig
from sweepgen_trainer.run import run
from sweepgen_trainer.rundir.outputs import RunDir

pytestmark = pytest.mark.train

ROUTING = {
    "mode": "classic",
    "detector": {"name": "happy_count", "params": {"threshold": 1}},
    "task_reward": {"name": "sentence_length"},
}


@pytest.fixture
def no_model_load(monkeypatch):
    """Loading the model means a check came too late."""

    def refuse(*args, **kwargs):
        raise AssertionError("the model was loaded before the error")

    monkeypatch.setattr(models, "load_model_and_tokenizer", refuse)


def arithmetic(tmp_path: Path, answers: list[object]) -> Path:
    path = tmp_path / "qa.jsonl"
    lines = [json.dumps({"prompt": f"{i} + 1 =", "answer": a}) for i, a in enumerate(answers)]
    path.write_text("\n".join(lines) + "\n")
    return path


def exact(tmp_path: Path, data: Path, **reward_params) -> RunConfig:
    return RunConfig.model_validate(
        tiny_dict(
            tmp_path / "run",
            data={"source": str(data)},
            reward={"name": "exact_answer", "params": reward_params},
        )
    )


def test_a_missing_answer_field_is_an_error_naming_file_and_line(tmp_path, tiny_cache, no_model_load):
    cfg = exact(tmp_path, arithmetic(tmp_path, [1, 2, 3]), answer_field="solution")
    with pytest.raises(ConfigError) as err:
        run(cfg)
    assert "column `solution`" in err.value.message and err.value.key == "reward"
    assert err.value.location.line == 1 and err.value.location.path.endswith("qa.jsonl")
    assert not (tmp_path / "run" / "config.yaml").exists()


def test_a_null_answer_is_an_error_naming_its_line(tmp_path, tiny_cache, no_model_load):
    cfg = exact(tmp_path, arithmetic(tmp_path, [1, 2, None, 4]))
    with pytest.raises(ConfigError) as err:
        run(cfg)
    assert err.value.location.line == 3 and "None" in err.value.message


def test_a_non_number_answer_is_an_error(tmp_path, tiny_cache, no_model_load):
    cfg = exact(tmp_path, arithmetic(tmp_path, [1, "seven"]))
    with pytest.raises(ConfigError, match="number") as err:
        run(cfg)
    assert err.value.location.line == 2


def test_a_target_module_typo_is_found_on_the_meta_model(tmp_path, tiny_cache, no_model_load):
    cfg = RunConfig.model_validate(
        tiny_dict(tmp_path / "run", routing={**ROUTING, "target_modules": ["q_proj", "v_prj"]})
    )
    with pytest.raises(ConfigError) as err:
        run(cfg)
    assert err.value.key == "routing.target_modules" and "v_prj" in err.value.message
    assert "v_proj" in err.value.hint
    with pytest.raises(ConfigError, match="output layer"):
        run(
            RunConfig.model_validate(
                tiny_dict(tmp_path / "run", routing={**ROUTING, "target_modules": ["lm_head"]})
            )
        )


def test_half_precision_without_a_gpu_is_an_error(tmp_path, tiny_cache, no_model_load):
    import torch

    cfg = RunConfig.model_validate(tiny_dict(tmp_path / "run", model={"dtype": "float16"}))
    if torch.cuda.is_available():
        pytest.fail("this test is for a machine without a GPU")
    with pytest.raises(ConfigError) as err:
        run(cfg)
    assert err.value.key == "model.dtype" and "float32" in err.value.hint


def _none_for_odd_prompts(completions, columns) -> list:
    return [None if i % 2 else 1.0 for i in range(len(completions))]


def test_a_reward_returning_none_stops_with_exit_2_naming_reward_row_and_value(
    tmp_path, tiny_cache, monkeypatch
):
    # registered for this test only (the registry is global)
    rewards.register("test_none_for_odd_prompts")(_none_for_odd_prompts)
    monkeypatch.setitem(
        rewards.REWARDS, "test_none_for_odd_prompts", rewards.REWARDS.pop("test_none_for_odd_prompts")
    )
    reward = {"name": "test_none_for_odd_prompts", "params": {}}
    cfg = RunConfig.model_validate(tiny_dict(tmp_path / "run", reward=reward, grpo={"max_steps": 2}))
    with pytest.raises(rewards.RewardValueError) as err:
        run(cfg)
    assert err.value.exit_code == 2
    assert "test_none_for_odd_prompts" in err.value.message and "returned None for row 1" in err.value.message
    # The start that failed leaves nothing that blocks its corrected config in the same folder.
    corrected = RunConfig.model_validate(tiny_dict(tmp_path / "run", grpo={"max_steps": 2}))
    RunDir(corrected.output_dir).check_reusable(corrected)


def test_nan_reward_values_are_refused():
    with pytest.raises(rewards.RewardValueError, match=r"returned nan for row 0"):
        rewards.checked_values("r", [float("nan")], ["p"], {"answer": [1]})
    with pytest.raises(rewards.RewardValueError, match=r"returned True"):
        rewards.checked_values("r", [True], ["p"], {})
    assert rewards.checked_values("r", [1, 0.5], ["p", "q"], {}) == [1.0, 0.5]


def test_reward_values_that_are_inf_in_trls_float32_tensor_are_refused():
    # TRL keeps rewards in float32: 1e39 is a finite double but inf there, as is a huge int
    for value in (1e39, -1e39, float("inf"), 10**400):
        with pytest.raises(rewards.RewardValueError, match="a reward must be a finite number"):
            rewards.checked_values("r", [value], ["p"], {})
    assert rewards.checked_values("r", [3.4e38, -3.4e38], ["p", "q"], {}) == [3.4e38, -3.4e38]


def test_a_run_that_trained_still_refuses_another_config(tmp_path):
    cfg = RunConfig.model_validate(tiny_dict(tmp_path / "run"))
    folder = RunDir(cfg.output_dir)
    folder.start(cfg, {})
    other = RunConfig.model_validate(tiny_dict(tmp_path / "run", grpo={"beta": 0.5}))
    folder.check_reusable(other)  # nothing trained yet: a corrected config is welcome
    folder.append(folder.metrics, [{"step": 1, "reward_mean": 0.0}])
    with pytest.raises(ConfigError, match="different config"):
        folder.check_reusable(other)


def test_the_run_records_its_data_and_refuses_changed_data(tmp_path, tiny_cache):
    data = arithmetic(tmp_path, list(range(8)))
    cfg = exact(tmp_path, data)
    cfg = cfg.model_copy(update={"grpo": cfg.grpo.model_copy(update={"max_steps": 1})})
    summary = run(cfg)
    recorded = json.loads((tmp_path / "run" / "data.json").read_text())
    assert recorded["rows"] == 8 and recorded["source"] == str(data)
    assert summary["data"] == recorded
    import hashlib

    assert recorded["sha256"] == hashlib.sha256(data.read_bytes()).hexdigest()
    (tmp_path / "run" / "summary.json").unlink()  # as if interrupted after training
    data.write_text(data.read_text().replace('"answer": 3', '"answer": 4'))
    with pytest.raises(ConfigError, match="other data") as err:
        run(cfg)
    assert err.value.key == "data.source"
