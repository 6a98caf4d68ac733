#!/usr/bin/env bash
# Idempotent set-up used by both README commands and by the test lanes (scripts/test.sh).
#   bash scripts/setup.sh         .venv: sweepgen editable with the train, slurm, track, diff, plot, search and dev extras
#   bash scripts/setup.sh light   .venv-light: sweepgen editable with the dev extra only, as
#                                 `pip install sweepgen` users get it; torch must not be importable
# Each venv is re-installed only when pyproject.toml changed since its last install.
#
# A second word splits a set-up in three, for scripts/test.sh, which starts the core lane (.venv-light)
# while .venv's dependencies (torch and the rest, minutes of pip) are still installing:
#   bash scripts/setup.sh full venv      the venv with the newest pip (beside .venv-light's set-up)
#   bash scripts/setup.sh full project   then sweepgen itself editable without its
#                                        dependencies (seconds): the strict editable install rebuilds
#                                        the link tree under build/ that both venvs import sweepgen
#                                        from, so it must not happen while a lane runs
#   bash scripts/setup.sh full deps      then every requirement of those extras, as pyproject.toml
#                                        lists them (the same set `pip install -e .[extras]` resolves),
#                                        never touching build/; this finishes the set-up
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
kind=${1:-full} part=${2:-all}
case "$kind" in
  full) venv=.venv extras=train,slurm,track,diff,plot,search,dev ;;
  light) venv=.venv-light extras=dev ;;
  *) echo "usage: bash scripts/setup.sh [full|light] [venv|project|deps]" >&2; exit 2 ;;
esac
case "$part" in
  all | venv | project | deps) ;;
  *) echo "usage: bash scripts/setup.sh [full|light] [venv|project|deps]" >&2; exit 2 ;;
esac
[ -x "$venv/bin/python" ] || "$PY" -m venv "$venv"
stamp=$venv/.sweepgen-installed
want=$(sha256sum pyproject.toml | cut -d' ' -f1)
requirements='
import sys
try:
    import tomllib
except ImportError:  # Python 3.10: the TOML reader pip carries
    from pip._vendor import tomli as tomllib
project = tomllib.load(open("pyproject.toml", "rb"))["project"]
reqs = list(project["dependencies"])
for extra in sys.argv[1].split(","):
    reqs += project["optional-dependencies"][extra]
print("\n".join(dict.fromkeys(reqs)))
'
if [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
  # Pin torch: the CPU build 2.13.0 is what this project is tested with; an unpinned torch would
  # pull several GB of CUDA wheels. On a GPU machine, install your CUDA torch before this.
  torch_pin=()
  if [ "$kind" = full ] && ! "$venv/bin/python" -c 'import torch' 2>/dev/null; then torch_pin=(torch==2.13.0); fi
  # strict: a link tree on a static path, so mypy and import-linter see trainer/ as sweepgen_trainer
  editable=(-e ".[$extras]" --config-settings editable_mode=strict)
  case "$part" in all | venv) "$venv/bin/python" -m pip install -q --upgrade pip >&2 ;; esac
  case "$part" in
    all)
      if [ ${#torch_pin[@]} -gt 0 ]; then "$venv/bin/python" -m pip install -q "${torch_pin[@]}" >&2; fi
      "$venv/bin/python" -m pip install -q "${editable[@]}" >&2
      echo "$want" > "$stamp"
      ;;
    venv) ;;
    project) "$venv/bin/python" -m pip install -q --no-deps "${editable[@]}" >&2 ;;
    deps)
      if ! "$venv/bin/python" -c 'import importlib.metadata as m; m.version("sweepgen")' 2>/dev/null; then
        echo "error: run 'bash scripts/setup.sh $kind project' before '$kind deps'" >&2
        exit 2
      fi
      # [project.dependencies] and each extra's list, markers kept: pip evaluates them as for .[extras];
      # torch's pin in the same resolution (alone first, pip would call sweepgen's missing
      # requirements an error)
      mapfile -t reqs < <("$venv/bin/python" -c "$requirements" "$extras")
      "$venv/bin/python" -m pip install -q "${torch_pin[@]}" "${reqs[@]}" >&2
      echo "$want" > "$stamp"
      ;;
  esac
fi
if [ "$kind" = light ] && { [ "$part" = all ] || [ "$part" = deps ]; }; then
  # The compiler lane proves that the light install stays light: none of these may be importable.
  for mod in torch transformers trl peft submitit matplotlib; do
    if "$venv/bin/python" -c "import $mod" 2>/dev/null; then
      echo "error: $mod is importable in $venv, which must hold only sweepgen[dev]" >&2
      echo "  hint: a core dependency pulls it in; check [project.dependencies] in pyproject.toml" >&2
      exit 1
    fi
  done
fi
