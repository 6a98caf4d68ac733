"""`run --only` and `run --rerun-failed` on a search sweep: refused, exit 2, before anything is asked
or started (before: the option was ignored and the whole search ran, every trial it asks: runs
nobody asked for)."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest
from search_support import RUN_ARGS, sweepgen, write_search_project

from sweepgen.run.core.base import RunState, read_status, write_status
from sweepgen.run.core.stopping.stop_request import CANCELLED_ALONE, CANCELLED_BY_COMMAND
from sweepgen.run.local.executor import INTERRUPTED
from sweepgen.run.local.supervise import DROPPED
from sweepgen.run.search.advice import for_search
from sweepgen.run.slurm.executor import _SLURM_ENDINGS


def test_run_only_on_a_search_is_exit_2_and_starts_nothing(tmp_path):
    write_search_project(tmp_path, {"n": 3, "parallel": 1})
    assert sweepgen(tmp_path, "render", "specs/s.yaml").returncode == 0
    for extra in ((), ("--dry-run",)):
        refused = sweepgen(tmp_path, "run", "generated/fake_search", *RUN_ARGS, "--only", "t0000", *extra)
        assert refused.returncode == 2, refused.stdout + refused.stderr
        assert "Traceback" not in refused.stderr
        said = " ".join(refused.stderr.split())
        assert "--only t0000: a search sweep's runs are the trials its controller asks" in said
        assert "generated/fake_search" in said and "hint: leave --only out" in said
    assert not (tmp_path / "runs").exists() or not any((tmp_path / "runs").rglob("*.yaml"))
    assert not (tmp_path / "generated/fake_search/.search/study.journal").exists()
    # the search itself still runs, to its n trials
    assert sweepgen(tmp_path, "run", "generated/fake_search", *RUN_ARGS).returncode == 0


def test_run_rerun_failed_on_a_search_is_exit_2_and_status_never_advises_it(tmp_path):
    """`run --rerun-failed` on a search sweep was silently ignored (a plain run of the search), while
    the reasons `status` shows (a cancel, an interruption, Slurm's preemption or out-of-memory) told
    the user to use it. It is refused, exit 2, nothing asked or started; a search's reasons say what
    its next `run` does instead."""
    write_search_project(tmp_path, {"n": 1, "parallel": 1})
    assert sweepgen(tmp_path, "render", "specs/s.yaml").returncode == 0
    refused = sweepgen(tmp_path, "run", "generated/fake_search", *RUN_ARGS, "--rerun-failed")
    assert refused.returncode == 2 and "Traceback" not in refused.stderr, refused.stdout + refused.stderr
    said = " ".join(refused.stderr.split())
    assert "--rerun-failed: a search sweep never runs a failed trial again" in said, said
    assert "generated/fake_search" in said and "hint: leave --rerun-failed out" in said, said
    assert not (tmp_path / "generated/fake_search/.search/study.journal").exists()
    assert sweepgen(tmp_path, "run", "generated/fake_search", *RUN_ARGS).returncode == 0
    (status_file,) = (tmp_path / "runs").rglob("sweepgen_status.json")
    ended = read_status(status_file.parent)
    # as `cancel --only` leaves a run stopped before its end
    write_status(status_file.parent, replace(ended, state=RunState.CANCELLED, reason=CANCELLED_ALONE))
    (status_file.parent / "summary.json").unlink()
    shown = sweepgen(tmp_path, "status", "generated/fake_search", "--format", "json")
    (row,) = json.loads(shown.stdout)
    assert "--rerun-failed" not in row["reason"] and "raise search.n" in row["reason"], row
    assert read_status(status_file.parent).reason == CANCELLED_ALONE  # the file keeps the executor's words


@pytest.mark.parametrize(
    "reason",
    [
        INTERRUPTED,
        DROPPED,
        CANCELLED_BY_COMMAND,
        CANCELLED_ALONE,
        *(why for _, why in _SLURM_ENDINGS.values()),
        "its supervisor (pid 1) died and its trainer with it; what its trainer started still runs (pids 2: "
        "x): if that is only a helper (a logging service) the run is over and `sweepgen cancel --only RUN` "
        "ends it and records it cancelled (then `--rerun-failed` starts it again); a rank still trains: "
        "its end is recorded by nobody, so let it end, then `--rerun-failed`, or `sweepgen cancel` it",
    ],
)
def test_no_reason_a_search_shows_advises_rerun_failed(reason):
    said = for_search(reason)
    assert "--rerun-failed" not in said and said[:9] == reason[:9], said
