"""What sweepgen reads back from a run or sweep folder is data: the search's stop request,
a run's ``.sweepgen-stop.json``, the Slurm jobs journal, Optuna's study journal and a status file's
``sweep_dir`` and pid are never followed through a link, never block, never name a path outside the
project, and never make sweepgen signal a process that is not the run's own supervisor. The
hostile corpus (tests/fixtures/hostile) runs the same surfaces through the CLI; these pin each rule
at its function."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from run_support import FAKE_COMMAND, make_sweep
from search_support import cli, sweepgen

from sweepgen.errors import ConfigError
from sweepgen.run.core import runfiles
from sweepgen.run.core.base import RunState, RunStatus, read_status, this_host, write_status
from sweepgen.run.core.stopping import stop_request
from sweepgen.run.core.sweepfile import sweep_origin
from sweepgen.run.local import liveness
from sweepgen.run.search import stop as search_stop
from sweepgen.run.slurm import executor as slurm

DEADLINE_S = 60.0  # a loaded machine: generous, only a hang reaches it


def _term_pending(pid: int) -> bool:
    """Is a SIGTERM pending on ``pid`` (which blocks it)? Read from /proc: deterministic, no sleep."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("ShdPnd:"):
            return bool(int(line.split()[1], 16) & (1 << (signal.SIGTERM - 1)))
    raise AssertionError("no ShdPnd line")


def _naming(pid: int) -> dict[str, object]:
    """The ids a supervisor records, naming ``pid`` (with its start time and host) as it."""
    ids = {"pid": pid, "pgid": pid, "trainer_pgid": pid, "host": this_host()}
    return {**ids, "proc_start": liveness.proc_start_ticks(pid)}


@pytest.fixture
def victim():
    """A process of this user, in its own group, that blocks SIGTERM so one sent stays pending."""
    code = (
        "import signal, sys, time\n"
        "signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGTERM})\n"
        "print('ready', flush=True)\n"
        "time.sleep(600)\n"
    )
    proc = subprocess.Popen(
        [sys.executable, "-c", code], stdout=subprocess.PIPE, start_new_session=True, text=True
    )
    assert proc.stdout is not None and proc.stdout.readline() == "ready\n"
    yield proc
    proc.kill()
    proc.wait(timeout=DEADLINE_S)


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="reads signal masks from /proc")
def test_cancel_never_signals_a_process_a_status_file_names(victim, tmp_path: Path):
    """A status file (a shared runs folder, a pull request) names a live process of the user with
    the host, start time and trainer group a supervisor records: `sweepgen cancel` must not SIGTERM
    its group, for that process is not the run's supervisor (it holds no lock of the run)."""
    run_dir = tmp_path / "runs" / "a"
    run_dir.mkdir(parents=True)
    (run_dir / ".sweepgen.lock").write_bytes(b"")
    ids = _naming(victim.pid)
    status = RunStatus(RunState.RUNNING, "local", ids=ids)
    # pid and start time alone would pass; that process is no supervisor, so the run is not alive
    assert not liveness.supervisor_alive(status)
    assert liveness.request_stop(run_dir, status, "cancelled") is False
    assert not _term_pending(victim.pid)
    assert not (run_dir / stop_request.STOP_FILE).exists()
    for pid in (0, 1, True, -victim.pid):  # our own group, init, a bool, a negative group
        hostile = RunStatus(RunState.RUNNING, "local", ids={**ids, "pid": pid})
        assert liveness.request_stop(run_dir, hostile, "cancelled") is False
    os.killpg(victim.pid, signal.SIGTERM)  # the observation can fail: a sent SIGTERM is seen
    assert _term_pending(victim.pid)


def test_supervises_proves_the_lock_is_held_by_that_process(tmp_path: Path):
    """The positive side: a process started as the supervisor is, holding the run's lock at the
    fd its command line names, is recognised; the same command line holding another file is not."""
    run_dir = tmp_path / "a"
    run_dir.mkdir()
    lock = run_dir / ".sweepgen.lock"
    lock.write_bytes(b"")
    other = tmp_path / "other.lock"
    other.write_bytes(b"")
    for held, expected in ((lock, True), (other, False)):
        fd = os.open(held, os.O_RDWR)
        code = "import sys, time; print('ready', flush=True); time.sleep(600)"
        # the supervisor's argv shape: python -m sweepgen.run.local.supervise LOCK_FD JOB_FD -- ...
        argv = [sys.executable, "-c", code, liveness.SUPERVISOR_MODULE, str(fd), "0", "--", "x"]
        proc = subprocess.Popen(argv, pass_fds=(fd,), stdout=subprocess.PIPE, text=True)
        os.close(fd)
        try:
            assert proc.stdout is not None and proc.stdout.readline() == "ready\n"
            assert liveness.supervises(proc.pid, run_dir) is expected
        finally:
            proc.kill()
            proc.wait(timeout=DEADLINE_S)


