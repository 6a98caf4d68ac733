"""The bundled trainer under DDP, 2 CPU processes on gloo through torchrun: the global batch
is per-device batch × processes and the generation batch is split over the ranks as TRL does, the
logged metrics are TRL's gathered ones written once (rank 0), a 2-process run reaches the same
losses as 1 process with the same global batch, and a 2-process run killed mid-way resumes exactly."""

from __future__ import annotations

import importlib.util
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from trainer_support import read_jsonl, subprocess_env, tiny_dict, without_timing, write_config

from sweepgen.run.local.pgroup import descendants
from sweepgen_trainer.rundir.checkpoint_check import problem

pytestmark = pytest.mark.train

INVARIANT = Path(__file__).parent.parent / "fixtures" / "layout_invariant_trainer.py"
# every value TRL logs that depends on the model's updates (timing keys aside)
COMPARED = ("reward_mean", "reward_std", "kl", "loss", "entropy", "completion_length", "grad_norm")
COMPARED += ("num_tokens",)


def ddp_config(path: Path, out: str, *, per_device: int, steps: int) -> Path:
    data = tiny_dict(
        out,
        reward={"name": "sentence_length", "params": {"target_words": 4}},  # rewards vary from the start
        grpo={"batch_size": per_device, "max_steps": steps, "beta": 0.02},
        logging={"save_steps": 2},
    )
    return write_config(path, data)


def torchrun(procs: int, *argv: str) -> list[str]:
    return [
        sys.executable,
        "-m",
        "torch.distributed.run",
        "--standalone",
        "--nnodes",
        "1",
        "--nproc-per-node",
        str(procs),
        "--no-python",
        "--",
        *argv,
    ]


def run(cmd: list[str], cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return done


@pytest.fixture
def env(tiny_cache):
    return {**subprocess_env(tiny_cache), "TRL_EXPERIMENTAL_SILENCE": "1"}


def run_invariant_here(config: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The layout-invariant trainer on ``config`` in this process, one process as its own
    ``python -P layout_invariant_trainer.py CONFIG`` is (a trainer process more would be ~10 CPU-s
    of torch and TRL imports); the config's paths are relative to its folder, the working folder."""
    from sweepgen_trainer.run import run_config_file
    from sweepgen_trainer.training.grpo import SweepgenGRPOTrainer

    spec = importlib.util.spec_from_file_location("layout_invariant_trainer", INVARIANT)
    assert spec is not None and spec.loader is not None
    invariant = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(invariant)
    monkeypatch.setattr(SweepgenGRPOTrainer, "extra_init_kwargs", classmethod(invariant.rollout_kwargs))
    monkeypatch.setenv("TRL_EXPERIMENTAL_SILENCE", "1")
    monkeypatch.chdir(config.parent)
    run_config_file(config)


def test_two_processes_reach_the_losses_of_one_with_the_same_global_batch(env, tmp_path, monkeypatch):
    one = ddp_config(tmp_path / "one.yaml", "runs/one", per_device=16, steps=3)
    two = ddp_config(tmp_path / "two.yaml", "runs/two", per_device=8, steps=3)  # global 2 × 8 = 16
    run_invariant_here(one, monkeypatch)  # the one-process run
    done = run(torchrun(2, sys.executable, "-P", str(INVARIANT), str(two)), tmp_path, env)
    single, ddp = (read_jsonl(tmp_path / "runs" / r / "metrics.jsonl") for r in ("one", "two"))
    assert [r["step"] for r in ddp] == [1, 2, 3]  # one row a step: rank 0 alone writes
    assert done.stdout.count("step 1/3 ") == 1  # and alone prints
    for a, b in zip(single, ddp):
        for key in COMPARED:
            assert b[key] == pytest.approx(a[key], rel=1e-3, abs=1e-6), (a["step"], key, a[key], b[key])
    assert ddp[-1]["kl"] > 0 and any(abs(r["loss"]) > 1e-5 for r in ddp)  # the runs did move
    # the generation batch is split over the ranks and gathered: every completion of a step is logged
    samples = read_jsonl(tmp_path / "runs" / "two" / "samples.jsonl")
    assert [s["step"] for s in samples].count(1) == 16 and len(samples) == 3 * 16
    assert (tmp_path / "runs" / "two" / "summary.json").is_file()


@pytest.mark.slow
def test_a_killed_two_process_run_resumes_exactly(env, tmp_path):
    straight = ddp_config(tmp_path / "straight.yaml", "runs/straight", per_device=8, steps=4)
    killed = ddp_config(tmp_path / "killed.yaml", "runs/killed", per_device=8, steps=4)
    trainer = [sys.executable, "-P", "-m", "sweepgen_trainer"]
    run(torchrun(2, *trainer, str(straight)), tmp_path, env)
    proc = subprocess.Popen(
        torchrun(2, *trainer, str(killed)),
        cwd=tmp_path,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    saved = tmp_path / "runs" / "killed" / "checkpoints" / "checkpoint-2"
    first = saved / "trainer_state.json"

    def complete() -> bool:
        # rank 0 writes trainer_state.json while rank 1 may still be writing its RNG state: killed
        # then, the checkpoint is rightly skipped (the resume starts over, not from it)
        return all((saved / f"rng_state_{rank}.pth").is_file() for rank in (0, 1)) and problem(saved) is None

    deadline = time.monotonic() + 600
    while not complete() and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.02)
    for pid in [*descendants(proc.pid), proc.pid]:  # the ranks live in sessions of their own
        os.kill(pid, signal.SIGKILL)
    proc.wait()
    out = tmp_path / "runs" / "killed"
    assert first.exists() and not (out / "summary.json").exists(), "the run was not killed midway"
    done = run(torchrun(2, *trainer, str(killed)), tmp_path, env)
    assert done.stdout.count("# resuming from") == 1
    steps = [r["step"] for r in read_jsonl(out / "metrics.jsonl")]
    assert steps == [1, 2, 3, 4]  # no step lost, none doubled
    assert without_timing(read_jsonl(out / "metrics.jsonl")) == without_timing(
        read_jsonl(tmp_path / "runs" / "straight" / "metrics.jsonl")
    )
