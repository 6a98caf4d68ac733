"""One generation step of TRL's GRPOTrainer under each generation setting, back to back (issue 38).

Each variant is a set of ``grpo`` fields (e.g. ``{"cache_implementation": "static"}``) applied over one
run config; for each, a plain ``trl.GRPOTrainer`` is built from the same functions the bundled trainer
uses (``grpo_kwargs``, ``load_model_and_tokenizer``), and its own generation path
(``GRPOTrainer._generate_single_turn``: ``model.generate`` or continuous batching, with the
``GenerationConfig`` TRL built) samples one batch of completions. The variants alternate, A B A B ...,
so a load change on the machine hits all of them alike; the medians are printed with the load average.

    python benchmarks/make_gpu_models.py /tmp/models --only simplestories
    OMP_NUM_THREADS=1 python benchmarks/bench_generation.py --model /tmp/models/simplestories \
        --variant default='{}' --variant static='{"cache_implementation": "static"}' --repeats 5

``--profile NAME`` adds one cProfile of that variant's generation (the 25 functions with the most own
time) and the torch operators it dispatched per generated token.
"""

from __future__ import annotations

import argparse
import collections
import cProfile
import json
import os
import platform
import pstats
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")


def variant(text: str) -> tuple[str, dict[str, Any]]:
    name, sep, value = text.partition("=")
    if not sep or not name:
        raise argparse.ArgumentTypeError(f"--variant takes NAME=JSON, not {text!r}")
    settings = json.loads(value)
    if not isinstance(settings, dict):
        raise argparse.ArgumentTypeError(f"--variant {name}: a JSON object of grpo fields, not {value!r}")
    return name, settings


def build(args: argparse.Namespace, settings: dict[str, Any], out: Path) -> Any:
    """A plain trl.GRPOTrainer for the config with ``settings`` over its grpo section."""
    import trl
    from datasets import Dataset

    from sweepgen_trainer.config import RunConfig
    from sweepgen_trainer.data import read_rows
    from sweepgen_trainer.grpo_args import grpo_config_from, grpo_kwargs
    from sweepgen_trainer.models import ensure_model_dir, load_model_and_tokenizer
    from sweepgen_trainer.rewards import bind

    grpo = {
        "num_generations": args.generations,
        "batch_size": args.batch,
        "max_completion_length": args.completion_length,
        "max_steps": 1,
        "beta": 0.0,
        **({"bf16": True} if args.bf16 else {}),
        **settings,
    }
    model = {"path": args.model, **({"dtype": "bfloat16"} if args.bf16 else {})} if args.model else {}
    cfg = RunConfig.model_validate(
        {"run_name": "gen", "output_dir": str(out), "seed": 0, "grpo": grpo, "model": model}
    )
    model_obj, tokenizer = load_model_and_tokenizer(ensure_model_dir(cfg.model), cfg.model.dtype)
    _, rows, _ = read_rows(cfg.data)
    return trl.GRPOTrainer(
        model=model_obj,
        reward_funcs=[bind(cfg.reward.name, cfg.reward.params)],
        args=grpo_config_from(grpo_kwargs(cfg, str(out / "checkpoints"))),
        train_dataset=Dataset.from_list(rows),
        processing_class=tokenizer,
    )


