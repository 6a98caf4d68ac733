"""The shipped reward-shaping debate example, end to end on CPU: render, `sweepgen run`, `sweepgen report`,
and what its five arms must show on the shipped task (the tiny model with the ``debate_copy`` prior,
where the final answer repeats the critic).

The five-strategy sweep of specs/reward_shaping_debate.yaml with one seed and a few steps each (the
full 5 × 3 sweep is the benchmark in benchmarks/RESULTS.md). The spec is derived from the shipped
one, changing only the seed set and the step count, so the runs are the shipped generated configs
with only the step count changed (checked below). One module-scoped sweep serves every test here:
the sweep's own outputs; the critic's advantage under coma and difference_rewards, non-zero and
different between the two; the five arms' different metrics; the prior's effect. identity is
plain GRPO (its own small trainer). The prior is built once per test session (about a minute on a
loaded 2-core machine), by the sweep fixture before the runs start.
"""

from __future__ import annotations

import csv
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from conftest import hermetic_env
from trainer_support import debate_trainer, generate_shaped, read_jsonl, subprocess_env

pytestmark = [pytest.mark.slow, pytest.mark.train]

ROOT = Path(__file__).resolve().parents[3]
STRATEGIES = ["identity", "difference_rewards", "potential_based", "coma", "reward_mixing"]
STEPS = 3
SWEEP = "reward_shaping_debate"


def sweepgen(*args: str, env: dict, cwd: Path, timeout: float = 400) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "sweepgen", *args],
        env=env,
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def derived_spec(tmp_path: Path) -> Path:
    """The example with seed 0 only and STEPS steps; its template and data copied alongside."""
    for folder in ("specs/data", "templates"):
        shutil.copytree(ROOT / folder, tmp_path / folder, dirs_exist_ok=True)
    spec = yaml.safe_load((ROOT / "specs/reward_shaping_debate.yaml").read_text())
    spec["grid"]["seed"] = [0]
    spec["base"]["grpo"]["max_steps"] = STEPS
    path = tmp_path / "specs/reward_shaping_debate.yaml"
    path.write_text(yaml.safe_dump(spec, sort_keys=False))
    return path


def shipped_data(strategy: str) -> dict[str, Any]:
    """The shipped generated config of ``strategy``, seed 0, with STEPS steps."""
    data = yaml.safe_load((ROOT / f"generated/{SWEEP}/{strategy}_seed0.yaml").read_text())
    data["grpo"]["max_steps"] = STEPS
    return dict(data)


@pytest.fixture(scope="module")
def tiny_cache_module(tmp_path_factory):
    import torch

    cache = tmp_path_factory.getbasetemp() / "sweepgen-cache"
    cache.mkdir(exist_ok=True)
    saved = {k: os.environ.get(k) for k in ("SWEEPGEN_CACHE", "HF_HUB_OFFLINE", "OMP_NUM_THREADS")}
    os.environ.update(SWEEPGEN_CACHE=str(cache), HF_HUB_OFFLINE="1", OMP_NUM_THREADS="1")
    torch.set_num_threads(1)
    yield cache
    for key, value in saved.items():
        if value is None:
            os.environ.pop(key, None)
        else:
            os.environ[key] = value


def prior_built_once(cache: Path) -> None:
    """The shipped model (the tiny model with the debate_copy prior: 400 supervised steps) built
    here, into the cache the runs read: `run --jobs 2` would otherwise start two runs that each
    build it at once (the build is safe with concurrent builders, each doing the whole work)."""
    from sweepgen_trainer.config import ModelConfig
    from sweepgen_trainer.models import ensure_model_dir, locate_model

    model = ModelConfig.model_validate(shipped_data("identity")["model"])
    assert model.tiny is not None and model.tiny.prior == "debate_copy", model
    assert os.environ["SWEEPGEN_CACHE"] == str(cache)  # tiny_cache_module's: the runs' cache too
    assert ensure_model_dir(model) == locate_model(model)


