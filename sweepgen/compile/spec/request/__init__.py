"""What one run asks of an executor: the spec's ``resources:`` block, the run's shape, each executor's
section, Slurm's time formats and what a Slurm request may hold."""
