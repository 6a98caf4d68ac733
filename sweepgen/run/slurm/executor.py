"""The Slurm executor: one submitit job array per `sweepgen run`, resources from the lock.

How a submission goes (``start``), and why:

1. The array is submitted *held* (``--hold``). submitit moves each task's pickle into place only
   after sbatch returns, and sweepgen records the job ids in each run's ``sweepgen_status.json``
   after that; a held array cannot start before both are done, so no node ever races the client
   for a status file or a pickle.
2. Each run's status file gets the job id (``ids.job_id``, e.g. ``123_4``) and the job name; a
   journal of every array (``<runs root>/.sweepgen_slurm/jobs.json``) keeps the sbatch header and
   which array index is which run. submitit's own files (sbatch script, pickles, its logs) live
   next to it, one folder per task. This is what lets `sweepgen status DIR` and `sweepgen cancel
   DIR` work later, from any shell, with nothing else remembered.
3. ``scontrol release``. If anything fails between 1 and 3, the held array is cancelled, so a
   failed submission never leaves jobs behind.

On the node, ``slurm_task.run_on_node`` runs the command and keeps the status file. The client
(``poll``, `sweepgen status`) asks squeue/sacct and *then* reads the status files, so a run that
ended has already written its final state; a job that ended without writing one (killed, or it
never got to start) gets its state from Slurm: CANCELLED, TIMEOUT, OUT_OF_MEMORY, NODE_FAIL....
"""

from __future__ import annotations

import contextlib
import importlib.util
import os
import re
import shlex
import shutil
import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any, TypeGuard

from sweepgen.compile.run_api import LOCK_NAME, Lock
from sweepgen.errors import ConfigError, Location, SweepgenError, UserError
from sweepgen.fs import filenames, runfs
from sweepgen.run.core import advice
from sweepgen.run.core.base import (
    CANCEL_REASON,
    LOG_FILE,
    STATUS_FILE,
    TERMINAL,
    TIMEOUT_REASON,
    Executor,
    ExecutorOptions,
    RunState,
    RunStatus,
    RunTask,
    is_finished,
    read_status,
    unrecorded_finish,
    utc_now,
    write_json_atomic,
    write_status,
)
from sweepgen.run.core.deadline import within
from sweepgen.run.core.plan.tasks import load_sweep
from sweepgen.run.core.plan.trackers import tracker_env
from sweepgen.run.core.run_view import RunView
from sweepgen.run.core.shape import RunShape, shape_from_lock
from sweepgen.run.core.stopping import queue_cancel
from sweepgen.run.slurm import launch, ownership, ranks
from sweepgen.run.slurm import node_tasks as task_files
from sweepgen.run.slurm import query as slurm_query
from sweepgen.run.slurm.journal import (
    JOURNAL,
    SUBMIT_LOCK,
    Holder,
    SubmitLockBusy,
    read_journal,
    submitted_as,
)
from sweepgen.run.slurm.journal import submission_lock as _submission_lock
from sweepgen.run.slurm.resources import SlurmResources, resources_from_lock
from sweepgen.run.slurm.task import NodeTask, run_on_node

SLURM_DIR = filenames.SLURM_DIR  # in the sweep's runs root: submitit's files and the jobs journal
POLL_MIN_INTERVAL_S = 2.0  # squeue/sacct at most this often, however fast the display polls
MAX_FAILED_POLLS = 30  # polls in a row (each already retried with back-off) before --wait gives up
CANCEL_WAIT_S = 120.0  # after scancel, how long to wait for Slurm to end the jobs
# how long `cancel` waits for a submission under way (its `run` may be stopped, SIGSTOP: that `run`
# reads the cancel's request again before it releases its array, _drop_asked_meanwhile)
SETTLE_WAIT_S = 30.0
_ALIVE_CACHE: dict[
    str, tuple[float, dict[str, slurm_query.JobInfo]]
] = {}  # array id -> (when, squeue's view of its tasks)

# what a job that ended without writing its own final state died of
_SLURM_ENDINGS = {
    "CANCELLED": (RunState.CANCELLED, CANCEL_REASON),
    "TIMEOUT": (RunState.FAILED, TIMEOUT_REASON),
    "OUT_OF_MEMORY": (RunState.FAILED, f"out of memory (raise resources.mem{advice.THEN_RERUN.grid}"),
    "NODE_FAIL": (RunState.FAILED, f"the node failed (Slurm NODE_FAIL); {advice.RETRY.grid}"),
    "BOOT_FAIL": (RunState.FAILED, "the node failed to boot (Slurm BOOT_FAIL)"),
    "DEADLINE": (RunState.FAILED, "Slurm DEADLINE reached before the run ended"),
    "PREEMPTED": (RunState.CANCELLED, f"preempted by Slurm; {advice.RESUME.grid}"),
}
# how the dry run shows the Slurm variables each rank reads (resolved only inside the job)
_SYMBOLIC_SLURM_ENV = {
    "SLURM_PROCID": "$SLURM_PROCID",
    "SLURM_NTASKS": "$SLURM_NTASKS",
    "SLURM_LOCALID": "$SLURM_LOCALID",
}
# Slurm's verdicts that outrank what the node wrote: it was killed for a reason it could not see
_SLURM_OVERRIDES = frozenset({"TIMEOUT", "OUT_OF_MEMORY", "NODE_FAIL", "BOOT_FAIL", "DEADLINE"})