@pytest.fixture(scope="module")
def sweep(tmp_path_factory, tiny_cache_module) -> dict[str, Any]:
    """The derived sweep rendered and run (`sweepgen run --jobs 2`) once for the module: its folder,
    the environment it ran in, and each strategy's metrics rows."""
    folder = tmp_path_factory.mktemp("debate_sweep")
    # built here, not by the autouse fixture: a module-scoped fixture is set up before it
    env = {k: v for k, v in subprocess_env(tiny_cache_module).items() if k != "CI"}
    env.update(hermetic_env(tmp_path_factory.mktemp("home")), COLUMNS="250")
    derived_spec(folder)
    prior_built_once(tiny_cache_module)
    rendered = sweepgen("render", "specs/reward_shaping_debate.yaml", env=env, cwd=folder)
    assert rendered.returncode == 0, rendered.stderr
    ran = sweepgen("run", f"generated/{SWEEP}", "--jobs", "2", env=env, cwd=folder)
    assert ran.returncode == 0, ran.stdout + ran.stderr
    rows = {s: read_jsonl(folder / f"runs/{SWEEP}/{s}_s0/metrics.jsonl") for s in STRATEGIES}
    return {"folder": folder, "env": env, "rows": rows}


def test_the_runs_are_the_shipped_configs_with_only_the_step_count_changed(sweep):
    # what the tests below say of the shipped task holds because these are its configs
    for strategy in STRATEGIES:
        ran = yaml.safe_load((sweep["folder"] / f"generated/{SWEEP}/{strategy}_seed0.yaml").read_text())
        assert ran == shipped_data(strategy), strategy


def test_five_strategy_sweep_runs_and_reports(sweep):
    folder, env = sweep["folder"], sweep["env"]
    first_steps = {}
    for strategy in STRATEGIES:
        run = folder / f"runs/{SWEEP}/{strategy}_s0"
        summary = json.loads((run / "summary.json").read_text())
        assert summary["steps"] == STEPS and summary["debate"]["strategy"] == strategy
        rows = sweep["rows"][strategy]
        assert [r["step"] for r in rows] == list(range(1, STEPS + 1))
        for row in rows:
            for role in ("solver", "critic"):
                for key in ("reward", "shaped", "advantage_mean", "advantage_std"):
                    assert isinstance(row[f"debate/{key}/{role}"], float)
            assert 0.0 <= row["debate/zero_advantage_groups"] <= 1.0
            assert row["debate/turns"] == 3.0
            assert row["debate/team_accuracy"] == row["reward_mean"]  # G is the reward TRL logs
        samples = read_jsonl(run / "samples.jsonl")
        assert set(samples[0]["advantage"]) == {"solver", "critic"} and len(samples[0]["turns"]) == 3
        first_steps[strategy] = (
            rows[0]["debate/team_accuracy"],
            rows[0]["debate/length_tokens"],
            [s["completion"] for s in samples if s["step"] == 1],
        )
    # Same seed and model: the first generation batch is the same for every strategy that plays no
    # counterfactuals; only what is learned from it differs. Anything else would mean the runs differ
    # in more than the shaping. (coma and difference_rewards draw their counterfactual samples from
    # the same random stream, so their debates differ from the first step on; docs/DEBATE.md.)
    plain = ("identity", "potential_based", "reward_mixing")
    assert len({json.dumps(first_steps[s]) for s in plain}) == 1

    report = sweepgen("report", f"generated/{SWEEP}", env=env, cwd=folder)
    assert report.returncode == 0, report.stdout + report.stderr
    rows = list(csv.DictReader((folder / f"runs/{SWEEP}/report.csv").open()))
    assert sorted(r["reward_shaping.strategy"] for r in rows) == sorted(STRATEGIES)
    assert all(r["state"] == "finished" for r in rows)
    assert all(r["debate.team_accuracy"] != "" for r in rows)
    assert (folder / f"runs/{SWEEP}/report.png").stat().st_size > 0


