"""`sweepgen report --compare/--seeds`: seed groups from the spec's `seed:`, the statistics table in
text, CSV and JSON, held-out seeds, and the exit-2 paths that must write nothing."""

from __future__ import annotations

import csv
import io
import json
import os
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st
from report_support import compare_shaping, logged_acc, make_shaping

from sweepgen.cli import main
from sweepgen.run.logs import metrics
from sweepgen.run.report.stats import verdicts as stats


@pytest.fixture
def shaping(cli_cwd):
    make_shaping(cli_cwd)
    return cli_cwd


def report(*args: str):
    return CliRunner().invoke(main, ["report", "generated/shaping", "--no-plot", *args])


def test_compare_prints_intervals_tests_and_verdicts(shaping):
    result = report("--metric", "eval_acc", "--compare", "identity_lr1e-05")
    assert result.exit_code == 0, result.output
    table = result.stdout[result.stdout.index("by group") :]
    rows = {
        line.split()[0]: line
        for line in table.splitlines()
        if line.strip().startswith(("identity", "coma", "noisy")) and ":" not in line.split()[0]
    }
    assert set(rows) == {
        "identity_lr1e-05",
        "identity_lr0.001",
        "coma_lr1e-05",
        "coma_lr0.001",
        "noisy_lr1e-05",
        "noisy_lr0.001",
    }
    assert "baseline" in rows["identity_lr1e-05"]
    # the verdict right after the name: on screen however narrow the terminal
    assert rows["coma_lr1e-05"].split()[1] == "better"
    assert rows["noisy_lr1e-05"].split()[1:3] == ["no", "evidence"]
    # the title names metric, value, direction, test and interval
    title = " ".join(result.stdout.split())
    assert "eval_acc, final (last logged value)" in title and "max is better" in title
    assert "Welch's t-test, level calibrated over the variance ratio, Holm-adjusted" in title
    assert "95% t interval" in title and "Welch interval at the calibrated level" in title
    assert "noisy_lr1e-05: no evidence yet:" in result.stdout  # how many seeds would decide
    assert "statistics: runs/shaping/statistics.csv" in result.stdout


def test_bootstrap_difference_intervals_are_refused_at_six_seeds(shaping):
    # a percentile bootstrap of 6 + 6 seeds covers ~88% of true differences at a level column of 95%:
    # no interval, the report says why and names --interval t
    result = report("--metric", "eval_acc", "--compare", "identity_lr1e-05", "--interval", "bootstrap")
    assert result.exit_code == 0, result.output
    said = " ".join(result.stdout.split())
    assert "with fewer than 20 runs in a group a percentile bootstrap's 95% interval covers less" in said
    assert "88% at 5 + 5" in said and "--interval t (the default) gives an interval there" in said
    welch = " ".join(report("--metric", "eval_acc", "--compare", "identity_lr1e-05").stdout.split())
    assert "covers about" not in welch and "no bootstrap" not in welch


def test_json_and_csv_carry_the_same_numbers_as_the_statistics(shaping):
    as_json = report("--metric", "eval_acc", "--compare", "identity_lr1e-05", "--format", "json")
    assert as_json.exit_code == 0, as_json.output
    body = json.loads(as_json.stdout)
    groups = {g["group"]: g for g in body["groups"]}
    ident = [logged_acc("identity", s, 1e-5) for s in range(1, 7)]
    coma = [logged_acc("coma", s, 1e-5) for s in range(1, 7)]
    assert groups["coma_lr1e-05"]["mean"] == pytest.approx(sum(coma) / 6)
    assert (groups["coma_lr1e-05"]["ci_low"], groups["coma_lr1e-05"]["ci_high"]) == stats.t_mean(coma)
    assert groups["coma_lr1e-05"]["p"] == stats.difference_test(coma, ident)[1]
    assert (body["metric"], body["value"], body["direction"]) == (
        "eval_acc",
        "final (last logged value)",
        "max is better",
    )
    assert body["methods"]["test"] == "Welch's t-test, level calibrated over the variance ratio"
    assert body["methods"]["adjustment"] == "Holm"
    assert groups["coma_lr1e-05"]["test"] == stats.CALIBRATED == "welch-calibrated"
    as_csv = report("--metric", "eval_acc", "--compare", "identity_lr1e-05", "--format", "csv")
    rows = {r["group"]: r for r in csv.DictReader(io.StringIO(as_csv.stdout))}
    assert float(rows["coma_lr1e-05"]["p"]) == groups["coma_lr1e-05"]["p"]  # repr: every digit kept
    assert rows["coma_lr1e-05"]["verdict"] == "better"
    assert as_csv.stdout == (shaping / "runs/shaping/statistics.csv").read_text()


