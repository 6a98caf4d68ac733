#!/usr/bin/env bash
# Idempotent set-up used by both README commands and by the test lanes (scripts/test.sh).
#   bash scripts/setup.sh         .venv: sweepgen editable with the train, slurm, track, diff, plot, search and dev extras
#   bash scripts/setup.sh light   .venv-light: sweepgen editable with the dev extra only, as
#                                 `pip install sweepgen` users get it; torch must not be importable
# Each venv is re-installed only when pyproject.toml changed since its last install.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
kind=${1:-full}
case "$kind" in
  full) venv=.venv extras=train,slurm,track,diff,plot,search,dev ;;
  light) venv=.venv-light extras=dev ;;
  *) echo "usage: bash scripts/setup.sh [full|light]" >&2; exit 2 ;;
esac
[ -x "$venv/bin/python" ] || "$PY" -m venv "$venv"
stamp=$venv/.sweepgen-installed
want=$(sha256sum pyproject.toml | cut -d' ' -f1)
if [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
  "$venv/bin/python" -m pip install -q --upgrade pip >&2
  if [ "$kind" = full ]; then
    # Pin torch first: the CPU build 2.13.0 is what this project is tested with; an unpinned torch
    # would pull several GB of CUDA wheels. On a GPU machine, install your CUDA torch before this.
    "$venv/bin/python" -c 'import torch' 2>/dev/null || "$venv/bin/python" -m pip install -q torch==2.13.0 >&2
  fi
  # strict: a link tree on a static path, so mypy and import-linter see trainer/ as sweepgen_trainer
  "$venv/bin/python" -m pip install -q -e ".[$extras]" --config-settings editable_mode=strict >&2
  echo "$want" > "$stamp"
fi
if [ "$kind" = light ]; then
  # The compiler lane proves that the light install stays light: none of these may be importable.
  for mod in torch transformers trl peft submitit matplotlib; do
    if "$venv/bin/python" -c "import $mod" 2>/dev/null; then
      echo "error: $mod is importable in $venv, which must hold only sweepgen[dev]" >&2
      echo "  hint: a core dependency pulls it in; check [project.dependencies] in pyproject.toml" >&2
      exit 1
    fi
  done
fi
