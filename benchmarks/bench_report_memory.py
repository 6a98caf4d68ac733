"""Peak RSS and wall time of `sweepgen report runs --metric loss` over a run whose metrics log (or
trainer_state.json) is near the 256 MiB a run file may be, beside a one-step run (helper h-hostile9).

    python benchmarks/bench_report_memory.py [--kind jsonl|state|both] [--mib 256]

Each report is its own process; its peak RSS is its ``ru_maxrss`` (``os.wait4``).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def _row(step: int) -> dict[str, float | int]:
    return {"step": step, "loss": 1.0 / (step + 1), "reward": 0.5 + step * 1e-7, "kl": 0.01 * (step % 7)}


def _write_jsonl(path: Path, target: int) -> int:
    size = step = 0
    with open(path, "w") as fh:
        while size < target:
            line = json.dumps(_row(step)) + "\n"
            fh.write(line)
            size, step = size + len(line), step + 1
    return step


def _write_state(path: Path, target: int) -> int:
    rows, size = [], 0
    while size < 0.8 * target:  # the rows' own estimate leaves out the document's deeper indent
        row = {**_row(len(rows)), "epoch": len(rows) / 1000}
        rows.append(row)
        size += len(json.dumps(row, indent=2)) + 6
    path.write_text(json.dumps({"global_step": len(rows), "log_history": rows}, indent=2))
    return len(rows)


def _runs(root: Path, kind: str, target: int) -> int:
    for name, lr in (("a", 0.001), ("b", 0.002)):
        run = root / "runs" / name
        run.mkdir(parents=True)
        (run / "config.yaml").write_text(f"learning_rate: {lr}\nseed: 1\n")
        (run / "summary.json").write_text('{"final_reward": 0.5}\n')
    (root / "runs" / "b" / "metrics.jsonl").write_text('{"step": 1, "loss": 0.5}\n')
    a = root / "runs" / "a"
    return (
        _write_jsonl(a / "metrics.jsonl", target)
        if kind == "jsonl"
        else _write_state(a / "trainer_state.json", target)
    )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--kind", choices=["jsonl", "state", "both"], default="both")
    parser.add_argument("--mib", type=int, default=250)
    parser.add_argument("--write-into", help=argparse.SUPPRESS)  # the runs written by a child
    args = parser.parse_args()
    if args.write_into:
        print(_runs(Path(args.write_into), args.kind, args.mib << 20))
        return
    for kind in ["jsonl", "state"] if args.kind == "both" else [args.kind]:
        with tempfile.TemporaryDirectory() as tmp:
            # written by a child of its own: a report's peak RSS would count this process's pages
            write = [sys.executable, __file__, "--kind", kind, "--mib", str(args.mib), "--write-into", tmp]
            rows = int(subprocess.run(write, capture_output=True, text=True, check=True).stdout)
            size = (
                next(
                    p
                    for p in (Path(tmp) / "runs" / "a").iterdir()
                    if p.suffix in (".jsonl", ".json") and p.name != "summary.json"
                )
                .stat()
                .st_size
            )
            started = time.monotonic()
            proc = subprocess.Popen(
                [sys.executable, "-m", "sweepgen", "report", "runs", "--metric", "loss", "--no-plot"],
                cwd=tmp,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
            _, status, usage = os.wait4(proc.pid, 0)
            took = time.monotonic() - started
            peak = usage.ru_maxrss >> 10
            code = os.waitstatus_to_exitcode(status)
            print(
                f"{kind}: {size / 2**20:.0f} MiB, {rows:,} rows -> exit {code}, {took:.1f} s, "
                f"peak RSS {peak} MiB"
            )


if __name__ == "__main__":
    main()
