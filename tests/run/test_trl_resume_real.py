"""A `trl grpo` run killed midway and started again by `run --rerun-failed` resumes from its newest
complete checkpoint, as TRL resumes it by hand (`--resume_from_checkpoint <output_dir>/checkpoint-N`):
TRL 1.16's own script trains the tiny test model on CPU, killed for real (SIGKILL) after its
checkpoint-2, then resumed."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

import pytest
from run_support import make_config_sweep

pytestmark = pytest.mark.train  # TRL's script trains; the oracle is its own trainer state

# the run's reward: records the step each call is made at, and kills its process (SIGKILL, no
# checkpoint saved on the way out) at step 3 while the file `kill` is there
REWARD = """\
import json, os, signal

def reward(completions, trainer_state, **kwargs):
    with open("calls.jsonl", "a") as fh:
        fh.write(json.dumps({"step": trainer_state.global_step, "pid": os.getpid()}) + "\\n")
    if trainer_state.global_step >= 2 and os.path.exists("kill"):
        os.kill(os.getpid(), signal.SIGKILL)
    return [float(len(c)) for c in completions]
"""


def _sweepgen(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    return subprocess.run(
        [sys.executable, "-m", "sweepgen", *args], env=env, capture_output=True, text=True, timeout=600
    )


def test_a_trl_run_killed_after_a_checkpoint_resumes_there_when_rerun(tiny_cache, tmp_path, monkeypatch):
    from sweepgen_trainer.config import TinyModel
    from sweepgen_trainer.models import build_tiny_model

    monkeypatch.chdir(tmp_path)
    shutil.copytree(build_tiny_model(TinyModel()), tmp_path / "model")
    (tmp_path / "prompts").mkdir()
    rows = "".join(f'{{"prompt": "a b {i}"}}\n' for i in range(16))
    (tmp_path / "prompts" / "train.jsonl").write_text(rows)
    (tmp_path / "rw.py").write_text(REWARD)
    (tmp_path / "kill").write_text("")
    config = {
        "model_name_or_path": "model",
        "dataset_name": "prompts",
        "reward_funcs": ["rw.reward"],
        "output_dir": "runs/t/a",
        "max_steps": 4,
        "save_strategy": "steps",
        "save_steps": 2,
        "logging_steps": 1,
        "per_device_train_batch_size": 2,
        "num_generations": 2,
        "max_completion_length": 4,
        "use_cpu": True,
        "bf16": False,
        "report_to": "none",
        "seed": 0,
    }
    make_config_sweep(tmp_path, {"a": config}, sweep="t", values={"a": {}})
    command = ("--command", f"{sys.executable} -m trl.scripts.grpo --config {{config}}")

    killed = _sweepgen("run", "generated/t", *command)
    assert killed.returncode == 1, killed.stdout + killed.stderr
    run = tmp_path / "runs" / "t" / "a"
    assert (run / "checkpoint-2" / "trainer_state.json").is_file() and not (run / "checkpoint-4").exists()

    (tmp_path / "kill").unlink()
    again = _sweepgen("run", "generated/t", "--rerun-failed", *command)
    assert again.returncode == 0, again.stdout + again.stderr
    said = "a: resuming from runs/t/a/checkpoint-2, the newest complete checkpoint of attempt 1"
    assert said in again.stderr, again.stderr
    status = json.loads((run / "sweepgen_status.json").read_text())
    assert status["command"][-2:] == ["--resume_from_checkpoint", "runs/t/a/checkpoint-2"], status

    calls = [json.loads(line) for line in (tmp_path / "calls.jsonl").read_text().splitlines()]
    first_pid = calls[0]["pid"]
    resumed = [c["step"] for c in calls if c["pid"] != first_pid]
    assert resumed[0] == 2 and resumed == sorted(resumed), calls  # the second attempt begins at step 2
    state = json.loads((run / "checkpoint-4" / "trainer_state.json").read_text())
    logged = [row["step"] for row in state["log_history"] if "reward" in row]
    assert state["global_step"] == 4 and logged == [1, 2, 3, 4], state["log_history"]  # each step once
