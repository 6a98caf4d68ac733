"""The search controller: keeps ``parallel`` trials running, with no batch barrier, until the study
holds exactly ``n`` finished trials (complete, pruned or failed).

Each round: poll the runs, report each trial's metric at every newly logged step to the pruner,
asking it after each report as a trainer calling Optuna does (stopping a pruned trial as a cancel
stops a run, so its checkpoint is kept), and tell each ended trial its final metric (the mean over
its ``repeats`` seeds; a NaN fails it). Then, under the controllers' shared lock
(``search_owner``): read the study, take over the trials a killed controller left running, and ask
Optuna for new points while a slot is free, so a slot freed this round is refilled this round; each
point is rendered through the compile pipeline (``search_trials``) and started through the
executor, or told as failed with the reason when the gate, a constraint or the schema refuses it.
Between rounds the executor's ``wait`` returns as soon as one of its runs ends. A stop request
(``search_stop``, written by `sweepgen cancel`) ends the asking; trials whose runs were cancelled are
left open in the study for the next `run`.

Exactly once: a trial number comes from the study and is never reused; a trial is told once, by the
controller that owns it; a trial whose controller died stays running in the study and is taken over:
told if its run finished, re-attached if its run still runs (the run's own lock says so), resumed in
its run directory otherwise. So a killed `run` followed by another reaches exactly ``n``, and two
`run`s on one search share its study and never start a trial twice. A run whose lock another
process holds when its start comes is skipped by the executor and followed here until its holder
lets go: started then, once, if it was never started, else told as it ended there. Nothing is
started again here once `sweepgen cancel` stopped the run or asked the search to stop, or once
sweepgen could not write its records (exit 2): the trial is told failed (`cancel --only`) or left
open for the next `run`. A re-attached run is reported to the pruner like any other and, when
pruned, stopped through ``Executor.stop_detached`` (its process group, or its Slurm job); a pruning
decision is in the study before anything is stopped, so a trial pruned by a controller that then
died is stopped and recorded as pruned, never resumed.
"""

from __future__ import annotations

import math
import statistics
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from sweepgen.compile.run_api import Spec
from sweepgen.compile.run_api import trials as search
from sweepgen.errors import SweepgenError
from sweepgen.run.core import runfiles, runlock
from sweepgen.run.core.advice import for_search
from sweepgen.run.core.base import (
    PRUNED_REASON,
    TERMINAL,
    Executor,
    RunState,
    RunStatus,
    RunTask,
    effective_state,
    is_finished,
    is_pruned_reason,
    read_status,
    unchanged_since,
    utc_now,
    write_status,
)
from sweepgen.run.core.registry import executor_class, status_is_alive
from sweepgen.run.core.stopping import queue_cancel
from sweepgen.run.core.stopping.stop_request import CANCELLED_ALONE, CANCELLED_BY_COMMAND
from sweepgen.run.logs import metrics
from sweepgen.run.search import best_value
from sweepgen.run.search import changes as search_changes
from sweepgen.run.search import owner as search_owner
from sweepgen.run.search import stop as search_stop
from sweepgen.run.search import study as search_study
from sweepgen.run.search.trials import Refused, TrialRenderer, clear_leftovers
from sweepgen.run.start.trl import trl_start

OWNER_ATTR = "sweepgen_controller"
REASON_ATTR = "sweepgen_reason"
# set when the pruner decides, before any run is stopped: a controller that takes the trial over
# (its predecessor killed before it saw its runs end) stops what still runs and never resumes it
PRUNING_ATTR = "sweepgen_pruning"
# a run not started again (let go unstarted by the process that held it, or ended without
# finishing under a controller that died) because `sweepgen cancel` stopped the search meanwhile
NOT_RESUMED = "not started again: the search was cancelled (`sweepgen cancel`)"
NOT_STARTED = "the search was cancelled (`sweepgen cancel`) as it was asked"
NOT_WRITTEN = "not started: sweepgen could not write its files"
# the reasons a whole-search `sweepgen cancel` leaves a run with (stopped, or dropped from the queue
# as its trial started): the search is cancelled, whatever became of its stop request since
_WHOLE_CANCEL = (CANCELLED_BY_COMMAND, queue_cancel.DROPPED)