def test_held_out_seeds_use_only_the_test_runs(shaping):
    result = report(
        "--metric", "eval_acc", "--compare", "identity_lr1e-05", "--seeds", "test", "--format", "json"
    )
    assert result.exit_code == 0, result.output
    groups = {g["group"]: g for g in json.loads(result.stdout)["groups"]}
    coma_test = [logged_acc("coma", s, 1e-5) for s in (4, 5, 6)]
    assert groups["coma_lr1e-05"]["n"] == 3
    assert groups["coma_lr1e-05"]["mean"] == pytest.approx(sum(coma_test) / 3)
    assert groups["coma_lr1e-05"]["test"] == "welch-calibrated"  # at every n >= 2: 3 seeds can decide
    assert groups["coma_lr1e-05"]["verdict"] == "better"
    text = report("--metric", "eval_acc", "--seeds", "tune")
    assert "statistics over the tune seeds only: 1, 2, 3" in text.stderr


def test_the_best_run_follows_the_seed_split(shaping):
    # the best of all runs is coma at seed 5 (a test seed); over the tune seeds it is seed 3's run,
    # never one of the seeds held out from tuning
    everything = " ".join(report("--metric", "eval_acc").stdout.split())
    assert "is better: --mode min if a lower value is): coma_seed5_lr0.001 = 0.770" in everything
    tune = report("--metric", "eval_acc", "--seeds", "tune")
    assert tune.exit_code == 0, tune.output
    said = " ".join(tune.stdout.split())
    assert "best run over the tune seeds by final_eval_acc" in said
    assert "is better: --mode min if a lower value is): coma_seed3_lr0.001 = 0.765" in said


def test_shared_seeds_are_said_to_be_compared_unpaired(shaping):
    # every strategy ran seeds 4-6 with the same per-seed jitter: pairs by seed the test does not use
    said, _ = compare_shaping(shaping, "--seeds", "test")
    assert "the groups compared ran the same seeds (4, 5, 6), but the test treats them as independent" in said
    # Holm's alpha is this metric's family only: said beside the table, with how to read M metrics
    family = "these verdicts are one test family: alpha 0.05 (Holm) holds over the 5 comparisons of eval_acc"
    assert family in said
    assert "before the runs, or take a verdict only where its p (Holm) is below 0.05 / M" in said
    alone = " ".join(report("--metric", "eval_acc", "--seeds", "test").stdout.split())
    assert "same seeds" not in alone and "test family" not in alone  # no baseline: nothing compared


def test_an_unknown_group_is_exit_2_with_the_closest_names(shaping):
    result = report("--metric", "eval_acc", "--compare", "identity")
    assert result.exit_code == 2 and "no group or run of that name" in result.stderr
    assert "did you mean identity_lr1e-05" in result.stderr and "Traceback" not in result.output


