"""`run --only` and `run --rerun-failed` on a search sweep: refused, exit 2, before anything is asked
or started (before: the option was ignored and the whole search ran, every trial it asks: runs
nobody asked for)."""

from __future__ import annotations

import ast
import json
from dataclasses import replace
from pathlib import Path

import pytest
from search_support import RUN_ARGS, cli, sweepgen, write_search_project

import sweepgen as sweepgen_package
from sweepgen.run.core.advice import for_search
from sweepgen.run.core.base import RunState, read_status, write_status
from sweepgen.run.core.stopping import queue_cancel
from sweepgen.run.core.stopping.stop_request import CANCELLED_ALONE, CANCELLED_BY_COMMAND
from sweepgen.run.local.executor import INTERRUPTED
from sweepgen.run.local.supervise import DROPPED, DROPPED_ALONE
from sweepgen.run.slurm.executor import _SLURM_ENDINGS


def test_run_only_or_rerun_failed_on_a_search_is_exit_2_and_status_never_advises_it(tmp_path):
    """`run --only` and `run --rerun-failed` on a search sweep were silently ignored (the whole
    search ran), and the reasons `status` shows for a search's runs (a cancel, an interruption,
    Slurm's preemption or out-of-memory) advised `--rerun-failed`. Both are refused, exit 2, nothing
    asked or started; a search's reasons say what its next `run` does instead."""
    write_search_project(tmp_path, {"n": 2, "parallel": 1})
    assert cli(tmp_path, "render", "specs/s.yaml").returncode == 0
    only = "--only t0000: a search sweep's runs are the trials its controller asks"
    rerun = "--rerun-failed: a search sweep never runs a failed trial again"
    for option, why, extra in (
        (("--only", "t0000"), only, ()),
        (("--only", "t0000"), only, ("--dry-run",)),
        (("--rerun-failed",), rerun, ()),
    ):
        refused = sweepgen(tmp_path, "run", "generated/fake_search", *RUN_ARGS, *option, *extra)
        assert refused.returncode == 2, refused.stdout + refused.stderr
        assert "Traceback" not in refused.stderr
        said = " ".join(refused.stderr.split())
        assert why in said and "generated/fake_search" in said, said
        assert f"hint: leave {option[0]} out" in said, said
    assert not (tmp_path / "runs").exists() or not any((tmp_path / "runs").rglob("*.yaml"))
    assert not (tmp_path / "generated/fake_search/.search/study.journal").exists()
    # the search itself still runs, to its n trials
    assert sweepgen(tmp_path, "run", "generated/fake_search", *RUN_ARGS).returncode == 0
    status_file = next((tmp_path / "runs").rglob("sweepgen_status.json"))
    ended = read_status(status_file.parent)
    # as `cancel --only` leaves a run stopped before its end
    write_status(status_file.parent, replace(ended, state=RunState.CANCELLED, reason=CANCELLED_ALONE))
    (status_file.parent / "summary.json").unlink()
    shown = cli(tmp_path, "status", "generated/fake_search", "--format", "json")
    (row,) = [r for r in json.loads(shown.stdout) if r["state"] == "CANCELLED"]
    assert "--rerun-failed" not in row["reason"] and "raise search.n" in row["reason"], row
    assert read_status(status_file.parent).reason == CANCELLED_ALONE  # the file keeps the executor's words


@pytest.mark.parametrize(
    "reason",
    [
        INTERRUPTED,
        DROPPED,
        DROPPED_ALONE,
        queue_cancel.DROPPED_ALONE,
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


def test_every_reason_maker_takes_its_rerun_advice_from_one_place():
    """The executors, supervisors and readers that make a run's reason (run/core, run/local,
    run/slurm) give `--rerun-failed` advice only through run/core/advice.py, where its search
    wording is made beside it: no reason of theirs carries advice a search must guess from its text
    (before: ~10 literals, reworded afterwards by regular expressions)."""
    run = Path(sweepgen_package.__file__).parent / "run"
    found = []
    for path in sorted(p for room in ("core", "local", "slurm") for p in (run / room).rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        if path.name == "advice.py" or "--rerun-failed" not in text:
            continue
        tree = ast.parse(text)
        docs = {
            id(node.body[0].value)
            for node in ast.walk(tree)
            if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
            and node.body
            and isinstance(node.body[0], ast.Expr)
        }
        found += [
            f"{path.relative_to(run)}:{node.lineno}"
            for node in ast.walk(tree)
            if isinstance(node, ast.Constant)
            and isinstance(node.value, str)
            and "--rerun-failed" in node.value
            and id(node) not in docs
        ]
    assert not found, found