@dataclass
class _LiveTrial:
    trial: Any  # optuna.trial.Trial
    tasks: list[RunTask]
    started: set[str] = field(default_factory=set)  # runs this controller's executor runs
    watched: set[str] = field(default_factory=set)  # runs a killed controller started, still running
    # runs our executor found held by another process when it came to start them (it skips them,
    # never starts them twice): each with its status as planned, to tell "let go unstarted" from
    # "run there" once the holder is gone
    elsewhere: dict[str, RunStatus | None] = field(default_factory=dict)
    planned: dict[str, RunStatus | None] = field(default_factory=dict)  # runs we started: status then
    ended: dict[str, RunStatus | None] = field(default_factory=dict)  # run -> how it ended
    reported: set[int] = field(default_factory=set)
    pruned: str | None = None  # why its pruner stopped it ("pruned at step 20 (asha)")

    @property
    def number(self) -> int:
        return int(self.trial.number)


class SearchController:
    def __init__(
        self, sweep_dir: Path, spec: Spec, make_executor: Callable[[], Executor], renderer: TrialRenderer
    ) -> None:
        self.optuna = search_study.import_optuna()
        self.sweep_dir = sweep_dir
        self.spec = spec
        self.block = search.block(spec)
        # made at the first start: the Slurm executor places its journal by the runs' folders, and
        # a search has no run before its first trial
        self._make_executor = make_executor
        self.executor: Executor | None = None
        self.renderer = renderer
        self.state_dir = search_study.state_dir(sweep_dir)
        self.study = search_study.open_study(sweep_dir, self.block)
        self.dists = search_study.distributions(self.block)
        # a spec changed since the study began is refused before anything is asked or told
        search_changes.check(self.study, spec, self.block, self.dists, str(self.state_dir))
        search_changes.record(self.study, self.block)
        self.owner = search_owner.Owner(self.state_dir)
        with search_owner.bookkeeping(self.state_dir):
            clear_leftovers(sweep_dir)  # a predecessor killed while writing a trial or the lock
            search_stop.withdraw(self.state_dir)  # this `run` goes on with a cancelled search
        self.live: dict[int, _LiveTrial] = {}
        self.events: list[str] = []  # one line per thing that happened, for the CLI to show
        self.warned: set[str] = set()  # the start checks' warnings told
        self.finished = 0  # trials in the study that are complete, pruned or failed
        # `sweepgen cancel` asked the search to stop (search_stop): nothing more is asked or told
        self.stopping = False
        self.left_open: list[str] = []  # trials whose cancelled runs were left for the next `run`
        # the executor could not write sweepgen's records (a full or read-only disk): as a grid does,
        # nothing more is asked or started; the runs started are followed to their end
        self.faulted = False

    def close(self) -> None:
        self.owner.close()

    # -- one round --------------------------------------------------------------------------------

    def step(self) -> bool:
        """One round; False once this controller has nothing left to run. The runs are followed
        first, so a slot freed by a trial told in this round is refilled in this round."""
        statuses = self.executor.poll() if self.executor is not None else {}
        # the round's journal lines are fsynced together: before any run starts (_start), and at
        # the end of the round (a tell followed by no ask)
        with search_study.deferred_sync(self.study):
            for live in list(self.live.values()):
                self._advance(live, statuses)
            if not self.faulted and self.faults:
                self._stop_for_faults()
            if self._asking():
                with search_owner.bookkeeping(self.state_dir):
                    trials = self.study.get_trials(deepcopy=False)
                    self._take_over(trials)
                    self._ask(trials)
        return bool(self.live) or (self._asking() and self._work_left())

    def _asking(self) -> bool:
        """Whether new trials may be asked and open ones taken over: not once `sweepgen cancel` asked
        the search to stop, nor once sweepgen could not write its records."""
        return not (self._stop_requested() or self.faulted)

    @property
    def faults(self) -> list[str]:
        """What sweepgen could not write (each names its path); `run` exits 2 with them."""
        return self.executor.faults if self.executor is not None else []

    def _stop_for_faults(self) -> None:
        self.faulted = True
        self.events.append(
            "sweepgen could not write its records (full or read-only disk?): no new trial is asked "
            "or started; the runs started are followed to their end; trials that never ran stay "
            "open in the study for the next `sweepgen run`"
        )

    def wait(self, timeout_s: float) -> None:
        """Until the next round: ``timeout_s`` (the metrics are read again then, for the pruner), or
        less when a run of ours ends first (its slot is refilled at once)."""
        if self.executor is None:
            time.sleep(timeout_s)
        else:
            self.executor.wait(timeout_s)

    def _stop_asking(self) -> None:
        self.stopping = True
        self.events.append(
            "the search was cancelled (`sweepgen cancel`): no new trial is asked; trials whose runs "
            "were cancelled stay open in the study for the next `sweepgen run` to resume"
        )

    def _work_left(self) -> bool:
        """Trials still to ask, or running trials no live controller owns (to take over)."""
        trials = self.study.get_trials(deepcopy=False)
        finished, running = self._counts(trials)
        if finished + running < self.block.n:
            return True
        state = self.optuna.trial.TrialState
        return any(
            t.state is state.RUNNING and not self.owner.is_alive(t.user_attrs.get(OWNER_ATTR)) for t in trials
        )

    def _started_by(self) -> Executor:
        if self.executor is None:
            self.executor = self._make_executor()
            # what a killed `run` of this search left half done (a trial's Slurm job submitted and
            # never released), before any trial's runs are judged by their status files
            self.executor.settle()
            self.events.extend(self.executor.notes)
            self.executor.notes.clear()
        return self.executor

    def _counts(self, trials: list[Any]) -> tuple[int, int]:
        state = self.optuna.trial.TrialState
        finished = sum(t.state in (state.COMPLETE, state.PRUNED, state.FAIL) for t in trials)
        running = sum(t.state is state.RUNNING for t in trials)
        return finished, running

    def _ask(self, trials: list[Any]) -> None:
        finished, running = self._counts(trials)
        self.finished = finished
        while (
            len(self.live) < self.block.parallel and finished + running < self.block.n and not self.stopping
        ):
            # a sampler seeded by (seed, trial number): a restarted controller does not replay the
            # points its predecessor already asked, and the same trial number gets the same seed.
            # The number is read from the study at each ask: counts kept here (finished + running)
            # repeat a number once a running trial ends between two asks, and two trials got one point
            self.study.sampler = search_study.sampler(
                self.block, salt=len(self.study.get_trials(deepcopy=False))
            )
            trial = self.study.ask(self.dists)
            trial.set_user_attr(OWNER_ATTR, self.owner.name)  # claimed before anything can fail
            running += 1
            if not self._start(trial, trial.params):
                finished += 1
        self.finished = finished

    def _take_over(self, trials: list[Any]) -> None:
        """Trials left running by a controller that died: told, re-attached or resumed."""
        state = self.optuna.trial.TrialState
        for frozen in trials:
            if len(self.live) >= self.block.parallel:
                return
            if frozen.state is not state.RUNNING or frozen.number in self.live:
                continue
            if self.owner.is_alive(frozen.user_attrs.get(OWNER_ATTR)):
                continue
            trial = self.optuna.trial.Trial(self.study, frozen._trial_id)
            trial.set_user_attr(OWNER_ATTR, self.owner.name)
            self.events.append(f"{search.trial_name(frozen.number)}: taken over from a stopped controller")
            params = frozen.params
            if set(params) != set(self.dists):
                # its controller died inside `ask`, between creating the trial and drawing its point
                # (each param is a journal line of its own): draw the rest as that ask would have
                self.study.sampler = search_study.sampler(self.block, salt=frozen.number)
                params = search_study.draw_missing(trial, self.dists)
            pruning = frozen.user_attrs.get(PRUNING_ATTR)
            self._start(trial, params, reported=set(frozen.intermediate_values), pruning=pruning)

    def _start(
        self,
        trial: Any,
        params: dict[str, Any],
        reported: set[int] | None = None,
        pruning: str | None = None,
    ) -> bool:
        """Render the trial and start (or re-attach to) its runs; False when it was refused.
        ``pruning``: a taken-over trial its pruner had stopped; nothing of it starts again."""
        name = search.trial_name(trial.number)
        rendered = self.renderer.render(trial.number, params)
        if not isinstance(rendered, Refused):
            rendered = self._startable(rendered)
        if isinstance(rendered, Refused):
            self._tell_failed(trial, f"refused before it ran: {rendered.reason}")
            self.events.append(f"{name}: refused ({rendered.reason})")
            return False
        if self._cancelled_before_start(name):
            return True
        search_study.sync(self.study)  # the trial as asked is on disk before any of its runs starts
        live = _LiveTrial(trial, rendered, reported=reported or set(), pruned=pruning)
        to_start = [task for task in rendered if self._to_start(live, task, pruning)]
        self.live[trial.number] = live
        if to_start:
            self._launch(live, to_start)
        self.events.append(f"{name}: started {_shown(params)}")
        return True

    def _cancelled_before_start(self, name: str) -> bool:
        """`sweepgen cancel` landed while the trial was asked and rendered: none of its runs starts,
        the trial stays open for the next `run` (as a cancelled trial's)."""
        if not self._stop_requested():
            return False
        self.left_open.append(name)
        self.events.append(f"{name}: not started: {NOT_STARTED}, left to resume")
        return True

    def _startable(self, tasks: list[RunTask]) -> list[RunTask] | Refused:
        """A trial the start checks refuse (sweepgen.run.start.trl.trl_start: a vLLM server a running
        trial's run names, a config TRL would fail on) is refused; one every trial would meet is
        the user's error (exit 2) while nothing of this `run` has started."""
        running = [t for live in self.live.values() for t in live.tasks if t.name not in live.ended]
        ex = self._started_by()
        sampled = [*self.block.axes, *(self.spec.model.derived or {})]
        at_once = ex.at_once(len(running) + len(tasks))
        found = trl_start.trial_refusal(
            self.sweep_dir,
            self.renderer.command,
            running,
            tasks,
            at_once,
            ex.name,
            sampled,
            ex.gpus_each(),
            self._warn_once,
        )
        if found is None:
            return tasks
        if found[1] and not self.live:
            raise found[0]
        return Refused(f"{found[0].message} (hint: {found[0].hint})")

    def _warn_once(self, line: str) -> None:
        """A start check's warning (a judgment not made), told once however many trials meet it
        (``warning: FILE:LINE:COL: TEXT``: each trial's own file, the same text)."""
        text = line.split(": ", 2)[-1]
        if text not in self.warned:
            self.warned.add(text)
            self.events.append(line)

    def _launch(self, live: _LiveTrial, tasks: Sequence[RunTask]) -> None:
        """Hand ``tasks`` to the executor with their status as seen now: one another process takes
        meanwhile is skipped there, and followed here (``_held_elsewhere``). A run of TRL's own
        script started again after an attempt on record resumes from its newest complete checkpoint
        (trl_start.resumed_trial), as a grid's run does."""
        planned = {t.name: read_status(t.run_dir) for t in tasks}
        # a run started again after an attempt on record resumes from its checkpoint, as a grid's
        command, note = self.renderer.command, self.events.append
        tasks = [trl_start.resumed_trial(self.sweep_dir, command, t, planned[t.name], note) for t in tasks]
        self._started_by().start(tasks, planned)
        live.planned.update(planned)
        live.started |= planned.keys()

    def _to_start(self, live: _LiveTrial, task: RunTask, pruning: str | None) -> bool:
        """Whether the trial's run is to be started (new, or resumed in its run directory from its
        checkpoint); else it is recorded as ended, or watched while its trainer outlives a killed
        controller (and stopped, if the trial was pruned)."""
        _record_observed(task)
        status = _as_it_is(task)
        if status is not None and (status.state is RunState.FINISHED or _pruned(status) or _failed(status)):
            live.ended[task.name] = status
        elif _still_running(task):
            live.watched.add(task.name)
            if pruning is not None:
                self._stop_detached(live, task)
        elif pruning is not None:
            live.ended[task.name] = self._record_pruned(task, status, pruning)
        else:
            return True
        return False

    # -- following a trial --------------------------------------------------------------------

    def _advance(self, live: _LiveTrial, statuses: dict[str, RunStatus]) -> None:
        for task in live.tasks:
            if task.name not in live.ended:
                self._follow(live, task, statuses.get(task.name))
        if live.pruned is None:
            self._report(live)
        if len(live.ended) == len(live.tasks):
            self._conclude(live)

    def _conclude(self, live: _LiveTrial) -> None:
        """A trial whose runs have all ended: told to the study, or left open where it was cancelled
        on request or a run of it was never started."""
        if live.pruned is None and self._cancelled_by_request(live):
            self._leave_open(live, "cancelled")
        elif live.pruned is None and any(
            s is not None and s.state is RunState.PENDING for s in live.ended.values()
        ):
            self._leave_open(live, "not started (sweepgen could not write its files)")
        else:
            self._tell(live)

    def _follow(self, live: _LiveTrial, task: RunTask, status: RunStatus | None) -> None:
        """A run not ended yet: ended once the executor that started it says so, or once the trainer
        a killed controller started (watched) is gone."""
        if task.name in live.started:
            self._follow_started(live, task, status)
        elif task.name in live.elsewhere and not _still_running(task):
            self._elsewhere_ended(live, task)
        elif task.name in live.watched and not _still_running(task):
            self._watched_ended(live, task)

    def _follow_started(self, live: _LiveTrial, task: RunTask, status: RunStatus | None) -> None:
        """A run our executor was asked to start: held by another process, ended, or never started."""
        if status is not None and status.state is RunState.SKIPPED:
            self._held_elsewhere(live, task, status)
        elif status is not None and status.state in TERMINAL:
            live.ended[task.name] = status
        elif self._started_by().done():  # neither queued nor running, never ended: not started
            live.ended[task.name] = status  # (the executor could not write its files)

    def _held_elsewhere(self, live: _LiveTrial, task: RunTask, status: RunStatus) -> None:
        """Our executor did not start the run: another process held its lock (or had changed its
        status) when it came to. Nothing of ours will end it: it is followed through its lock and
        status file until whoever holds it lets go."""
        live.started.discard(task.name)
        live.elsewhere[task.name] = live.planned.get(task.name)
        self.events.append(
            f"{search.trial_name(live.number)}: {task.name} not started here ({status.reason}); "
            "followed until its holder lets it go"
        )

    def _elsewhere_ended(self, live: _LiveTrial, task: RunTask) -> None:
        """The process that held the run is gone: the run ended as it recorded (a run it never
        started, its status still the one planned, is started here, once)."""
        untouched = unchanged_since(live.elsewhere.pop(task.name), read_status(task.run_dir))
        if not untouched or is_finished(task.run_dir, task.done_file):
            ended = _as_it_is(task)
            live.ended[task.name] = ended or RunStatus(
                RunState.FAILED, "local", reason="ended elsewhere without recording anything"
            )
        elif self._resume(live, task):
            name = search.trial_name(live.number)
            self.events.append(f"{name}: {task.name} let go unstarted; started here")

    def _watched_ended(self, live: _LiveTrial, task: RunTask) -> None:
        """A run a killed controller started has ended: finished, pruned, or resumed here."""
        live.watched.discard(task.name)
        _record_observed(task)
        status = _as_it_is(task)
        if status is not None and status.state is RunState.FINISHED:
            live.ended[task.name] = status  # (also when it finished before its stop landed)
        elif live.pruned is not None:  # stopped by _stop_detached: nobody else records it
            live.ended[task.name] = self._record_pruned(task, status, live.pruned)
        elif status is not None and (
            status.reason in (CANCELLED_BY_COMMAND, CANCELLED_ALONE) or _failed(status)
        ):
            # the user stopped it: ended as a cancelled run of ours is (left open while the search
            # is cancelled, else its trial told failed), never started again behind their back;
            # a run that failed by itself is told failed, as the controller that started it would
            live.ended[task.name] = status
        else:  # it ended without an end recorded (its supervisor killed with its `run`): resume it here
            self._resume(live, task)

    def _resume(self, live: _LiveTrial, task: RunTask) -> bool:
        """Start a run this controller did not start before (True), unless sweepgen can no longer
        write its files or the search is being cancelled (a request on disk it may not have read
        yet this round): then the run is left unstarted, its trial open for the next `run`."""
        if self.faulted:
            live.ended[task.name] = RunStatus(RunState.PENDING, "local", reason=NOT_WRITTEN)
        elif self._stop_requested():
            live.ended[task.name] = RunStatus(RunState.CANCELLED, "local", reason=NOT_RESUMED)
        else:
            self._launch(live, [task])
            return True
        return False

    def _stop_requested(self) -> bool:
        if not self.stopping and search_stop.requested(self.state_dir):
            self._stop_asking()
        return self.stopping

    def _cancelled_by_request(self, live: _LiveTrial) -> bool:
        """A run of the trial was cancelled (not pruned) while the search is asked to stop: the
        request is written before any run is stopped, so it is seen here."""
        cancelled = _cancelled_not_pruned(live.ended.values())
        if not self.stopping and any(s.reason in _WHOLE_CANCEL for s in cancelled):
            # a whole-search cancel's own words (`--only` has others), for a run it stopped or
            # dropped from the queue as it started: its request was on disk before, and a second
            # `sweepgen run` starting meanwhile withdrew it (it goes on with the search): the
            # cancel holds here all the same, never read as a failed trial to replace
            self._stop_asking()
        return bool(cancelled) and self._stop_requested()

    def _leave_open(self, live: _LiveTrial, why: str) -> None:
        """Not told: the trial stays running in the study, its controller (this one) gone when the
        next `run` starts, which takes it over and resumes its runs."""
        del self.live[live.number]
        name = search.trial_name(live.number)
        self.left_open.append(name)
        self.events.append(f"{name}: {why}, left to resume")

    def _curves(self, live: _LiveTrial) -> list[dict[int, float]]:
        """Each run's metric by step, NaN and infinities kept (a pruner must see a diverged run)."""
        curves = []
        for task in live.tasks:
            _, series = metrics.find_in_run(
                task.run_dir, self.block.metric, tensorboard=False, keep_non_finite=True
            )
            curves.append(dict(series.points) if series is not None else {})
        return curves

    def _report(self, live: _LiveTrial) -> None:
        """Each new step's mean metric over the trial's runs (the steps all of them logged, from
        ``min_steps`` on), in step order, each report followed by the pruner's question, as a
        trainer calling Optuna itself does (``report``, then ``should_prune``): a trainer that
        logged many steps since the last poll is decided at the first step its pruner would stop
        it, with the value of that step, whatever it logged after. Without pruning nothing is
        reported: each report is a journal write (and an fsync), and no decision would use it."""
        prune = self.block.prune
        if prune is None or prune.method == "none":
            return
        try:
            curves = self._curves(live)
        except runfiles.RunFileError:
            # a run's file unreadable now (a trainer_state.json mid-write, or garbage): its steps
            # are reported at a later round; if it stays so, the trial's end fails it with why
            return
        for step in _new_steps(curves, live.reported, prune.min_steps):
            live.trial.report(sum(c[step] for c in curves) / len(curves), step)
            live.reported.add(step)
            if live.trial.should_prune():
                self._prune(live, step)
                return

    def _prune(self, live: _LiveTrial, step: int) -> None:
        """The pruner stopped the trial at ``step``: recorded in the study, then its runs stopped
        (those that already ended, even finished, stay as they are: the trial is pruned at ``step``,
        as Optuna used directly would have pruned it)."""
        reason = f"{PRUNED_REASON} {step} ({self._prune_method()})"
        live.pruned = reason
        # the decision goes into the study first: a controller killed from here on leaves it
        # to the one that takes the trial over, which stops the runs and never resumes them
        live.trial.set_user_attr(PRUNING_ATTR, reason)
        ours = [t.name for t in live.tasks if t.name in live.started and t.name not in live.ended]
        if ours:
            self._started_by().stop(ours, reason)
        for task in live.tasks:
            if task.name in live.watched:
                self._stop_detached(live, task)  # re-attached: _advance records its end
            elif task.name not in live.started:
                live.ended.setdefault(task.name, None)  # nothing of ours to wait for
        self.events.append(f"{search.trial_name(live.number)}: {reason}")

    def _stop_detached(self, live: _LiveTrial, task: RunTask) -> None:
        """Stop a re-attached run (started by a controller that died) as a prune stops ours."""
        assert live.pruned is not None
        status = read_status(task.run_dir)
        if status is not None and self._started_by().stop_detached(task, status, live.pruned):
            return
        how = f"the {status.executor} executor's" if status is not None else "an unrecorded"
        self.events.append(
            f"{search.trial_name(live.number)}: {task.name} is {how} run and cannot be stopped from "
            "here; it runs to its end (complete if it finishes, else pruned)"
        )

    def _record_pruned(self, task: RunTask, status: RunStatus | None, reason: str) -> RunStatus | None:
        """A pruned trial's run that ended while no controller of ours followed it (it was stopped
        by a controller that died, or by ``_stop_detached``): nobody else writes its end, so its
        status file says so here, as the executor would have (cancelled, with the pruning reason)."""
        if status is None or status.state is RunState.FINISHED:
            return status
        pruned = replace(status, state=RunState.CANCELLED, reason=reason, ended=status.ended or utc_now())
        try:
            write_status(task.run_dir, pruned)
        except OSError as err:
            self.events.append(f"could not record {task.name} as pruned: {err.strerror or err}")
        return pruned

    def _prune_method(self) -> str:
        return self.block.prune.method if self.block.prune is not None else "none"

    def _tell(self, live: _LiveTrial) -> None:
        del self.live[live.number]
        name = search.trial_name(live.number)
        ended = [live.ended[t.name] for t in live.tasks]
        if live.pruned is not None or any(_pruned(s) for s in ended):
            self._tell_pruned(live, ended)
        elif all(s is not None and s.state is RunState.FINISHED for s in ended):
            self._tell_value(live, name)
        else:
            reason = _failed_reason(ended)
            self._tell_failed(live.trial, reason)
            self.events.append(f"{name}: failed ({reason})")
        self.finished += 1

    def _tell_pruned(self, live: _LiveTrial, ended: Sequence[RunStatus | None]) -> None:
        """A pruning decision holds even when a run finished before its stop landed: the study
        records what the pruner decided, at the step it decided (Optuna's own semantics)."""
        reason = live.pruned or next(s.reason for s in ended if _pruned(s) and s is not None)
        live.trial.set_user_attr(REASON_ATTR, reason)
        self.study.tell(live.trial, state=self.optuna.trial.TrialState.PRUNED)
        for task, status in zip(live.tasks, ended):
            if status is not None and status.state is RunState.FINISHED:
                self._note_outrun(task, status, reason)

    def _note_outrun(self, task: RunTask, status: RunStatus, reason: str | None) -> None:
        """A run that finished before its trial's pruning stopped it keeps its end (it did finish),
        with why the search does not count it: `status` shows it beside a trial that is pruned,
        never as a plain finished run of a pruned trial."""
        note = f"finished before its trial's stop landed; the trial is {reason or 'pruned'}, not complete"
        try:
            write_status(task.run_dir, replace(status, reason=note))
        except OSError as err:
            self.events.append(f"could not record {task.name}'s note: {err.strerror or err}")

    def _tell_value(self, live: _LiveTrial, name: str) -> None:
        """The mean of the runs' final values: a NaN (a diverged run) fails the trial with the
        reason, as Optuna fails an objective returning NaN; an infinity is told as it is, as Optuna
        tells it (never the last finite value, which could make a diverged run the best)."""
        finals = self._finals(live, name)
        if finals is None:
            return
        value = told_value([v for _, v in finals])
        if math.isnan(value):
            self._tell_diverged(live, name, finals)
            return
        if len(finals) > 1 and math.isfinite(value):
            live.trial.set_user_attr(best_value.VALUES_ATTR, [v for _, v in finals])
        self.study.tell(live.trial, value)
        self.events.append(f"{name}: complete, {self.block.metric} = {value:.6g}")

    def _finals(self, live: _LiveTrial, name: str) -> list[tuple[int, float]] | None:
        """Each run's (last step, value) of the metric; None when a run's file or its metric is
        missing, the trial then told failed with why."""
        try:
            curves = self._curves(live)
        except runfiles.RunFileError as err:  # the trial's own garbage is its failure, not the search's
            reason = f"{err.path} {err.reason}"
            self._tell_failed(live.trial, reason)
            self.events.append(f"{name}: failed ({reason})")
            return None
        finals = [(max(c), c[max(c)]) for c in curves if c]
        if len(finals) < len(live.tasks):
            self._tell_failed(live.trial, f"finished without logging `{self.block.metric}`")
            self.events.append(f"{name}: failed (no `{self.block.metric}` logged)")
            return None
        return finals

    def _tell_diverged(self, live: _LiveTrial, name: str, finals: list[tuple[int, float]]) -> None:
        at = ", ".join(f"{v} at step {step}" for step, v in finals)
        reason = f"its final `{self.block.metric}` is not a number ({at}): the run diverged?"
        self._tell_failed(live.trial, reason)
        self.events.append(f"{name}: failed ({reason})")

    def _tell_failed(self, trial: Any, reason: str) -> None:
        trial.set_user_attr(REASON_ATTR, for_search(reason))  # no grid advice (advice.py)
        self.study.tell(trial, state=self.optuna.trial.TrialState.FAIL)

    def interrupted(self) -> None:
        """After the executor stopped every run (Ctrl-C): the trials stay running in the study, so
        the next `run` takes them over and resumes them; nothing is told."""
        self.live.clear()