class SlurmExecutor(Executor):
    name = "slurm"
    stop_runs_on_error = False  # the jobs run without this command; an error here is no reason to cancel

    def __init__(self, options: ExecutorOptions) -> None:
        # Slurm runs outlive this command: by default it returns once the array is submitted
        super().__init__(replace(options, wait=bool(options.wait)))
        if options.gpus:
            raise UserError(
                "--gpus is for the local executor; Slurm allocates GPUs itself",
                hint="set resources.gpus_per_run in the spec instead",
            )
        if options.time_limit_s is not None:
            raise UserError(
                "--time-limit is for the local executor; a Slurm job's limit is the spec's resources.time",
                hint="drop --time-limit with --executor slurm and set resources.time",
            )
        if options.per_gpu != 1:
            raise UserError(
                "--per-gpu is for the local executor", hint="drop --per-gpu with --executor slurm"
            )
        if options.jobs is not None and options.jobs < 1:
            raise UserError("--jobs must be at least 1")
        self.lock_path = Path(options.sweep_dir) / LOCK_NAME
        self.resources: SlurmResources = resources_from_lock(options.lock, lock_path=str(self.lock_path))
        self.shape: RunShape = shape_from_lock(options.lock, lock_path=str(self.lock_path))
        self.job_name = job_name(options.lock, options.sweep_dir)
        # every run of the sweep, not only those started now: the journal's place must not move
        # when --only or --rerun-failed narrows a submission (the command is irrelevant here)
        all_runs = load_sweep(Path(options.sweep_dir), command=("{config}",)).tasks
        self.root = slurm_root([t.run_dir for t in all_runs])
        self._tasks: dict[str, RunTask] = {}
        self._status: dict[str, RunStatus] = {}
        self._last_poll = float("-inf")
        self._failed_polls = 0
        self._stops: dict[str, str] = {}  # run -> why stop() cancelled it: the reason poll records
        self._jobs: dict[str, str] = {}  # run -> the job this `run` submitted it as (its attempt's)

    # -- the Executor protocol ------------------------------------------------------------------

    def sbatch_header(self, count: int) -> list[str]:
        """The ``#SBATCH`` lines the array will be submitted with (what --dry-run shows)."""
        _need_submitit()
        from submitit.slurm.slurm import (
            _make_sbatch_string,  # pinned submitit: the real header
        )

        params = self._submitit_parameters(count)
        text = _make_sbatch_string(
            command="true", folder=str(self.root / "%j"), map_count=count if count > 1 else None, **params
        )
        return [line for line in text.splitlines() if line.startswith("#SBATCH")]

    def gpus_each(self) -> int | None:
        """The GPUs a run's job asks for per node (none asked: not judged)."""
        gpus = self.shape.gpus_per_node if launch.multi(self.shape) else self.resources.gpus_per_run
        return gpus or None

    def describe(self, tasks: Sequence[RunTask]) -> list[str]:
        lines = [
            f"slurm executor: {len(tasks)} run(s) as one job array {self.job_name!r}, "
            f"from {os.getcwd()}; submitit files in {self.root}",
            "sbatch parameters:",
        ]
        lines += [f"  {line}" for line in self.sbatch_header(len(tasks))]
        lines += self._describe_launch()
        lines.append("array tasks:")
        for index, task in enumerate(tasks):
            lines.append(f"  [{index}] {task.name}: {' '.join(task.argv)}  > {task.run_dir / LOG_FILE}")
        return lines

    def _describe_launch(self) -> list[str]:
        """How each run's processes start in its job (launch.py), as the nodes will resolve it."""
        shape = self.shape
        if not launch.multi(shape):
            return []
        step = " ".join(["srun", *launch.step_srun_args(shape, self.resources.cpus_per_run)])
        who = {
            "srun": f"Slurm starts {shape.procs_per_node} rank(s) per node",
            "none": "the command runs once per node and starts its own processes",
        }.get(shape.launcher, f"{shape.launcher} on each node starts {shape.procs_per_node} process(es)")
        rdzv = launch.symbolic_rendezvous()
        argv = launch.argv_for(shape, ["<command>"], rdzv, launch.shown_launcher(shape.launcher))
        env = launch.env_for(shape, rdzv, _SYMBOLIC_SLURM_ENV)
        return [
            f"each run: {shape.nodes} node(s) x {shape.procs_per_node} process(es) "
            f"(world size {shape.world_size}), launcher {shape.launcher}, "
            f"{shape.gpus_per_node} GPU(s) per node; {who}",
            f"  job step: {step} ...",
            f"  each node runs: {shlex.join(argv)}",
            "  with " + " ".join(f"{k}={v}" for k, v in env.items()),
            "  the status is written by "
            + ("rank 0" if shape.launcher == "srun" else "node 0's participant (the launcher's parent)"),
        ]

    def settle(self) -> None:
        """A submission a `sweepgen run` of this runs root left half done when it died (its array
        is submitted held, so nothing of it ran): an array it never recorded is cancelled (no run
        is known to be its, and a later `scontrol release` would start runs a second time); one it
        recorded but never released is released (the status files name its jobs, which would
        otherwise wait held forever, shown pending, and never be submitted again)."""
        if not self.root.is_dir():
            return  # nothing was ever submitted from this runs root
        with self._submission_lock():  # no submission of this root is under way meanwhile
            unrecorded, unreleased = lost_arrays(self.root)
            if unrecorded:
                slurm_query.scancel(unrecorded)
                self.notes.append(_UNRECORDED_CANCELLED.format(", ".join(unrecorded)))
            for array_id in unreleased:
                slurm_query.release(array_id)
                self.notes.append(
                    f"released job array {array_id}: a `sweepgen run` submitted and recorded it, then "
                    "died before releasing it (its runs had not started)"
                )
                self.notes.extend(_mark_released(self.root, array_id))
            self.notes.extend(prune_task_files(self.root))

    @classmethod
    def settle_for_cancel(cls, sweep_dir: Path, tasks: Sequence[RunTask]) -> list[str]:
        """A submission under way is waited for (it is recorded and released within the submission
        lock; its jobs are then the status files' to cancel). What a `sweepgen run` that died left
        held is cancelled: an array it never recorded (no status file names its jobs), and the jobs
        of ``tasks`` in an array it recorded but never released (a status file may not name them
        yet; the next `run` would release them, starting runs the user cancelled)."""
        every = load_sweep(sweep_dir, command=("{config}",)).tasks
        if not every:
            return []  # a search with no trial rendered yet: nothing was ever submitted
        root = slurm_root([t.run_dir for t in every])
        if not root.is_dir():
            return []
        if shutil.which("squeue") is None:
            return [
                f"{root} holds Slurm submissions, but squeue is not on PATH here: an array a killed "
                "`sweepgen run` submitted without recording it cannot be looked for"
            ]
        try:
            with _submission_lock(root, SETTLE_WAIT_S):
                return _cancel_lost(root, tasks)
        except SubmitLockBusy as busy:
            return [_busy_submission(root, busy.holder)]

    def start(self, tasks: Sequence[RunTask], planned: Mapping[str, RunStatus | None] | None = None) -> None:
        if not tasks:
            return
        _need_submitit()
        for tool in ("sbatch", "srun", "scontrol", "squeue", "sacct"):
            slurm_query.require(tool)
        slurm_query.controller_answers()  # at once, not after each command's own retries
        for task in tasks:
            seen = self._status.get(task.name)
            # a run skipped here (not submitted) may be handed back once its holder let it go
            if task.name in self._tasks or (seen is not None and seen.state is not RunState.SKIPPED):
                raise ValueError(f"task {task.name} started twice")  # a caller bug, not user input
        # One submission of this sweep at a time: a second `sweepgen run` waits here, then finds
        # the runs the first one submitted and submits nothing for them.
        with self._submission_lock():
            tasks = self._recheck(tasks, planned)
            if tasks:
                self._test_only(len(tasks))
                self._submit(tasks)

    def _submission_lock(self) -> contextlib.AbstractContextManager[None]:
        """The runs root's submission lock, as this `run` waits for it: said at once when another
        holds it (by whom, how to go on); given up behind a holder that stays stopped."""
        return _submission_lock(self.root, note=self.options.note, give_up_stopped=True)

    def _recheck(
        self, tasks: Sequence[RunTask], planned: Mapping[str, RunStatus | None] | None
    ) -> list[RunTask]:
        """The runs still to submit, re-read under the submission lock; the others are recorded as
        skipped, with why (another submission queued, ran or finished them since the plan)."""
        keep = []
        # runs with no status file (never started, or their directory was deleted): the journal
        # and the queue say whether a submission of them is still held
        unrecorded = [t.name for t in tasks if read_status(t.run_dir) is None]
        held = held_jobs(unrecorded, self.root) if unrecorded else {}
        for task in tasks:
            dropped = self._cancel_asked(task)
            if dropped is not None:
                self._status[task.name] = RunStatus(RunState.CANCELLED, self.name, reason=dropped)
                continue
            why = self._why_not_submitted(task, read_status(task.run_dir), planned, held)
            if why:
                self._status[task.name] = RunStatus(RunState.SKIPPED, self.name, reason=why)
            else:
                keep.append(task)
        return keep

    def _cancel_asked(self, task: RunTask) -> str | None:
        """A `sweepgen cancel` since this `run` started asked to drop the run (queue_cancel.py): it
        found nothing of it running and said this `run` drops it, so it is never submitted (its
        files keep what they had: the next `run` submits it). Read under the submission lock, which
        that `cancel` waits for after writing its request: a submission that read no request is
        recorded by then, and that `cancel` stops its jobs. The drop's reason; None where none was
        asked."""
        return queue_cancel.asked_since(task.run_dir.parent, self.options.started_s).get(task.run_dir.name)

    def _why_not_submitted(
        self,
        task: RunTask,
        now: RunStatus | None,
        planned: Mapping[str, RunStatus | None] | None,
        held: Mapping[str, slurm_query.JobInfo],
    ) -> str | None:
        """Why a planned run is skipped after all, from its status re-read now (None: it is submitted)."""
        if is_finished(task.run_dir):
            return "finished meanwhile (by another submission)"
        if planned is not None and now != planned.get(task.name):
            return _submitted_meanwhile(now)
        if now is not None and now.state not in TERMINAL and self.is_alive(now):
            return f"already queued or running in Slurm (job {now.ids.get('job_id')}); not submitted again"
        if now is None and task.name in held:
            info = held[task.name]
            return (
                f"its run directory {task.run_dir} has no status, but Slurm still holds its job "
                f"{info.job_id} ({info.state}); not submitted again"
            )
        return None

    def _test_only(self, count: int) -> None:
        """``sbatch --test-only`` with the array's real header: Slurm says now whether it could ever
        run it. A held array would hide this and wait forever (e.g. mem: 100000G)."""
        from submitit.slurm.slurm import _make_sbatch_string

        script = _make_sbatch_string(
            command="true",
            folder=str(self.root / "%j"),
            map_count=count if count > 1 else None,
            **self._submitit_parameters(count),
        )
        ok, message = slurm_query.test_only(script)
        if not ok:
            raise UserError(
                f"Slurm refuses the job array's resources: {message}",
                hint="fix the spec's resources block (mem, time, cpus_per_run, gpus_per_run, "
                "partition) to fit a node (`sinfo -N -l` lists them); nothing was submitted",
            )

    def _submit(self, tasks: Sequence[RunTask]) -> None:
        cwd = os.getcwd()
        submitted, previous_of, node_tasks = self._node_tasks(tasks, cwd)
        # what each job runs is read on the node as data whose digest its batch script carries,
        # never submitit's pickle (node_tasks.py)
        tasks_file, digest = task_files.write(self.root, [t.to_json() for t in node_tasks])
        _note_unrecorded(self.root, tasks_file.name)  # a `run` killed before recording it: removed later
        ex = _executor_running(task_files.command(tasks_file, digest))(
            folder=self.root / "%j", python=shlex.quote(sys.executable)
        )
        ex.update_parameters(**self._submitit_parameters(len(tasks)))
        from submitit.core.utils import FailedJobError, FailedSubmissionError

        try:
            with ex.batch():
                jobs = [ex.submit(run_on_node, node_task) for node_task in node_tasks]
        except (FailedJobError, FailedSubmissionError) as err:  # sbatch refused: bad partition, time, account
            task_files.remove(self.root, tasks_file.name)  # no job was made that could read it
            raise UserError(
                f"sbatch refused the job array: {_first_line(err)}",
                location=None,
                hint="check the spec's resources block (partition, time, mem, "
                "sbatch_extra) against `sinfo -s`; `sweepgen run DIR --executor slurm --dry-run` "
                "shows the sbatch header",
            ) from err
        job_ids = [str(job.job_id) for job in jobs]
        array_id = job_ids[0].split("_", 1)[0]
        try:
            self._record(tasks, submitted, job_ids, array_id, cwd, tasks_file.name)
            if self._drop_asked_meanwhile(tasks, job_ids, previous_of):
                slurm_query.release(array_id)
        except BaseException as err:
            slurm_query.scancel([array_id])  # never leave a held array nobody knows about
            task_files.remove(self.root, tasks_file.name)  # its held jobs never start to read it
            told = _unreleased_error(err, array_id, self._forget(tasks, previous_of))
            if told is None:
                raise
            raise told from err
        self.notes.extend(_mark_released(self.root, array_id))

    def _drop_asked_meanwhile(
        self, tasks: Sequence[RunTask], job_ids: Sequence[str], previous_of: Mapping[str, RunStatus | None]
    ) -> bool:
        """The runs a `sweepgen cancel` asked to drop while this submission was under way (this
        `run` held up, SIGSTOP, between its re-check and the release: that `cancel` waits for the
        submission lock this `run` holds): their held jobs cancelled before the array is released,
        never started, their status files put back as they were. Whether any job is left to release.
        Before, the array was released and those runs started as the cancel waited."""
        asked = [(task, job_id, self._cancel_asked(task)) for task, job_id in zip(tasks, job_ids)]
        dropped = [(task, job_id, why) for task, job_id, why in asked if why is not None]
        slurm_query.scancel([job_id for _, job_id, _ in dropped])
        for task, _, why in dropped:
            self._drop_unreleased(task, previous_of[task.name], why)
        return len(dropped) < len(tasks)

    def _drop_unreleased(self, task: RunTask, previous: RunStatus | None, reason: str) -> None:
        """A run whose held job was cancelled before its release: as it was, shown dropped."""
        self._tasks.pop(task.name, None)
        _restore_status(task.run_dir, previous)
        self._status[task.name] = RunStatus(RunState.CANCELLED, self.name, reason=reason)

    def _forget(self, tasks: Sequence[RunTask], previous_of: Mapping[str, RunStatus | None]) -> list[str]:
        """After a cancelled submission none of its runs ever ran: their status files are put back as
        they were, so they are not taken for cancelled runs (they are pending, and a plain `run`
        submits them again). Returns the status files that could not be restored, with why."""
        restore_failed = []
        for task in tasks:
            self._tasks.pop(task.name, None)
            self._status.pop(task.name, None)
            try:
                _restore_status(task.run_dir, previous_of[task.name])
            except OSError as restore_err:
                restore_failed.append(f"{task.run_dir / STATUS_FILE} ({restore_err.strerror})")
        return restore_failed

    def _node_tasks(
        self, tasks: Sequence[RunTask], cwd: str
    ) -> tuple[list[RunStatus], dict[str, RunStatus | None], list[NodeTask]]:
        """Per task: the status it is submitted with, the status it had before (restored if the
        submission fails) and what the node runs."""
        submitted: list[RunStatus] = []
        previous_of: dict[str, RunStatus | None] = {}
        node_tasks = []
        for task in tasks:
            previous = read_status(task.run_dir)
            previous_of[task.name] = previous
            status = RunStatus(
                RunState.RUNNING,
                self.name,
                reason="submitted to Slurm",
                command=list(task.argv),
                config=task.config_path.as_posix(),
                sweep_dir=Path(self.options.sweep_dir).as_posix(),
                attempt=previous.attempt + 1 if previous else 1,
                ids={"job_name": self.job_name, "submitit_folder": str(self.root)},
                config_fingerprint=task.fingerprint or None,
                done_file=task.done_file,
            )
            submitted.append(status)
            node_tasks.append(
                NodeTask(
                    name=task.name,
                    argv=tuple(task.argv),
                    cwd=cwd,
                    run_dir=str(task.run_dir),
                    status=status,
                    env={
                        **tracker_env(task, Path(self.options.sweep_dir).name),
                        **self.options.env,
                    },
                    shape=self.shape if launch.multi(self.shape) else None,
                )
            )
        return submitted, previous_of, node_tasks

    def _record(
        self,
        tasks: Sequence[RunTask],
        submitted: Sequence[RunStatus],
        job_ids: Sequence[str],
        array_id: str,
        cwd: str,
        tasks_file: str,
    ) -> None:
        # the journal first: a `sweepgen run` killed from here on left an array the next one finds
        # recorded (and releases: `settle`), never one it would take for nobody's and cancel while
        # a status file already names its job
        journal_path = self.root / JOURNAL
        journal = read_journal(journal_path)
        _drop_unrecorded(journal, tasks_file)
        journal["arrays"].append(
            {
                "array_job_id": array_id,
                "job_name": self.job_name,
                "submitted": utc_now(),
                "cwd": cwd,
                "sweep_dir": Path(self.options.sweep_dir).as_posix(),
                "runs": {job_id: task.name for job_id, task in zip(job_ids, tasks)},
                "sbatch": self.sbatch_header(len(tasks)),
                RELEASED: False,  # made true once `scontrol release` returned
                TASKS_FILE: tasks_file,  # removed (and this key with it) once Slurm holds none of its jobs
            }
        )
        write_json_atomic(journal_path, journal)
        for task, status, job_id in zip(tasks, submitted, job_ids):
            status = replace(status, ids={**status.ids, "job_id": job_id})
            write_status(task.run_dir, status)
            self._tasks[task.name] = task
            self._jobs[task.name] = job_id
            self._status[task.name] = replace(status, state=RunState.PENDING)

    def poll(self) -> dict[str, RunStatus]:
        now = time.monotonic()
        if now - self._last_poll >= POLL_MIN_INTERVAL_S and not self.done():
            self._last_poll = now
            for view in self._observe_live():
                if view.status is not None:  # (every submitted run has a status file)
                    status = self._superseded(view.task, view.status) or view.status
                    self._status[view.task.name] = self._with_stop_reason(view.task, status)
        return dict(self._status)

    def _superseded(self, task: RunTask, now: RunStatus) -> RunStatus | None:
        """The end of this `run`'s attempt where the status file names another job now: while this
        `run` did not look (stopped, or between two polls) its job ended (a `cancel`) and another
        `run --rerun-failed` submitted the run again. That attempt is not this `run`'s: it is not
        followed, shown as its own, or cancelled by this `run`'s Ctrl-C. None: not superseded."""
        ours = self._jobs.get(task.name)
        if ours is None or str(now.ids.get("job_id")) == ours:
            return None
        seen = self._status[task.name]
        try:
            jobs, _ = slurm_query.query_jobs([ours])
        except UserError:  # Slurm did not answer: as last seen, asked again at the next poll
            return seen
        ended = reconcile(task, replace(seen, state=RunState.RUNNING), jobs.get(ours))
        again = (
            f"submitted again meanwhile by another `sweepgen run` (attempt {now.attempt}, job "
            f"{now.ids.get('job_id')}), not followed here"
        )
        if ended is None or ended.state not in TERMINAL:  # Slurm has no word on it: ended, how unknown
            ended = replace(seen, state=RunState.FAILED, reason=f"job {ours} ended unrecorded")
        return replace(ended, reason=f"{ended.reason or ended.state.value}; {again}")

    def _observe_live(self) -> list[RunView]:
        """Slurm's view of the runs not settled yet. When Slurm did not answer even after the
        query's own retries the jobs are where they were: none (the last known states are kept,
        and asked for again), and following is given up (never cancelling) only after a long outage."""
        tasks = [self._tasks[name] for name, s in self._status.items() if not _settled(s)]
        try:
            views = observe(tasks)
        except UserError:
            self._failed_polls += 1
            if self._failed_polls >= MAX_FAILED_POLLS:
                raise
            return []
        self._failed_polls = 0
        return views

    def done(self) -> bool:
        return all(_settled(s) for s in self._status.values())

    def cancel(self) -> None:
        live = [self._tasks[n] for n, s in self._status.items() if not _settled(s)]
        # only the jobs this `run` submitted: a run submitted again by another is not its to stop
        for view in cancel_runs(live, looked=self._jobs):
            assert view.status is not None  # these runs were submitted: each has a status file
            self._status[view.task.name] = view.status

    def stop(self, names: Sequence[str], reason: str) -> None:
        """``scancel`` each run's own job (its array task): Slurm sends SIGTERM, so the trainer saves
        its checkpoint, and SIGKILL after the cluster's KillWait, as for `sweepgen cancel`. Without
        waiting: ``poll`` reports the run cancelled with ``reason`` once Slurm has ended it (or
        finished, when it finished before the cancel landed)."""
        job_ids = []
        for name in names:
            status = self._status.get(name)
            if status is None or _settled(status) or name in self._stops:
                continue
            self._stops[name] = reason
            if status.ids.get("job_id"):
                job_ids.append(str(status.ids["job_id"]))
        slurm_query.scancel(job_ids)
        self._last_poll = float("-inf")  # ask Slurm at the next poll how they ended

    def stop_detached(self, task: RunTask, status: RunStatus, reason: str) -> bool:
        job_id = status.ids.get("job_id")
        if status.executor != self.name or not job_id or not self.is_alive(status):
            return False
        if not provably_ours([(task, status)]):  # a status file may name anyone's job
            return False
        slurm_query.scancel([str(job_id)])
        return True

    def _with_stop_reason(self, task: RunTask, status: RunStatus) -> RunStatus:
        """A run stop() cancelled ends with the node's (or Slurm's) plain "cancelled": record why."""
        reason = self._stops.get(task.name)
        if reason is None or status.state is not RunState.CANCELLED or status.reason == reason:
            return status
        stopped = replace(status, reason=reason)
        try:
            write_status(task.run_dir, stopped)
        except OSError as err:
            self.faults.append(f"could not write {task.run_dir / STATUS_FILE}: {err.strerror or err}")
        return stopped

    @classmethod
    def cancel_runs(cls, runs: Sequence[tuple[RunTask, RunStatus]], reason: str) -> list[str]:
        """scancel their jobs and wait until Slurm has ended them (``cancel_runs`` below); the runs
        whose status names a job that is not provably theirs (ownership.py), left alone. A run whose directory
        was deleted has no status file to name its job: the job its view names (from the journal) is
        scancelled directly. Only the jobs the statuses looked at name are cancelled, as the local
        executor stops only the supervisors it looked at: a run submitted again since (a `cancel`
        stopped between its look and this, another one ending the run, `--rerun-failed` submitting
        attempt 2) is left running and said so (watch.py), never cancelled unseen."""
        recorded = [task for task, _ in runs if read_status(task.run_dir) is not None]
        _cancel_unrecorded(runs, recorded)
        looked = {task.name: str(status.ids.get("job_id")) for task, status in runs}
        views = cancel_runs(recorded, looked=looked) if recorded else []
        # still live: a job its status names that Slurm knows under another name, left alone
        return [v.task.name for v in views if _live_job(v.status)]

    observer = "Slurm"

    @classmethod
    def observe(cls, tasks: Sequence[RunTask], *, persist: bool = True) -> list[RunView]:
        return observe(tasks, persist=persist)

    @classmethod
    def vanished(
        cls, tasks: Sequence[RunTask], gone: Sequence[RunTask], answer_s: float
    ) -> dict[str, RunView]:
        """Runs of ``gone`` the sweep's jobs journal says were submitted: queued or running when Slurm
        still holds the job (the queue decides, not the missing folder), else failed with that reason."""
        gone = [t for t in gone if not t.run_dir.exists()]  # (a folder there: not started, as it says)
        root = slurm_root([t.run_dir for t in tasks])
        # an unusable journal (a link, not JSON, a job id that is not Slurm's) is exit 2 naming it: shown
        # as never started, those runs would be submitted again while Slurm may still hold them
        submitted = submitted_as(read_journal(root / JOURNAL), root / JOURNAL)
        named = [t.name for t in gone if t.name in submitted]
        if not named:
            return {}
        held = _held_within(answer_s, named, root)
        return {t.name: _vanished_view(t, submitted[t.name], held) for t in gone if t.name in submitted}

    @classmethod
    def failure_log(cls, status: RunStatus) -> Path | None:
        return submitit_log(status)

    @classmethod
    def is_alive(cls, status: RunStatus) -> bool:
        job_id = status.ids.get("job_id")
        if not job_id:
            return False  # submitted but never recorded: the held array was cancelled
        # `run` asks this for every run of a sweep: one squeue per array, not one per run
        array_id = str(job_id).split("_", 1)[0]
        cached = _ALIVE_CACHE.get(array_id)
        if cached is None or time.monotonic() - cached[0] > POLL_MIN_INTERVAL_S:
            cached = (time.monotonic(), slurm_query.squeue([array_id]))
            _ALIVE_CACHE[array_id] = cached
        info = cached[1].get(str(job_id))
        return info is not None and not info.ended and ownership.plausibly_ours(info, status)

    # -- internals ------------------------------------------------------------------------------

    def _submitit_parameters(self, count: int) -> dict[str, Any]:
        r = self.resources
        params: dict[str, Any] = {
            "job_name": self.job_name,
            "time": r.time_min,
            "cpus_per_task": r.cpus_per_run,
            "signal_delay_s": r.signal_delay_s,
            # --jobs caps how many array tasks run at once; without it Slurm alone decides
            "array_parallelism": self.options.jobs or max(count, 1),
            "additional_parameters": {"hold": True, **({"mem": r.mem} if r.mem else {})},
        }
        if r.partition:
            params["partition"] = r.partition
        if r.gpus_per_run:
            params["gpus_per_node"] = r.gpus_per_run
        shape = self.shape
        if launch.multi(shape):
            # the header asks for the whole run: its nodes, a task per process, the GPUs of each node
            params["nodes"] = shape.nodes
            params["ntasks_per_node"] = shape.procs_per_node
            if shape.gpus_per_node:
                params["gpus_per_node"] = shape.gpus_per_node
            params["srun_args"] = launch.step_srun_args(shape, r.cpus_per_run)
        if r.sbatch_extra:
            # verbatim: sbatch reads #SBATCH lines up to the first command, and these come before it
            params["setup"] = [f"#SBATCH {line}" for line in r.sbatch_extra]
        return params


