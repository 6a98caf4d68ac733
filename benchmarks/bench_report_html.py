"""Benchmark: `sweepgen report --html` of 1,000 runs x 1,000 logged steps.

Run: .venv/bin/python benchmarks/bench_report_html.py [--runs 1000] [--steps 1000] [--repeat 3]
Renders a 10 x 10 x 10 (lr x beta x seed) sweep into a temporary project, writes every run's
metrics.jsonl (eval_acc, loss, reward_mean at each step) and summary.json by hand, then times the
whole `sweepgen report DIR --metric eval_acc --html` process (wall), reports the page's size, and
loads the page from its file:// URL in headless Chromium (Debian's chromium through playwright),
timing navigation until the page's script has drawn every view. Goals (issue 22): < 10 s, < 20 MB,
< 3 s to load. Results go to benchmarks/RESULTS.md by hand, with the machine they were measured on.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

SPEC = """\
sweepgen: 1
name: big
template: ../templates/t.yaml.j2
output: "{{{{ variant.name }}}}.yaml"
derived:
  output_dir: "runs/big/{{{{ variant.name }}}}"
base:
  output_dir: null
  training: {{seed: 0, lr: 1.0e-5, beta: 0.0}}
grid:
  training.lr: {lrs}
  training.beta: {betas}
  training.seed: {seeds}
seed: training.seed
"""


def make_project(root: Path, runs: int, steps: int) -> Path:
    side = round(runs ** (1 / 3))
    lrs = [float(f"{10 ** (-6 + 3 * i / (side - 1)):.3g}") for i in range(side)]
    betas = [round(0.01 * i, 3) for i in range(side)]
    (root / "specs").mkdir(parents=True)
    (root / "templates").mkdir()
    (root / "templates/t.yaml.j2").write_text("{{ config | to_yaml }}\n")
    spec = root / "specs/big.yaml"
    spec.write_text(SPEC.format(lrs=lrs, betas=betas, seeds=list(range(1, side + 1))))
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    subprocess.run([sys.executable, "-m", "sweepgen", "render", str(spec)], cwd=root, env=env, check=True)
    lock = json.loads((root / "generated/big/sweep.lock.json").read_text())
    rng = random.Random(0)
    for entry in lock["files"]:
        run = root / "runs/big" / entry["variant"]
        run.mkdir(parents=True)
        level = rng.random()
        lines = [
            json.dumps(
                {
                    "step": s,
                    "eval_acc": level * s / steps,
                    "loss": 1 / s,
                    "reward_mean": level * math.sqrt(s / steps),
                }
            )
            for s in range(1, steps + 1)
        ]
        (run / "metrics.jsonl").write_text("\n".join(lines) + "\n")
        (run / "summary.json").write_text(json.dumps({"final_reward": level, "steps": steps}))
    return root / "generated/big"


def load_seconds(page: Path) -> tuple[float, float, float]:
    """(navigation until the page has drawn its views, as the test harness sees it; the page's own
    clock at that point, from navigation start; then scrolling to the parallel coordinates until
    they are drawn: the one WebGL view, drawn when it comes near the screen)."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        browser = pw.chromium.launch(
            executable_path="/usr/bin/chromium", headless=True, args=["--no-sandbox"]
        )
        view = browser.new_page(viewport={"width": 1400, "height": 900})
        errors: list[str] = []
        view.on("pageerror", lambda e: errors.append(str(e)))
        start = time.perf_counter()
        view.goto(page.resolve().as_uri())
        view.wait_for_selector("body[data-ready='1']", timeout=60_000)
        took = time.perf_counter() - start
        drawn = float(view.evaluate("document.body.dataset.drawnMs")) / 1000
        start = time.perf_counter()
        view.locator("#parcoords").scroll_into_view_if_needed()
        view.wait_for_selector("body[data-parcoords='1']", timeout=60_000)
        parcoords = time.perf_counter() - start
        browser.close()
    if errors:
        raise SystemExit(f"page errors: {errors}")
    return took, drawn, parcoords


