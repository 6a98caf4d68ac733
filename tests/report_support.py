"""A rendered sweep (strategy x seed, with a held-out seed split) whose run folders are written by
hand, so every number a report shows is known: the report tests (statistics, HTML, browser) use it."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

from click.testing import CliRunner

from sweepgen.cli import main

SPEC = """\
sweepgen: 1
name: shaping
template: ../templates/t.yaml.j2
output: "{{ variant.name }}.yaml"
derived:
  output_dir: "runs/shaping/{{ variant.name }}"
base:
  output_dir: null
  training: {seed: 0, lr: 1.0e-5, steps: 40}
  streamer: {strategy: identity}
variants:
  identity: {}
  coma:
    streamer.strategy: coma
  noisy:
    streamer.strategy: noisy
grid:
  training.seed: [1, 2, 3, 4, 5, 6]
  training.lr: [1.0e-5, 1.0e-3]
allow: [streamer.strategy]
seed: {path: training.seed, tune: [1, 2, 3], test: [4, 5, 6]}
"""
# eval_acc at the end, per strategy: coma clearly above identity, noisy the same as identity
LEVEL = {"identity": 0.50, "coma": 0.70, "noisy": 0.50}
JITTER = [0.01, -0.02, 0.015, -0.005, 0.02, -0.01]


def final_acc(strategy: str, seed: int, lr: float) -> float:
    return LEVEL[strategy] + JITTER[seed - 1] + (0.05 if lr > 1e-4 else 0.0)


def logged_acc(strategy: str, seed: int, lr: float, steps: int = 40) -> float:
    """The last eval_acc a run logged, computed exactly as make_shaping writes it."""
    return final_acc(strategy, seed, lr) * steps / steps


def make_shaping(root: Path, *, steps: int = 40, failed: str | None = None) -> Path:
    """Render the spec under ``root`` and write every run: metrics.jsonl (eval_acc, loss) and
    summary.json; ``failed``: a variant name whose run failed (status file, no summary)."""
    (root / "specs").mkdir(parents=True, exist_ok=True)
    (root / "templates").mkdir(exist_ok=True)
    (root / "specs" / "shaping.yaml").write_text(textwrap.dedent(SPEC))
    (root / "templates" / "t.yaml.j2").write_text("{{ config | to_yaml }}\n")
    result = CliRunner().invoke(main, ["render", str(root / "specs" / "shaping.yaml")])
    assert result.exit_code == 0, result.output
    lock = json.loads((root / "generated/shaping/sweep.lock.json").read_text())
    assert lock["report"]["seed"] == "training.seed"
    for entry in lock["files"]:
        name = entry["variant"]
        strategy, seed_part, lr_part = name.split("_")
        seed, lr = int(seed_part.removeprefix("seed")), float(lr_part.removeprefix("lr"))
        run = root / "runs/shaping" / name
        run.mkdir(parents=True, exist_ok=True)
        end = final_acc(strategy, seed, lr)
        rows = [
            {"step": s, "eval_acc": end * s / steps, "loss": 1.0 / s, "reward_mean": end * s / steps}
            for s in range(1, steps + 1)
        ]
        if name == failed:
            rows = rows[: steps // 2]
            (run / "sweepgen_status.json").write_text(
                json.dumps({"state": "failed", "executor": "local", "exit_code": 1, "reason": "exit 1"})
            )
        (run / "metrics.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
        if name != failed:
            (run / "summary.json").write_text(json.dumps({"final_reward": end, "steps": steps}))
    return root / "generated/shaping"


BIG_SPEC = """\
sweepgen: 1
name: big
template: ../templates/t.yaml.j2
output: "{{{{ variant.name }}}}.yaml"
derived:
  output_dir: "runs/big/{{{{ variant.name }}}}"
base:
  output_dir: null
  training: {{seed: 0, lr: 1.0e-5, beta: 0.0}}
grid:
  training.lr: {lrs}
  training.beta: {betas}
  training.seed: {seeds}
seed: training.seed
"""


def make_big(root: Path, *, lrs: int = 20, betas: int = 10, seeds: int = 5, steps: int = 5) -> Path:
    """A lr x beta x seed sweep (default 20 x 10 x 5 = 1,000 runs, 200 groups) with known effects:
    eval_acc ends at 0.5 + 0.02 * (lr index) - 0.01 * (beta index), noise sd 0.01 by seed. Returns
    the generated sweep folder."""
    import random

    lr_values = [float(f"{10 ** (-6 + 3 * i / (lrs - 1)):.3g}") for i in range(lrs)]
    beta_values = [round(0.01 * i, 3) for i in range(betas)]
    (root / "specs").mkdir(parents=True, exist_ok=True)
    (root / "templates").mkdir(exist_ok=True)
    (root / "templates/t.yaml.j2").write_text("{{ config | to_yaml }}\n")
    spec = root / "specs/big.yaml"
    spec.write_text(BIG_SPEC.format(lrs=lr_values, betas=beta_values, seeds=list(range(1, seeds + 1))))
    result = CliRunner().invoke(main, ["render", str(spec)])
    assert result.exit_code == 0, result.output
    lock = json.loads((root / "generated/big/sweep.lock.json").read_text())
    rng = random.Random(0)
    for entry in lock["files"]:
        values = {"training.lr": 1.0e-5, "training.beta": 0.0, **entry["set"]}  # set: where it differs
        level = (
            0.5
            + 0.02 * lr_values.index(values["training.lr"])
            - 0.01 * beta_values.index(values["training.beta"])
            + rng.gauss(0, 0.01)
        )
        run = root / "runs/big" / entry["variant"]
        run.mkdir(parents=True, exist_ok=True)
        rows = [{"step": s, "eval_acc": level * s / steps, "loss": 1 / s} for s in range(1, steps + 1)]
        (run / "metrics.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
        (run / "summary.json").write_text(json.dumps({"final_reward": level, "steps": steps}))
    return root / "generated/big"


def compare_shaping(root: Path, *extra: str) -> tuple[str, dict[str, dict[str, str]]]:
    """`report --metric eval_acc --compare identity_lr1e-05 --no-plot` on make_shaping's sweep under
    ``root`` (the current folder), asserted to succeed: its stdout on one line, and statistics.csv's
    rows by group."""
    import csv

    args = ["report", "generated/shaping", "--metric", "eval_acc", "--compare", "identity_lr1e-05"]
    result = CliRunner().invoke(main, [*args, "--no-plot", *extra])
    assert result.exit_code == 0, result.output
    with (root / "runs/shaping/statistics.csv").open() as f:
        rows = {r["group"]: r for r in csv.DictReader(f)}
    return " ".join(result.stdout.split()), rows
