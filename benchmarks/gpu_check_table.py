"""One table from ``gpu_check.sh``'s per-level results (OUT_DIR/levels/*.json), in the order they ran.

python benchmarks/gpu_check_table.py OUT_DIR
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

PHASES = ("generation", "reward", "scoring_other", "loss_forward", "backward", "optimizer", "logging")


def fmt(value: Any, digits: int = 2) -> str:
    return "–" if not isinstance(value, (int, float)) else f"{value:.{digits}f}"


def level_rows(folder: Path) -> list[tuple[str, dict[str, Any], dict[str, Any]]]:
    """(level, its config, one result) per result, levels in the order their files were written."""
    rows = []
    for path in sorted(folder.glob("*.json"), key=lambda p: p.stat().st_mtime):
        data = json.loads(path.read_text())
        if "results" not in data:  # skipped or failed before bench_packing wrote anything
            rows.append((path.stem, {}, data))
            continue
        rows.extend((path.stem, data["config"], result) for result in data["results"])
    return rows


def table(rows: list[tuple[str, dict[str, Any], dict[str, Any]]]) -> str:
    one = next((r for name, _, r in rows if name == "one" and "train_steps_per_s" in r), None)
    base = one.get("steady_steps_per_s") if one else None
    lines = [
        "| level | trainer | runs | MPS | model | median step s | steps/s after step 1, all runs | × one run "
        "| end-to-end steps/s | completion mean (min-max) | truncated | " + " | ".join(PHASES) + " |",
        "|---|---|---:|---|---|---:|---:|---:|---:|---|---:|" + "---:|" * len(PHASES),
    ]
    for name, config, r in rows:
        if "train_steps_per_s" not in r:
            why = r.get("skipped") or r.get("failed") or f"exit {r.get('exit')}"
            lines.append(f"| {name} | {r.get('trainer', '')} | {r.get('runs', '')} | | | {why} |")
            continue
        model = Path(str(config.get("model") or "builtin:tiny")).name
        times = " | ".join(fmt(r.get(f"time/{p}_s"), 3) for p in PHASES)
        lines.append(
            f"| {name} | {r['trainer']} | {r['runs']} | {'yes' if config.get('mps') else 'no'} | {model} "
            f"| {fmt(r['median_step_time_s'])} | {fmt(r.get('steady_steps_per_s'))} "
            f"| {fmt(r['steady_steps_per_s'] / base if base and r.get('steady_steps_per_s') else None, 1)} "
            f"| {fmt(r['e2e_steps_per_s'])} "
            f"| {fmt(r['completion_mean'], 1)} ({r['completion_min']}-{r['completion_max']}) "
            f"| {fmt(r['truncated_fraction'])} | {times} |"
        )
    return "\n".join(lines)


def main() -> None:
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    print(table(level_rows(Path(sys.argv[1]) / "levels")))


if __name__ == "__main__":
    main()
