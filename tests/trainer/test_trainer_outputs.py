"""The run directory rules: never overwrite a finished run, never mix two configs, roll logs back
to the resume point, summary from the logged files."""

from __future__ import annotations

import json

import pytest

from sweepgen.errors import ConfigError, UserError
from sweepgen_trainer.config import RunConfig
from sweepgen_trainer.configfile import load_config
from sweepgen_trainer.rundir.outputs import RunDir, atomic_write_text, read_jsonl, summarize


def cfg_for(tmp_path, **grpo):
    return RunConfig.model_validate(
        {"run_name": "r", "output_dir": str(tmp_path / "run"), "grpo": grpo, "logging": {"summary_window": 2}}
    )


def test_finished_run_is_refused(tmp_path):
    cfg = cfg_for(tmp_path)
    run = RunDir(cfg.output_dir)
    run.start(cfg, {})
    run.summary.write_text("{}")
    with pytest.raises(ConfigError, match="already finished") as info:
        run.start(cfg, {})
    assert "never overwritten" in info.value.hint
    assert run.summary.read_text() == "{}"


def test_other_config_in_the_folder_is_refused(tmp_path):
    cfg = cfg_for(tmp_path)
    run = RunDir(cfg.output_dir)
    run.start(cfg, {})
    run.append(run.metrics, [{"step": 1, "reward_mean": 0.0}])  # it trained (else replaced)
    with pytest.raises(ConfigError, match="different config"):
        RunDir(cfg.output_dir).start(cfg_for(tmp_path, beta=0.1), {})
    RunDir(cfg.output_dir).start(cfg, {})  # the same config resumes


def test_config_yaml_is_read_back_as_the_trainer_reads_configs(tmp_path):
    """config.yaml is compared (resume) and read (eval, report) with YAML 1.2: a string that reads
    as a number there is written quoted, so the same config resumes and reads back the same."""
    cfg = RunConfig.model_validate({"run_name": "1e-5", "output_dir": str(tmp_path / "run")})
    run = RunDir(cfg.output_dir)
    run.start(cfg, {})
    run.append(run.metrics, [{"step": 1, "reward_mean": 0.0}])
    RunDir(cfg.output_dir).start(cfg, {})  # not refused as a different config
    assert load_config(run.config) == cfg


def test_a_damaged_config_yaml_is_an_error_at_its_line(tmp_path):
    cfg = cfg_for(tmp_path)
    run = RunDir(cfg.output_dir)
    run.start(cfg, {})
    run.append(run.metrics, [{"step": 1, "reward_mean": 0.0}])
    run.config.write_text("run_name: r\nseed: [1\n")
    with pytest.raises(UserError, match="YAML syntax error") as info:
        RunDir(cfg.output_dir).start(cfg, {})
    assert info.value.location is not None and info.value.location.path == str(run.config)
    assert info.value.exit_code == 2


def test_start_rolls_logs_back_to_the_last_complete_checkpoint(tmp_path):
    cfg = cfg_for(tmp_path)
    run = RunDir(cfg.output_dir)
    run.start(cfg, {})
    run.append(run.metrics, [{"step": s, "reward_mean": 0.1 * s, "elapsed_s": float(s)} for s in range(1, 8)])
    run.append(run.samples, [{"step": s, "completion": "x"} for s in range(1, 8)])
    (run.checkpoints / "checkpoint-5").mkdir(parents=True)
    (run.checkpoints / "checkpoint-5" / "trainer_state.json").write_text("{}")
    (run.checkpoints / "checkpoint-7").mkdir()  # cut short: no trainer_state.json
    checkpoint, offset = run.start(cfg, {})
    assert checkpoint.name == "checkpoint-5" and offset == 5.0
    assert [r["step"] for r in read_jsonl(run.metrics)] == [1, 2, 3, 4, 5]
    assert [r["step"] for r in read_jsonl(run.samples)] == [1, 2, 3, 4, 5]


def test_no_checkpoint_restarts_from_scratch(tmp_path):
    cfg = cfg_for(tmp_path)
    run = RunDir(cfg.output_dir)
    run.start(cfg, {})
    run.append(run.metrics, [{"step": 1, "reward_mean": 0.0}])
    assert run.start(cfg, {}) == (None, 0.0)
    assert read_jsonl(run.metrics) == []


def test_truncated_last_line_is_dropped(tmp_path):
    path = tmp_path / "m.jsonl"
    path.write_text('{"step": 1}\n{"step": 2, "rew')
    assert read_jsonl(path) == [{"step": 1}]


def test_nan_is_written_as_null(tmp_path):
    cfg = cfg_for(tmp_path)
    run = RunDir(cfg.output_dir)
    run.start(cfg, {})
    run.append(run.metrics, [{"step": 1, "kl": float("nan")}])
    assert json.loads(run.metrics.read_text()) == {"step": 1, "kl": None}