def _failed_reason(ended: Sequence[RunStatus | None]) -> str:
    """Why a trial failed: the first of its runs that did not finish, in that run's words."""
    failed = next((s for s in ended if s is not None and s.state is not RunState.FINISHED), None)
    if failed is None or not failed.reason:
        return "a run did not finish"
    return for_search(failed.reason)  # its executor's advice said the search's way (advice.py)


def _still_running(task: RunTask) -> bool:
    """A run started by a controller that is gone, still going: its trainer holds the run's lock,
    or the executor that started it says its process or job lives (a Slurm job still queued)."""
    if runlock.is_held(task.run_dir):
        return True
    status = read_status(task.run_dir)
    return status is not None and status.state not in TERMINAL and status_is_alive(status)


def _record_observed(task: RunTask) -> None:
    """How a run a killed controller started ended, where only its executor's observer knows it (a
    Slurm job past its time, out of memory, failed before its node recorded the end): asked as
    `status` asks it and recorded as `run` records it before it plans (Executor.observe), so the
    trial taken over is told what its run did, as the controller that started it would have been,
    never started again past an end Slurm knows. An observer that cannot be asked leaves the file as
    it is (its run is judged by it, as before)."""
    try:
        status = read_status(task.run_dir)
        if status is None or status.state in TERMINAL:
            return
        executor = executor_class(status.executor)
        if executor.observer is not None:
            executor.observe([task], persist=True)
    except (SweepgenError, OSError):
        return