def test_a_stop_reason_is_never_read_through_a_link_nor_from_a_fifo(tmp_path: Path):
    outside = tmp_path / "outside.json"
    outside.write_text(json.dumps({"reason": "OUTSIDE"}))
    linked, fifo, plain = (tmp_path / n for n in ("linked", "fifo", "plain"))
    for d in (linked, fifo, plain):
        d.mkdir()
    (linked / stop_request.STOP_FILE).symlink_to(outside)
    os.mkfifo(fifo / stop_request.STOP_FILE)
    stop_request.ask(plain, "cancelled by `sweepgen cancel`\n::error::x")
    started = time.monotonic()
    assert stop_request.reason(linked) is None
    assert stop_request.reason(fifo) is None
    assert time.monotonic() - started < DEADLINE_S
    assert stop_request.reason(plain) == "cancelled by `sweepgen cancel`"  # one line, never more
    stop_request.ask(linked, "again")  # written: the link replaced, never written through
    assert json.loads(outside.read_text()) == {"reason": "OUTSIDE"}
    assert stop_request.reason(linked) == "again"


def test_a_stop_request_or_a_rank_note_nested_deep_is_no_request(tmp_path: Path):
    """A run folder's stop request or Slurm rank note nested a thousand deep (a shared runs folder's,
    a pull request's) was a RecursionError in the supervisor reading it; it is read as nothing."""
    from sweepgen.run.slurm import ranks

    (tmp_path / stop_request.STOP_FILE).write_text('{"reason": ' + "[" * 5000 + "]" * 5000 + "}")
    assert stop_request.reason(tmp_path) is None and not stop_request.is_graceful(tmp_path)
    ranks.write_note(tmp_path, "1.0", "rank1", 0)
    (tmp_path / ranks.NOTES_DIR / "1.0.rank2.json").write_text("[" * 5000 + "]" * 5000)
    assert [n.label for n in ranks.notes(tmp_path, "1.0", besides="rank0")] == ["rank1"]


def test_a_search_stop_request_is_a_plain_file_sweepgen_wrote(tmp_path: Path):
    state = tmp_path / ".search"
    state.mkdir()
    target = tmp_path / "outside"
    target.write_text("x")
    (state / search_stop.REQUEST).symlink_to(target)
    assert not search_stop.requested(state)  # a link is no request, and is not followed
    search_stop.withdraw(state)
    assert target.read_text() == "x" and not (state / search_stop.REQUEST).is_symlink()
    search_stop.request(state)
    assert search_stop.requested(state)


def test_the_slurm_jobs_journal_is_read_as_data(tmp_path: Path):
    journal = tmp_path / "jobs.json"
    outside = tmp_path / "outside.json"
    outside.write_text(json.dumps({"arrays": [{"runs": {"5": "a"}}]}))
    journal.symlink_to(outside)
    with pytest.raises(runfiles.RunFileError, match="symbolic link"):
        slurm.read_journal(journal)
    journal.unlink()
    journal.write_text('{"arrays": [\n  {"runs": {"1": "a",}}\n]}\n')
    with pytest.raises(runfiles.RunFileError) as err:
        slurm.read_journal(journal)
    assert str(err.value.location) == f"{journal}:2:22"  # the `}` after the comma
    journal.write_text("[" * 100_000)
    with pytest.raises(runfiles.RunFileError, match="nested"):
        slurm.read_journal(journal)
    journal.write_text(json.dumps({"arrays": [{"runs": {"12; rm -rf ~": "a"}}]}))
    with pytest.raises(ConfigError) as bad:
        slurm.submitted_as(slurm.read_journal(journal), journal)
    assert bad.value.key == "arrays[0].runs" and "not a Slurm job id" in bad.value.message
    journal.write_text(json.dumps({"arrays": [{"runs": {"12": "a", "13_4": "b"}}]}))
    assert slurm.submitted_as(slurm.read_journal(journal), journal) == {"a": "12", "b": "13_4"}


