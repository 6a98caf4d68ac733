"""A TRL user's first hour, end to end in a scratch git repository: their own `trl grpo` YAML ->
`init --grid ... --seeds 3 --schema trl:grpo` (rendered at once) -> the pre-commit hook, installed
by pre-commit itself from a release tag (a plain install), green -> a hand edit refused -> `run
--command 'trl grpo --config {config}'` with a stand-in `trl` on PATH -> `report` (TRL's reward)."""

from __future__ import annotations

import csv
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from precommit_support import git, hook_env, hook_repo
from run_support import cached_hub_model

pytestmark = [pytest.mark.train, pytest.mark.slow]  # trl's classes are the schema; pre-commit builds a venv

TRL_CONFIG = """\
# a standard `trl grpo --config` file
model_name_or_path: Qwen/Qwen2-0.5B-Instruct
dataset_name: trl-lib/tldr
reward_funcs: [think_format_reward]
output_dir: out/grpo
learning_rate: 1.0e-6
beta: 0.04
loss_type: dapo
seed: 1
"""
# `trl grpo --config FILE`: reads output_dir and beta, logs TRL's trainer_state.json
FAKE_TRL = """\
#!{python}
import json, os, sys
import yaml
assert sys.argv[1:3] == ["grpo", "--config"], sys.argv
cfg = yaml.safe_load(open(sys.argv[3]))
os.makedirs(cfg["output_dir"], exist_ok=True)
rows = [{{"step": s, "reward": cfg["beta"] * 10 + s / 10 + cfg["seed"] / 100, "loss": 1.0}} for s in (1, 2)]
with open(os.path.join(cfg["output_dir"], "trainer_state.json"), "w") as fh:
    json.dump({{"log_history": rows, "global_step": 2}}, fh)
"""


def sweepgen(cwd: Path, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "sweepgen", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )


def test_the_first_hour(tmp_path):
    env = {**hook_env(tmp_path), "XDG_CACHE_HOME": str(tmp_path / "cache"), "COLUMNS": "200"}
    hooks = hook_repo(tmp_path, env)
    git(hooks, "tag", "v0.1.0")
    project = tmp_path / "project"
    (project / "configs").mkdir(parents=True)
    (project / "configs" / "grpo.yaml").write_text(TRL_CONFIG)
    git(project, "init", "-q")

    made = sweepgen(
        project, env, "init", "--from", "configs/grpo.yaml", "--grid", "beta=0.0,0.04",
        "--grid", "loss_type=grpo,dr_grpo", "--seeds", "3", "--schema", "trl:grpo",
    )  # fmt: skip
    assert made.returncode == 0, made.stderr
    assert "sweepgen run generated/grpo --command 'trl grpo --config {config}'" in made.stdout + made.stderr
    assert len(list((project / "generated" / "grpo").glob("*.yaml"))) == 12
    assert sweepgen(project, env, "render").returncode == 0  # nothing to do: already rendered

    (project / ".pre-commit-config.yaml").write_text(
        f"repos:\n  - repo: {hooks}\n    rev: v0.1.0\n    hooks:\n      - id: sweepgen-check\n"
    )
    subprocess.run([sys.executable, "-m", "pre_commit", "install"], cwd=project, env=env, check=True)
    git(project, "add", "-A")
    good = subprocess.run(
        ["git", "commit", "-qm", "sweep"], cwd=project, env=env, capture_output=True, text=True
    )
    assert good.returncode == 0, good.stdout + good.stderr

    edited = next((project / "generated" / "grpo").glob("beta0.04-*-seed1.yaml"))
    original = edited.read_text()
    edited.write_text(original.replace("beta: 0.04", "beta: 0.05"))
    git(project, "add", "-A")
    bad = subprocess.run(
        ["git", "commit", "-qm", "edit"], cwd=project, env=env, capture_output=True, text=True
    )
    assert bad.returncode != 0 and "hand" in bad.stdout + bad.stderr, bad.stdout + bad.stderr
    edited.write_text(original)

    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    trl = bin_dir / "trl"
    trl.write_text(FAKE_TRL.format(python=sys.executable))
    trl.chmod(trl.stat().st_mode | stat.S_IEXEC)
    # offline (the hermetic environment), the model must be in huggingface_hub's cache, as after
    # `hf download`: `run` refuses a Hub model it has no copy of before any run starts
    hub = cached_hub_model(tmp_path / "hub", "Qwen/Qwen2-0.5B-Instruct")
    run_env = {**env, "PATH": f"{bin_dir}{os.pathsep}{env['PATH']}", "HF_HUB_CACHE": str(hub)}
    ran = sweepgen(
        project, run_env, "run", "generated/grpo", "--command", "trl grpo --config {config}", "--jobs", "2"
    )
    assert ran.returncode == 0, ran.stdout + ran.stderr

    report = sweepgen(project, run_env, "report", "generated/grpo", "--no-plot")
    assert report.returncode == 0, report.stdout + report.stderr
    assert "reporting `reward`" in report.stdout + report.stderr
    rows = list(csv.DictReader((project / "runs" / "grpo" / "report.csv").read_text().splitlines()))
    assert len(rows) == 12 and all(r["state"] == "finished" for r in rows)
    assert {r["run"] for r in rows} >= {"beta0.0-loss_type_grpo-seed1", "beta0.04-loss_type_dr_grpo-seed3"}

    # one naming scheme: a group is a run's name without its seed part, and --compare takes it
    compared = sweepgen(
        project, run_env, "report", "generated/grpo", "--no-plot", "--compare", "beta0.0-loss_type_grpo"
    )
    assert compared.returncode == 0, compared.stdout + compared.stderr
    assert "beta0.04-loss_type_dr_grpo" in compared.stdout, compared.stdout