def _as_it_is(task: RunTask) -> RunStatus | None:
    """The run's status with the state the proof on disk gives it: a run whose controller was killed
    still says running in its status file, though its done file says it finished."""
    status = read_status(task.run_dir)
    state, reason = effective_state(task.run_dir, status, status_is_alive)
    if state is None:
        return None
    if status is None:
        return RunStatus(state, "local", reason=reason)
    return replace(status, state=state, reason=reason)


def _failed(status: RunStatus) -> bool:
    """A run recorded failed with an exit status (its trainer's, recorded by its supervisor; or its
    supervisor's, recorded by the `run` that started it), or cancelled alone by `cancel --only`: a
    true end, which a live controller tells failed, so one taking the trial over tells it too
    instead of running it a second time. A run whose end nobody recorded (lost: its status still
    said running) has no exit status, and is resumed."""
    if status.state is RunState.CANCELLED:
        return status.reason == CANCELLED_ALONE
    # an end its executor's observer recorded (a Slurm job's TIMEOUT, OUT_OF_MEMORY) is true too
    said = status.exit_code is not None or status.ids.get("slurm_state") is not None
    return status.state is RunState.FAILED and said


def _pruned(status: RunStatus | None) -> bool:
    return bool(status and status.state is RunState.CANCELLED and is_pruned_reason(status.reason))


