"""A 4-run CPU sweep of the bundled trainer's tiny model, on Slurm against the local executor.

    OMP_NUM_THREADS=1 python benchmarks/bench_slurm.py [--steps 3] [--repeat 1]

Needs a running Slurm (``eval "$(sudo bash ci/slurm/slurm_up.sh)"`` starts a one-node cluster) and
the [train,slurm] extras. Each repetition renders the same 4-seed spec into a fresh temporary folder
and runs it twice: `sweepgen run --executor slurm` (returns at submission; the runs are then timed
from their summary.json files) and `sweepgen run --executor local -j N` with N = the Slurm node's
CPUs, so both have the same number of runs going at once. It prints a Markdown table with:

- submit: how long the `sweepgen run` command takes to return (Slurm: submission only);
- first result: from the command's start to the first summary.json (a run finished);
- total: from the command's start to the last summary.json.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

SPEC = """\
sweepgen: 1
name: bench_slurm
template: ../templates/run.yaml.j2
output: "{{ variant.name }}.yaml"
run_name: "{{ variant.name }}"
schema: sweepgen_trainer.config:RunConfig
base:
  run_name: base
  output_dir: runs/bench_slurm/base
  seed: 0
  reward: {name: happy_count, params: {cap: 4}}
  grpo: {learning_rate: 5.0e-3, lr_scheduler_type: constant, num_generations: 4, batch_size: 8,
         max_steps: %(steps)d, max_completion_length: 8, beta: 0.0}
  logging: {save_steps: 1000}
variants:
%(variants)s
allow: [seed, run_name, output_dir]
resources: {time: 30, cpus_per_run: 1}
"""
RUNS = [f"s{i}" for i in range(4)]


def node_cpus() -> int:
    out = subprocess.run(["sinfo", "-h", "-o", "%c"], capture_output=True, text=True, check=True).stdout
    return int(out.split()[0].rstrip("+"))


def prepare(root: Path, steps: int) -> None:
    variants = "\n".join(
        f"  {n}: {{seed: {i}, run_name: {n}, output_dir: runs/bench_slurm/{n}}}" for i, n in enumerate(RUNS)
    )
    (root / "specs").mkdir(parents=True)
    (root / "templates").mkdir()
    (root / "specs" / "bench.yaml").write_text(SPEC % {"steps": steps, "variants": variants})
    (root / "templates" / "run.yaml.j2").write_text("{{ config | to_yaml }}\n")
    subprocess.run(
        [sys.executable, "-m", "sweepgen", "render", "specs/bench.yaml"],
        cwd=root,
        check=True,
        stdout=subprocess.DEVNULL,
    )


def timed_sweep(root: Path, args: list[str], timeout: float = 900) -> dict[str, float]:
    summaries = [root / "runs" / "bench_slurm" / n / "summary.json" for n in RUNS]
    t0 = time.monotonic()
    proc = subprocess.Popen(
        [sys.executable, "-m", "sweepgen", "run", "generated/bench_slurm", *args],
        cwd=root,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    submit = first = None
    done: set[Path] = set()
    while len(done) < len(summaries):
        now = time.monotonic() - t0
        if submit is None and proc.poll() is not None:
            submit = now
            if proc.returncode not in (0,):
                raise SystemExit(f"sweepgen run {' '.join(args)} failed: {proc.stderr.read()}")
        done |= {p for p in summaries if p.exists()}
        if done and first is None:
            first = now
        if now > timeout:
            proc.kill()
            raise SystemExit(f"timed out after {timeout} s: {len(done)} of {len(summaries)} runs finished")
        time.sleep(0.05)
    total = time.monotonic() - t0
    proc.wait()
    return {"submit": submit if submit is not None else time.monotonic() - t0, "first": first, "total": total}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=3, help="GRPO steps per run")
    parser.add_argument("--repeat", type=int, default=1)
    args = parser.parse_args()
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    cpus = node_cpus()
    results: dict[str, list[dict[str, float]]] = {"slurm": [], "local": []}
    with tempfile.TemporaryDirectory(prefix="bench_slurm_") as tmp:
        # one model cache for all runs, built before timing (both executors would otherwise race to it)
        os.environ["SWEEPGEN_CACHE"] = str(Path(tmp) / "cache")
        warm = Path(tmp) / "warm"
        prepare(warm, 1)
        subprocess.run(
            [sys.executable, "-m", "sweepgen", "run", "generated/bench_slurm", "--only", "s0"],
            cwd=warm,
            check=True,
            stdout=subprocess.DEVNULL,
        )
        for rep in range(args.repeat):
            for executor, extra in (("slurm", ["--executor", "slurm"]), ("local", ["-j", str(cpus)])):
                root = Path(tmp) / f"{executor}{rep}"
                prepare(root, args.steps)
                results[executor].append(timed_sweep(root, extra))
                print(executor, rep, results[executor][-1], file=sys.stderr, flush=True)
    print(
        f"4 runs × {args.steps} GRPO steps, tiny model, {cpus} runs at once, {args.repeat} repetition(s), "
        "median seconds:\n"
    )
    print("| executor | command returns | first result | all 4 finished |")
    print("|---|---|---|---|")
    for executor, rows in results.items():
        med = {k: statistics.median(r[k] for r in rows) for k in ("submit", "first", "total")}
        print(f"| {executor} | {med['submit']:.2f} | {med['first']:.1f} | {med['total']:.1f} |")


if __name__ == "__main__":
    main()
