"""The core of run state every room shares: the executor interface and run states (base), the task list from a
sweep's lock (tasks), the executor registry, run folders read safely (runfiles, runlock; logs: run/logs),
and how a sweep was started (sweep_state, sweep_origin)."""
