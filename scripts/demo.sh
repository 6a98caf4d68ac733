#!/usr/bin/env bash
# README command 1: set up, check the example specs against generated/, then render, run and report
# the tiny CPU sweep; it ends with the results table, the statistics over seeds, and report.html
# (one self-contained page: open it in a browser) with its path printed last.
# Re-running it is cheap: finished runs are skipped, and the report is printed again.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
export PATH="$PWD/.venv/bin:$PATH"
# two runs at once on a small CPU box: one thread each, and never reach for the Hugging Face hub
export OMP_NUM_THREADS="${OMP_NUM_THREADS:-1}" HF_HUB_OFFLINE=1
sweepgen check
sweepgen render specs/happy_grpo_cpu.yaml
sweepgen run generated/happy_grpo_cpu --jobs 2
sweepgen report generated/happy_grpo_cpu --compare beta0.0 --html
echo "report page: $PWD/runs/happy_grpo_cpu/report.html"