def _browser_cpu(profile_marker: str) -> float:
    """CPU seconds (user+sys) so far of every process whose command line holds ``profile_marker``
    (the temporary --user-data-dir playwright gives this browser: its browser, GPU and renderer
    processes), read from /proc."""
    tick = os.sysconf("SC_CLK_TCK")
    total = 0
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes()
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        if profile_marker.encode() in cmdline:
            fields = stat[stat.rindex(")") + 2 :].split()
            total += int(fields[11]) + int(fields[12])  # utime, stime
    return total / tick


def _profile_dir() -> str:
    """The --user-data-dir of the newest browser playwright started (each launch gets its own, and
    every process of that browser carries it on its command line)."""
    newest: tuple[float, str] | None = None
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            args = (entry / "cmdline").read_bytes().split(b"\0")
            started = entry.stat().st_ctime
        except OSError:
            continue
        for arg in args:
            ours = arg.startswith(b"--user-data-dir=") and b"playwright_chromiumdev_profile" in arg
            if ours and (newest is None or started > newest[0]):
                newest = (started, arg.decode())
    if newest is None:
        raise SystemExit("no playwright Chromium process found")
    return newest[1]


def browser_cpu_seconds(page: Path) -> float:
    """CPU (user+sys, every process of the browser) from a blank tab to the page drawn (parallel
    coordinates not yet scrolled to), less the same for a blank page: what loading the page costs,
    which a loaded machine stretches far less than wall time."""
    from playwright.sync_api import sync_playwright

    blank = page.parent / "blank.html"
    blank.write_text("<!DOCTYPE html><html><body data-ready='1'>blank</body></html>")
    costs = []
    for url in (blank.resolve().as_uri(), page.resolve().as_uri()):
        with sync_playwright() as pw:
            browser = pw.chromium.launch(
                executable_path="/usr/bin/chromium", headless=True, args=["--no-sandbox"]
            )
            view = browser.new_page(viewport={"width": 1400, "height": 900})
            view.goto("about:blank")
            marker = _profile_dir()
            before = _browser_cpu(marker)
            view.goto(url)
            view.wait_for_selector("body[data-ready='1']", timeout=60_000)
            costs.append(_browser_cpu(marker) - before)
            browser.close()
    return costs[1] - costs[0]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=1000)
    parser.add_argument("--steps", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        t0 = time.perf_counter()
        sweep = make_project(root, args.runs, args.steps)
        print(f"project: {args.runs} runs x {args.steps} steps written in {time.perf_counter() - t0:.1f} s")
        env = {**os.environ, "PYTHONPATH": str(ROOT)}
        walls, cpus = [], []
        for _ in range(args.repeat):
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            start = time.perf_counter()
            subprocess.run(
                [
                    sys.executable,
                    "-m",
                    "sweepgen",
                    "report",
                    str(sweep.relative_to(root)),
                    "--metric",
                    "eval_acc",
                    "--html",
                    "--format",
                    "json",
                ],
                cwd=root,
                env=env,
                check=True,
                stdout=subprocess.DEVNULL,
            )
            walls.append(time.perf_counter() - start)
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            cpus.append(after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime)
        page = root / "runs/big/report.html"
        size = page.stat().st_size
        loads = [load_seconds(page) for _ in range(args.repeat)]
        nav = [n for n, _, _ in loads]
        drawn = [d for _, d, _ in loads]
        scrolled = [p for _, _, p in loads]
        print(f"report --html wall: median {statistics.median(walls):.2f} s ({_each(walls)})")
        print(f"report --html CPU (user+sys): median {statistics.median(cpus):.2f} s ({_each(cpus)})")
        print(f"page size: {size / 1e6:.2f} MB")
        print(f"load in headless Chromium until drawn: median {statistics.median(nav):.2f} s ({_each(nav)})")
        print(f"  the page's own clock when drawn: median {statistics.median(drawn):.2f} s ({_each(drawn)})")
        print(f"  then parallel coordinates, scrolled to: median {statistics.median(scrolled):.2f} s")
        print(f"    ({_each(scrolled)})")
        cpu = [browser_cpu_seconds(page) for _ in range(args.repeat)]
        print(
            f"  Chromium CPU to load and draw, less a blank page: median {statistics.median(cpu):.2f} s "
            f"({_each(cpu)})"
        )
        print(f"load average: {os.getloadavg()[0]:.1f}")


def _each(values: list[float]) -> str:
    return "runs: " + ", ".join(f"{v:.2f}" for v in values)


if __name__ == "__main__":
    main()