def test_summarize_window_best_and_diversity(tmp_path):
    cfg = cfg_for(tmp_path)
    metrics = [
        {"step": s, "reward_mean": r, "elapsed_s": s * 1.0}
        for s, r in zip([1, 2, 3, 4], [0.0, 1.0, 0.6, 0.2])
    ]
    samples = [{"step": 4, "completion": c} for c in ["a b", "a b", "c d", "e"]] + [
        {"step": 3, "completion": "old"}
    ]
    s = summarize(metrics, samples, cfg)
    assert s["final_reward"] == pytest.approx(0.4)  # mean of the last 2 steps
    assert s["best_reward"] == pytest.approx(0.8)  # best 2-step window: steps 2-3
    assert s["steps"] == 4 and s["diversity"]["n_samples"] == 4
    assert s["diversity"]["unique_ratio"] == 0.75 and s["degenerate"] is False


def test_write_summary_is_last_and_atomic(tmp_path):
    cfg = cfg_for(tmp_path)
    run = RunDir(cfg.output_dir)
    run.start(cfg, {})
    with pytest.raises(Exception, match="logged no step"):
        run.write_summary(cfg)
    assert not run.summary.exists()
    run.append(run.metrics, [{"step": 1, "reward_mean": 0.5}])
    out = run.write_summary(cfg, {"wall_time_s": 3.0})
    assert json.loads(run.summary.read_text()) == out and out["wall_time_s"] == 3.0
    assert [p.name for p in run.path.iterdir() if p.name.startswith(".")] == []


def test_atomic_write_replaces_whole_file(tmp_path):
    path = tmp_path / "f.txt"
    atomic_write_text(path, "one")
    atomic_write_text(path, "two")
    assert path.read_text() == "two" and len(list(tmp_path.iterdir())) == 1


def test_summarize_skips_steps_that_did_not_generate(tmp_path):
    # num_iterations = 2: steps 2 and 4 reuse the batch of steps 1 and 3, log a loss but no reward.
    cfg = cfg_for(tmp_path, num_iterations=2)
    metrics = [
        {"step": 1, "reward_mean": 0.2},
        {"step": 2, "reward_mean": None},
        {"step": 3, "reward_mean": 0.6},
        {"step": 4, "reward_mean": None},
    ]
    samples = [
        {"step": 1, "completion": "x"},
        {"step": 3, "completion": "a b"},
        {"step": 3, "completion": "c d"},
    ]
    s = summarize(metrics, samples, cfg)
    assert s["steps"] == 4
    assert s["final_reward"] == pytest.approx(0.4) and s["best_reward"] == pytest.approx(0.4)
    assert s["diversity"]["n_samples"] == 2  # the last generating step's completions
    only = summarize([{"step": 2, "reward_mean": None}], [], cfg)
    assert only["final_reward"] is None and only["steps"] == 2


@pytest.mark.train
def test_every_training_log_with_a_loss_is_a_metrics_row(tmp_path):
    from transformers import TrainerControl

    from sweepgen_trainer.training.grpo import RunOutputsCallback, SweepgenGRPOTrainer

    cfg = cfg_for(tmp_path, num_iterations=2)
    run = RunDir(cfg.output_dir)
    run.start(cfg, {})
    trainer = object.__new__(SweepgenGRPOTrainer)
    printed = []
    trainer.run_config, trainer.run_dir, trainer.on_step = cfg, run, printed.append
    trainer._elapsed_offset, trainer._session_start = 0.0, 0.0
    trainer.model = type("M", (), {"training": True})()
    trainer.state = type("S", (), {"global_step": 2, "is_world_process_zero": True})()
    trainer.sample_rows = lambda: pytest.fail("a step that did not generate wrote samples")
    callback = RunOutputsCallback(trainer)
    # what transformers' Trainer.log hands every callback, after TRL merged its metrics into `logs`
    callback.on_log(None, trainer.state, TrainerControl(), logs={"loss": 0.5, "kl": 0.01})  # no reward
    callback.on_log(None, trainer.state, TrainerControl(), logs={"train_loss": 0.5, "train_runtime": 1.0})
    rows = read_jsonl(run.metrics)
    assert [r["step"] for r in rows] == [2] and rows[0]["reward_mean"] is None
    assert rows[0]["loss"] == 0.5 and printed == rows


def test_a_checkpoint_without_every_process_s_rng_state_is_not_resumed_from(tmp_path, monkeypatch):
    """Two processes: rank 0 wrote trainer_state.json, rank 1 never wrote its RNG state (killed in
    its save). transformers would resume rank 1 without it, with a note in its log: not exact."""
    import zipfile

    cfg = cfg_for(tmp_path)
    run = RunDir(cfg.output_dir)
    run.start(cfg, {})
    for step, ranks in ((2, (0, 1)), (4, (0,))):
        folder = run.checkpoints / f"checkpoint-{step}"
        folder.mkdir(parents=True)
        (folder / "trainer_state.json").write_text("{}")
        for rank in ranks:
            with zipfile.ZipFile(folder / f"rng_state_{rank}.pth", "w") as zf:
                zf.writestr("data.pkl", b"x")
    warned: list[str] = []
    monkeypatch.setenv("WORLD_SIZE", "2")
    assert run.last_checkpoint(warned.append).name == "checkpoint-2"
    assert "rng_state_1.pth is missing" in warned[0] and "checkpoint-4" in warned[0]
    monkeypatch.setenv("WORLD_SIZE", "1")  # one process: its RNG state is rng_state.pth, not checked here
    assert run.last_checkpoint(lambda _: None).name == "checkpoint-4"