def test_cancel_never_scancels_a_job_a_status_file_names_that_sweepgen_did_not_submit(tmp_path, monkeypatch):
    """A status file (a shared runs folder, a pull request) says a run is running as Slurm job 4242,
    which is the user's own week-long training: `cancel` must not scancel it, and `status` must not
    show that job's state as the run's."""
    from sweepgen.run.core.base import RunTask, write_status
    from sweepgen.run.slurm import query as slurm_query

    run_dir = tmp_path / "runs" / "a"
    run_dir.mkdir(parents=True)
    write_status(run_dir, RunStatus(RunState.RUNNING, "slurm", ids={"job_id": "4242"}))
    theirs = slurm_query.JobInfo("4242", "RUNNING", name="my-week-long-training", source="squeue")
    monkeypatch.setattr(slurm_query, "query_jobs", lambda ids: ({"4242": theirs}, None))
    monkeypatch.setattr(slurm_query, "squeue", lambda ids: {"4242": theirs})
    scancelled: list[str] = []
    monkeypatch.setattr(slurm_query, "scancel", lambda ids: scancelled.extend(ids))
    task = RunTask("a", "a", tmp_path / "a.yaml", run_dir, ("true",))
    slurm.cancel_runs([task], wait_s=1.0)
    assert scancelled == []
    status = RunStatus(RunState.RUNNING, "slurm", ids={"job_id": "4242"})
    assert slurm.SlurmExecutor.cancel_runs([(task, status)], "cancelled") == ["a"]  # said, exit 1
    assert scancelled == []
    (view,) = slurm.observe([task], persist=False)
    assert view.job is None  # not that job's
    # a job sweepgen submitted for it is still found by its id and name
    ours = slurm_query.JobInfo("4242", "RUNNING", name="sweepgen-x", source="squeue")
    monkeypatch.setattr(slurm_query, "query_jobs", lambda ids: ({"4242": ours}, None))
    write_status(
        run_dir, RunStatus(RunState.RUNNING, "slurm", ids={"job_id": "4242", "job_name": "sweepgen-x"})
    )
    (view,) = slurm.observe([task], persist=False)
    assert view.job == ours


def test_the_slurm_folder_is_never_a_link(tmp_path: Path):
    (tmp_path / "runs").mkdir()
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "runs" / slurm.SLURM_DIR).symlink_to(tmp_path / "elsewhere")
    with pytest.raises(ConfigError, match="symbolic link"):
        slurm.slurm_root([tmp_path / "runs" / "a", tmp_path / "runs" / "b"])


def test_the_study_journal_is_opened_without_following_links(tmp_path: Path):
    from sweepgen.run.search import journal_file, study

    sweep = tmp_path / "sweep"
    (sweep / ".search").mkdir(parents=True)
    outside = tmp_path / "outside.journal"
    outside.write_text("")
    journal = sweep / ".search" / study.JOURNAL
    journal.symlink_to(outside)
    with pytest.raises(ConfigError, match="symbolic link"):
        journal_file.open_in_state(journal, os.O_RDONLY)
    journal.unlink()
    os.mkfifo(journal)
    started = time.monotonic()
    for flags in (os.O_RDONLY, os.O_WRONLY | os.O_APPEND):
        with pytest.raises(ConfigError, match="not a regular file"):
            journal_file.open_in_state(journal, flags)
    assert time.monotonic() - started < DEADLINE_S
    journal.unlink()
    flock = sweep / ".search" / (study.JOURNAL + ".flock")
    flock.symlink_to(tmp_path / "created-outside")  # O_CREAT through a dangling link would create it
    with pytest.raises(ConfigError, match="symbolic link"):
        journal_file.open_in_state(flock, os.O_RDWR | os.O_CREAT)
    assert not (tmp_path / "created-outside").exists()
    flock.unlink()
    # the backend still is Optuna's journal: a study written and read back through it
    import optuna

    storage = study.storage(sweep)
    made = optuna.create_study(storage=storage, study_name="s", direction="maximize")
    made.optimize(lambda t: t.suggest_float("x", 0, 1), n_trials=3)
    again = optuna.load_study(study_name="s", storage=study.storage(sweep))
    assert [t.value for t in again.trials] == [t.value for t in made.trials] and len(again.trials) == 3
    assert outside.read_text() == ""


def _project(tmp_path: Path) -> Path:
    project = tmp_path / "project"
    (project / "generated" / "s").mkdir(parents=True)
    (project / "generated" / "s" / "sweep.lock.json").write_text("{}")
    (project / "pyproject.toml").write_text("[project]\nname = 'p'\n")
    (project / "runs" / "a").mkdir(parents=True)
    elsewhere = tmp_path / "outside" / "specs"
    elsewhere.mkdir(parents=True)
    (elsewhere / "sweep.lock.json").write_text("{}")
    (project / "lnk").symlink_to(tmp_path / "outside")
    return project


