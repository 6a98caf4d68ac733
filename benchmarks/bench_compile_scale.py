"""Benchmark: the compiler at scale, every row of the "compile at scale" goals in one table.

A 150-leaf base (10 sections x 15 leaves) and a grid of N variants (2 named variants x seed x lr),
rendered through three kinds of template:

* ``tojson``: hand-written, every leaf through ``tojson`` (how real YAML/Python templates look);
* ``python``: a Python sweep file shaped like templates/flink_sweep.py.j2 (nested constructor calls,
  ``pyrepr`` per leaf);
* ``to_yaml``: ``{{ config | to_yaml }}``.

Each command runs as its own process (``python -m sweepgen``); wall time and peak RSS come from
os.wait4. Rows: cold render (empty output folder), render with nothing changed, check with nothing
changed, ``check --full``, ``check`` under ``CI=true`` (never trusts the lock without rendering, see
sweepgen/compile/output/lockfile/lock_digest.py), and the lock's size.

Usage (from the repo root)::

    python benchmarks/bench_compile_scale.py                       # 10,000 variants, all templates
    python benchmarks/bench_compile_scale.py --variants 100000 --templates to_yaml --repeat 1
    python benchmarks/bench_compile_scale.py --baseline /path/to/other/checkout   # old vs this tree

With ``--baseline``, every repeat runs the rows for the other checkout and for this one, in turn (in
fresh projects), so both see the same machine state, and checks that both wrote the same files and
lock bytes. Read CPU time (user + system of the command and its render workers) where the machine is
shared: wall time then measures the other load as much as sweepgen.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def base_sections() -> dict[str, dict[str, object]]:
    sections: dict[str, dict[str, object]] = {
        f"section{i}": {
            f"key{j}": (j * 0.5 if j % 3 == 0 else (f"value{j}" if j % 3 == 1 else j)) for j in range(15)
        }
        for i in range(10)
    }
    sections["section0"]["key1"] = "identity"
    return sections


def spec_text(n_variants: int, template: str) -> str:
    lines = [
        "sweepgen: 1",
        "name: bench",
        f"template: ../templates/{template}",
        f'output: "{{{{ variant.name }}}}.{"py" if template.endswith(".py.j2") else "yaml"}"',
        "base:",
    ]
    for name, leaves in base_sections().items():
        lines.append(f"  {name}:")
        lines.extend(f"    {k}: {v!r}" if isinstance(v, str) else f"    {k}: {v}" for k, v in leaves.items())
    per_variant = n_variants // 2
    seeds = 100 if per_variant >= 100 else per_variant
    lrs = max(1, per_variant // seeds)
    lines += [
        "variants:",
        "  a: {}",
        "  b: {section0.key1: shaped}",
        "grid:",
        f"  section1.key2: {list(range(seeds))}",
        f"  section2.key3: {[round(1e-6 * (i + 1), 9) for i in range(lrs)]}",
        "allow: [section0.key1]",
        "constraints:",
        "  - {expr: 'section3.key0 == 0.0', message: a rule evaluated for every variant}",
    ]
    return "\n".join(lines) + "\n"


def tojson_template() -> str:
    out = ["# every leaf through tojson, as hand-written YAML templates do", "run: {{ variant.name }}"]
    for name, leaves in base_sections().items():
        out.append(f"{name}:")
        out.extend(f"  {k}: {{{{ {name}.{k} | tojson }}}}" for k in leaves)
    return "\n".join(out) + "\n"


def python_template() -> str:
    out = [
        "from flink.sweep import Sweep, Config, Section",
        "",
        "sweep = Sweep(",
        "    name={{ variant.name | pyrepr }},",
        "    config=Config(",
    ]
    for name, leaves in base_sections().items():
        out.append(f"        {name}=Section(")
        out.extend(f"            {k}={{{{ {name}.{k} | pyrepr }}}}," for k in leaves)
        out.append("        ),")
    out += ["    ),", ")"]
    return "\n".join(out) + "\n"


TEMPLATES = {
    "tojson": ("bench_tojson.yaml.j2", tojson_template),
    "python": ("bench_sweep.py.j2", python_template),
    "to_yaml": ("bench_to_yaml.yaml.j2", lambda: "run: {{ variant.name }}\n{{ config | to_yaml }}\n"),
}


def measure(
    args: list[str], cwd: Path, *, ci: bool = False, tree: Path = ROOT
) -> tuple[float, float, int, float, float]:
    """(wall s, peak RSS MiB, exit code, user CPU s, system CPU s) of ``python -m sweepgen ARGS`` as
    its own process (the peak is the largest of it and its render workers).

    CPU time (user + system, the render's worker processes included) is reported too: on a loaded
    machine wall time overstates the cost, and CPU time is what the work takes."""
    env = dict(os.environ, PYTHONPATH=str(tree))
    env.pop("CI", None)  # CI=true turns check's fast path off: measured as its own row
    if ci:
        env["CI"] = "true"
    start = time.perf_counter()
    proc = subprocess.Popen(
        [sys.executable, "-m", "sweepgen", *args],
        cwd=cwd,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        env=env,
    )
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    code = os.waitstatus_to_exitcode(status)
    if code not in (0, 1):
        sys.exit(f"sweepgen {' '.join(args)} failed ({code}):\n{proc.stderr.read().decode()[-3000:]}")
    return wall, usage.ru_maxrss / 1024, code, usage.ru_utime, usage.ru_stime


def tree_digest(folder: Path) -> str:
    """sha256 over every generated file's path and bytes (the lock included)."""
    digest = hashlib.sha256()
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        digest.update(str(path.relative_to(folder)).encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()


def bench(kind: str, n: int, repeat: int, trees: dict[str, Path]) -> dict[str, object]:
    # Every project is deleted at the end, not after its rows: on this VM's ext4 (mounted with
    # `discard`) creating 100,000 files right after deleting 100,000 cost 2-10x the system time,
    # which measured the previous row's clean-up, not the render.
    folders: list[Path] = []
    try:
        return _bench(kind, n, repeat, trees, folders)
    finally:
        for folder in folders:
            shutil.rmtree(folder)  # our own temporary projects only


def _bench(kind: str, n: int, repeat: int, trees: dict[str, Path], folders: list[Path]) -> dict[str, object]:
    filename, make = TEMPLATES[kind]
    rows: dict[tuple[str, str], list[tuple[float, float, int, float, float]]] = {}
    lock_mb = 0.0
    same = True
    for i in range(repeat):
        digests = set()
        order = list(trees.items()) if i % 2 == 0 else list(reversed(trees.items()))
        for label_tree, tree in order:
            folder = Path(tempfile.mkdtemp(prefix="bench_scale_"))
            folders.append(folder)
            (folder / "specs").mkdir()
            (folder / "templates").mkdir()
            (folder / "templates" / filename).write_text(make())
            (folder / "specs" / "bench.yaml").write_text(spec_text(n, filename))
            spec = "specs/bench.yaml"
            for label, args in (
                ("cold render", ["render", spec]),
                ("render, nothing changed", ["render", spec]),
                ("check, nothing changed", ["check", spec]),
                ("check --full", ["check", "--full", spec]),
                ("check under CI=true, nothing changed", ["check", spec]),
            ):
                rows.setdefault((label, label_tree), []).append(
                    measure(args, folder, ci=label.startswith("check under CI"), tree=tree)
                )
                if label == "cold render" and len(trees) > 1:
                    digests.add(tree_digest(folder / "generated"))
            lock_mb = (folder / "generated" / "bench" / "sweep.lock.json").stat().st_size / 1e6
        same = same and len(digests) <= 1
    return {"kind": kind, "rows": rows, "lock_mb": lock_mb, "same": same}


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--variants", type=int, default=10_000)
    parser.add_argument("--templates", default="tojson,python,to_yaml")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--baseline", type=Path, help="another checkout (e.g. main) measured in turn")
    args = parser.parse_args()
    trees = {"this": ROOT} if args.baseline is None else {"baseline": args.baseline.resolve(), "this": ROOT}
    load = os.getloadavg()[0]
    results = [bench(kind, args.variants, args.repeat, trees) for kind in args.templates.split(",")]
    print(
        f"machine: {platform.machine()}, {os.cpu_count()} CPUs, Python {platform.python_version()}; "
        f"{args.variants} variants x 150 leaves; {args.repeat} repeat(s); load average before "
        f"{load:.1f}, after {os.getloadavg()[0]:.1f}"
        + (f"; baseline = {args.baseline}" if args.baseline else "")
    )
    print(
        "| template | measure | tree | wall s median (min-max) | CPU s (user+sys) median "
        "| user / sys s median | peak RSS MiB |"
    )
    print("|---|---|---|---:|---:|---:|---:|")
    for res in results:
        for (label, tree), runs in res["rows"].items():  # type: ignore[attr-defined]
            walls = sorted(r[0] for r in runs)
            rss = max(r[1] for r in runs)
            spread = f"{walls[0]:.2f}-{walls[-1]:.2f}"
            cpu = statistics.median(r[3] + r[4] for r in runs)
            user, system = statistics.median(r[3] for r in runs), statistics.median(r[4] for r in runs)
            wall = statistics.median(walls)
            print(
                f"| {res['kind']} | {label} | {tree} | {wall:.2f} ({spread}) | {cpu:.2f} "
                f"| {user:.2f} / {system:.2f} | {rss:.0f} |"
            )
        print(f"| {res['kind']} | lock size | | {res['lock_mb']:.2f} MB | | | |")
        if len(trees) > 1:
            same = "yes" if res["same"] else "NO"
            print(f"| {res['kind']} | same files and lock bytes in both trees | | {same} | | | |")


if __name__ == "__main__":
    main()
