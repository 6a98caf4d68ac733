"""A fast stand-in trainer for search tests and the search benchmark: a known objective plus seeded
noise, its curve logged to metrics.jsonl step by step.

Usage: python search_fake_trainer.py CONFIG.yaml. The config holds ``x`` and ``y`` (the searched
values), ``steps``, ``step_s`` (seconds per step), ``seed``, ``noise`` and ``output_dir``. The score at
step s is ``objective(x, y) * (1 - exp(-s / 5))`` plus noise; its final value is ``objective`` plus
noise, so the best point (x = 0.3, y = 0.7) is known. SIGTERM saves a checkpoint (the step reached)
and exits 143; a restart resumes from it. ``summary.json`` is written last, atomically.
"""

from __future__ import annotations

import json
import math
import os
import random
import signal
import sys
import time

import yaml

BEST = (0.3, 0.7)


def objective(x: float, y: float) -> float:
    return 1.0 - (x - BEST[0]) ** 2 - (y - BEST[1]) ** 2


def curve(x: float, y: float, step: int, seed: int, noise: float) -> float:
    jitter = random.Random(seed * 100_003 + step).gauss(0.0, noise) if noise else 0.0
    return objective(x, y) * (1.0 - math.exp(-step / 5.0)) + jitter


def main(path: str) -> int:
    with open(path, encoding="utf-8") as fh:
        cfg = yaml.safe_load(fh)
    out = cfg["output_dir"]
    os.makedirs(out, exist_ok=True)
    ckpt = os.path.join(out, "checkpoint.json")
    start = json.load(open(ckpt))["step"] if os.path.exists(ckpt) else 0
    stop = {"now": False}
    signal.signal(signal.SIGTERM, lambda *_: stop.update(now=True))
    step = start
    with open(os.path.join(out, "metrics.jsonl"), "a", encoding="utf-8") as log:
        while step < cfg["steps"]:
            if stop["now"]:
                with open(ckpt + ".tmp", "w") as fh:
                    json.dump({"step": step}, fh)
                os.replace(ckpt + ".tmp", ckpt)
                return 143
            time.sleep(cfg["step_s"])
            step += 1
            score = curve(cfg["x"], cfg["y"], step, cfg["seed"], cfg["noise"])
            log.write(json.dumps({"step": step, "score": score}) + "\n")
            log.flush()
    with open(os.path.join(out, "summary.json.tmp"), "w") as fh:
        json.dump({"steps": step, "score": score}, fh)
    os.replace(os.path.join(out, "summary.json.tmp"), os.path.join(out, "summary.json"))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
