"""Benchmark: `sweepgen diff` in-process (per pair) and as a whole process (wall time, peak RSS).

Run: .venv/bin/python benchmarks/bench_diff.py [--pairs 500] [--repeat 5] [--baseline DIR]
Prints the diff corpus's per-pair in-process time (median and p95 over its pairs, this tree and the
baseline alike), the whole-process `sweepgen diff` on two 300-line launch scripts, on two OmegaConf files over
a two-level `defaults:` chain and on the shipped examples (alternating with a baseline source tree
when given); the shell reader at 1,000 / 10,000 / 40,000 lines; the per-pair cost of
sweepgen.readers.diff.diff on 150-leaf configs (and of the --allow gate on top), the AST read of an
mmdetection model file and the mmengine-style `_base_` resolution of a child config. Results go to
benchmarks/RESULTS.md by hand, with the machine they were measured on.
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

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from sweepgen.readers.diff import deepdiff_changes, diff, disallowed, parse_globs  # noqa: E402
from sweepgen.readers.python.pyast import read_python_file  # noqa: E402
from sweepgen.readers.python.pyinherit import load_with_bases  # noqa: E402

PYCONFIGS = ROOT / "tests" / "fixtures" / "pyconfigs"


def launch_script(lr: str, lines: int = 300) -> str:
    """A ``lines``-line launch script in the verl/OpenRLHF style: #SBATCH directives, exported
    variables, an argument array, a conditional, a heredoc, preprocessing commands and a
    `ray job submit -- python3 -m` launcher with Hydra overrides spread over one line each."""
    head = [
        "#!/bin/bash",
        "#SBATCH --job-name=grpo --nodes=4 --gres=gpu:8 --time=48:00:00",
        "set -euo pipefail",
        "export VLLM_ATTENTION_BACKEND=XFORMERS",
        f"LR={lr}; export LR",
        "MODEL=${MODEL:-Qwen/Qwen2.5-7B-Instruct}",
        'if [ -n "${DEBUG:-}" ]; then export NCCL_DEBUG=INFO; fi',
        "ARGS=(",
    ]
    body = [f"    algorithm.extra_{i}=value_{i}" for i in range(40)]
    mid = [
        ")",
        "read -r -d '' EVAL <<EOF",
        "python3 -m verl.trainer.main_eval data.path=out/eval.parquet",
        "EOF",
        "mkdir -p logs",
        "python scripts/prep.py --in data/raw --out data/train.parquet",
        'ray job submit --address="http://127.0.0.1:8265" --no-wait -- \\',
        "  python3 -m verl.trainer.main_ppo \\",
        '  actor_rollout_ref.model.path="$MODEL" \\',
        "  actor_rollout_ref.actor.optim.lr=$LR \\",
    ]
    used = len(head) + len(body) + len(mid) + 2
    overrides = [f"  trainer.section_{i // 10}.key_{i}={i * 0.5} \\" for i in range(lines - used)]
    tail = ['  "${ARGS[@]}" &>> logs/train.log', "$EVAL"]
    return "\n".join(head + body + mid + overrides + tail) + "\n"


def mmengine_tree(root: Path, depth: int) -> tuple[Path, Path]:
    """Two child configs over three levels of `_base_` files (child -> level 1 -> 2 -> 3)."""
    (root / "_base_").mkdir(parents=True)
    (root / "configs").mkdir()
    (root / "_base_" / "level3.py").write_text(
        "model = dict(type='RetinaNet', backbone=dict(type='ResNet', depth=50, num_stages=4,\n"
        "    out_indices=(0, 1, 2, 3), norm_cfg=dict(type='BN', requires_grad=True)),\n"
        "    neck=dict(type='FPN', in_channels=[256, 512, 1024, 2048], out_channels=256, num_outs=5))\n"
        + "".join(f"section_{i} = dict(a={i}, b='x{i}', c=[{i}, {i + 1}])\n" for i in range(60))
    )
    (root / "_base_" / "level2.py").write_text(
        "_base_ = './level3.py'\nmax_epochs = 12\n"
        "train_cfg = dict(type='EpochBasedTrainLoop', max_epochs=max_epochs, val_interval=1)\n"
        "train_pipeline = [dict(type='LoadImageFromFile'), dict(type='Resize', scale=(1333, 800))]\n"
    )
    (root / "_base_" / "level1.py").write_text(
        "_base_ = './level2.py'\n"
        "optim_wrapper = dict(type='OptimWrapper', optimizer=dict(type='SGD', lr=0.02, momentum=0.9))\n"
        "train_dataloader = dict(batch_size=2, dataset=dict(pipeline=_base_.train_pipeline))\n"
    )
    children = []
    for name, depth_value in (("a.py", 50), ("b.py", depth)):
        child = root / "configs" / name
        child.write_text(
            "_base_ = ['../_base_/level1.py']\n"
            f"model = dict(backbone=dict(depth={depth_value}))\n"
            "pipeline = _base_.train_pipeline\npipeline[1]['scale'] = (1000, 600)\n"
            "train_dataloader = dict(dataset=dict(pipeline=pipeline))\n"
        )
        children.append(child)
    return children[0], children[1]


def omegaconf_tree(root: Path) -> tuple[Path, Path]:
    """Two NeMo-RL-style configs over a two-level `defaults:` chain (child -> 1B -> base), each level
    with `${...}` interpolations, ~150 lines in all; the children differ in one override."""
    root.mkdir(parents=True)
    sections = "".join(
        f"section_{i}:\n  a: {i}\n  b: x{i}\n  lr: {i}e-5\n  ref: ${{section_{max(i - 1, 0)}.a}}\n"
        for i in range(25)
    )
    (root / "grpo_base.yaml").write_text(
        "policy:\n  model_name: Qwen/Qwen2.5-1.5B\n  max_total_sequence_length: 512\n"
        "  generation:\n    max_new_tokens: ${policy.max_total_sequence_length}\n"
        "  optimizer:\n    kwargs:\n      lr: 5e-6\n      eps: 1e-8\n" + sections
    )
    (root / "grpo_1B.yaml").write_text(
        "defaults: grpo_base.yaml\npolicy:\n  max_total_sequence_length: 1024\n"
        "logger:\n  name: run_${policy.model_name}_${policy.max_total_sequence_length}\n"
    )
    children = []
    for name, steps in (("a.yaml", 100), ("b.yaml", 200)):
        child = root / name
        child.write_text(
            f"defaults: grpo_1B.yaml\ngrpo:\n  max_num_steps: {steps}\n  home: ${{oc.env:HOME}}\n"
        )
        children.append(child)
    return children[0], children[1]


def shell_rows() -> None:
    """In-process read + diff of two launch scripts of 1,000, 10,000 and 40,000 lines: linear."""
    from sweepgen.readers.shell.shellconfig import read_shell

    for lines in (1_000, 10_000, 40_000):
        a, b = launch_script("1e-6", lines), launch_script("3e-6", lines)
        start = time.perf_counter()
        diff(read_shell(a, "a.sh").data, read_shell(b, "b.sh").data)
        seconds = time.perf_counter() - start
        per_line = seconds / lines * 1e6
        print(f"read + diff two {lines:6,}-line launch scripts: {seconds:6.2f} s ({per_line:5.1f} us/line)")


def config_150(changed: int = 0) -> dict:
    """10 sections x 15 leaves of mixed types; ``changed`` leaves differ (one a type change)."""
    cfg = {
        f"section{i}": {
            f"key{j}": (j * 0.5 if j % 3 == 0 else (f"value{j}" if j % 3 == 1 else j)) for j in range(15)
        }
        for i in range(10)
    }
    for n in range(changed):
        section = cfg[f"section{n % 10}"]
        section["key2"] = float(section["key2"]) if n == 0 else section["key2"] + 1
    return cfg


def per_call(fn, n: int) -> float:
    """Mean milliseconds per call over ``n`` calls (after one warm-up call)."""
    fn()
    start = time.perf_counter()
    for _ in range(n):
        fn()
    return (time.perf_counter() - start) / n * 1000


def measure(cmd: list[str], source: Path = ROOT) -> tuple[float, float, int]:
    """(wall seconds, peak RSS MiB, exit code) of one child process, via os.wait4, running the
    sweepgen found in ``source``."""
    start = time.perf_counter()
    env = {**os.environ, "PYTHONPATH": str(source)}
    proc = subprocess.Popen(cmd, cwd=source, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    return wall, usage.ru_maxrss / 1024, os.waitstatus_to_exitcode(status)


# One child process per source tree: every corpus pair compared in-process `repeat` times (after a
# warm-up), each pair's median kept; printed as JSON {pair: seconds}. CPU seconds of the process
# (time.process_time), not wall time: on a shared machine wall time measures the other sessions.
_CORPUS_TIMER = """
import json, statistics, sys, time
from pathlib import Path
from sweepgen.readers.compare import compare
corpus, repeat = Path(sys.argv[1]), int(sys.argv[2])
out = {}
for folder in sorted(p for p in corpus.iterdir() if p.is_dir() and not p.name.endswith("_error")):
    a = sorted(folder.rglob("a.*"))[0]
    b = a.with_name("b" + a.suffix)
    args = (folder / "args").read_text().split() if (folder / "args").exists() else []
    call = lambda: compare(str(a), str(b), resolve_bases="--resolve-bases" in args)
    try:
        call()
    except Exception:
        continue
    times = []
    for _ in range(repeat):
        start = time.process_time()
        call()
        times.append(time.process_time() - start)
    out[folder.name] = statistics.median(times)
