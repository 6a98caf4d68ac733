"""`report` on a runs folder finds each run's lock entry through the run dir the lock records, so it
reads each generated config once however many runs the sweep has (it used to read and hash every
config for every run: quadratic in runs)."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest
from run_support import make_sweep

from sweepgen.run.core.base import RunState, RunStatus, write_status
from sweepgen.run.report import collect as rep

N = 25


def sweep_of_finished_runs(root: Path, *, record_run_dirs: bool) -> None:
    names = [f"r{i:02d}" for i in range(N)]
    folder = make_sweep(root, {n: {} for n in names}, values={n: {"seed": i} for i, n in enumerate(names)})
    lock_path = folder / "sweep.lock.json"
    if record_run_dirs:  # as `render` writes it since lock version 3
        lock = json.loads(lock_path.read_text())
        for entry in lock["files"]:
            entry["run_dir"] = entry["config"]["output_dir"]
        lock_path.write_text(json.dumps(lock))
    for i, name in enumerate(names):
        run_dir = root / "runs/fake" / name
        run_dir.mkdir(parents=True)
        (run_dir / "summary.json").write_text(json.dumps({"final_reward": i / N, "steps": 1}))
        config = f"generated/fake/{name}.yaml"
        write_status(
            run_dir,
            RunStatus(RunState.FINISHED, "local", exit_code=0, sweep_dir="generated/fake", config=config),
        )


@pytest.fixture
def reads(monkeypatch: pytest.MonkeyPatch) -> Counter[str]:
    counted: Counter[str] = Counter()
    fingerprint = rep.config_fingerprint

    def counting(config_path: Path, data: bytes) -> str:
        counted[config_path.as_posix()] += 1
        return fingerprint(config_path, data)

    monkeypatch.setattr(rep, "config_fingerprint", counting)
    return counted


def test_each_config_is_read_once_when_the_lock_records_run_dirs(cli_cwd, reads):
    sweep_of_finished_runs(cli_cwd, record_run_dirs=True)
    report = rep.collect(Path("runs/fake"))
    assert report.values_from == "lock" and len(report.finished) == N
    assert [r.values for r in report.runs] == [{"grid.seed": i} for i in range(N)]
    assert len(reads) == N and set(reads.values()) == {1}


def test_an_older_lock_without_run_dirs_is_indexed_once_per_sweep(cli_cwd, reads):
    sweep_of_finished_runs(cli_cwd, record_run_dirs=False)
    report = rep.collect(Path("runs/fake"))
    assert [r.values for r in report.runs] == [{"grid.seed": i} for i in range(N)]
    # once to learn its run dir, once for the run it describes: linear, not N per run
    assert len(reads) == N and set(reads.values()) == {2}