def test_a_metric_no_run_logged_is_exit_2_and_overwrites_nothing(shaping):
    assert report("--metric", "eval_acc").exit_code == 0
    before = {p.name: p.read_bytes() for p in (shaping / "runs/shaping").glob("*.csv")}
    assert set(before) == {"report.csv", "statistics.csv"}
    result = report("--metric", "eval_accc", "--mode", "max")
    assert result.exit_code == 2, result.output
    assert "no finished run logged `eval_accc`" in result.stderr and "did you mean eval_acc" in result.stderr
    assert {p.name: p.read_bytes() for p in (shaping / "runs/shaping").glob("*.csv")} == before


def test_without_a_declared_seed_the_seed_key_is_inferred_and_said(cli_cwd):
    from run_support import make_sweep
    from test_report import RUNS, write_run

    make_sweep(cli_cwd, {n: {} for n in RUNS}, values={n: v for n, (v, _) in RUNS.items()})
    for name, (_, rewards) in RUNS.items():
        write_run(cli_cwd / "runs/fake" / name, rewards, config_path=f"generated/fake/{name}.yaml")
    result = CliRunner().invoke(main, ["report", "generated/fake", "--no-plot", "--compare", "b0.01"])
    assert result.exit_code == 0, result.output
    assert "seed path inferred: `grid.seed`" in result.stderr
    assert "b0.04" in result.stdout and "permutation" not in result.stdout  # n = 1 against 2: no test


def test_a_seed_path_not_in_the_config_is_a_spec_error(cli_cwd):
    (cli_cwd / "specs").mkdir()
    (cli_cwd / "templates").mkdir()
    (cli_cwd / "templates/t.yaml.j2").write_text("{{ config | to_yaml }}\n")
    spec = cli_cwd / "specs/s.yaml"
    spec.write_text(
        'sweepgen: 1\nname: s\ntemplate: ../templates/t.yaml.j2\noutput: "{{ variant.name }}.yaml"\n'
        "base: {training: {seed: 0}}\ngrid: {training.seed: [1, 2]}\nseed: training.sed\n"
    )
    result = CliRunner().invoke(main, ["render", str(spec)])
    assert result.exit_code == 2 and "specs/s.yaml:7:7: error: the seed path `training.sed`" in result.stderr
    assert "did you mean `training.seed`" in result.stderr
    spec.write_text(
        spec.read_text().replace("seed: training.sed", "seed: {path: training.seed, tune: [1], test: [1, 2]}")
    )
    result = CliRunner().invoke(main, ["render", str(spec)])
    assert result.exit_code == 2 and "seeds [1] are in both tune and test" in result.stderr


# -- metrics.jsonl read in one decode must read exactly what the line-by-line reading reads ------

line = st.one_of(
    st.builds(lambda s, v: json.dumps({"step": s, "acc": v}), st.integers(0, 5), st.floats(-1, 1)),
    st.sampled_from(
        [
            "",
            '{"step": 1',
            "1, 2",
            "[1,",
            "2]",
            '{"step": 2, "acc": 0.5}, {"step": 3}',
            "null",
            "{}",
            '{"step": 4, "acc": NaN}',
            '{"step": 4, "acc": 1e999, "loss": Infinity}',
            '{"step": 5, "acc": {"nested": [1]}}',
            '{"step": "6", "acc": "0.25", "flag": true}',
            "[" * 150 + "]" * 150,
        ]
    ),
)


def _read(path):
    counts: dict[str, int] = {}
    try:
        return metrics.read_jsonl(path, counts), counts
    except Exception as err:  # noqa: BLE001 - the same error, whatever it is, either way
        return type(err).__name__, str(err)


@settings(max_examples=200, deadline=None)
@given(st.lists(line, max_size=8))
def test_the_one_decode_read_equals_the_line_by_line_read(tmp_path_factory, lines):
    from unittest import mock

    path = tmp_path_factory.mktemp("jsonl") / "metrics.jsonl"
    path.write_text("\n".join(lines) + ("\n" if lines else ""))
    fast = _read(path)
    with mock.patch.object(metrics, "_flat_rows", return_value=None):  # line by line only
        slow = _read(path)
    assert fast == slow