print(json.dumps(out))
"""


def corpus_rows(sources: list[Path], repeat: int, rounds: int = 3) -> None:
    """Median and p95 over the diff corpus's pairs of each pair's in-process `compare` time, for
    this tree and the baseline on the same corpus (this tree's). The trees take turns, ``rounds``
    times each, and each pair keeps its fastest round: a loaded machine slows both trees alike."""
    import json

    corpus = ROOT / "tests" / "diff_corpus"
    best: dict[Path, dict[str, float]] = {source: {} for source in sources}
    for _ in range(rounds):
        for source in sources:
            env = {**os.environ, "PYTHONPATH": str(source)}
            done = subprocess.run(
                [sys.executable, "-c", _CORPUS_TIMER, str(corpus), str(repeat)],
                cwd=source, env=env, capture_output=True, text=True, check=True,
            )  # fmt: skip
            for pair, seconds in json.loads(done.stdout).items():
                best[source][pair] = min(seconds, best[source].get(pair, seconds))
    common = set.intersection(*(set(times) for times in best.values()))
    for source in sources:
        per_pair = sorted(best[source][pair] for pair in common)
        p95 = per_pair[min(len(per_pair) - 1, int(round(0.95 * (len(per_pair) - 1))))]
        label = "diff corpus, per pair, in-process CPU" + ("" if source == ROOT else " [baseline]")
        median = statistics.median(per_pair) * 1000
        print(f"{label:62s} median {median:6.2f} ms  p95 {p95 * 1000:6.2f} ms  ({len(per_pair)} pairs)")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--pairs", type=int, default=500)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument(
        "--baseline",
        type=Path,
        help="another source tree (e.g. `git archive main | tar -x -C DIR`): its whole-process rows are "
        "measured alternately with this tree's, so a loaded machine loads both alike",
    )
    args = parser.parse_args()

    sweep = "generated/reward_shaping_comparison"
    a, b = config_150(), config_150(changed=5)
    child = PYCONFIGS / "faster_rcnn" / "faster_rcnn_r101_fpn_2x_coco.py"
    # Whole processes first: a forked child's peak RSS counts the parent's memory at fork time, so
    # measure before this process imports deepdiff (numpy, pandas) for the in-process reference.
    with tempfile.TemporaryDirectory() as tmp:
        import json

        big_a, big_b = Path(tmp) / "a.json", Path(tmp) / "b.json"
        big_a.write_text(json.dumps(a))
        big_b.write_text(json.dumps(b))
        sh_a, sh_b = Path(tmp) / "a.sh", Path(tmp) / "b.sh"
        sh_a.write_text(launch_script("1e-6"))
        sh_b.write_text(launch_script("3e-6"))
        assert len(sh_a.read_text().splitlines()) == 300
        mm_a, mm_b = mmengine_tree(Path(tmp) / "mm", depth=101)
        oc_a, oc_b = omegaconf_tree(Path(tmp) / "oc")
        cases = {
            "diff two 300-line launch scripts": ["diff", str(sh_a), str(sh_b)],
            "diff --resolve-bases two OmegaConf files, 2-level defaults": [
                "diff",
                "--resolve-bases",
                str(oc_a),
                str(oc_b),
            ],
            "diff --resolve-bases two mmengine configs, 3 levels of bases": [
                "diff",
                "--resolve-bases",
                str(mm_a),
                str(mm_b),
            ],
            "sweepgen --help": ["--help"],
            "diff generated sweep_identity.py vs sweep_coma_advantage.py": [
                "diff",
                f"{sweep}/sweep_identity.py",
                f"{sweep}/sweep_coma_advantage.py",
            ],
            "diff two 150-leaf JSON files": ["diff", str(big_a), str(big_b)],
            "diff --resolve-bases mmdet r101_1x vs r101_2x": [
                "diff",
                "--resolve-bases",
                str(PYCONFIGS / "faster_rcnn" / "faster_rcnn_r101_fpn_1x_coco.py"),
                str(child),
            ],
            "diff spec.yaml:identity vs spec.yaml:coma_advantage": [
                "diff",
                "specs/reward_shaping.yaml:identity",
                "specs/reward_shaping.yaml:coma_advantage",
            ],
        }
        sources = [ROOT] + ([args.baseline.resolve()] if args.baseline else [])
        for label, argv in cases.items():
            runs: dict[Path, list[tuple[float, float, int]]] = {source: [] for source in sources}
            for _ in range(args.repeat):
                for source in sources:
                    runs[source].append(measure([sys.executable, "-m", "sweepgen", *argv], source))
            for source, done in runs.items():
                walls = sorted(r[0] for r in done)
                p95 = walls[min(len(walls) - 1, int(round(0.95 * (len(walls) - 1))))]
                rss = max(r[1] for r in done)
                who = "" if source == ROOT else " [baseline]"
                print(
                    f"{label + who:62s} median {statistics.median(walls):5.2f} s  p95 {p95:5.2f} s  "
                    f"min {walls[0]:5.2f} s  peak {rss:5.0f} MiB  exit {done[0][2]}"
                )
        corpus_rows(sources, args.repeat)

    shell_rows()
    globs = parse_globs(["section*.key2"])
    print(f"diff, 150-leaf pair, 5 changes:        {per_call(lambda: diff(a, b), args.pairs):7.2f} ms/pair")
    print(
        f"diff + --allow gate, same pair:        "
        f"{per_call(lambda: disallowed(diff(a, b), globs), args.pairs):7.2f} ms/pair"
    )
    equal = per_call(lambda: diff(a, config_150()), args.pairs)
    print(f"diff, 150-leaf pair, equal:            {equal:7.2f} ms/pair")
    print(
        f"deepdiff (the reference), same pair:   "
        f"{per_call(lambda: deepdiff_changes(a, b), args.pairs // 5):7.2f} ms/pair"
    )
    model = PYCONFIGS / "_base_" / "models" / "faster_rcnn_r50_fpn.py"
    print(f"AST read of faster_rcnn_r50_fpn.py:    {per_call(lambda: read_python_file(model), 200):7.2f} ms")
    print(f"_base_ resolution (4 bases, 2 levels): {per_call(lambda: load_with_bases(child), 100):7.2f} ms")


if __name__ == "__main__":
    main()
