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
    assert eval_prompts_origin(cfg) == "2 prompts (the first 2 rows) of the held-out file held_out.jsonl"
    plain = config(tmp_path)
    from sweepgen_trainer.data import load_rows

    assert eval_rows(plain) == load_rows(plain.data)
    assert "(also trained on)" in eval_prompts_origin(plain)


def test_a_held_out_file_shorter_than_eval_prompts_is_counted_as_it_is(tmp_path, monkeypatch):
    # issue 38: the summary said "the first 16 rows" of a file that had 3
    from sweepgen_trainer.routing.evaluation import eval_prompts_origin

    monkeypatch.chdir(tmp_path)
    (tmp_path / "held_out.jsonl").write_text(
        "\n".join(json.dumps({"prompt": f"held out {i}"}) for i in range(3)) + "\n"
    )
    origin = eval_prompts_origin(config(tmp_path, eval_data="held_out.jsonl", eval_prompts=16))
    assert origin == (
        "3 prompts (the first 3 rows; routing.eval_prompts asks for 16, the file has only 3) "
        "of the held-out file held_out.jsonl"
    )
    assert "16 rows" not in origin


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


def test_the_shipped_routing_spec_evaluates_on_held_out_prompts():
    # issue 38: the shipped spec set no eval_data, so its routing figures were on training prompts
    from pathlib import Path

    from sweepgen_trainer.config import RunConfig
    from sweepgen_trainer.data import load_rows

    root = Path(__file__).resolve().parents[3]
    configs = sorted((root / "generated" / "routing_vs_baseline").glob("*_s*.yaml"))
    assert len(configs) == 6
    for path in configs:
        cfg = RunConfig.model_validate(yaml.safe_load(path.read_text()))
        assert cfg.routing is not None and cfg.routing.eval_data == "specs/data/stories_held_out.jsonl"
        held_out = [
            r["prompt"]
            for r in load_rows(
                cfg.routing_eval_data().model_copy(update={"source": str(root / cfg.routing.eval_data)})
            )
        ]
        training = {r["prompt"] for r in load_rows(cfg.data)}
        assert len(held_out) == cfg.routing.eval_prompts == 16  # every eval prompt is a held-out one
        assert not set(held_out) & training and len(set(held_out)) == len(held_out)


def test_the_held_out_prompts_are_what_the_data_script_makes():
    import importlib.util
    from pathlib import Path

    root = Path(__file__).resolve().parents[3]
    spec = importlib.util.spec_from_file_location(
        "make_trainer_data", root / "scripts" / "make_trainer_data.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    stories = root / "trainer" / "data" / "stories.jsonl"
    training = {json.loads(line)["prompt"] for line in stories.read_text().splitlines()}
    made = module.held_out_openings(training)
    shipped = [
        json.loads(line) for line in (root / "specs/data/stories_held_out.jsonl").read_text().splitlines()
    ]
    assert shipped == made
