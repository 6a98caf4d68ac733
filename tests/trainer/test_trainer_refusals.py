"""Configs that would train silently wrong are refused before the model loads (exit 2, the
key, and the config file's line), and `epsilon` alone gives TRL's symmetric clip.

Each refusal runs ``python -m sweepgen_trainer``'s ``main`` in-process with the model factory and loader
replaced by recorders: a refusal that came after the model was built or loaded would show in them.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from trainer_support import grpo_config, tiny_dict

from sweepgen_trainer import models

pytestmark = pytest.mark.train


@pytest.fixture
def model_calls(monkeypatch) -> list[str]:
    calls: list[str] = []

    def recorder(name):
        def record(*args, **kwargs):
            calls.append(name)
            raise AssertionError(f"{name} ran before the refusal")

        return record

    for name in ("load_model_and_tokenizer", "build_tiny_model", "_init_model", "ensure_model_dir"):
        monkeypatch.setattr(models, name, recorder(name))
    return calls


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "run.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def line_of(path: Path, needle: str) -> int:
    return next(i for i, line in enumerate(path.read_text().splitlines(), 1) if needle in line)


def run_main(path: Path, capsys) -> tuple[int, str]:
    from sweepgen_trainer.__main__ import main

    code = main([str(path)])
    return code, capsys.readouterr().err


def config_text(tmp_path: Path, **sections) -> str:
    return yaml.safe_dump(tiny_dict(tmp_path / "out", **sections), sort_keys=False)


@pytest.mark.parametrize(
    ("old", "new", "key", "needle"),
    [
        ("learning_rate: 0.005", "learning_rate: .inf", "grpo.learning_rate", "learning_rate:"),
        ("beta: 0.0", "beta: .inf", "grpo.beta", "beta:"),
        ("beta: 0.0", "beta: .nan", "grpo.beta", "beta:"),
    ],
)
def test_non_finite_values_are_refused_at_their_line(tmp_path, capsys, model_calls, old, new, key, needle):
    text = config_text(tmp_path)
    assert old in text
    path = write(tmp_path, text.replace(old, new))
    code, err = run_main(path, capsys)
    assert code == 2 and "Traceback" not in err
    assert err.startswith(f"{path}:{line_of(path, needle)}:"), err
    assert key in err and "finite" in err
    assert model_calls == []


def test_a_nan_weight_in_weighted_sum_is_refused_at_its_line(tmp_path, capsys, model_calls):
    reward = {
        "name": "weighted_sum",
        "params": {
            "terms": [{"name": "happy_count", "weight": 1.0}, {"name": "sentence_length", "weight": 2.0}]
        },
    }
    text = config_text(tmp_path, reward=reward).replace("weight: 2.0", "weight: .nan")
    path = write(tmp_path, text)
    code, err = run_main(path, capsys)
    assert code == 2 and "Traceback" not in err
    assert err.startswith(f"{path}:{line_of(path, 'weight: .nan')}:"), err
    assert "weights must be finite" in err
    assert model_calls == []


@pytest.mark.parametrize(
    ("sections", "needle", "message"),
    [
        # a rule across sections (RunConfig's validator): at the key it names, not at 1:1
        (
            {"logging": {"save_steps": 3}, "grpo": {"num_iterations": 2}},
            "save_steps:",
            "not a multiple of grpo.num_iterations",
        ),
        (
            {"debate": {"max_turns": 3, "max_turn_tokens": 30}, "reward_shaping": {"strategy": "identity"}},
            "max_turn_tokens:",
            "more than grpo.max_completion_length",
        ),
        ({"grpo": {"batch_size": 12}}, "batch_size:", "not a multiple of num_generations"),
        # a check after loading (no CUDA for half precision): located at its key in the file
        ({"model": {"dtype": "bfloat16"}}, "dtype:", "no CUDA GPU"),
    ],
)
def test_every_refusal_names_its_line(tmp_path, capsys, model_calls, sections, needle, message):
    import torch

    if "model" in sections and torch.cuda.is_available():
        pytest.skip("the half-precision refusal is for machines without a GPU")
    path = write(tmp_path, config_text(tmp_path, **sections))
    code, err = run_main(path, capsys)
    assert code == 2 and "Traceback" not in err
    assert message in err
    assert err.startswith(f"{path}:{line_of(path, needle)}:"), err
    assert not err.startswith(f"{path}:1:1"), err
    assert model_calls == []


def test_epsilon_alone_gives_trls_symmetric_clip(tmp_path):
    from sweepgen_trainer.config import RunConfig

    cfg = RunConfig.model_validate(tiny_dict(tmp_path / "r", grpo={"epsilon": 0.3}))
    assert cfg.grpo.epsilon_high == 0.3  # written out resolved in config.yaml
    assert grpo_config(cfg, tmp_path / "c").epsilon_high == 0.3
    asymmetric = RunConfig.model_validate(
        tiny_dict(tmp_path / "r", grpo={"epsilon": 0.2, "epsilon_high": 0.28})
    )
    assert grpo_config(asymmetric, tmp_path / "c").epsilon_high == 0.28
    # the resolved value is what a resumed run compares: reading config.yaml back gives the same config
    again = RunConfig.model_validate(cfg.model_dump(mode="json"))
    assert again == cfg