# -- `sweepgen run`'s tables for a trainer that is not the bundled one ----------------------------

FOREIGN = """\
import csv, sys, yaml
from pathlib import Path
out = Path(yaml.safe_load(Path(sys.argv[1]).read_text())["output_dir"])
out.mkdir(parents=True, exist_ok=True)
with open(out / "metrics.csv", "w", newline="") as fh:
    w = csv.writer(fh)
    w.writerow(["step", "eval_acc"])
    w.writerows([[1, 0.25], [2, 0.625]])
"""


def test_a_foreign_trainers_run_table_shows_the_metric_and_no_reward_columns(cli_cwd):
    import shlex
    import sys

    from run_support import make_sweep

    make_sweep(cli_cwd, {"a": {}, "b": {}})
    (cli_cwd / "train.py").write_text(FOREIGN)
    command = f"{shlex.quote(sys.executable)} train.py {{config}}"
    plain = CliRunner().invoke(main, ["run", "generated/fake", "--command", command])
    assert plain.exit_code == 0, plain.output
    header = _header(plain.stdout)
    assert header == ["run", "status", "steps", "wall", "note"]  # no reward columns it cannot have
    with_metric = CliRunner().invoke(
        main, ["run", "generated/fake", "--command", command, "--metric", "eval_acc", "--rerun-failed"]
    )
    assert with_metric.exit_code == 0, with_metric.output
    assert _header(with_metric.stdout) == ["run", "status", "steps", "eval_acc", "wall", "note"]
    assert with_metric.stdout.count("0.625") == 2  # each run's last eval_acc


def _header(stdout: str) -> list[str]:
    results = stdout[stdout.index("results") :]
    return next(cells for line in results.splitlines() if (cells := line.split())[:1] == ["run"])


def test_html_or_compare_without_the_plot_extra_is_exit_2_and_writes_nothing(shaping, monkeypatch):
    import sys

    monkeypatch.setitem(sys.modules, "plotly", None)  # as in the core install
    result = report("--metric", "eval_acc", "--html")
    assert result.exit_code == 2 and "pip install 'sweepgen[plot]'" in result.stderr
    assert not (shaping / "runs/shaping/report.csv").exists()
    monkeypatch.setitem(sys.modules, "scipy", None)
    result = report("--metric", "eval_acc", "--compare", "coma_lr1e-05")
    assert result.exit_code == 2 and "--compare needs scipy" in result.stderr
    quiet = report("--metric", "eval_acc")  # no comparison asked: the table, and one warning
    assert quiet.exit_code == 0 and quiet.stderr.count("warning:") == 1
    assert "statistics skipped: scipy not installed" in quiet.stderr and "95% CI" not in quiet.stdout


def test_curve_legends_round_numbers_to_the_digits(tmp_path):
    from sweepgen.run.core.base import RunState
    from sweepgen.run.report import collect as rep

    def record(name, lr):
        return rep.RunRecord(name, tmp_path / name, RunState.FINISHED, {"lr": lr}, {}, ((1, 0.5),))

    report_ = rep.Report(
        ("lr",), (record("a", 0.000123456789012), record("b", 0.0271828182846)), tmp_path, "x"
    )
    assert [c.label for c in rep.curves(report_)] == ["lr=0.000123", "lr=0.0272"]
    two = rep.Report(report_.varying, report_.runs, tmp_path, "x", block={"digits": 2})
    assert [c.label for c in rep.curves(two)] == ["lr=0.00012", "lr=0.027"]


def _values(path):
    return {r["run"]: r for r in csv.DictReader(io.StringIO(path.read_text()))}


