"""`run` as one function over any sweep (sweepgen.run.sweep.start.run): a search sweep goes to the
search controller, any other to run_sweep; and the search a `report` is of, with the metric and mode
it reports by, decided below the CLI."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from run_support import make_sweep
from search_support import RUN_ARGS, cli, sweepgen, write_search_project
from spec_support import write_project

from sweepgen.compile import api
from sweepgen.errors import UserError
from sweepgen.run.core.sweepfile.sweep_state import RunOptions
from sweepgen.run.search.study import journal_path
from sweepgen.run.sweep.grid import RunRequest, RunResult
from sweepgen.run.sweep.start import SearchResult, list_matrix, report_target, run

SEARCH = Path("generated") / "fake_search"
FAST_BASE = {"x": 0.5, "y": 0.5, "steps": 2, "step_s": 0.01, "seed": 0, "noise": 0.0, "output_dir": None}


class Silent:
    def note(self, line: str) -> None:
        raise AssertionError(f"nothing to note on a dry run: {line}")

    def say(self, line: str) -> None:
        raise AssertionError(f"no event on a dry run: {line}")

    def following(self, decisions):
        raise AssertionError("a dry run follows nothing")


@pytest.fixture
def search_project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    api.render([str(write_search_project(tmp_path, {}))])
    return tmp_path


def test_a_grid_sweep_runs_through_run_sweep(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    make_sweep(tmp_path, {"a": {}})
    result = run(
        RunRequest(Path("generated/fake"), RunOptions(command="true {config}"), dry_run=True), Silent()
    )
    assert isinstance(result, RunResult) and result.code == 0
    assert [d.task.name for d in result.decisions] == ["a"]


def test_a_search_sweep_goes_to_the_search_and_a_dry_run_starts_nothing(search_project):
    result = run(RunRequest(SEARCH, RunOptions(), dry_run=True), Silent())
    assert isinstance(result, SearchResult) and result.code == 0
    assert result.plan is not None and result.plan.startswith("search fake_search: 6 trials, 2 at once")
    assert not journal_path(SEARCH).exists()  # no study was opened


def test_a_search_is_reported_by_its_own_metric_and_mode_unless_told(search_project):
    assert report_target(SEARCH, None, "max", mode_given=False).spec is None  # no study yet: no search
    journal_path(SEARCH).parent.mkdir(parents=True, exist_ok=True)
    journal_path(SEARCH).touch()
    target = report_target(SEARCH, None, "min", mode_given=False)
    assert (target.search_dir, target.metric, target.mode) == (SEARCH, "score", "max")
    assert report_target(SEARCH, None, "min", mode_given=True).mode == "min"
    assert report_target(SEARCH, "loss", "min", mode_given=True).metric == "loss"


def test_list_matrix_is_one_row_per_variant_with_its_varying_values(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "specs").mkdir()
    (tmp_path / "templates").mkdir()
    spec = write_project(tmp_path, "grid: {training.seed: [1, 2]}\n")
    table = list_matrix(str(spec.relative_to(tmp_path)), "generated")
    assert table.title == "specs/demo.yaml: 2 variant(s)"
    assert table.columns == ["variant", "training.seed"]
    assert table.rows == [["seed1", 1], ["seed2", 2]]
    assert table.doc["variants"][0] == {"name": "seed1", "values": {"training.seed": 1}}


def test_list_reads_a_searchs_trials_under_the_configured_output_root(tmp_path):
    # [tool.sweepgen] output = "out": `list` must find the trials there, as render and run did
    write_search_project(tmp_path, {"n": 2, "parallel": 2}, base={**FAST_BASE})
    (tmp_path / "pyproject.toml").write_text('[tool.sweepgen]\noutput = "out"\n')
    assert cli(tmp_path, "render", "specs/s.yaml").returncode == 0
    done = sweepgen(tmp_path, "run", "out/fake_search", *RUN_ARGS)
    assert done.returncode == 0, done.stdout + done.stderr
    listed = sweepgen(tmp_path, "list", "specs/s.yaml", "--format", "json")
    assert listed.returncode == 0, listed.stderr
    variants = json.loads(listed.stdout)["variants"]
    assert [v["name"] for v in variants] == ["t0000", "t0001"]
    assert {v["state"] for v in variants} == {"complete"}


@pytest.mark.parametrize(
    "search", [{"parallel": 1_000_000}, {"parallel": 33, "repeats": 2, "seed_path": "seed"}]
)
def test_a_spec_alone_cannot_start_thousands_of_trials_at_once(tmp_path, monkeypatch, search):
    """`search.parallel: 1000000` started as many trainer processes as the search had trials (up to
    100,000 x repeats): the machine is the person's, so past 64 at once only `--jobs` allows it."""
    monkeypatch.chdir(tmp_path)
    api.render([str(write_search_project(tmp_path, {"n": 100_000, **search}))])
    # refused before the plan too, so a dry run shows it (and a regression starts nothing here)
    with pytest.raises(UserError, match="more than a spec alone may start") as info:
        run(RunRequest(SEARCH, RunOptions(command="true {config}"), dry_run=True), Silent())
    at_once = search["parallel"] * search.get("repeats", 1)
    assert info.value.location is not None and info.value.location.path.endswith("specs/s.yaml")
    assert info.value.location.line > 0 and f"--jobs {at_once}" in (info.value.hint or "")
    assert not journal_path(SEARCH).exists() and not (tmp_path / "runs").exists()  # nothing started
    allowed = run(
        RunRequest(SEARCH, RunOptions(command="true {config}", jobs=at_once), dry_run=True), Silent()
    )
    assert isinstance(allowed, SearchResult) and allowed.code == 0


def test_a_search_whose_program_is_not_there_opens_no_study(search_project):
    """A search's trials would each fail to start (and be told failed to the study): refused first."""
    options = RunOptions(command="sweepgen-no-such-trainer-xyz {config}")
    with pytest.raises(UserError, match="not on PATH") as refused:
        run(RunRequest(SEARCH, options), Silent())
    assert refused.value.location is not None and str(refused.value.location) == "--command"
    assert not journal_path(SEARCH).exists()
