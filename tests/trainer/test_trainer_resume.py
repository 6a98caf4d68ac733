"""Resuming from any checkpoint gives the metrics of the uninterrupted run (timing keys aside):
inside the first pass over the prompts, in the second and third epoch, with num_iterations > 1, and
past a corrupt newest checkpoint (named, skipped with a warning, the previous complete one used).

The runs are tiny (6 prompts, 2 per step: an epoch is 3 steps; with num_iterations 2, 6 steps), so
every checkpoint of one uninterrupted run is kept and each resume starts from a copy of that run
cut back to one checkpoint: exactly what a run killed right after saving it leaves behind.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import yaml
from trainer_support import read_jsonl, tiny_dict, without_timing

from sweepgen_trainer.config import RunConfig

pytestmark = [pytest.mark.train, pytest.mark.slow]


def _data(out: Path, steps: int, iterations: int = 1) -> dict:
    return tiny_dict(
        out,
        grpo={"max_steps": steps, "beta": 0.02, "num_iterations": iterations},
        data={"max_prompts": 6},
        logging={"save_steps": iterations, "save_total_limit": None},
    )


def _train(data: dict) -> None:
    from sweepgen_trainer.run import run

    run(RunConfig.model_validate(data))


def _cut_back_to(src: Path, dst: Path, step: int) -> Path:
    """A copy of a finished run as a crash right after checkpoint-<step> would leave it."""
    shutil.copytree(src, dst)
    (dst / "summary.json").unlink()
    config = yaml.safe_load((dst / "config.yaml").read_text())
    (dst / "config.yaml").write_text(yaml.safe_dump({**config, "output_dir": str(dst)}))
    for ckpt in (dst / "checkpoints").iterdir():
        if ckpt.name.startswith("checkpoint-") and int(ckpt.name.rsplit("-", 1)[1]) > step:
            shutil.rmtree(ckpt)
    return dst


@pytest.mark.parametrize(
    ("iterations", "steps", "resume_at"),
    [
        (1, 9, (2, 4, 7)),  # epoch 1 (first pass), epoch 2 (steps 4-6), epoch 3 (steps 7-9)
        (2, 14, (6, 8, 12)),  # an epoch is 6 steps: a boundary, inside the 2nd, inside the 3rd
    ],
)
def test_resume_from_any_checkpoint_equals_the_uninterrupted_run(
    tiny_cache,
    tmp_path,
    iterations,
    steps,
    resume_at,
):
    straight = tmp_path / "straight"
    _train(_data(straight, steps, iterations))
    expected = without_timing(read_jsonl(straight / "metrics.jsonl"))
    assert [r["step"] for r in expected] == list(range(1, steps + 1))
    for step in resume_at:
        resumed = _cut_back_to(straight, tmp_path / f"from{step}", step)
        _train(_data(resumed, steps, iterations))
        got = without_timing(read_jsonl(resumed / "metrics.jsonl"))
        first_bad = next((r["step"] for r, e in zip(got, expected) if r != e), None)
        assert got == expected, f"resumed from checkpoint-{step}: first differing step {first_bad}"


@pytest.mark.parametrize("victim", ["model.safetensors", "optimizer.pt"])
def test_a_truncated_newest_checkpoint_is_named_skipped_and_the_previous_one_used(
    tiny_cache,
    tmp_path,
    victim,
):
    from sweepgen_trainer.run import run

    straight = tmp_path / "straight"
    _train(_data(straight, 8))
    resumed = _cut_back_to(straight, tmp_path / "cut", 7)
    broken = resumed / "checkpoints" / "checkpoint-7" / victim
    with broken.open("r+b") as fh:  # what a full disk or a killed copy leaves: the first part only
        fh.truncate(broken.stat().st_size // 2)
    lines: list[str] = []
    summary = run(RunConfig.model_validate(_data(resumed, 8)), echo=lines.append)
    warnings = [ln for ln in lines if ln.startswith("warning: skipping checkpoint")]
    assert len(warnings) == 1 and str(broken) in warnings[0] and "truncated" in warnings[0]
    assert summary["resumed_from"] == "checkpoint-6"
    got = without_timing(read_jsonl(resumed / "metrics.jsonl"))
    assert got == without_timing(read_jsonl(straight / "metrics.jsonl"))
