"""Running generated configs, in rooms: sweep (what the commands call), search and report, the
executors (local, slurm), and the core of run state they share. docs/ARCHITECTURE.md lists which room
may import which (import-linter keeps it)."""
