"""The trainer end to end on the tiny model, on CPU: it learns, every parameter moves, runs are
reproducible, bad configs fail before any model loads, NaN stops the run. A SIGKILLed run resuming
from its last checkpoint to an uninterrupted run's metrics is tests/run/test_run_bundled_trainer.py's
kill test (the same trainer process, started by `sweepgen run`)."""

from __future__ import annotations

import subprocess
import sys

import pytest
import yaml
from trainer_support import (
    TIMING_KEYS,
    grpo_config,
    read_jsonl,
    tiny_dict,
    without_timing,
    write_config,
)

from sweepgen.errors import ConfigError
from sweepgen_trainer import rewards
from sweepgen_trainer.config import RunConfig
from sweepgen_trainer.training.step_clock import KEYS as STEP_CLOCK_KEYS

pytestmark = pytest.mark.train


def run_cfg(data):
    from sweepgen_trainer.run import run

    return run(RunConfig.model_validate(data))


@pytest.mark.slow
def test_tiny_model_learns_happy_count_within_60_steps(tiny_cache, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    summary = run_cfg(tiny_dict("runs/learn"))
    run = tmp_path / "runs" / "learn"
    rewards_by_step = [r["reward_mean"] for r in read_jsonl(run / "metrics.jsonl")]
    assert len(rewards_by_step) == 60
    assert sum(rewards_by_step[:5]) / 5 < 0.3
    assert sum(rewards_by_step[-5:]) / 5 > 0.7
    # The run directory follows docs/ARCHITECTURE.md.
    assert yaml.safe_load((run / "config.yaml").read_text())["grpo"]["loss_type"] == "grpo"
    row = read_jsonl(run / "metrics.jsonl")[0]
    for key in (
        "step",
        "reward_mean",
        "reward_std",
        "loss",
        "entropy",
        "completion_length",
        "step_time",
        "kl",
    ):
        assert key in row
    samples = read_jsonl(run / "samples.jsonl")
    assert {s["step"] for s in samples} == set(range(1, 61)) and len(samples) == 60 * 16
    assert set(samples[0]) >= {"step", "prompt", "completion", "reward"}
    assert (run / "checkpoints" / "checkpoint-60" / "trainer_state.json").is_file()
    assert summary["steps"] == 60 and summary["final_reward"] > 0.7
    assert summary["best_reward"] >= summary["final_reward"]
    assert set(summary["diversity"]) == {"n_samples", "unique_ratio", "mean_pairwise_jaccard"}
    assert isinstance(summary["degenerate"], bool) and summary["wall_time_s"] > 0
    # Never overwrite a finished run.
    with pytest.raises(ConfigError, match="already finished"):
        run_cfg(tiny_dict("runs/learn"))


def test_every_parameter_changes_after_a_few_steps(tiny_cache, tmp_path):
    import torch
    from datasets import Dataset

    from sweepgen_trainer.data import load_rows
    from sweepgen_trainer.models import ensure_model_dir, load_model_and_tokenizer
    from sweepgen_trainer.run import build_trainer
    from sweepgen_trainer.rundir.outputs import RunDir

    # sentence_length varies within every group, so every step has a learning signal.
    cfg = RunConfig.model_validate(
        tiny_dict(
            tmp_path / "run",
            reward={"name": "sentence_length", "params": {"target_words": 3}},
            grpo={"max_steps": 3, "beta": 0.02},
        )
    )
    model, tok = load_model_and_tokenizer(ensure_model_dir(cfg.model), "float32")
    before = {n: p.detach().clone() for n, p in model.named_parameters()}
    run_dir = RunDir(cfg.output_dir)
    run_dir.start(cfg, {})
    trainer = build_trainer(
        cfg,
        run_dir,
        model=model,
        tokenizer=tok,
        train_dataset=Dataset.from_list(load_rows(cfg.data)),
        grpo_config=grpo_config(cfg, run_dir.checkpoints),
    )
    trainer.train()
    unchanged = [n for n, p in trainer.model.named_parameters() if torch.equal(p, before[n])]
    assert unchanged == []
    assert len(before) == 2 * 9 + 3  # embed, final norm, lm_head + 9 tensors per block


def test_same_config_and_seed_give_identical_metrics(tiny_cache, tmp_path):
    base = tiny_dict(tmp_path / "a", grpo={"max_steps": 8, "beta": 0.02})
    run_cfg(base)
    run_cfg({**base, "output_dir": str(tmp_path / "b")})
    a = read_jsonl(tmp_path / "a" / "metrics.jsonl")
    b = read_jsonl(tmp_path / "b" / "metrics.jsonl")
    assert without_timing(a) == without_timing(b)
    # only wall-clock keys differ: TRL's, elapsed time, and where each step's time went
    assert set(a[0]) - set(without_timing(a)[0]) == TIMING_KEYS | set(STEP_CLOCK_KEYS)
    assert (tmp_path / "a" / "samples.jsonl").read_text() == (tmp_path / "b" / "samples.jsonl").read_text()
    c_cfg = {**base, "output_dir": str(tmp_path / "c"), "seed": 1}
    run_cfg(c_cfg)
    assert without_timing(read_jsonl(tmp_path / "c" / "metrics.jsonl")) != without_timing(a)


@pytest.mark.parametrize(
    "change, message",
    [
        ({"grpo": {"lerning_rate": 1e-3}}, "unknown key `grpo.lerning_rate`"),
        ({"reward": {"name": "hapy_count"}}, "unknown reward `hapy_count`"),
        ({"model": {"path": "models/missing"}}, "does not exist"),
        ({"data": {"source": "missing.jsonl"}}, "data file 'missing.jsonl' does not exist"),
    ],
)
def test_bad_configs_fail_before_any_model_loads(tiny_cache, tmp_path, monkeypatch, capsys, change, message):
    from sweepgen_trainer import models
    from sweepgen_trainer.__main__ import main

    def must_not_load(*args, **kwargs):
        raise AssertionError("a model was loaded for an invalid config")

    monkeypatch.setattr(models, "ensure_model_dir", must_not_load)
    monkeypatch.setattr(models, "load_model_and_tokenizer", must_not_load)
    monkeypatch.chdir(tmp_path)
    data = tiny_dict("runs/bad")
    for section, values in change.items():
        data[section] = {**data.get(section, {}), **values}
        if section == "model":
            data[section].pop("tiny", None)
    path = write_config(tmp_path / "bad.yaml", data)
    assert main([str(path)]) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err
    assert not (tmp_path / "runs" / "bad").exists()


def test_cli_exit_code_and_location_without_traceback(tmp_path):
    path = tmp_path / "bad.yaml"
    path.write_text("run_name: r\noutput_dir: o\ngrpo:\n  bta: 0.1\n")
    proc = subprocess.run(
        [sys.executable, "-m", "sweepgen_trainer", str(path)], capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 2
    assert f"{path}:4:3: error: unknown key `grpo.bta`" in proc.stderr
    assert "did you mean `beta`" in proc.stderr and "Traceback" not in proc.stderr


def test_nan_reward_stops_the_run(tiny_cache, tmp_path, monkeypatch):
    def nan_reward(completions, columns):
        return [float("nan")] * len(completions)

    monkeypatch.setattr(rewards, "REWARDS", dict(rewards.REWARDS))  # restored after the test
    rewards.register("nan_reward")(nan_reward)
    # caught where the reward returns it, naming the reward, the row and the value
    with pytest.raises(rewards.RewardValueError, match="reward `nan_reward` returned nan for row 0") as err:
        run_cfg(tiny_dict(tmp_path / "nan", reward={"name": "nan_reward", "params": {}}))
    assert err.value.exit_code == 2
    assert not (tmp_path / "nan" / "summary.json").exists()
