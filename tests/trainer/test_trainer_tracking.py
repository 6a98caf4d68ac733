"""`logging.report_to: [tensorboard, wandb]` in the bundled trainer, offline: the TensorBoard events
are read back with tensorboard's own EventAccumulator and the W&B run with wandb's own reader of its
transaction log (`wandb leet inspect --json`); both must hold what metrics.jsonl holds. W&B: run name
= run_name, group = sweep name, config = the resolved config, tags = the varying values, samples as a
table. `sweepgen report --metric` reads the same metric from the event files."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from run_support import make_config_sweep
from trainer_support import read_jsonl, tiny_dict

pytestmark = pytest.mark.train


def wandb_records(run_dir: Path) -> list[dict]:
    """The offline run's transaction log, read by wandb's own reader (`wandb leet inspect --json`)."""
    (log,) = run_dir.glob("wandb/offline-run-*/run-*.wandb")
    argv = [sys.executable, "-m", "wandb", "leet", "inspect", "--json", str(log)]
    out = subprocess.run(argv, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    return [json.loads(line) for line in out.stdout.splitlines() if line.strip()]


def test_tensorboard_and_wandb_offline_get_what_metrics_jsonl_gets(tiny_cache, tmp_path, monkeypatch):
    from tensorboard.backend.event_processing import event_accumulator

    from sweepgen_trainer.run import run_config_file

    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("WANDB_MODE", "offline")
    monkeypatch.setenv("WANDB_SILENT", "true")
    config = tiny_dict(
        "runs/trk/beta0.0", grpo={"max_steps": 3}, logging={"report_to": ["tensorboard", "wandb"]}
    )
    config["run_name"] = "beta0.0"
    make_config_sweep(tmp_path, {"beta0.0": config}, sweep="trk", values={"beta0.0": {"grpo.beta": 0.0}})
    summary = run_config_file("generated/trk/beta0.0.yaml")
    run_dir = Path("runs/trk/beta0.0")
    rows = read_jsonl(run_dir / "metrics.jsonl")
    expected = {r["step"]: r["reward_mean"] for r in rows if r.get("reward_mean") is not None}
    assert len(expected) == 3

    acc = event_accumulator.EventAccumulator(str(run_dir / "tensorboard"))
    acc.Reload()
    tb = {e.step: e.value for e in acc.Scalars("reward_mean")}
    assert tb == pytest.approx(expected)  # float32 in the event file
    assert {"loss", "completion_length"} <= set(acc.Tags()["scalars"])  # (kl is None with beta 0)

    records = wandb_records(run_dir)
    (run,) = [r["run"] for r in records if r["type"] == "run"]
    assert run["display_name"] == "beta0.0" and run["run_group"] == "trk"
    assert run["tags"] == ["grpo.beta=0.0"]
    logged_config = {k: v for k, v in run["config"]["update"].items() if k != "_wandb"}
    assert logged_config["grpo"]["max_steps"] == 3 and logged_config["output_dir"] == "runs/trk/beta0.0"
    assert logged_config["logging"]["report_to"] == ["tensorboard", "wandb"]
    history = {
        r["history"]["step"]["num"]: r["history"]["item"]["reward_mean"]
        for r in records
        if r["type"] == "history" and "reward_mean" in r["history"]["item"]
    }
    assert history == pytest.approx(expected)
    summaries = {}
    for r in records:
        if r["type"] == "summary":
            summaries.update(r["summary"].get("update", {}))
    assert summaries["final_reward"] == pytest.approx(summary["final_reward"])
    assert summaries["samples._type"] == "table-file"
    (table_file,) = run_dir.glob("wandb/offline-run-*/files/media/table/samples_*.table.json")
    table = json.loads(table_file.read_text())
    samples = read_jsonl(run_dir / "samples.jsonl")
    assert table["columns"] == ["step", "prompt", "completion", "reward"]
    assert [row[2] for row in table["data"]] == [s["completion"] for s in samples]

    # the report reads the same metric from the event files once metrics.jsonl is gone
    from sweepgen.run.logs import metrics

    (run_dir / "metrics.jsonl").rename(run_dir / "metrics.jsonl.bak")
    _, series = metrics.find_in_run(run_dir, "reward_mean")
    assert series is not None and series.source == "tensorboard"
    assert dict(series.points) == pytest.approx(expected)


def test_sweep_context_comes_from_the_lock_beside_the_config(tmp_path, monkeypatch):
    # a real render: the lock keeps each variant as a difference from the base, never its values
    from sweepgen.compile import api
    from sweepgen_trainer.tracking import sweep_context

    monkeypatch.chdir(tmp_path)
    (tmp_path / "specs").mkdir()
    (tmp_path / "t.yaml.j2").write_text("{{ config | to_yaml }}")
    (tmp_path / "specs/s.yaml").write_text(
        "sweepgen: 1\nname: s\ntemplate: ../t.yaml.j2\noutput: '{{ variant.name }}.yaml'\n"
        "base: {output_dir: x, grpo: {beta: 0.0}, seed: 0, data: {source: a}}\n"
        "grid: {grpo.beta: [0.1, 0.2], seed: [3, 4]}\n"
    )
    api.render(["specs/s.yaml"])
    ctx = sweep_context(tmp_path / "generated/s/beta0.2_seed3.yaml")
    assert ctx.sweep == "s" and ctx.tags == ["grpo.beta=0.2", "seed=3"]
    assert sweep_context(tmp_path / "elsewhere.yaml").sweep is None  # a hand-written config


def test_report_to_is_checked_like_every_other_key():
    from pydantic import ValidationError

    from sweepgen_trainer.config import LoggingConfig

    assert LoggingConfig().report_to == []  # default: no tracker
    with pytest.raises(ValidationError, match="tensorboard"):
        LoggingConfig(report_to=["tensorbord"])
    with pytest.raises(ValidationError, match="twice"):
        LoggingConfig(report_to=["wandb", "wandb"])


def test_importing_sweepgen_and_the_trainer_config_pulls_in_no_tracker():
    code = (
        "import sys, sweepgen.cli, sweepgen.run.report.collect, sweepgen.run.logs.metrics, "
        "sweepgen_trainer.tracking; "
        "bad = [m for m in ('wandb', 'tensorboard', 'torch') if m in sys.modules]; "
        "assert not bad, bad"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=120)