def _cancelled_not_pruned(ended: Iterable[RunStatus | None]) -> list[RunStatus]:
    """The ended runs of a trial that were cancelled, not pruned."""
    return [s for s in ended if s is not None and s.state is RunState.CANCELLED and not _pruned(s)]


def _shown(params: dict[str, Any]) -> str:
    return ", ".join(f"{k}={v:.4g}" if isinstance(v, float) else f"{k}={v!r}" for k, v in params.items())


def told_value(finals: Sequence[float]) -> float:
    """A trial's value: the mean of its repeats' final values, exact and rounded once. A plain sum
    rounds at each step and in order: three repeats at 0.95 were told 0.9499999999999998 and
    (0.9, 1.0, 0.95) 0.9500000000000001, so one was "best" by a rounding and `tied with` missed
    the other. A NaN or an infinity stays one (a diverged repeat is told as diverged)."""
    return float(statistics.mean(finals))


def _new_steps(curves: list[dict[int, float]], reported: set[int], min_steps: int) -> list[int]:
    """The steps every run logged, after the last one reported, in order; steps before
    ``min_steps`` decide nothing (asha/hyperband rungs and median's warm-up start there)."""
    last = max(reported, default=min_steps - 1)
    return sorted(s for s in set.intersection(*(set(c) for c in curves)) if s > last)