def observe(tasks: Sequence[RunTask], *, persist: bool = True) -> list[RunView]:
    """Each Slurm run's state: ask Slurm first, *then* read the status files (a job that Slurm says
    ended has already written its final state, unless it was killed). What can only be learned from
    Slurm (the job was cancelled, timed out, ran out of memory) is written to the status file with
    ``persist`` (`run`, `cancel`); without it (`status`, a reader) it is only shown."""
    ids = _job_ids(tasks)
    jobs, note = slurm_query.query_jobs(ids) if ids else ({}, None)
    views = []
    for task in tasks:
        status = read_status(task.run_dir)
        job = _job_of(status, jobs, task.run_dir)
        new = _said_declined(task, status, job, reconcile(task, status, job))
        if persist and new is not None and new is not status and _worth_keeping(status, new):
            note = _record_learned(task, status, new) or note
        views.append(RunView(task, _as_slurm_says(new, job), job, note=note))
    return views


def _said_declined(
    task: RunTask, status: RunStatus | None, job: slurm_query.JobInfo | None, new: RunStatus | None
) -> RunStatus | None:
    """A job that ended without recording the run's end because it declined to start it (the run's
    lock held by another process, or the run not this job's to start: task.py) says so, from its
    participants' decline note (ranks.py), rather than "the run recorded no end"; also where Slurm
    no longer (or, without accounting, never) says how the job ended: the note is the job's own
    record, written as it exited. Not for a job Slurm still runs or holds (a requeue)."""
    note = _decline_note(task, status, job, new)
    if note is None or status is None or new is None:
        return new
    job_id = status.ids.get("job_id")
    # a decline with exit 0 (the run finished already, or not this job's to start) is no exit of a
    # run: no exit code is recorded, and none is said beside "failed"
    code = note.exit_code or None
    return replace(
        new,
        state=RunState.FAILED,
        exit_code=code,
        ended=new.ended or utc_now(),
        reason=(
            f"its Slurm job {job_id} started nothing: the run {note.why} ({note.label} declined"
            f"{f', exit {code}' if code is not None else ''}; see the submitit log)"
        ),
    )


