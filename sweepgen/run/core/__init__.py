"""The core of run state every room shares: the executor interface and run states (base), the executor
registry, run folders read safely (runfiles, runlock; logs: run/logs), the task list from a sweep's lock
(plan/), stopping runs (stopping/), and how a sweep was started (sweepfile/)."""