def test_a_status_files_sweep_dir_is_resolved_inside_the_project(tmp_path: Path, monkeypatch):
    project = _project(tmp_path)
    monkeypatch.chdir(project)
    run_dir = Path("runs/a")
    found = sweep_origin.locate(run_dir, "generated/s")
    assert found is not None and found.sweep_dir == Path("generated/s")
    assert sweep_origin.locate(run_dir, "lnk/specs") is None  # textually inside, a link leads out
    assert sweep_origin.locate(run_dir, "outside/specs") is None  # found only above the project
    assert sweep_origin.locate(run_dir, str(tmp_path / "outside" / "specs")) is None
    monkeypatch.chdir(project / "runs")  # from a folder inside: found above the run, in the project
    found = sweep_origin.locate(Path("a"), "generated/s")
    assert found is not None and Path(found.root).resolve() == project.resolve()
    assert sweep_origin.locate(Path("a"), "outside/specs") is None
    assert sweep_origin.locate(Path("a"), "lnk/specs") is None


def _slurm_run(tmp_path: Path, job_id: str, journal_job: str) -> tuple:
    """Run ``a`` of sweep ``x`` recorded running as Slurm job ``job_id``; the jobs journal beside it
    names ``journal_job`` as a's latest submission (and ``job_id`` as b's)."""
    from sweepgen.run.core.base import RunTask, write_status

    root = tmp_path / "runs" / slurm.SLURM_DIR
    root.mkdir(parents=True)
    runs = {journal_job: "a"} | ({job_id: "b"} if job_id != journal_job else {})
    (root / slurm.JOURNAL).write_text(json.dumps({"arrays": [{"array_job_id": "40", "runs": runs}]}))
    run_dir = tmp_path / "runs" / "a"
    run_dir.mkdir()
    ids = {"job_id": job_id, "job_name": "sweepgen-x", "submitit_folder": str(root)}
    status = RunStatus(RunState.RUNNING, "slurm", ids=ids)
    write_status(run_dir, status)
    return RunTask("a", "a", tmp_path / "a.yaml", run_dir, ("true",)), status


@pytest.mark.parametrize("whose", ["another user's", "another folder's", "another run's", "the run's own"])
def test_cancel_scancels_a_job_of_the_sweeps_name_only_when_it_is_provably_the_runs(
    tmp_path, monkeypatch, whose
):
    """A status file naming a job that bears the sweep's job name is not proof enough: another
    user's sweep of the same name, a copy of the project elsewhere, another run of this sweep (or
    an older attempt) all run jobs named so. Only the job Slurm says is this user's, submitted from
    the folder that holds the run, and that the jobs journal names as the run's latest, is
    scancelled; the others are left alone and named (cancel exits 1)."""
    import pwd

    from sweepgen.run.slurm import query as slurm_query

    me = pwd.getpwuid(os.getuid()).pw_name
    user, workdir, journal_job = me, str(tmp_path), "40_0"
    if whose == "another user's":
        user = "alice"
    elif whose == "another folder's":
        workdir = str(tmp_path.parent / "elsewhere")
    elif whose == "another run's":
        journal_job = "40_1"  # a's latest is 40_1; 40_0 is b's
    task, status = _slurm_run(tmp_path, "40_0", journal_job)
    job = slurm_query.JobInfo(
        "40_0", "RUNNING", name="sweepgen-x", source="squeue", user=user, workdir=workdir
    )
    scancelled: list[str] = []
    ended = slurm_query.JobInfo(
        "40_0", "CANCELLED", name="sweepgen-x", source="squeue", user=user, workdir=workdir
    )
    monkeypatch.setattr(slurm_query, "query_jobs", lambda ids: ({"40_0": ended if scancelled else job}, None))
    monkeypatch.setattr(slurm_query, "squeue", lambda ids: {"40_0": ended if scancelled else job})
    monkeypatch.setattr(slurm_query, "scancel", lambda ids: scancelled.extend(ids))
    if whose in ("another user's", "another folder's"):  # `status` and `run` do not take its state
        monkeypatch.setattr(slurm, "_ALIVE_CACHE", {})
        (view,) = slurm.observe([task], persist=False)
        assert view.job is None
        if whose == "another user's":  # (a status alone names no folder to compare)
            assert not slurm.SlurmExecutor.is_alive(status)
    left = slurm.SlurmExecutor.cancel_runs([(task, status)], "cancelled by `sweepgen cancel`")
    if whose == "the run's own":
        assert scancelled == ["40_0"] and left == []
    else:
        assert scancelled == [] and left == ["a"]  # said, exit 1