def _decline_note(
    task: RunTask, status: RunStatus | None, job: slurm_query.JobInfo | None, new: RunStatus | None
) -> ranks.Note | None:
    """The decline note (ranks.py) of the job ``status`` names, where it is that job's last word:
    the job is not live in Slurm, the status file records no end and was written before the note
    (an older note is not: a requeue started since), and Slurm said no other end (a cancel, a
    timeout stands)."""
    if status is None or new is None or not _unended_record(status, job, new):
        return None
    job_id = status.ids.get("job_id")
    if not job_id:
        return None
    try:
        written = runfs.lstat(task.run_dir / STATUS_FILE).st_mtime
    except OSError:
        return None
    return ranks.declined(task.run_dir, str(job_id), after=written)


def _unended_record(status: RunStatus, job: slurm_query.JobInfo | None, new: RunStatus) -> bool:
    """The status file records no end, Slurm runs or holds the job no more, and said no other end."""
    live = job is not None and not job.ended
    return status.state not in TERMINAL and not live and new.state in (RunState.FAILED, RunState.RUNNING)


def _job_ids(tasks: Sequence[RunTask]) -> list[str]:
    """The Slurm job ids the runs' status files name, all read before Slurm is asked."""
    statuses = [read_status(t.run_dir) for t in tasks]
    return [str(s.ids["job_id"]) for s in statuses if s and s.ids.get("job_id")]