def prompt_ids(trainer: Any, args: argparse.Namespace) -> list[list[int]]:
    """The batch TRL generates for: batch / generations prompts, each repeated generations times."""
    rows = trainer.train_dataset
    prompts = [rows[i]["prompt"] for i in range(args.batch // args.generations)]
    ids = [trainer.processing_class(p)["input_ids"] for p in prompts]
    return [one for one in ids for _ in range(args.generations)]


def generate_once(trainer: Any, ids: list[list[int]], generations: int) -> tuple[float, list[int]]:
    import torch

    cuda = torch.cuda.is_available()
    if cuda:
        torch.cuda.synchronize()
    t0 = time.perf_counter()
    completions, _ = trainer._generate_single_turn(ids, None, {}, generations)
    if cuda:
        torch.cuda.synchronize()
    return time.perf_counter() - t0, [len(c) for c in completions]


def profile(trainer: Any, ids: list[list[int]], generations: int) -> None:
    """cProfile's top own-time functions, and the torch operators dispatched per generated token."""
    from torch.profiler import ProfilerActivity
    from torch.profiler import profile as torch_profile

    with torch_profile(activities=[ProfilerActivity.CPU]) as prof:
        _, lengths = generate_once(trainer, ids, generations)
    ops = [
        e
        for e in prof.events()
        if e.name.startswith("aten::") and not (e.cpu_parent and e.cpu_parent.name.startswith("aten::"))
    ]
    steps = max(lengths)
    counts = collections.Counter(e.name for e in ops)
    print(f"\ntop-level torch operators per decode step: {len(ops) / steps:.0f} ({steps} steps)")
    print(", ".join(f"{name[6:]} {n / steps:.1f}" for name, n in counts.most_common(20)))
    pr = cProfile.Profile()
    pr.enable()
    generate_once(trainer, ids, generations)
    pr.disable()
    pstats.Stats(pr).sort_stats("tottime").print_stats(25)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--model", default=None, help="model folder (default: the built-in tiny model)")
    parser.add_argument("--batch", type=int, default=32)
    parser.add_argument("--generations", type=int, default=16)
    parser.add_argument("--completion-length", type=int, default=128)
    parser.add_argument("--bf16", action="store_true")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--variant", type=variant, action="append", default=[], metavar="NAME=JSON")
    parser.add_argument("--profile", default=None, metavar="NAME", help="also profile this variant")
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args()
    variants = dict(args.variant) or {"default": {}}
    load_before = os.getloadavg()[0]
    with tempfile.TemporaryDirectory(prefix="bench_gen_") as tmp:
        trainers = {name: build(args, settings, Path(tmp) / name) for name, settings in variants.items()}
        ids = prompt_ids(next(iter(trainers.values())), args)
        times: dict[str, list[float]] = {name: [] for name in trainers}
        lengths: dict[str, list[int]] = {name: [] for name in trainers}
        for trainer in trainers.values():
            generate_once(trainer, ids, args.generations)  # warm-up: first shapes, caches, allocator
        for _ in range(args.repeats):
            for name, trainer in trainers.items():
                seconds, got = generate_once(trainer, ids, args.generations)
                times[name].append(seconds)
                lengths[name].extend(got)
        if args.profile:
            profile(trainers[args.profile], ids, args.generations)
    print(
        f"\nmachine: {platform.machine()}, {os.cpu_count()} CPUs, Python {platform.python_version()}, "
        f"OMP_NUM_THREADS={os.environ.get('OMP_NUM_THREADS', 'unset')}, load average before/after "
        f"{load_before:.1f}/{os.getloadavg()[0]:.1f}; model {args.model or 'builtin:tiny'}, batch "
        f"{args.batch} ({args.generations} generations), <= {args.completion_length} tokens, "
        f"bf16={args.bf16}, "
        f"{args.repeats} alternating repeats after one warm-up each"
    )
    print("| variant | grpo settings | median s per generation | min | completion mean (max) |")
    print("|---|---|---:|---:|---|")
    results = []
    for name, settings in variants.items():
        med, low = statistics.median(times[name]), min(times[name])
        mean_len, max_len = statistics.fmean(lengths[name]), max(lengths[name])
        print(f"| {name} | `{json.dumps(settings)}` | {med:.3f} | {low:.3f} | {mean_len:.1f} ({max_len}) |")
        results.append(
            {
                "variant": name,
                "settings": settings,
                "seconds": times[name],
                "completion_mean": mean_len,
                "completion_max": max_len,
            }
        )
    if args.json:
        args.json.write_text(
            json.dumps(
                {
                    "config": vars(args) | {"json": None, "variant": None},
                    "load_before": load_before,
                    "results": results,
                },
                default=str,
            )
        )


if __name__ == "__main__":
    sys.exit(main())
