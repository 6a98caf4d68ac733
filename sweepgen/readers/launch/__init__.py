"""A launch line as data: launchers peeled off (torchrun, accelerate, srun), Slurm's options spelled alike."""
