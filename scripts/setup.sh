#!/usr/bin/env bash
# Idempotent set-up used by both README commands: a project venv in .venv with sweepgen installed
# editable, plus the trainer, Slurm and test extras. Re-runs only when pyproject.toml changed.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
[ -x .venv/bin/python ] || "$PY" -m venv .venv
stamp=.venv/.sweepgen-installed
want=$(sha256sum pyproject.toml | cut -d' ' -f1)
if [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
  .venv/bin/python -m pip install -q --upgrade pip >&2
  # Pin torch first: the CPU build 2.13.0 is what this project is tested with; an unpinned torch
  # would pull several GB of CUDA wheels. On a GPU machine, install your CUDA torch before this.
  .venv/bin/python -c 'import torch' 2>/dev/null || .venv/bin/python -m pip install -q torch==2.13.0 >&2
  .venv/bin/python -m pip install -q -e '.[train,slurm,track,dev]' >&2
  echo "$want" > "$stamp"
fi