def _job_of(
    status: RunStatus | None, jobs: Mapping[str, slurm_query.JobInfo], run_dir: Path
) -> slurm_query.JobInfo | None:
    """Slurm's view of the job the status names; None when Slurm has none, or the job is someone
    else's (a reused id on a recreated cluster, a status file naming another sweep's job)."""
    job = jobs.get(str(status.ids.get("job_id"))) if status else None
    return job if job is not None and ownership.plausibly_ours(job, status, run_dir) else None


def _record_learned(task: RunTask, seen: RunStatus | None, new: RunStatus) -> str | None:
    """Write what only Slurm knew to the run's status file, unless the file changed since it was
    ``seen`` (a requeued job's next attempt recorded its start meanwhile: written over, its attempt,
    start and earlier states were the last attempt's); the note when it cannot be written (the view
    is shown all the same; the next status or run learns it again)."""
    try:
        if read_status(task.run_dir) != seen:
            return None  # the node wrote since: its word is newer than what was learned from it
        write_status(task.run_dir, new)
    except OSError as err:
        return f"could not record what Slurm said in {task.run_dir / STATUS_FILE}: {err.strerror}"
    except SweepgenError:
        return None  # unreadable now: the next look reads it again
    return None


def _submitted_meanwhile(now: RunStatus | None) -> str:
    """Why a run whose status changed since the plan is not submitted: another `run` took it."""
    job = f", job {now.ids.get('job_id')}" if now and now.ids.get("job_id") else ""
    return (
        f"already submitted by another `sweepgen run` (now {now.state if now else 'gone'}{job}); "
        "not submitted again"
    )


def _unreleased_error(err: BaseException, array_id: str, restore_failed: Sequence[str]) -> UserError | None:
    """A held array that was recorded or released only in part was cancelled: the error that says so
    in the failure's words (a disk, or the controller); None for any other failure (re-raised as it is)."""
    if isinstance(err, OSError):  # a full or read-only disk under the status files or journal
        left = f"; could not restore {', '.join(restore_failed)}" if restore_failed else ""
        return UserError(
            f"could not write {err.filename or 'the run records'}: {err.strerror or err}; the "
            f"held job array {array_id} was cancelled before any run started{left}",
            hint="free space or fix the disk, then run the same command again",
        )
    if isinstance(err, UserError):
        return UserError(
            f"the held job array {array_id} could not be released ({err.message}); it was "
            "cancelled before any of its runs started, and their status files were restored",
            hint="check the controller (`scontrol ping`), then run the same command again",
        )
    return None


def _as_slurm_says(status: RunStatus | None, job: slurm_query.JobInfo | None) -> RunStatus | None:
    """What `status` shows: a requeued job that Slurm holds PENDING is pending, though its file keeps
    "running" (so nothing submits it a second time meanwhile)."""
    if status is None or job is None or status.state is not RunState.RUNNING:
        return status
    if job.state == "PENDING" or job.state in slurm_query.REQUEUE_STATES:
        return replace(status, state=RunState.PENDING)
    return status


