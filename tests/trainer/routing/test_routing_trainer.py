"""RoutedGRPOTrainer inside real TRL steps: is_hack stays with its row, routed updates, outputs, eval CLI."""

from __future__ import annotations

import json

import pytest
import torch
import trl  # noqa: F401 - the module needs trl; importing it here fails fast (collection) without it

from tests.trainer_support import (
    adapter_layers,
    adapter_parameters,
    grpo_config,
    read_jsonl,
    tiny_dict,
    write_config,
)

pytestmark = pytest.mark.train

# sentence_length (target 10 words) above 0.55: about half of the untrained tiny model's completions.
HALF_DETECTOR = {"name": "reward_above", "params": {"reward": "sentence_length", "threshold": 0.55}}


def routing(mode="classic", detector=HALF_DETECTOR, **extra):
    return {
        "mode": mode,
        "detector": detector,
        "task_reward": {"name": "sentence_length"},
        "retain_rank": 2,
        "forget_rank": 2,
        "target_modules": ["q_proj", "v_proj", "up_proj"],
        "eval_prompts": 2,
        "eval_generations": 2,
        **extra,
    }


def build(tmp_path, **sections):
    from datasets import Dataset

    from sweepgen_trainer import data as data_mod
    from sweepgen_trainer import models
    from sweepgen_trainer.config import RunConfig
    from sweepgen_trainer.grpo_args import grpo_kwargs
    from sweepgen_trainer.run import build_trainer
    from sweepgen_trainer.rundir.outputs import RunDir

    cfg = RunConfig.model_validate(tiny_dict(tmp_path / "run", **sections))
    run_dir = RunDir(cfg.output_dir)
    run_dir.start(cfg, grpo_kwargs(cfg, str(run_dir.checkpoints)))
    model, tok = models.load_model_and_tokenizer(models.ensure_model_dir(cfg.model), "float32")
    trainer = build_trainer(
        cfg,
        run_dir,
        model=model,
        tokenizer=tok,
        train_dataset=Dataset.from_list(data_mod.load_rows(cfg.data)),
        grpo_config=grpo_config(cfg, run_dir.checkpoints),
    )
    return cfg, trainer


SMALL_GRPO = {
    "num_generations": 4,
    "batch_size": 4,
    "gradient_accumulation_steps": 2,
    "max_steps": 2,
    "learning_rate": 1e-2,
}


def test_is_hack_stays_aligned_with_its_completion_through_trl_shuffle_and_split(tmp_path, tiny_cache):
    from sweepgen_trainer.routing.detectors import build as build_detector
    from sweepgen_trainer.routing.dual_lora import routing_state
    from sweepgen_trainer.routing.trainer import RoutedGRPOTrainer

    cfg, trainer = build(tmp_path, grpo=SMALL_GRPO, routing=routing())
    assert isinstance(trainer, RoutedGRPOTrainer)
    detect = build_detector(cfg.routing.detector.name, cfg.routing.detector.params)
    generated, trained = [], []
    state = routing_state(trainer.model)
    score, loss = trainer._generate_and_score_completions, trainer.compute_loss

    def record_generation(inputs):
        out = score(inputs)
        generated.extend(map(tuple, out["completion_ids"].tolist()))
        return out

    def record_loss(model, inputs, *args, **kwargs):
        result = loss(model, inputs, *args, **kwargs)
        # masks installed for exactly this micro-batch: retain learns from clean rows only
        assert torch.equal(state.masks["retain"].cpu(), ~inputs["is_hack"].cpu())
        texts = trainer.processing_class.batch_decode(inputs["completion_ids"], skip_special_tokens=True)
        trained.append(
            (texts, inputs["is_hack"].tolist(), list(map(tuple, inputs["completion_ids"].tolist())))
        )
        return result

    trainer._generate_and_score_completions = record_generation
    trainer.compute_loss = record_loss
    trainer.train()

    flags = [f for _, fs, _ in trained for f in fs]
    assert 0 < sum(flags) < len(flags), "the detector must give mixed flags for this test to mean anything"
    for texts, is_hack, _ in trained:
        assert is_hack == detect(texts, {})
    order = [row for _, _, rows in trained for row in rows]
    assert sorted(order) == sorted(generated) and order != generated, "TRL should have shuffled the rows"
    assert state.masks is None  # cleared after backward


def test_all_hacked_batches_leave_the_retain_adapter_bit_identical(tmp_path, tiny_cache):
    everything = {"name": "reward_above", "params": {"reward": "sentence_length", "threshold": -1.0}}
    cfg, trainer = build(
        tmp_path,
        grpo={**SMALL_GRPO, "max_steps": 3},
        reward={"name": "sentence_length", "params": {"target_words": 3}},
        routing=routing(detector=everything),
    )
    before = {n: p.detach().clone() for n, p in trainer.model.named_parameters()}
    trainer.train()
    for name, p in adapter_parameters(trainer.model, "retain"):
        assert torch.equal(p.detach(), before[name]), name
    changed = [torch.equal(p.detach(), before[n]) for n, p in adapter_parameters(trainer.model, "forget")]
    assert changed and not any(changed)