def test_mode_sets_the_direction_never_the_value_compared(shaping):
    # the logged curve rises to its end, so final and best are the same step; a dip makes them differ
    run = shaping / "runs/shaping/coma_seed1_lr1e-05/metrics.jsonl"
    rows = [json.loads(line) for line in run.read_text().splitlines()]
    rows[20]["eval_acc"] = 0.99  # a lucky evaluation mid-run
    run.write_text("".join(json.dumps(r) + "\n" for r in rows))
    seen = {}
    for args in ([], ["--mode", "max"], ["--mode", "min"]):
        result = report("--metric", "eval_acc", "--compare", "identity_lr1e-05", *args)
        assert result.exit_code == 0, result.output
        table = _values(shaping / "runs/shaping/report.csv")
        seen[tuple(args)] = {n: r["final_eval_acc"] for n, r in table.items()}
        body = json.loads((shaping / "runs/shaping/statistics.json").read_text())
        assert body["value"] == "final (last logged value)"
        assert body["direction"] == f"{args[1] if args else 'max'} is better"
    assert len({tuple(sorted(v.items())) for v in seen.values()}) == 1
    assert float(seen[()]["coma_seed1_lr1e-05"]) == pytest.approx(logged_acc("coma", 1, 1e-5))
    best = report("--metric", "eval_acc", "--at", "best")
    assert float(_values(shaping / "runs/shaping/report.csv")["coma_seed1_lr1e-05"]["best_eval_acc"]) == 0.99
    assert "--at best compares each run's best logged value" in best.stderr  # biased upward: said


def test_at_last_k_is_the_mean_of_the_last_k_values(shaping):
    result = report("--metric", "eval_acc", "--at", "last:4")
    assert result.exit_code == 0, result.output
    row = _values(shaping / "runs/shaping/report.csv")["coma_seed1_lr1e-05"]
    end = logged_acc("coma", 1, 1e-5)
    assert float(row["mean_last4_eval_acc"]) == pytest.approx(end * (37 + 38 + 39 + 40) / 4 / 40)
    too_many = report("--metric", "eval_acc", "--at", "last:41")
    assert too_many.exit_code == 2 and "no finished run logged" in too_many.stderr
    for bad in ("last:0", "last:", "mean", "last:x"):
        wrong = report("--metric", "eval_acc", "--at", bad)
        assert wrong.exit_code == 2 and "one of final, best, last:K" in wrong.stderr, bad


def test_a_report_for_another_metric_leaves_no_stale_file(shaping):
    """An earlier report's file this one does not write is removed, and only that: a file its record
    names with the content it wrote. A hand-made file of a report's name, a link, a hard link to a
    file elsewhere (even one the record names) are left and named, never removed or followed."""
    import hashlib

    out = shaping / "runs/shaping"
    assert report("--metric", "eval_acc", "--compare", "identity_lr1e-05").exit_code == 0
    record = json.loads((out / ".sweepgen-report.json").read_text())
    assert set(record) == {"report.csv", "statistics.csv", "statistics.json"}
    # as an earlier report with a plot left it (its record names the file it wrote) ...
    (out / "report.png").write_bytes(b"\x89PNG old")
    record["report.png"] = hashlib.sha256(b"\x89PNG old").hexdigest()
    # ... and, of report names, what no report wrote: a page made by hand, a link, a hard link
    (out / "statistics.json").write_text("{}")  # written again by the next report: replaced
    outside = shaping / "keep.csv"
    outside.write_text("not a report's\n")
    (out / "importance.csv").symlink_to(outside)
    (out / "report.html").write_text("<html>kept</html>")
    (shaping / "keep.html").write_text("<html>eval_acc</html>")
    record["report.html"] = hashlib.sha256(b"<html>eval_acc</html>").hexdigest()
    os.link(shaping / "keep.html", out / "report.html.new")
    (out / "report.html.new").replace(out / "report.html")
    (out / ".sweepgen-report.json").write_text(json.dumps(record))
    result = report("--metric", "loss", "--mode", "min")
    assert result.exit_code == 0, result.output
    left = sorted(p.name for p in out.iterdir() if p.is_file() or p.is_symlink())
    assert left == [".sweepgen-report.json", "importance.csv", "report.csv", "report.html"] + [
        "statistics.csv",
        "statistics.json",
    ]
    assert outside.read_text() == "not a report's\n" and (out / "importance.csv").is_symlink()
    assert (shaping / "keep.html").read_text() == "<html>eval_acc</html>"
    assert f"removed (an earlier report's, not written by this one): {Path('runs/shaping/report.png')}" in (
        result.stdout
    )
    assert "importance.csv is a symlink, not an earlier report's file: left as it is" in result.stderr
    assert "report.html is a file with another name (a hard link)" in result.stderr
    rows = list(csv.DictReader(io.StringIO((out / "statistics.csv").read_text())))
    assert {(r["metric"], r["value"], r["direction"]) for r in rows} == {
        ("loss", "final (last logged value)", "min is better")
    }


