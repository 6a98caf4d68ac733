"""A run as `sweepgen status` shows it, and the state words every command uses for it.

Kept apart from sweep_status (which asks the executors) so that the Slurm executor can build views
without importing sweep_status back (no import cycle).
"""

from __future__ import annotations

from dataclasses import dataclass

from sweepgen.run.core.base import TERMINAL, RunState, RunStatus, RunTask, is_pruned_reason, state_word

# Slurm's words for endings that say more than "failed" (shown instead of FAILED/CANCELLED)
SLURM_WORDS = frozenset({"TIMEOUT", "OUT_OF_MEMORY", "NODE_FAIL", "BOOT_FAIL", "DEADLINE", "PREEMPTED"})
PROBLEM_STATES = frozenset({RunState.FAILED, RunState.CANCELLED})


@dataclass(frozen=True)
class RunView:
    """A run as `status` shows it: its (reconciled) status and, on Slurm, what squeue/sacct said."""

    task: RunTask
    status: RunStatus | None  # None: never started
    job: object | None = None  # slurm_query.JobInfo for Slurm runs
    # the run directory holds a run of another version of the config: `run` and `report` refuse it,
    # so it is never shown as this config's result, whatever its own state
    stale: bool = False
    note: str | None = None  # what limited this view, e.g. Slurm accounting unavailable
    # its status file could not be read (damaged, not UTF-8, unreadable): why; shown, never guessed
    unreadable: str | None = None

    @property
    def state(self) -> RunState | None:
        return self.status.state if self.status else None

    @property
    def label(self) -> str:
        """The state word users see: ours in capitals, or Slurm's where it says more (TIMEOUT)."""
        if self.unreadable is not None:
            return "UNREADABLE"
        if self.status is None:
            return state_word(RunState.PENDING, started=False).upper()
        if self.stale:
            return "STALE"
        if self.pruned:
            return "PRUNED"
        word = self.status.ids.get("slurm_state")
        # Slurm's word of an end, only for a run that ended otherwise than finished (never beside a
        # live state: a status read from a file is data, and a live run's word is its own)
        if word in SLURM_WORDS and self.status.state in (RunState.FAILED, RunState.CANCELLED):
            return str(word)
        return state_word(self.status.state).upper()

    @property
    def pruned(self) -> bool:
        """A search trial's run that its pruner stopped: cancelled on purpose, not a problem."""
        status = self.status
        return bool(status and status.state is RunState.CANCELLED and is_pruned_reason(status.reason))

    @property
    def problem(self) -> bool:
        """Shown with its log tail, and makes `status` exit 1."""
        return self.stale or self.unreadable is not None or (self.state in PROBLEM_STATES and not self.pruned)

    @property
    def live(self) -> bool:
        return self.status is not None and self.status.state not in TERMINAL