def _worth_keeping(old: RunStatus | None, new: RunStatus) -> bool:
    """Endings only Slurm knows, and a requeue (the file said cancelled; Slurm will run it again)."""
    requeued = new.ids.get("slurm_state") == "REQUEUED" and (old is None or old.state in TERMINAL)
    return new.state in TERMINAL or requeued


def reconcile(  # noqa: C901, PLR0912 - one branch per (status, Slurm state) case, each unit-tested
    task: RunTask, status: RunStatus | None, job: slurm_query.JobInfo | None
) -> RunStatus | None:
    """The run's state from its status file and Slurm's view of its job; pure, so it is unit-tested.
    Returns ``status`` itself when nothing needs to be written."""
    if status is None:
        return None
    if is_finished(task.run_dir, status.done_file):
        if status.state is RunState.FINISHED:
            return status
        # a job gone while its status still says running: it ended before recording the end
        gone = status.state is RunState.RUNNING and (job is None or job.ended)
        reason = unrecorded_finish(status) if gone and status.done_file else None
        return replace(status, state=RunState.FINISHED, reason=reason, ended=status.ended or utc_now())
    if status.state is RunState.FINISHED:
        if status.done_file is None and status.exit_code == 0:
            return status  # held to exit 0 alone, and the node recorded exit 0
        # recorded as finished, but the proof is gone
        return replace(
            status, state=RunState.FAILED, reason=f"recorded as finished but {status.done_file} is missing"
        )
    if status.state in TERMINAL and job is not None and _requeued(job):
        # the run recorded its stop (SIGTERM looks the same for scancel and requeue), but Slurm holds
        # the same job to run it again: it is queued, not cancelled, and nothing may submit it twice
        return replace(
            status,
            state=RunState.RUNNING,
            reason=f"requeued by Slurm; Slurm {job.state}" + (f" ({job.reason})" if job.reason else ""),
            ended=None,
            exit_code=None,
            ids={**status.ids, "slurm_state": "REQUEUED"},
        )
    if status.state in TERMINAL and job is not None and _still_ending(job):
        # the node recorded its stop, but Slurm has not said how the job ended: the time limit, a
        # requeue and scancel all send the same SIGTERM, and a trainer Slurm killed first looks
        # failed. Not settled until Slurm's own word, which may outrank it (TIMEOUT) or run it again
        return replace(
            status,
            state=RunState.RUNNING,
            reason=f"ending: the run recorded {status.state.value}; Slurm {job.state}",
            ended=None,
            exit_code=None,
            # the node's TIMEOUT (its SIGUSR2) is no end yet either: shown as the word of an ended
            # run it said TIMEOUT beside "ending", and `status --wait` stopped following it there
            ids={k: v for k, v in status.ids.items() if k != "slurm_state"},
        )
    if status.state in TERMINAL:
        if (
            job is not None
            and job.ended
            and job.state in _SLURM_OVERRIDES
            and status.ids.get("slurm_state") != job.state
        ):
            state, reason = _SLURM_ENDINGS[job.state]
            return replace(status, state=state, reason=reason, ids={**status.ids, "slurm_state": job.state})
        return status
    if job is None:
        return status  # just submitted (sacct lags) or Slurm forgot it: shown as it is, not guessed
    if not job.ended:
        state = RunState.PENDING if job.state == "PENDING" else RunState.RUNNING
        reason = f"Slurm {job.state}" + (f" ({job.reason})" if job.reason else "")
        if status.ids.get("slurm_state") == "REQUEUED":
            reason = f"requeued by Slurm; {reason}"
        elif job.reason == "JobHeldUser" and status.started is None:
            reason += (
                "; held since its submission: if the `sweepgen run` that submitted it died before "
                "releasing it, `sweepgen run` again releases it"
            )
        return replace(status, state=state, reason=reason)  # in memory only: the file says "running"
    if job.state in _SLURM_ENDINGS:
        state, reason = _SLURM_ENDINGS[job.state]
    elif job.state == "COMPLETED":
        state, reason = RunState.FAILED, "the job ended but the run recorded no end"
    else:
        state, reason = (
            RunState.FAILED,
            (
                f"Slurm {job.state} (exit {job.exit_code or '?'}) before the run "
                f"recorded its end; see the submitit log"
            ),
        )
    return replace(
        status,
        state=state,
        reason=reason,
        ended=status.ended or utc_now(),
        ids={**status.ids, "slurm_state": job.state},
    )


def cancel_runs(
    tasks: Sequence[RunTask], *, wait_s: float = CANCEL_WAIT_S, looked: Mapping[str, str] | None = None
) -> list[RunView]:
    """scancel the live jobs of ``tasks``, wait until Slurm has ended them, and return their views
    (cancelled, or finished if a run beat the cancel). Never waits longer than ``wait_s``.
    ``looked``: run name -> the job id its status named when the caller looked; a run whose status
    names another job now (submitted again since) is not cancelled."""
    views = observe(tasks)
    live = [v for v in views if _live_job(v.status) and _as_looked(v.task, v.status, looked)]
    # only a job that is provably the run's (ownership.py): a status file may name anyone's
    job_ids = provably_ours([(v.task, v.status) for v in live if v.status is not None])
    if not job_ids:
        return views
    slurm_query.scancel(job_ids)
    _wait_ended(job_ids, wait_s)
    return [_cancelled_view(view, job_ids) for view in observe(tasks)]


def _as_looked(task: RunTask, status: RunStatus | None, looked: Mapping[str, str] | None) -> bool:
    """The run's status names the job it named when the caller looked (no look given: any)."""
    return looked is None or (status is not None and str(status.ids.get("job_id")) == looked.get(task.name))


def provably_ours(runs: Sequence[tuple[RunTask, RunStatus]], *, from_journal: bool = False) -> list[str]:
    """The job ids, among those the ``runs``' statuses name, that Slurm still runs or queues and
    that are provably those runs' jobs (ownership.py); ``from_journal``: the statuses were built
    from the jobs journal (the run folder is gone), which then names them already."""
    ids = [str(status.ids["job_id"]) for _, status in runs]
    if not ids:
        return []
    known = slurm_query.squeue(ids)
    proven = []
    for task, status in runs:
        job_id = str(status.ids["job_id"])
        job = known.get(job_id)
        latest = job_id if from_journal else _journal_job(task, status)
        if job is None or job.ended:
            continue  # nothing to cancel
        if ownership.why_not_ours(task, status, job, latest) is None:
            proven.append(job_id)
    return proven


def _journal_job(task: RunTask, status: RunStatus) -> str | None:
    """The job id of the run's latest submission, as the jobs journal the status points at says."""
    folder = ownership.journal_folder(task, status)
    if folder is None:
        return None
    return submitted_as(read_journal(folder / JOURNAL), folder / JOURNAL).get(task.name)


def _live_job(status: RunStatus | None) -> TypeGuard[RunStatus]:
    """A run whose status file names a Slurm job and has not recorded its end."""
    return status is not None and status.state not in TERMINAL and bool(status.ids.get("job_id"))


def _wait_ended(job_ids: Sequence[str], wait_s: float) -> None:
    """Until Slurm has ended every job of ``job_ids``; exit 2 naming those it has not after ``wait_s``."""
    deadline = time.monotonic() + wait_s
    while still := [j for j, info in slurm_query.squeue(job_ids).items() if j in job_ids and not info.ended]:
        if time.monotonic() > deadline:
            raise UserError(
                f"Slurm has not ended job(s) {', '.join(still)} {wait_s:.0f} s after scancel",
                hint="check `squeue` and the node; the status files were left as they were",
            )
        time.sleep(0.5)