def test_compare_accepts_a_run_name_for_its_seed_group(shaping):
    """The per-run table shows run names; `--compare RUN` means that run's seed group."""
    runs = json.loads(report("--metric", "eval_acc", "--format", "json").stdout)
    names = [r["run"] for r in runs]
    run = next(n for n in names if n.startswith("identity") and "1e-05" in n)
    by_group = report("--metric", "eval_acc", "--compare", "identity_lr1e-05", "--format", "json")
    by_run = report("--metric", "eval_acc", "--compare", run, "--format", "json")
    assert by_run.exit_code == 0, by_run.output
    assert json.loads(by_run.stdout) == json.loads(by_group.stdout)
    assert json.loads(by_run.stdout)["baseline"] == "identity_lr1e-05"


def test_a_comparison_these_seeds_cannot_decide_is_not_called_no_evidence_yet(cli_cwd):
    # the permutation test with 3 + 3 seeds: its smallest p, 0.1, never passes 0.05, so the verdict is
    # "cannot decide"; the seeds sentence said "no evidence yet" beside it
    make_shaping(cli_cwd)
    said, rows = compare_shaping(cli_cwd, "--seeds", "tune", "--test", "permutation")
    assert rows["coma_lr1e-05"]["verdict"] == "cannot decide"
    assert "coma_lr1e-05: cannot decide with these seeds: about" in said
    assert "coma_lr1e-05: no evidence yet" not in said


@pytest.mark.parametrize(
    ("finals", "said"),
    [
        # TRL's KTO trainer, measured: seeds 0 and 1 logged the same numbers at every step
        ({"b0.01": [0.41, 0.41], "b0.04": [0.63, 0.63]}, True),
        ({"b0.01": [0.41, 0.41], "b0.04": [0.63, 0.64]}, False),  # one group's seeds differ
        ({"b0.01": [1.0, 1.0], "b0.04": [0.0, 0.0]}, False),  # a saturated share ties by itself
    ],
)
def test_seeds_that_change_nothing_are_said(cli_cwd, finals, said):
    """Before, only "cannot decide ... run more seeds", which would send the user to run more of the
    same runs."""
    from run_support import make_sweep
    from test_report import write_run

    runs = {
        f"{b}_s{s}": ({"beta": float(b[1:]), "seed": s}, v)
        for b, vs in finals.items()
        for s, v in enumerate(vs)
    }
    make_sweep(cli_cwd, {n: {} for n in runs}, values={n: v for n, (v, _) in runs.items()})
    for name, (_, final) in runs.items():
        write_run(cli_cwd / "runs/fake" / name, [0.1, final], config_path=f"generated/fake/{name}.yaml")
    result = CliRunner().invoke(main, ["report", "generated/fake", "--no-plot", "--compare", "b0.01"])
    assert result.exit_code == 0, result.output
    shown = " ".join(result.stdout.split())
    sentence = "each seed gave the very same value in every group run at two or more seeds (2 group(s))"
    assert (sentence in shown) is said
    notes = json.loads((cli_cwd / "runs/fake/statistics.json").read_text())["notes"]
    assert any(sentence in n for n in notes) is said
