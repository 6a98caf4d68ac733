"""Gradient routing end to end on CPU: `python -m sweepgen_trainer` on the tiny model learns the `happy` hack,
and the three-mode eval in its run directory shows the hack living in the forget adapter.

Why the tiny model is 256 wide here (the default is 64): it is randomly initialised, and adapters on
its hidden layers cannot train lm_head or the final norm, so the largest logit they can give one token
is about 0.02 x hidden_size (lm_head std x |normed hidden state|^2 / sqrt(hidden)): ~1.3 at 64 wide,
where the hack never rises above its ~3% base rate, ~5 at 256, where it is learned in ~25 steps.
Numbers with seeds: benchmarks/RESULTS.md, "Gradient routing".
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from trainer_support import read_jsonl, subprocess_env, tiny_dict, write_config

pytestmark = [pytest.mark.train, pytest.mark.slow]

STEPS = 40
ROUTED = {
    "seed": 0,
    "model": {"path": "builtin:tiny", "tiny": {"hidden_size": 256, "intermediate_size": 256}},
    "reward": {"name": "happy_count", "params": {"cap": 4}},  # the hack is the whole reward
    "grpo": {"learning_rate": 1.0e-2, "max_steps": STEPS},
    "logging": {"save_steps": STEPS},
    "routing": {
        "mode": "classic",
        "detector": {"name": "happy_count", "params": {"threshold": 0}},
        "task_reward": {"name": "sentence_length"},
        "retain_rank": 8,
        "forget_rank": 8,
        "eval_every": 20,
        # 64 eval samples: a rate read off 32 moved by one sample (0.59 vs 0.6) under BLAS rounding
        "eval_prompts": 16,
        "eval_generations": 4,
    },
}


def test_routed_run_puts_the_learned_hack_in_the_forget_adapter(tiny_cache, tmp_path):
    config = write_config(tmp_path / "routed.yaml", tiny_dict("runs/routed", **ROUTED))
    proc = subprocess.run(
        [sys.executable, "-m", "sweepgen_trainer", str(config)],
        cwd=tmp_path,
        # torch's portable kernels: whether 40 steps learn the hack depends on the float rounding of
        # the CPU's vector kernels (AVX2 here learned it in 0.44 of forget-only completions, the
        # portable ones in >= 0.6); the test asks about routing, not about one CPU's arithmetic
        env={**subprocess_env(tiny_cache), "ATEN_CPU_CAPABILITY": "default"},
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    run = tmp_path / "runs" / "routed"
    summary = json.loads((run / "summary.json").read_text())
    metrics = read_jsonl(run / "metrics.jsonl")

    # The hack was really learned during training (it starts at ~3% of completions) ...
    train_hack = [r["routing/train_hack_rate"] for r in metrics]
    assert len(train_hack) == STEPS and max(train_hack[:3]) <= 0.15
    assert sum(train_hack[-5:]) / 5 > 0.6, train_hack

    # ... and the three-mode eval locates it in the forget adapter: ablating forget removes it.
    routing = summary["routing"]
    assert routing["mode"] == "classic" and routing["step"] == STEPS
    assert set(routing) == {"mode", "step", "both", "retain_only", "forget_only"}
    forget, retain, both = (routing[m]["hack_rate"] for m in ("forget_only", "retain_only", "both"))
    assert forget >= 0.6 and both >= 0.6, routing
    assert forget - retain >= 0.4, routing
    for mode in ("both", "retain_only", "forget_only"):
        assert set(routing[mode]) == {"task_reward", "hack_rate", "unique_ratio", "mean_pairwise_jaccard"}

    # The eval ran every 20 steps, into metrics.jsonl, and the final one is the summary's.
    evaluated = [r for r in metrics if "routing/forget_only/hack_rate" in r]
    assert [r["step"] for r in evaluated] == [20, STEPS]
    assert evaluated[-1]["routing/forget_only/hack_rate"] == forget
    assert evaluated[-1]["routing/retain_only/hack_rate"] == retain
    assert (run / "checkpoints" / f"checkpoint-{STEPS}" / "routing.json").is_file()
