#!/usr/bin/env bash
# README command 1: set up, check the example specs against generated/, run the tiny CPU sweep and
# print its results table.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
export PATH="$PWD/.venv/bin:$PATH"
sweepgen check
sweepgen render specs/happy_grpo_cpu.yaml
sweepgen run generated/happy_grpo_cpu --jobs 2
sweepgen report runs/happy_grpo_cpu
