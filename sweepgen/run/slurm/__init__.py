"""The Slurm executor: one submitit job array per `sweepgen run`, the spec's resources as sbatch
parameters, what an array task runs on the node, and squeue/sacct/scancel."""
