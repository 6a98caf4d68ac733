#!/bin/bash
# Run one rendered sbatch script of specs/rm_ablation.yaml as a sweepgen run, with the stand-in
# trainer in examples/rm:   bash examples/rm/run_sbatch.sh generated/rm_ablation/A1_none.sbatch
#
# Why a launcher: the script is written for `sbatch`, where its `srun` starts the job step. Under
# `sweepgen run` the executor has already given the run its process (local executor) or its job step
# (the Slurm executor runs the command inside submitit's own srun), so a second srun would only
# queue for resources the run already holds. Here `srun` runs its command directly, and
# `python -m rm.train` finds the stand-in through PYTHONPATH. The script itself runs unchanged.
set -euo pipefail
script=${1:?usage: run_sbatch.sh SCRIPT.sbatch}
examples=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
srun() {
    if [[ ${1:-} == -* ]]; then
        echo "run_sbatch.sh: srun options ($1) are not supported outside sbatch" >&2
        return 2
    fi
    "$@"
}
python() { "${RM_PYTHON:-python3}" "$@"; }
export -f srun python
export PYTHONPATH="$examples${PYTHONPATH:+:$PYTHONPATH}"
exec bash "$script"
