"""Running generated configs: the executor interface (base), executors (local, Slurm), the task list
read from a sweep's lock file (tasks), and per-run progress read from run directories (progress)."""