def _cancelled_view(view: RunView, job_ids: Sequence[str]) -> RunView:
    """A run whose job we just cancelled: Slurm has ended it and sacct has not caught up yet, so
    its file is written as cancelled (a run that beat the cancel keeps its own end)."""
    status = view.status
    if _live_job(status) and str(status.ids.get("job_id")) in job_ids:
        status = replace(
            status,
            state=RunState.CANCELLED,
            reason=CANCEL_REASON,
            ended=utc_now(),
            ids={**status.ids, "slurm_state": "CANCELLED"},
        )
        write_status(view.task.run_dir, status)
    return RunView(view.task, status, view.job)


def _vanished_view(task: RunTask, job_id: str, held: dict[str, slurm_query.JobInfo] | None) -> RunView:
    """A submitted run whose directory is gone, as Slurm holds its job (``held`` None: Slurm did not
    answer)."""
    job = held.get(task.name) if held is not None else None
    if job is not None:  # Slurm still holds it: its state is the queue's, and it is not resubmitted
        state = RunState.PENDING if job.state == "PENDING" else RunState.RUNNING
        reason = f"its run directory {task.run_dir} is gone; Slurm still holds job {job_id} ({job.state})"
        return RunView(
            task,
            RunStatus(state, "slurm", reason=reason, ids={"job_id": job_id, "slurm_state": job.state}),
            job,
        )
    reason = f"its run directory {task.run_dir} is gone (submitted as Slurm job {job_id})"
    if held is None:
        reason += "; Slurm did not answer, so it may still hold that job"
    return RunView(task, RunStatus(RunState.FAILED, "slurm", reason=reason, ids={"job_id": job_id}))


def submitit_log(status: RunStatus, stream: str = "err") -> Path | None:
    """submitit's own log of the job (the wrapper's output: import errors, Slurm's messages)."""
    folder, job_id = status.ids.get("submitit_folder"), status.ids.get("job_id")
    if not folder or not job_id:
        return None
    return Path(str(folder)) / str(job_id) / f"{job_id}_0_log.{stream}"


def slurm_root(run_dirs: Sequence[Path]) -> Path:
    """``<runs root>/.sweepgen_slurm``: the runs root is the common parent of every run directory
    of the sweep (all of them, so it is the same whichever runs one submission starts)."""
    parents = [os.path.abspath(os.path.dirname(os.path.normpath(str(d))) or ".") for d in run_dirs]
    if not parents:
        raise UserError("the sweep has no runs", hint="render the spec again")
    root = Path(os.path.commonpath(parents)) / SLURM_DIR
    if root.is_symlink():  # committed or left in a shared runs folder: the journal is never read or
        # written through it (the run directories themselves are confined to the project already)
        raise ConfigError(
            f"{root} is a symbolic link",
            location=Location(str(root)),
            hint="sweepgen keeps the Slurm jobs journal and submitit's files in a plain folder; delete "
            "the link",
        )
    return root


JOB_PREFIX = ownership.JOB_PREFIX  # every job sweepgen submits is named so (job_name)


def job_name(lock: Lock, sweep_dir: Path | str) -> str:
    sweep = lock.sweep or Path(sweep_dir).name
    return JOB_PREFIX + re.sub(r"[^A-Za-z0-9._-]", "_", sweep)


def _executor_running(command: str) -> type[Any]:
    """submitit's SlurmExecutor, its jobs' command ``command`` (node_tasks.command) instead of
    submitit's own node program, which unpickles the job's file from the runs root."""
    import submitit

    class NoPickleExecutor(submitit.SlurmExecutor):
        @property
        def _submitit_command_str(self) -> str:
            return command

    return NoPickleExecutor


def _need_submitit() -> None:
    if importlib.util.find_spec("submitit") is None:
        raise UserError(
            "the Slurm executor needs submitit, which is not installed here",
            hint="pip install 'sweepgen[slurm]'",
        )


def held_jobs(names: Sequence[str], root: Path) -> dict[str, slurm_query.JobInfo]:
    """The runs among ``names`` whose latest submission Slurm still holds (queued, running,
    requeued): what the queue says of the job the journal names, never a guess from a missing
    folder. A run Slurm holds is never submitted again, even when its run directory was deleted."""
    latest = submitted_as(read_journal(root / JOURNAL), root / JOURNAL)
    jobs = {name: latest[name] for name in names if name in latest}
    if not jobs:
        return {}
    queue = slurm_query.squeue(jobs.values())
    return {n: queue[j] for n, j in jobs.items() if j in queue and not queue[j].ended}


RELEASED = "released"  # a journal entry's: false from its recording until `scontrol release` returned
_UNRECORDED_CANCELLED = (
    "cancelled job array {}: a `sweepgen run` submitted it and died before recording it (held as "
    "submitted: none of its runs started)"
)


def lost_arrays(root: Path) -> tuple[list[str], list[str]]:
    """The job arrays submitted from this runs root that Slurm still holds as submitted, by array
    id: those no journal entry names (their `sweepgen run` died before recording them), and those an
    entry records as not released yet (it died before releasing them). Asked under the submission
    lock, so no live submission is half done."""
    held = _held_as_submitted(root)
    if not held:
        return [], []
    released = _released(read_journal(root / JOURNAL))
    return [a for a in held if a not in released], [a for a in held if released.get(a) is False]


def _released(journal: Mapping[str, Any]) -> dict[str, object]:
    """Array id -> what its journal entry says of its release (None: nothing, an older sweepgen)."""
    return {str(a.get("array_job_id")): a.get(RELEASED) for a in journal["arrays"] if isinstance(a, dict)}


def _cancel_lost(root: Path, tasks: Sequence[RunTask]) -> list[str]:
    """Cancel what dead submissions of this runs root left held (``settle_for_cancel``), under its
    submission lock; what was cancelled, one line each."""
    unrecorded, unreleased = lost_arrays(root)
    held = _tasks_of(root, unreleased, {t.name for t in tasks})
    if not unrecorded and not held:
        return []
    slurm_query.scancel([*unrecorded, *held])
    _wait_ended([*unrecorded, *held], CANCEL_WAIT_S)
    for task in tasks:  # a status file naming one of them: cancelled (sacct lags)
        _cancelled_view(RunView(task, read_status(task.run_dir), None), held)
    said = [_UNRECORDED_CANCELLED.format(", ".join(unrecorded))] if unrecorded else []
    if held:
        said.append(
            f"cancelled job(s) {', '.join(held)}, held since a `sweepgen run` that died submitted them"
        )
    return said


def _tasks_of(root: Path, arrays: Sequence[str], names: set[str]) -> list[str]:
    """The job ids the journal gives the runs ``names`` in the arrays ``arrays``."""
    journal = read_journal(root / JOURNAL)
    entries = [e for e in journal["arrays"] if isinstance(e, dict) and str(e.get("array_job_id")) in arrays]
    return [job for name, job in submitted_as({"arrays": entries}, root / JOURNAL).items() if name in names]


def _held_as_submitted(root: Path) -> list[str]:
    """The arrays Slurm holds pending by their user's own ``--hold`` that are this user's, named as
    sweepgen names jobs, their batch script in ``root`` (where submitit writes it), in id order."""
    arrays = {
        q.job_id.split("_", 1)[0]
        for q in slurm_query.pending_of(ownership.me())
        if q.reason == "JobHeldUser" and q.name.startswith(JOB_PREFIX) and _script_in(q.script, root)
    }
    return sorted(arrays, key=int)


def _script_in(script: str, root: Path) -> bool:
    """Whether a job's batch script is one submitit wrote for this runs root (in its own folder)."""
    return os.path.isabs(script) and os.path.realpath(os.path.dirname(script)) == os.path.realpath(root)


def _mark_released(root: Path, array_id: str) -> list[str]:
    """Record in the journal that the array was released; what could not be written (a note: the
    array runs all the same, and only a held one is ever released again)."""
    path = root / JOURNAL
    try:
        journal = read_journal(path)
        for entry in journal["arrays"]:
            if isinstance(entry, dict) and str(entry.get("array_job_id")) == array_id:
                entry[RELEASED] = True
        write_json_atomic(path, journal)
    except (OSError, SweepgenError) as err:
        return [f"could not record in {path} that job array {array_id} was released: {err}"]
    return []


