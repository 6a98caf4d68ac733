"""CSV files a spreadsheet opens (report.csv, statistics.csv, importance.csv, `--format csv`) never
hold a formula a pull request wrote: text cells starting with `=`, `+`, `-`, `@`, a tab or a CR (or
such a piece after a `;`, a cell break in some locales) get a leading `'` (OWASP's advice), and
numbers stay numbers (`-0.5` is not prefixed)."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st
from run_support import make_sweep
from spec_support import write_project

from sweepgen.cli import main
from sweepgen.escape import c0, csv_cell
from sweepgen.run.core.base import RunState, RunStatus, write_status

FORMULAS = {
    "r1": '=HYPERLINK("http://evil","x")',
    "r2": "+cmd|' /C calc'!A0",
    "r3": "-2+3+cmd|' /C calc'!A0",
    "r4": "@SUM(1+1)*cmd|' /C calc'!A0",
    "r5": "\t=1+1",
    "r6": "\r=1+1",
}


def _write_runs(root: Path) -> None:
    values = {name: {"model": text, "lr": -0.5} for name, text in FORMULAS.items()}
    make_sweep(root, {n: {} for n in FORMULAS}, values=values)
    for name in FORMULAS:
        run_dir = root / "runs/fake" / name
        run_dir.mkdir(parents=True)
        (run_dir / "metrics.jsonl").write_text(json.dumps({"step": 1, "reward_mean": -0.25}) + "\n")
        summary = {"final_reward": -0.25, "best_reward": "=1+2", "steps": 1, "wall_time_s": 1.0}
        (run_dir / "summary.json").write_text(json.dumps(summary))
        status = RunStatus(RunState.FINISHED, "local", exit_code=0, sweep_dir="generated/fake")
        write_status(run_dir, status)


def test_report_csv_read_back_holds_text_not_formulas_and_numbers_as_numbers(cli_cwd: Path) -> None:
    _write_runs(cli_cwd)
    result = CliRunner().invoke(main, ["report", "generated/fake", "--no-plot"])
    assert result.exit_code == 0, result.output
    text = (cli_cwd / "runs/fake/report.csv").read_bytes().decode("utf-8")  # no CR is translated
    rows = list(csv.DictReader(io.StringIO(text, newline="")))
    assert [r["run"] for r in rows] == list(FORMULAS)
    for row in rows:
        # the value as written, behind one `'`: a spreadsheet shows it as text, a reader strips the `'`
        assert row["grid.model"] == "'" + FORMULAS[row["run"]].replace("\r", "\\r")
        assert row["best_reward"] == "'=1+2"
        assert float(row["grid.lr"]) == -0.5 and row["grid.lr"] == "-0.5"  # a number, not "'-0.5"
        assert float(row["final_reward"]) == -0.25
    as_csv = CliRunner().invoke(main, ["report", "generated/fake", "--no-plot", "--format", "csv"])
    assert as_csv.exit_code == 0, as_csv.output
    assert "'=HYPERLINK" in as_csv.stdout and "\n=" not in as_csv.stdout and ",=" not in as_csv.stdout


def test_list_format_csv_neutralises_values_and_keeps_numbers(project: Path) -> None:
    body = """\
    variants:
      a: {}
    grid:
      streamer.strategy: {f1: "=1+1", f2: "@SUM(A1)", f3: "-2+3"}
      training.lr: [-0.5, 0.25]
    """
    write_project(project, body)
    got = CliRunner().invoke(main, ["list", "specs/demo.yaml", "--format", "csv"])
    assert got.exit_code == 0, got.output
    rows = list(csv.DictReader(io.StringIO(got.stdout, newline="")))
    assert sorted({r["streamer.strategy"] for r in rows}) == ["'-2+3", "'=1+1", "'@SUM(A1)"]
    assert sorted({float(r["training.lr"]) for r in rows}) == [-0.5, 0.25]


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


@settings(deadline=None)
@given(st.text(alphabet=st.sampled_from("=+-@\t\r;,'\"ab01.e \n"), max_size=12))
def test_no_piece_of_a_cell_starts_a_formula_and_the_text_is_kept(text: str) -> None:
    cell = csv_cell(text)
    assert isinstance(cell, str)
    for piece in cell.split(";"):
        if piece.startswith(("=", "+", "-", "@", "\t", "\r")):
            assert piece == "-" or _is_number(piece), (text, cell)
    assert "\r" not in cell  # a CR would end the row for a CSV reader
    # only `'`s were added, each before a piece that would have started a formula
    assert cell.replace(";'", ";").removeprefix("'") == c0(text).replace("\r", "\\r") or "'" in text


def test_numbers_and_empty_cells() -> None:
    assert csv_cell(-0.5) == -0.5 and csv_cell(3) == 3 and csv_cell(None) == ""
    assert csv_cell("-0.5") == "-0.5" and csv_cell("+1e-05") == "+1e-05" and csv_cell("-inf") == "-inf"
    assert csv_cell("-") == "-"  # the tables' "no value"
    assert csv_cell("-0.5x") == "'-0.5x" and csv_cell("a;=b;c;@d") == "a;'=b;c;'@d"
    assert csv_cell("lr=0.1") == "lr=0.1"  # a formula character inside a cell is not a formula
    assert csv_cell("\r=1") == "'\\r=1" and csv_cell("a\rb") == "a\\rb"
