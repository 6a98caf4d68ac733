"""Benchmark: what render's YAML 1.1/1.2 check of each rendered file costs.

Run: .venv/bin/python benchmarks/bench_yaml_dialects.py [--variants 10000] [--repeats 3]
Prints the scan's time per KB of a generated config, the cost of both parses when the scan flags a
file, and the CPU seconds of a serial in-process `render` of the 150-leaf project of
bench_compile_scale with the check and with the scan told that nothing is suspect.
Results go to benchmarks/RESULTS.md by hand, with the machine they were measured on.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

import yaml
from bench_compile_scale import spec_text  # the same 150-leaf project, one definition

from sweepgen.compile import api
from sweepgen.compile.output.verify import yaml_dialects
from sweepgen.formats import yamlio

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = next((ROOT / "generated" / "happy_grpo_cpu").glob("*.yaml")).read_text()


def per_call_us(call, repeats: int = 500) -> float:
    start = time.perf_counter()
    for _ in range(repeats):
        call()
    return (time.perf_counter() - start) / repeats * 1e6


def render_cpu(folder: Path, check: bool) -> float:
    real = yaml_dialects.suspect
    if not check:
        yaml_dialects.suspect = lambda text: False
    shutil.rmtree(folder / "generated", ignore_errors=True)
    try:
        start = time.process_time()
        api.render([str(folder / "specs" / "bench.yaml")], str(folder / "generated"))
        return time.process_time() - start
    finally:
        yaml_dialects.suspect = real


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--variants", type=int, default=10_000)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    kb = len(SAMPLE.encode()) / 1024
    scan = per_call_us(lambda: yaml_dialects.suspect(SAMPLE))
    both = per_call_us(
        lambda: (yaml.load(SAMPLE, Loader=yaml_dialects._LOADER), yamlio.loads(SAMPLE, "s")), 100
    )
    print(f"scan: {scan / kb:.1f} us per KB; both parses of a flagged file: {both / 1000:.2f} ms")
    os.environ["SWEEPGEN_WORKERS"] = "1"  # serial: process_time sees every render
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        (folder / "specs").mkdir()
        (folder / "templates").mkdir()
        (folder / "specs" / "bench.yaml").write_text(spec_text(args.variants, "bench.yaml.j2"))
        (folder / "templates" / "bench.yaml.j2").write_text("{{ config | to_yaml }}\n")
        cwd = os.getcwd()
        os.chdir(folder)
        try:
            for label, check in (("with the check", True), ("scan says nothing suspect", False)):
                runs = [render_cpu(folder, check) for _ in range(args.repeats)]
                shown = " / ".join(f"{r:.2f}" for r in runs)
                median = statistics.median(runs)
                print(f"render {args.variants} variants, {label}: CPU s {shown} (median {median:.2f})")
        finally:
            os.chdir(cwd)


if __name__ == "__main__":
    sys.exit(main())