TASKS_FILE = "tasks_file"  # a journal entry's: the node tasks file its jobs read (node_tasks.py)


def prune_task_files(root: Path) -> list[str]:
    """Remove the node tasks files of the arrays Slurm no longer holds a job of (each ended, none
    pending, held or requeued: nothing reads the file again), under the submission lock; only
    files the journal names (``TASKS_FILE``, which `run` wrote) and ``node_tasks.remove`` finds this
    user's plain files. When Slurm does not answer, every file stays. What could not be recorded, as
    notes (nothing of a run depends on it)."""
    path = root / JOURNAL
    journal = read_journal(path)
    gone = _ended_with_task_files(journal)
    kept = _kept_in_shared_folder(root, journal, gone)
    if kept:
        return kept
    for entry in gone:  # one tried once: a file left (not this user's plain file) is not asked about again
        task_files.remove(root, entry.pop(TASKS_FILE))
    # written by a submission that never recorded its array: under the submission lock none is under
    # way, and its held array was cancelled (``settle``); one released by hand starts nothing anyway
    unrecorded = journal.pop(UNRECORDED_TASKS, None)
    for name in unrecorded if isinstance(unrecorded, list) else []:
        task_files.remove(root, name)
    if not gone and unrecorded is None:
        return []
    try:
        write_json_atomic(path, journal)
    except OSError as err:
        return [f"could not record in {path} which node tasks files were removed: {err.strerror or err}"]
    return []


_SHARED_FOLDER_KEPT = (
    "{count} node tasks file(s) of job arrays Slurm no longer holds stay in {root}: {why}, so "
    "sweepgen removes nothing there (whoever writes it could rename another file of yours to a tasks "
    "file's name before the removal); make it writable by you alone (`chmod go-w {root}`) and the "
    "next `sweepgen run` removes them"
)


def _kept_in_shared_folder(root: Path, journal: Mapping[str, Any], gone: list[dict[str, Any]]) -> list[str]:
    """The note where tasks files are due for removal in a folder others can write: nothing is
    removed there (``node_tasks.remove``), said at each `run` with the journal kept as it is, so the
    first `run` after the folder is made the person's alone removes them."""
    unrecorded = journal.get(UNRECORDED_TASKS)
    count = len(gone) + (len(unrecorded) if isinstance(unrecorded, list) else 0)
    shared = _shared_folder(root) if count else None
    return [_SHARED_FOLDER_KEPT.format(count=count, root=root, why=shared)] if shared else []


def _shared_folder(root: Path) -> str | None:
    """Why others can write the folder ``root`` (not its owner's, or writable by the group or every
    user: ``runfs.only_owner_writes``); None where only this user can (or it cannot be looked at:
    then nothing is removed either, and ``node_tasks.remove`` says nothing of it)."""
    try:
        fd = runfs.open_dir(root)
    except (OSError, ValueError):
        return None
    try:
        info = os.fstat(fd)
    finally:
        os.close(fd)
    if runfs.only_owner_writes(info, os.geteuid()):
        return None
    if info.st_uid != os.geteuid():
        return "the folder is another user's"
    return "every user can write the folder" if info.st_mode & 0o002 else "its group can write the folder"


def _ended_with_task_files(journal: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The journal's entries that name a tasks file and whose array Slurm holds no live job of
    (none when squeue does not answer: not known)."""
    named = {str(e.get("array_job_id")): e for e in journal["arrays"] if _names_task_file(e)}
    if not named:
        return []
    try:
        queue = slurm_query.squeue(named)
    except UserError:
        return []
    live = {job_id.split("_", 1)[0] for job_id, job in queue.items() if not job.ended}
    return [entry for array_id, entry in named.items() if array_id not in live]


UNRECORDED_TASKS = (
    "unrecorded_tasks_files"  # the journal's: tasks files written, their array not recorded yet
)


def _note_unrecorded(root: Path, name: str) -> None:
    """Name the tasks file just written in the journal until its array is recorded (``_record``)."""
    path = root / JOURNAL
    journal = read_journal(path)
    listed = journal.get(UNRECORDED_TASKS)
    journal[UNRECORDED_TASKS] = [*(listed if isinstance(listed, list) else []), name]
    write_json_atomic(path, journal)


def _drop_unrecorded(journal: dict[str, Any], name: str) -> None:
    listed = journal.get(UNRECORDED_TASKS)
    if isinstance(listed, list) and name in listed:
        listed.remove(name)
        if not listed:
            del journal[UNRECORDED_TASKS]


def _names_task_file(entry: object) -> TypeGuard[dict[str, Any]]:
    return isinstance(entry, dict) and TASKS_FILE in entry and str(entry.get("array_job_id")).isdigit()


def _first_line(err: BaseException) -> str:
    text = str(err).strip()
    lines = [ln for ln in text.splitlines() if ln.strip()]
    for ln in lines:
        if "error" in ln.lower():
            return ln.strip()
    return lines[0] if lines else type(err).__name__


def _settled(status: RunStatus) -> bool:
    """Nothing more will happen to it in this invocation: it ended, or it was never submitted."""
    return status.state in TERMINAL or status.state is RunState.SKIPPED


def _busy_submission(root: Path, holder: Holder | None = None) -> str:
    """`cancel`'s word on a submission lock held past SETTLE_WAIT_S (before, it waited up to ten
    minutes without a word behind a stopped `run`, then failed), naming its holder where known."""
    who = f" ({holder}; `kill -CONT {holder.pid}` lets it go on)" if holder and holder.stopped else ""
    who = who or (f" ({holder})" if holder else "")
    return (
        f"a `sweepgen run` has held this sweep's submission lock ({root / SUBMIT_LOCK}) for "
        f"{SETTLE_WAIT_S:g} s{who} (stopped? SIGSTOP or Ctrl-Z): it reads this cancel's request before it "
        "releases what it submits, and drops them (runs it released already are cancelled here "
        "as any); not waited for further"
    )


def _restore_status(run_dir: Path, previous: RunStatus | None) -> None:
    if previous is None:
        runfs.unlink(run_dir / STATUS_FILE)
    else:
        write_status(run_dir, previous)


def _still_ending(job: slurm_query.JobInfo) -> bool:
    """squeue, which is current, still holds the job live (COMPLETING, or RUNNING while the node
    writes): how it ended is not Slurm's word yet. sacct's RUNNING may only lag behind its end."""
    return job.source == "squeue" and not job.ended


def _requeued(job: slurm_query.JobInfo) -> bool:
    """Slurm holds the job to run it again. PENDING counts only from squeue, which is current: sacct
    lists an array task that has already run as PENDING until it catches up."""
    return job.state in slurm_query.REQUEUE_STATES or (job.state == "PENDING" and job.source == "squeue")


def _held_within(answer_s: float, named: Sequence[str], root: Path) -> dict[str, slurm_query.JobInfo] | None:
    """Slurm's jobs of these runs, asked within the time `status` gives Slurm (a hung squeue must not
    hold it); None where no Slurm answers here or it refused: not known whether it holds the job."""
    try:
        return within(answer_s, lambda: held_jobs(named, root))
    except SweepgenError:
        return None


def _cancel_unrecorded(runs: Sequence[tuple[RunTask, RunStatus]], recorded: Sequence[RunTask]) -> None:
    """scancel the jobs of runs whose directory was deleted: the job their view names (the journal)."""
    unrecorded = [(t, s) for t, s in runs if t not in recorded and s.ids.get("job_id")]
    if unrecorded:
        slurm_query.scancel(provably_ours(unrecorded, from_journal=True))
