"""End to end on the shipped task (specs/reward_shaping_debate.yaml, the tiny model with the
``debate_copy`` prior, where the final answer repeats the critic): the critic's advantage under coma
and difference_rewards is non-zero and differs between the two; the five arms produce different
metrics; identity is plain GRPO.

The shipped generated configs are run as they are, with only the step count and output folder
changed. The prior is built once per test session (about a minute on a loaded 2-core machine).
"""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from trainer_support import debate_trainer, generate_shaped, read_jsonl

pytestmark = [pytest.mark.train, pytest.mark.slow]

ROOT = Path(__file__).resolve().parents[3]
STRATEGIES = ["identity", "difference_rewards", "potential_based", "coma", "reward_mixing"]
STEPS = 3


def shipped(strategy: str, tmp_path: Path):
    from sweepgen_trainer.config import RunConfig

    data = yaml.safe_load((ROOT / f"generated/reward_shaping_debate/{strategy}_seed0.yaml").read_text())
    data["grpo"]["max_steps"] = STEPS
    data["output_dir"] = str(tmp_path / strategy)
    data["data"]["source"] = str(ROOT / data["data"]["source"])
    return RunConfig.model_validate(data)


@pytest.fixture(scope="module")
def runs(tmp_path_factory, tiny_cache_module):
    from sweepgen_trainer.run import run

    tmp = tmp_path_factory.mktemp("debate_task")
    out = {}
    for strategy in STRATEGIES:
        run(shipped(strategy, tmp))
        out[strategy] = read_jsonl(tmp / strategy / "metrics.jsonl")
    out["_folder"] = tmp
    return out


@pytest.fixture(scope="module")
def tiny_cache_module(tmp_path_factory):
    import os

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


def critic_advantages(rows: list[dict]) -> list[float]:
    return [r["debate/advantage_std/critic"] for r in rows]


def test_the_critic_is_credited_and_the_two_estimators_differ(runs):
    coma, difference = critic_advantages(runs["coma"]), critic_advantages(runs["difference_rewards"])
    assert any(v > 0 for v in coma), "coma never gave the critic an advantage"
    assert any(v > 0 for v in difference), "difference_rewards never gave the critic an advantage"
    assert coma != difference
    # and both regenerated counterfactuals (the cost is counted), while identity generated none
    assert all(r["debate/counterfactual_tokens"] > 0 for r in runs["coma"] + runs["difference_rewards"])
    assert all(r["debate/counterfactual_tokens"] == 0 for r in runs["identity"])


def test_the_five_arms_produce_different_metrics(runs):
    keys = ("loss", "debate/advantage_std/solver", "debate/advantage_std/critic", "reward_mean")
    fingerprints = {
        s: tuple(tuple(runs[s][i].get(k) for k in keys) for i in range(STEPS)) for s in STRATEGIES
    }
    same = [(a, b) for a in STRATEGIES for b in STRATEGIES if a < b and fingerprints[a] == fingerprints[b]]
    assert not same, same


def test_the_prior_makes_the_final_answer_follow_the_critic(runs):
    # the shipped task's point: the critic's value is what the solver answers in the end
    samples = read_jsonl(runs["_folder"] / "identity" / "samples.jsonl")
    turns = [s["turns"] for s in samples if s["step"] == 1]
    follows = sum(t[1]["text"].strip() == t[2]["text"].strip() for t in turns)
    assert follows >= 0.75 * len(turns), [[x["text"] for x in t] for t in turns]


def test_identity_is_plain_grpo(tmp_path, tiny_cache_module):
    """identity's per-token advantages are TRL's own GRPO advantages of the same batch."""
    cfg = shipped("identity", tmp_path)
    trainer, rows = debate_trainer(cfg, tmp_path / "run")
    n = cfg.grpo.num_generations
    batch = [dict(rows[k]) for k in (0, 1) for _ in range(n)]  # one generation batch: 2 prompts
    out, _, trl = generate_shaped(trainer, batch)
    assert trl.abs().max() > 0, "all-zero TRL advantages would make this comparison vacuous"
    for i, row in enumerate(batch):
        for t, turn in enumerate(row["debate_token_turns"]):
            if turn >= 0:
                assert out["advantages"][i, t].item() == pytest.approx(trl[i].item(), abs=1e-5)