def test_run_dir_holds_three_mode_eval_and_trainer_eval_reproduces_it(tmp_path, tiny_cache):
    from sweepgen_trainer.config import RunConfig
    from sweepgen_trainer.eval import main as eval_main
    from sweepgen_trainer.run import run

    data = tiny_dict(
        tmp_path / "run",
        grpo={**SMALL_GRPO, "max_steps": 4, "gradient_accumulation_steps": 1},
        logging={"save_steps": 4},
        routing=routing(eval_every=2),
    )
    summary = run(RunConfig.model_validate(data))
    assert set(summary["routing"]) == {"mode", "step", "both", "retain_only", "forget_only"}
    assert summary["routing"]["step"] == 4
    metrics = read_jsonl(tmp_path / "run" / "metrics.jsonl")
    evaluated = [r["step"] for r in metrics if "routing/forget_only/hack_rate" in r]
    assert evaluated == [2, 4]
    assert all("routing/train_hack_rate" in r for r in metrics)
    meta = json.loads((tmp_path / "run" / "checkpoints" / "checkpoint-4" / "routing.json").read_text())
    assert meta["ranks"] == {"retain": 2, "forget": 2}

    import contextlib
    import io

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert eval_main([str(tmp_path / "run")]) == 0
    again = json.loads(out.getvalue())
    assert again["step"] == 4 and again["ranks"] == {"retain": 2, "forget": 2}
    for mode in ("both", "retain_only", "forget_only"):
        assert again["results"][mode] == summary["routing"][mode]


def test_baseline_is_one_lora_of_the_summed_rank_and_evaluates_one_mode(tmp_path, tiny_cache):
    cfg, trainer = build(tmp_path, grpo=SMALL_GRPO, routing=routing(mode="baseline"))
    layers = list(adapter_layers(trainer.model))
    assert layers and all(m.ranks == {"retain": 4, "forget": 0} for _, m in layers)
    assert cfg.routing.eval_modes() == {"both": (1.0, 1.0)}


def test_eval_cli_rejects_a_run_without_routing(tmp_path, capsys):
    from sweepgen_trainer.eval import main as eval_main

    run = tmp_path / "plain"
    run.mkdir()
    write_config(run / "config.yaml", tiny_dict(run))
    assert eval_main([str(run)]) == 2
    assert "no `routing` section" in capsys.readouterr().err


def test_gradient_checkpointing_gives_the_same_routed_update(tmp_path, tiny_cache):
    # TRL's own checkpointing path (transformers 5: non-reentrant) on a model whose base is frozen:
    # every adapter matrix must still train (A from step 2 on: B starts at 0), and the routed updates
    # must equal those without it.
    after = {}
    for checkpointing in (False, True):
        cfg, trainer = build(
            tmp_path / str(checkpointing),
            routing=routing(),
            reward={"name": "sentence_length", "params": {}},  # rewards that vary: non-zero advantages
            grpo={**SMALL_GRPO, "max_steps": 2, "gradient_checkpointing": checkpointing},
        )
        before = {n: p.detach().clone() for n, p in trainer.model.named_parameters()}
        trainer.train()
        assert trainer.model.is_activation_checkpointing == checkpointing  # really compared both ways
        params = adapter_parameters(trainer.model, "retain") + adapter_parameters(trainer.model, "forget")
        assert params and all(not torch.equal(p.detach(), before[n]) for n, p in params)
        after[checkpointing] = {n: p.detach().clone() for n, p in params}
    assert after[True].keys() == after[False].keys()
    for name, value in after[True].items():
        torch.testing.assert_close(value, after[False][name], rtol=1e-5, atol=1e-6)


def test_weighted_sum_terms_are_checked_in_detector_and_task_reward():
    from sweepgen.errors import ConfigError
    from sweepgen_trainer.configfile import validate_config

    def cfg(detector_terms, task_terms):
        detector = {
            "name": "reward_above",
            "params": {
                "reward": "weighted_sum",
                "reward_params": {"terms": detector_terms},
                "threshold": 0.5,
            },
        }
        r = routing(detector=detector)
        r["task_reward"] = {"name": "weighted_sum", "params": {"terms": task_terms}}
        return {"run_name": "r", "output_dir": "runs/r", "routing": r}

    good = [{"name": "happy_count", "weight": 0.5}]
    resolved = validate_config(cfg(good, good)).routing
    assert resolved.detector.params["reward_params"]["terms"][0]["params"]["cap"] is not None
    assert resolved.task_reward.params["terms"][0]["weight"] == 0.5
    with pytest.raises(ConfigError, match="unknown reward `nope`"):
        validate_config(cfg([{"name": "nope"}], good))
    with pytest.raises(ConfigError, match="unknown reward `nope`"):
        validate_config(cfg(good, [{"name": "nope"}]))
    with pytest.raises(ConfigError, match="each term is"):
        validate_config(cfg([{"name": "happy_count", "wieght": 2}], good))


def test_every_eval_step_is_logged_so_its_row_carries_the_eval():
    from transformers import TrainerControl

    from sweepgen_trainer.routing.trainer import _RoutingCallback

    class Fake:
        routing = type("R", (), {"eval_every": 3, "mode": "classic"})()
        _pending_eval: dict = {}
        final_routing_eval = None

        def run_routing_eval(self):
            return {"routing_eval/retain_only/hack_rate": 0.0}

    callback = _RoutingCallback(Fake())
    for step, evals in [(1, False), (3, True), (4, False), (6, True)]:
        state = type("S", (), {"global_step": step, "max_steps": 7})()
        control = callback.on_step_end(None, state, TrainerControl())
        assert control.should_log is evals, step  # logging_steps (e.g. 2) need not divide eval_every