@pytest.mark.parametrize("whose", ["another user's", "another folder's", "the run's own"])
def test_status_takes_an_ended_jobs_state_only_when_sacct_says_it_is_this_users_from_this_folder(
    tmp_path, monkeypatch, whose
):
    """A status file naming a job of the sweep's job name that has ended (so only sacct knows it):
    before, the job name alone decided, and `status` and `run` took the state of another user's
    job, or of a copy of the project elsewhere, as the run's. sacct is asked who submitted the job
    and from which folder, as squeue is for live jobs. The fake sacct answers the fields it is
    asked for, in their order."""
    import pwd

    from sweepgen.run.slurm import query as slurm_query

    me = pwd.getpwuid(os.getuid()).pw_name
    record = {"JobID": "40_0", "State": "FAILED", "JobName": "sweepgen-x", "ExitCode": "1:0"}
    record |= {"Elapsed": "00:00:03", "User": me, "WorkDir": str(tmp_path)}
    if whose == "another user's":
        record["User"] = "alice"
    elif whose == "another folder's":
        record["WorkDir"] = str(tmp_path.parent / "elsewhere")
    task, _ = _slurm_run(tmp_path, "40_0", "40_0")

    def answer(argv: list[str], **_: object) -> str:
        if argv[0] != "sacct":
            return ""  # squeue: the job has ended
        fields = argv[argv.index("-o") + 1].split(",")
        return "|".join(record[f] for f in fields) + "\n"

    monkeypatch.setattr(slurm_query, "_run", answer)
    monkeypatch.setattr(slurm_query, "require", lambda tool: tool)
    (view,) = slurm.observe([task], persist=False)
    if whose == "the run's own":
        assert view.job is not None and view.job.state == "FAILED", view
    else:
        assert view.job is None, view


def test_a_status_naming_a_live_process_that_is_no_supervisor_is_lost_not_running_for_ever(
    victim, tmp_path: Path
):
    """A status file written as a supervisor writes it (its trainer group, boot, start time), but
    naming a live process of the user that is no supervisor (read from /proc: a shared runs folder,
    a pull request): before, `status` showed the run RUNNING for ever, `run` waited for it ("another
    `sweepgen run` is running") and `cancel` said it ran on another machine. Now it is lost (failed),
    `--rerun-failed` runs it once, and that process is never signalled."""
    make_sweep(tmp_path, {"a": {"steps": 1}})
    run = tmp_path / "runs" / "fake" / "a"
    run.mkdir(parents=True)
    ids = {**_naming(victim.pid), "boot_id": liveness.boot_id(), "run_dir": str(run.resolve())}
    started = "2026-01-01T00:00:00.000+00:00"
    write_status(run, RunStatus(RunState.RUNNING, "local", started=started, command=["x"], ids=ids))
    shown = cli(tmp_path, "status", "generated/fake", "--format", "json")
    (row,) = json.loads(shown.stdout)
    assert row["state"] == "FAILED" and "lost" in row["reason"], row
    again = sweepgen(tmp_path, "run", "generated/fake", "--command", FAKE_COMMAND, "--rerun-failed")
    assert again.returncode == 0 and "Traceback" not in again.stderr, again.stdout + again.stderr
    status = read_status(run)
    assert status is not None and status.state is RunState.FINISHED and status.attempt == 2, status
    assert len((run / "starts.jsonl").read_text().splitlines()) == 1  # started once, here
    assert victim.poll() is None and not _term_pending(victim.pid)


def test_a_status_files_reason_is_shown_on_one_line(tmp_path: Path):
    """A reason read from a status file is data: its line breaks are shown escaped, in the table and
    in the heading of the run's log, so it cannot print a line of its own (a forged run, a CI
    workflow command)."""
    make_sweep(tmp_path, {"r0": {"steps": 1}, "r1": {"steps": 1}})
    forged = "boom\nr1 FINISHED all good\n::error::x"
    write_status(tmp_path / "runs/fake/r0", RunStatus(RunState.FAILED, "local", exit_code=1, reason=forged))
    shown = cli(tmp_path, "status", "generated/fake")
    printed = (shown.stdout + shown.stderr).splitlines()
    assert not any(text.strip().startswith(("r1 FINISHED", "::error")) for text in printed), printed
    assert sum("boom\\nr1 FINISHED all good\\n" in text for text in printed) == 2, printed