def critic_advantages(rows: list[dict]) -> list[float]:
    return [r["debate/advantage_std/critic"] for r in rows]


def test_the_critic_is_credited_and_the_two_estimators_differ(sweep):
    runs = sweep["rows"]
    coma, difference = critic_advantages(runs["coma"]), critic_advantages(runs["difference_rewards"])
    assert any(v > 0 for v in coma), "coma never gave the critic an advantage"
    assert any(v > 0 for v in difference), "difference_rewards never gave the critic an advantage"
    assert coma != difference
    # and both regenerated counterfactuals (the cost is counted), while identity generated none
    assert all(r["debate/counterfactual_tokens"] > 0 for r in runs["coma"] + runs["difference_rewards"])
    assert all(r["debate/counterfactual_tokens"] == 0 for r in runs["identity"])


def test_the_five_arms_produce_different_metrics(sweep):
    runs = sweep["rows"]
    keys = ("loss", "debate/advantage_std/solver", "debate/advantage_std/critic", "reward_mean")
    fingerprints = {
        s: tuple(tuple(runs[s][i].get(k) for k in keys) for i in range(STEPS)) for s in STRATEGIES
    }
    same = [(a, b) for a in STRATEGIES for b in STRATEGIES if a < b and fingerprints[a] == fingerprints[b]]
    assert not same, same


def test_the_prior_makes_the_final_answer_follow_the_critic(sweep):
    # the shipped task's point: the critic's value is what the solver answers in the end
    samples = read_jsonl(sweep["folder"] / f"runs/{SWEEP}/identity_s0/samples.jsonl")
    turns = [s["turns"] for s in samples if s["step"] == 1]
    follows = sum(t[1]["text"].strip() == t[2]["text"].strip() for t in turns)
    assert follows >= 0.75 * len(turns), [[x["text"] for x in t] for t in turns]


def test_identity_is_plain_grpo(tmp_path, tiny_cache_module):
    """identity's per-token advantages are TRL's own GRPO advantages of the same batch."""
    from sweepgen_trainer.config import RunConfig

    data = shipped_data("identity")
    data["output_dir"] = str(tmp_path / "identity")
    data["data"]["source"] = str(ROOT / data["data"]["source"])
    cfg = RunConfig.model_validate(data)
    trainer, rows = debate_trainer(cfg, tmp_path / "run")
    n = cfg.grpo.num_generations
    batch = [dict(rows[k]) for k in (0, 1) for _ in range(n)]  # one generation batch: 2 prompts
    out, _, trl = generate_shaped(trainer, batch)
    assert trl.abs().max() > 0, "all-zero TRL advantages would make this comparison vacuous"
    for i, row in enumerate(batch):
        for t, turn in enumerate(row["debate_token_turns"]):
            if turn >= 0:
                assert out["advantages"][i, t].item() == pytest.approx(trl[i].item(), abs=1e-5)


def test_leave_one_out_group_size_mismatch_is_rejected_before_anything_runs(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    spec_path = derived_spec(tmp_path)
    spec = yaml.safe_load(spec_path.read_text())
    spec["variants"]["leave_one_out"] = {
        "reward_shaping.strategy": "leave_one_out",
        "reward_shaping.params": {"n_rollouts_per_prompt": 4},
    }
    spec_path.write_text(yaml.safe_dump(spec, sort_keys=False))
    env = subprocess_env(tmp_path)
    # The schema (RunConfig) refuses it at render, before anything runs.
    out = sweepgen("render", "specs/reward_shaping_debate.yaml", env=env, cwd=tmp_path)
    assert out.returncode == 2 and "Traceback" not in out.stderr
    assert "n_rollouts_per_prompt is 4 but grpo.num_generations is 8" in out.stderr
    assert not (tmp_path / "generated").exists()
