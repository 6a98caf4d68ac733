"""Benchmark: whole-process `sweepgen render` / `check` on a 150-leaf base x 10,000-variant grid.

Run: .venv/bin/python benchmarks/bench_render.py [--variants 10000] [--schema]
Prints wall time and peak RSS of each command (measured with os.wait4 on the child process), the
start-up time of `sweepgen --help`, and the per-pair cost of deepdiff vs the fast gate.
Results go to benchmarks/RESULTS.md by hand, with the machine they were measured on.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench_compile_scale import spec_text  # the same 150-leaf project, one definition

ROOT = Path(__file__).resolve().parent.parent
SWEEPGEN = [sys.executable, "-m", "sweepgen"]


def make_project(folder: Path, n_variants: int, with_schema: bool) -> None:
    """10 sections x 15 leaves = 150 leaves; 2 named variants x grid (seed x lr) = n_variants."""
    lines = spec_text(n_variants, "bench.yaml.j2").rstrip("\n").split("\n")
    if with_schema:
        lines.append("schema: bench_schema:BenchConfig")
        fields = "\n".join(
            f"class Section{i}(BaseModel):\n    model_config = ConfigDict(extra='forbid')\n"
            + "\n".join(
                f"    key{j}: {'float' if j % 3 == 0 else ('str' if j % 3 == 1 else 'int')}"
                for j in range(15)
            )
            for i in range(10)
        )
        (folder / "bench_schema.py").write_text(
            "from pydantic import BaseModel, ConfigDict\n\n" + fields + "\n\nclass BenchConfig(BaseModel):\n"
            "    model_config = ConfigDict(extra='forbid')\n"
            + "\n".join(f"    section{i}: Section{i}" for i in range(10))
            + "\n"
        )
    (folder / "specs").mkdir()
    (folder / "templates").mkdir()
    (folder / "specs" / "bench.yaml").write_text("\n".join(lines) + "\n")
    (folder / "templates" / "bench.yaml.j2").write_text("run: {{ variant.name }}\n{{ config | to_yaml }}\n")


def measure(cmd: list[str], cwd: Path) -> tuple[float, float, int, float]:
    """(wall seconds, peak RSS MiB, exit code, CPU seconds user+sys) of one child process.

    CPU time is reported too because wall time on a shared, loaded machine overstates the cost."""
    env = dict(os.environ, PYTHONPATH=f"{ROOT}{os.pathsep}{cwd}")  # this checkout + the bench schema module
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    if status != 0:
        print(proc.stderr.read().decode()[-2000:], file=sys.stderr)
    return wall, usage.ru_maxrss / 1024, os.waitstatus_to_exitcode(status), usage.ru_utime + usage.ru_stime


def pair_costs(folder: Path) -> tuple[float, float]:
    """Seconds per variant for deepdiff(base, variant) and for the fast gate."""
    sys.path.insert(0, str(ROOT))
    cwd = os.getcwd()
    os.chdir(folder)
    try:
        from deepdiff import DeepDiff

        from sweepgen import paths
        from sweepgen.compile.api import load_and_expand

        expansion = load_and_expand("specs/bench.yaml")
        base = expansion.spec.base
        sample = expansion.variants[:300]
        t0 = time.perf_counter()
        for v in sample:
            DeepDiff(base, v.config)
        deep = (time.perf_counter() - t0) / len(sample)
        t0 = time.perf_counter()
        for v in expansion.variants:
            paths.diff_at(base, v.config, v.touched)
        fast = (time.perf_counter() - t0) / len(expansion.variants)
        return deep, fast
    finally:
        os.chdir(cwd)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--variants", type=int, default=10_000)
    parser.add_argument("--schema", action="store_true", help="validate every variant with a pydantic model")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    print(f"load average before: {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
    folder = Path(tempfile.mkdtemp(prefix="sweepgen-bench-"))
    try:
        make_project(folder, args.variants, args.schema)
        rows = []
        for i in range(args.repeat):
            # a new output folder per repeat: deleting 10,000 files just before rendering would
            # charge the file system's clean-up (ext4 online discard here) to the render
            out = ["-o", f"generated{i}"]
            help_t = measure(SWEEPGEN + ["--help"], folder)
            first = measure(SWEEPGEN + ["render", "specs/bench.yaml", *out], folder)
            again = measure(SWEEPGEN + ["render", "specs/bench.yaml", *out], folder)
            check = measure(SWEEPGEN + ["check", "specs/bench.yaml", *out], folder)
            rows.append((help_t, first, again, check))
        n_files = len(list((folder / "generated0" / "bench").glob("*.yaml")))
        print(f"variants rendered: {n_files}  (schema: {'pydantic' if args.schema else 'none'})")
        for label, i in (
            ("sweepgen --help", 0),
            ("render (fresh)", 1),
            ("render (unchanged)", 2),
            ("check", 3),
        ):
            walls = sorted(r[i][0] for r in rows)
            rss = max(r[i][1] for r in rows)
            codes = {r[i][2] for r in rows}
            cpu = sorted(r[i][3] for r in rows)
            print(
                f"{label:20s} wall median {walls[len(walls) // 2]:.2f} s "
                f"(min {walls[0]:.2f}, max {walls[-1]:.2f})  "
                f"CPU median {cpu[len(cpu) // 2]:.2f} s  peak RSS {rss:.0f} MiB  exit {codes}"
            )
        deep, fast = pair_costs(folder)
        print(
            f"deepdiff per 150-leaf pair: {deep * 1e3:.2f} ms "
            f"(x{args.variants} = {deep * args.variants:.1f} s); "
            f"fast gate per variant: {fast * 1e6:.1f} us (x{args.variants} = {fast * args.variants:.2f} s)"
        )
    finally:
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
