"""`sweepgen report`: rows from the lock's varying values, seed aggregation, CSV (golden), PNG, and
the CLI's failure modes. Run directories are written by hand here, so every number is known."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import given
from hypothesis import strategies as st
from run_support import make_sweep

from sweepgen.cli import main
from sweepgen.errors import UserError
from sweepgen.run.core.base import RunState, RunStatus, write_status
from sweepgen.run.report import collect as rep

# beta × seed, each run a linear reward curve over 4 steps
RUNS = {
    "b0.01_s1": ({"beta": 0.01, "seed": 1}, [0.1, 0.2, 0.3, 0.4]),
    "b0.01_s2": ({"beta": 0.01, "seed": 2}, [0.3, 0.4, 0.5, 0.6]),
    "b0.04_s1": ({"beta": 0.04, "seed": 1}, [0.2, 0.5, 0.7, 0.9]),
    "b0.04_s2": ({"beta": 0.04, "seed": 2}, None),  # not finished: failed at step 2
}


def write_run(
    run_dir: Path,
    rewards: list[float] | None,
    *,
    sweep_dir: str | None = "generated/fake",
    config_path: str | None = None,
) -> None:
    run_dir.mkdir(parents=True, exist_ok=True)
    logged = rewards if rewards is not None else [0.0, 0.1]
    (run_dir / "metrics.jsonl").write_text(
        "".join(json.dumps({"step": i + 1, "reward_mean": r}) + "\n" for i, r in enumerate(logged))
    )
    if rewards is not None:
        (run_dir / "summary.json").write_text(
            json.dumps(
                {
                    "final_reward": rewards[-1],
                    "best_reward": max(rewards),
                    "steps": len(rewards),
                    "wall_time_s": 12.5 * len(rewards),
                    "degenerate": False,
                    "diversity": {"n_samples": 8, "unique_ratio": 0.75, "mean_pairwise_jaccard": 0.125},
                }
            )
        )
    state = RunState.FINISHED if rewards is not None else RunState.FAILED
    write_status(
        run_dir,
        RunStatus(state, "local", exit_code=0 if rewards else 3, sweep_dir=sweep_dir, config=config_path),
    )


@pytest.fixture
def sweep(cli_cwd):
    make_sweep(cli_cwd, {n: {} for n in RUNS}, values={n: v for n, (v, _) in RUNS.items()})
    for name, (_, rewards) in RUNS.items():
        write_run(cli_cwd / "runs/fake" / name, rewards, config_path=f"generated/fake/{name}.yaml")
    return cli_cwd


def test_rows_carry_the_lock_values_and_summaries(sweep):
    report = rep.collect(Path("generated/fake"))
    assert report.varying == ("grid.beta", "grid.seed") and report.values_from == "lock"
    assert report.out_dir == Path("runs/fake")
    rows = {r["run"]: r for r in rep.rows(report)}
    assert rows["b0.04_s1"]["grid.beta"] == 0.04 and rows["b0.04_s1"]["final_reward"] == 0.9
    assert rows["b0.04_s1"]["diversity.unique_ratio"] == 0.75
    assert rows["b0.04_s2"]["state"] == "failed" and rows["b0.04_s2"]["final_reward"] is None


def test_a_runs_folder_reports_the_same_as_its_sweep_folder(sweep):
    assert rep.rows(rep.collect(Path("runs/fake"))) == rep.rows(rep.collect(Path("generated/fake")))


def test_runs_without_a_lock_get_their_varying_values_from_config_yaml(tmp_path):
    for name, beta in (("x", 0.1), ("y", 0.2)):
        write_run(tmp_path / name, [0.5], sweep_dir=None)
        (tmp_path / name / "config.yaml").write_text(
            f"run_name: {name}\noutput_dir: runs/{name}\ngrpo: {{beta: {beta}, steps: 4}}\n"
        )
    report = rep.collect(tmp_path)
    assert report.values_from == "config.yaml" and report.varying == ("grpo.beta",)
    assert [r.values for r in report.runs] == [{"grpo.beta": 0.1}, {"grpo.beta": 0.2}]


def test_seeds_are_aggregated_as_mean_and_min_max_band(sweep):
    curves = {c.label: c for c in rep.curves(rep.collect(Path("generated/fake")))}
    assert set(curves) == {"grid.beta=0.01", "grid.beta=0.04"}  # one line per variant, seed folded
    low = curves["grid.beta=0.01"]
    assert low.runs == ("b0.01_s1", "b0.01_s2") and low.steps == (1, 2, 3, 4)
    assert low.mean == pytest.approx((0.2, 0.3, 0.4, 0.5))
    assert low.low == pytest.approx((0.1, 0.2, 0.3, 0.4)) and low.high == pytest.approx((0.3, 0.4, 0.5, 0.6))
    high = curves["grid.beta=0.04"]  # the unfinished seed is left out of the curve
    assert high.runs == ("b0.04_s1",) and high.mean == high.low == high.high


def test_curves_use_only_steps_every_seed_logged(tmp_path):
    def record(name, curve):
        return rep.RunRecord(name, tmp_path / name, RunState.FINISHED, {"seed": 1}, {}, tuple(curve))

    report = rep.Report(
        ("seed",), (record("a", [(1, 0.0), (2, 1.0)]), record("b", [(2, 3.0), (3, 5.0)])), tmp_path, "lock"
    )
    (curve,) = rep.curves(report)
    assert curve.steps == (2,) and curve.mean == (2.0,)
    assert curve.notes and "1 steps logged by all 2 runs" in curve.notes[0]


@pytest.mark.parametrize(
    "path,seed",
    [
        ("seed", True),
        ("training.seed", True),
        ("data_seed", False),  # one rule for grouping and curves: the last part is exactly `seed`
        ("seeds_per_prompt", False),
        ("grpo.beta", False),
        ("reseed.n", False),
    ],
)
def test_seed_paths(path, seed):
    from sweepgen.run.report import groups as grp

    assert (grp.seed_plan(None, [path, "lr"]).path == path) is seed


flat_configs = st.lists(
    st.dictionaries(st.sampled_from(["a", "b", "c.d", "c.e"]), st.integers(0, 2), min_size=1),
    min_size=1,
    max_size=5,
)


def _nest(flat):
    out = {}
    for path, value in flat.items():
        node = out
        *parents, leaf = path.split(".")
        for p in parents:
            node = node.setdefault(p, {})
        node[leaf] = value
    return out


@given(flat_configs)
def test_varying_values_are_exactly_the_paths_that_differ(configs):
    varying, values = rep.varying_values([_nest(c) for c in configs])
    for path in {p for c in configs for p in c}:
        seen = {repr(c.get(path, "<missing>")) for c in configs}
        assert (path in varying) == (len(seen) > 1)
    assert values == [{p: c.get(p) for p in varying} for c in configs]


def test_csv_matches_golden(sweep, golden):
    golden("report/report.csv", rep.csv_text(rep.collect(Path("generated/fake"))))


@pytest.mark.train  # the PNG needs matplotlib, from the [train] extra
def test_cli_prints_the_table_and_writes_csv_and_a_deterministic_png(sweep):
    result = CliRunner().invoke(main, ["report", "generated/fake"])
    assert result.exit_code == 0, result.output
    assert "CSV: runs/fake/report.csv" in result.stdout and "PNG: runs/fake/report.png" in result.stdout
    assert "b0.04_s1" in result.stdout and "0.900" in result.stdout
    assert "b0.01 " in result.stdout and "CI (mean)" in result.stdout  # the by-group table over seeds
    png = (sweep / "runs/fake/report.png").read_bytes()
    assert png.startswith(b"\x89PNG\r\n\x1a\n") and len(png) > 10_000
    assert CliRunner().invoke(main, ["report", "runs/fake", "--report-dir", "elsewhere"]).exit_code == 0
    assert (sweep / "elsewhere/report.png").read_bytes() == png  # same runs, same bytes
    assert (sweep / "elsewhere/report.csv").read_text() == (sweep / "runs/fake/report.csv").read_text()
    assert not (sweep / "generated/fake/report.csv").exists()  # never into the checked generated folder


def test_without_matplotlib_the_table_prints_and_the_plot_is_skipped_with_one_warning(sweep, monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # import matplotlib now fails (the core install)
    result = CliRunner().invoke(main, ["report", "generated/fake"])
    assert result.exit_code == 0, result.output
    assert "b0.04_s1" in result.stdout and "0.900" in result.stdout  # the table is shown
    assert result.stderr.count("warning:") == 1 and "pip install 'sweepgen[plot]'" in result.stderr
    assert "report.png" in result.stderr and "Traceback" not in result.output
    assert (sweep / "runs/fake/report.csv").exists() and not (sweep / "runs/fake/report.png").exists()
    quiet = CliRunner().invoke(main, ["report", "generated/fake", "--no-plot"])
    assert quiet.exit_code == 0 and "report.png" not in quiet.stderr


def test_nothing_finished_is_an_error(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    make_sweep(tmp_path, {"a": {}})
    result = CliRunner().invoke(main, ["report", "generated/fake", "--no-plot"])
    assert result.exit_code == 2 and "no finished run" in result.stderr and "a pending" in result.stderr
    with pytest.raises(UserError, match="no run directories"):
        rep.collect(tmp_path / "generated")


def test_report_and_status_print_csv_and_json_for_programs(sweep):
    import csv
    import io
    import json

    as_csv = CliRunner().invoke(main, ["report", "generated/fake", "--no-plot", "--format", "csv"])
    assert as_csv.exit_code == 0, as_csv.output
    assert as_csv.stdout == (sweep / "runs/fake/report.csv").read_text()  # the same table, on stdout
    rows = list(csv.DictReader(io.StringIO(as_csv.stdout)))
    assert {r["run"] for r in rows} == set(RUNS)
    as_json = CliRunner().invoke(main, ["report", "generated/fake", "--no-plot", "--format", "json"])
    assert as_json.exit_code == 0, as_json.output
    by_run = {r["run"]: r for r in json.loads(as_json.stdout)}
    assert by_run["b0.04_s1"]["final_reward"] == 0.9 and by_run["b0.04_s1"]["grid.beta"] == 0.04
    status = CliRunner().invoke(main, ["status", "generated/fake", "--format", "csv"])
    table = list(csv.DictReader(io.StringIO(status.stdout)))
    assert {r["run"] for r in table} == set(RUNS) and {"state", "run_dir", "exit_code"} <= set(table[0])


def test_report_has_no_dash_o_so_it_means_one_thing_across_commands(sweep):
    result = CliRunner().invoke(main, ["report", "generated/fake", "-o", "x"])
    assert result.exit_code == 2 and "No such option '-o'" in result.stderr


def test_report_warns_when_most_completions_were_cut(sweep):
    quiet = CliRunner().invoke(main, ["report", "generated/fake", "--no-plot"])
    assert "max_completion_length" not in quiet.stderr  # no run recorded a truncated fraction
    summary_path = sweep / "runs/fake/b0.04_s1/summary.json"
    summary = json.loads(summary_path.read_text())
    summary_path.write_text(json.dumps({**summary, "truncated_fraction": 0.97}))
    half = sweep / "runs/fake/b0.01_s1/summary.json"
    half.write_text(json.dumps({**json.loads(half.read_text()), "truncated_fraction": 0.5}))
    loud = CliRunner().invoke(main, ["report", "generated/fake", "--no-plot"])
    assert loud.exit_code == 0, loud.output
    assert "warning: 1 run(s) had more than 50% of their completions cut" in loud.stderr
    assert "(b0.04_s1)" in loud.stderr  # 0.5 is not more than half
    # the bundled trainer's summary records a config's `logging.truncation: expected`: no warning then
    summary_path.write_text(json.dumps({**summary, "truncated_fraction": 0.97, "truncation": "expected"}))
    declared = CliRunner().invoke(main, ["report", "generated/fake", "--no-plot"])
    assert declared.exit_code == 0, declared.output
    assert "completions cut" not in declared.stderr


def test_a_report_names_the_runs_whose_files_git_tracks(sweep):
    """Committed run folders (a finished status and a summary.json) were reported as if run here:
    a pull request's forged numbers looked like results. The report now names them."""
    import subprocess

    def git(*args: str) -> None:
        subprocess.run(
            ["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], check=True, capture_output=True
        )

    git("init", "-q")
    git("add", "runs/fake/b0.04_s1")
    git("commit", "-q", "-m", "forged")
    result = CliRunner().invoke(main, ["report", "generated/fake", "--no-plot"])
    assert result.exit_code == 0, result.output
    assert "1 run(s) hold files git tracks (b0.04_s1)" in result.output, result.output


def test_a_report_outside_git_or_without_committed_runs_says_nothing_of_git(sweep):
    import subprocess

    result = CliRunner().invoke(main, ["report", "generated/fake", "--no-plot"])
    assert result.exit_code == 0 and "git" not in result.output, result.output
    subprocess.run(["git", "init", "-q"], check=True)
    result = CliRunner().invoke(main, ["report", "generated/fake", "--no-plot"])
    assert result.exit_code == 0 and "git" not in result.output, result.output


def test_a_report_says_when_git_cannot_tell_which_runs_are_committed(sweep, monkeypatch):
    import subprocess

    from sweepgen.fs import gitquery

    subprocess.run(["git", "init", "-q"], check=True)
    monkeypatch.setattr(gitquery, "_ask", lambda *a, **k: None)  # git missing, failing or overrunning
    result = CliRunner().invoke(main, ["report", "generated/fake", "--no-plot"])
    assert result.exit_code == 0, result.output
    assert "git could not say whether these runs' files are committed" in result.output
