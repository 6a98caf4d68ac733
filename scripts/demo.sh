#!/usr/bin/env bash
# README command 1: set up, check the example specs against generated/, then render, run and report
# the tiny CPU sweep; it ends with the results table (and the paths of report.csv / report.png).
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
sweepgen report generated/happy_grpo_cpu
