"""Benchmark: `expand` and `derive` in-process on the compile-at-scale spec (bench_compile_scale.py's
150-leaf base and grid), their time and the process's peak RSS after each.

Usage (from the repo root)::

    python benchmarks/bench_expand.py --variants 100000
"""

from __future__ import annotations

import argparse
import os
import resource
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import bench_compile_scale as scale

from sweepgen.compile.output.pipeline import variants_of
from sweepgen.compile.spec.model import load_spec
from sweepgen.compile.spec.variants.context import sweep_view
from sweepgen.compile.spec.variants.derive import derive
from sweepgen.compile.spec.variants.expand import expand


def peak_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--variants", type=int, default=100_000)
    args = parser.parse_args()
    filename, make = scale.TEMPLATES["to_yaml"]
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / "specs").mkdir()
        (root / "templates").mkdir()
        (root / "templates" / filename).write_text(make())
        (root / "specs" / "bench.yaml").write_text(scale.spec_text(args.variants, filename))
        os.chdir(root)
        spec = load_spec("specs/bench.yaml")
        sweep = sweep_view(spec, "specs/bench.yaml")
        start = time.perf_counter()
        expansion = expand(spec)
        expanded = time.perf_counter()
        derive(expansion, sweep)
        derived = time.perf_counter()
        print(
            f"{len(expansion.variants)} variants, collector on: expand {expanded - start:.2f} s, "
            f"derive {derived - expanded:.2f} s; peak RSS {peak_mib():.0f} MiB"
        )
        start = time.perf_counter()
        variants_of(spec, sweep, os.path.abspath("generated"))
        print(f"pipeline.variants_of (collector paused): {time.perf_counter() - start:.2f} s")
        print(f"load average {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
