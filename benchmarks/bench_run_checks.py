"""Benchmark: what `run`'s refusals before any run starts cost on a big TRL sweep, and what reading
TRL's source for the options it closes costs a `check`.

Run: .venv/bin/python benchmarks/bench_run_checks.py [--runs 1001] [--repeats 5]
Makes a scratch project of one TRL GRPO config (vLLM server mode, LoRA, W&B and Hub settings) swept
by `sweepgen init --grid` into ``--runs`` runs, then times, in process, each check `run` makes
before it starts a run of `--command 'trl grpo --config {config}' --gpus 0,1` (one vLLM server
shared, processes against GPUs, the program on PATH; shared output folders and Hub repositories
are claimed while the sweep loads),
and the whole `run --dry-run` as a process; then the cold source read of code_choices
(compile/schema/code_choices.py, code_guards.py) for GRPO's config and trainer modules. Results go to
benchmarks/RESULTS.md by hand, with the machine they were measured on.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

CONFIG = """\
model_name_or_path: Qwen/Qwen2.5-0.5B-Instruct
dataset_name: trl-lib/tldr
reward_funcs: [think_format_reward]
output_dir: out/grpo
learning_rate: 1.0e-6
beta: 0.04
loss_type: dr_grpo
scale_rewards: false
use_vllm: true
vllm_mode: colocate
use_peft: true
lora_r: 16
push_to_hub: false
report_to: tensorboard
num_processes: 1
seed: 1
"""


def _best(repeats: int, call: Callable[[], object]) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        call()
        times.append(time.perf_counter() - start)
    return min(times)


def _project(root: Path, runs: int) -> Path:
    (root / "grpo.yaml").write_text(CONFIG)
    values = ",".join(f"{1e-6 * (1 + i / runs):.9g}" for i in range(runs))
    subprocess.run(
        [
            sys.executable,
            "-m",
            "sweepgen",
            "init",
            "--from",
            "grpo.yaml",
            "--grid",
            f"learning_rate={values}",
        ],
        cwd=root,
        check=True,
        capture_output=True,
    )
    return root / "generated" / "grpo"


def _run_checks(sweep: Path, repeats: int) -> None:
    from sweepgen.run.core.plan.tasks import load_sweep
    from sweepgen.run.start import program, vllm_server
    from sweepgen.run.start.trl import trl_processes

    tasks = load_sweep(sweep).tasks
    argv = ("trl", "grpo", "--config", "{config}")
    print(f"{len(tasks)} runs")
    # shared output folders and Hub repositories are claimed while the sweep loads (OutputClaims)
    loading = _best(repeats, lambda: load_sweep(sweep))
    print(f"  load_sweep (lock, configs, shared outputs): {1e3 * loading:8.1f} ms")
    for name, call in (
        ("vllm_server.check", lambda: vllm_server.check(sweep, tasks, 2, "local")),
        ("trl_processes.check", lambda: trl_processes.check(sweep, argv, tasks, 1)),
        ("program.check_found", lambda: program.check_found(("sh", "-c", "true"))),
    ):
        try:
            took = _best(repeats, call)
        except Exception as err:  # noqa: BLE001 - a check refusing the scratch sweep is a result to print
            print(f"  {name}: {type(err).__name__}: {err}")
            continue
        print(f"  {name + ':':32s} {1e3 * took:8.2f} ms ({1e6 * took / len(tasks):6.1f} us a run)")
    dry = [sys.executable, "-m", "sweepgen", "run", str(sweep.relative_to(sweep.parent.parent))]
    dry += ["--command", "trl grpo --config {config}", "--gpus", "0,1", "--dry-run"]
    wall = _best(
        repeats, lambda: subprocess.run(dry, cwd=sweep.parent.parent, check=True, capture_output=True)
    )
    print(f"  `run --dry-run --gpus 0,1` as a process: {wall:.2f} s")


def _source_read(repeats: int) -> None:
    import trl.trainer.grpo_config  # noqa: F401 - imported by any schema build anyway: not timed

    from sweepgen.compile.schema import code_choices

    def cold() -> None:
        code_choices._tree.cache_clear()
        code_choices._found_in_module.cache_clear()
        code_choices.closed_in(["trl.trainer.grpo_config"], ["loss_type"])

    print(f"code_choices, GRPO config + trainer + VLLMGeneration, cold: {1e3 * _best(repeats, cold):.0f} ms")
    code_choices.closed_in(["trl.trainer.grpo_config"], ["loss_type"])
    warm = _best(repeats, lambda: code_choices.closed_in(["trl.trainer.grpo_config"], ["loss_type"]))
    print(f"  again in the same process (cached): {1e3 * warm:.2f} ms")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=1001)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    print(f"load average {os.getloadavg()[0]:.1f}; {os.cpu_count()} CPUs")
    here = os.getcwd()
    with tempfile.TemporaryDirectory() as folder:
        os.chdir(folder)
        _run_checks(_project(Path(folder), args.runs), args.repeats)
        os.chdir(here)
    _source_read(args.repeats)
    print(f"(each figure is the best of {args.repeats})")


if __name__ == "__main__":
    main()
