"""Issue 24: the routing eval can use held-out prompts (``routing.eval_data``) and says which it used."""

from __future__ import annotations

import json

import pytest
import yaml
from trainer_support import tiny_dict

pytestmark = pytest.mark.train

ROUTING = {
    "mode": "classic",
    "detector": {"name": "happy_count", "params": {"threshold": 1}},
    "task_reward": {"name": "sentence_length"},
    "eval_prompts": 2,
}


def config(tmp_path, **routing):
    from sweepgen_trainer.config import RunConfig

    return RunConfig.model_validate(tiny_dict(tmp_path / "run", routing={**ROUTING, **routing}))


def test_held_out_prompts_are_used_and_named(tmp_path, monkeypatch):
    from sweepgen_trainer.routing.evaluation import eval_prompts_origin, eval_rows

    monkeypatch.chdir(tmp_path)
    (tmp_path / "held_out.jsonl").write_text(
        "\n".join(json.dumps({"prompt": f"held out {i}"}) for i in range(3)) + "\n"
    )
    cfg = config(tmp_path, eval_data="held_out.jsonl")
    assert [r["prompt"] for r in eval_rows(cfg)[:2]] == ["held out 0", "held out 1"]
    assert eval_prompts_origin(cfg) == "the first 2 rows of the held-out file held_out.jsonl"
    plain = config(tmp_path)
    from sweepgen_trainer.data import load_rows

    assert eval_rows(plain) == load_rows(plain.data)
    assert "(also trained on)" in eval_prompts_origin(plain)


def test_the_eval_settings_come_from_the_config_with_the_held_out_prompts(tmp_path, monkeypatch):
    from sweepgen_trainer.routing import evaluation

    monkeypatch.chdir(tmp_path)
    (tmp_path / "held_out.jsonl").write_text(
        "\n".join(json.dumps({"prompt": f"held out {i}"}) for i in range(3)) + "\n"
    )
    cfg = config(tmp_path, eval_data="held_out.jsonl", eval_generations=3, eval_temperature=0.7)
    seen = {}
    monkeypatch.setattr(evaluation, "evaluate_modes", lambda *a, **k: seen.update(rows=a[2], **k) or {})
    evaluation.evaluate_run("model", "tokenizer", cfg, modes={"both": (1.0, 1.0)})
    assert [r["prompt"] for r in seen["rows"]] == ["held out 0", "held out 1"]  # eval_prompts of them
    assert (seen["generations"], seen["temperature"], seen["seed"]) == (3, 0.7, cfg.seed)
    assert seen["max_new_tokens"] == cfg.grpo.max_completion_length


def test_a_missing_held_out_file_is_refused_at_its_key_before_the_model_loads(tmp_path, monkeypatch, capsys):
    from sweepgen_trainer import models
    from sweepgen_trainer.__main__ import main

    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(models, "load_model_and_tokenizer", lambda *a, **k: pytest.fail("model loaded"))
    data = tiny_dict(tmp_path / "run", routing={**ROUTING, "eval_data": "nowhere.jsonl"})
    path = tmp_path / "run.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    assert main([str(path)]) == 2
    err = capsys.readouterr().err
    line = next(i for i, t in enumerate(path.read_text().splitlines(), 1) if "eval_data:" in t)
    assert err.startswith(f"{path}:{line}:") and "nowhere.jsonl" in err


def test_eval_data_must_be_a_jsonl_file(tmp_path):
    import pydantic

    with pytest.raises(pydantic.ValidationError, match="must be a .jsonl file"):
        config(tmp_path, eval_data="held_out.csv")
