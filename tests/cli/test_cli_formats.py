"""Output that survives pipes: full-width tables off a terminal, and --format text|csv|json."""

from __future__ import annotations

import csv
import io
import json
import os
import subprocess
import sys

from click.testing import CliRunner
from spec_support import write_project

from sweepgen.cli import main

LONG = """\
grid:
  streamer.strategy:
    first: a_strategy_name_long_enough_to_be_cut_in_an_80_column_table_first
    second: a_strategy_name_long_enough_to_be_cut_in_an_80_column_table_second
"""


def test_list_piped_prints_whole_cells_without_columns_set(project):
    spec = write_project(project, LONG)
    env = {k: v for k, v in os.environ.items() if k != "COLUMNS"}
    out = subprocess.run(
        [sys.executable, "-m", "sweepgen", "list", str(spec)],
        capture_output=True,
        text=True,
        env=env,
        check=True,
    ).stdout
    assert "…" not in out
    assert "a_strategy_name_long_enough_to_be_cut_in_an_80_column_table_first" in out
    assert "a_strategy_name_long_enough_to_be_cut_in_an_80_column_table_second" in out


def test_columns_zero_is_ignored_not_an_empty_table(project):
    spec = write_project(project, LONG)
    env = {**os.environ, "COLUMNS": "0"}
    out = subprocess.run(
        [sys.executable, "-m", "sweepgen", "list", str(spec)], capture_output=True, text=True, env=env
    )
    assert out.returncode == 0 and "table_second" in out.stdout


def test_list_csv_and_json_hold_the_full_typed_values(project):
    spec = write_project(project, "grid:\n  training.lr: [1.0e-5, 0.5]\n  training.seed: [1, 2]\n")
    runner = CliRunner()
    got = runner.invoke(main, ["list", str(spec), "--format", "csv"])
    assert got.exit_code == 0, got.output
    rows = list(csv.reader(io.StringIO(got.stdout)))
    assert rows[0] == ["variant", "training.lr", "training.seed"]
    assert rows[1] == ["lr1e-05_seed1", "1e-05", "1"] and len(rows) == 5
    doc = json.loads(runner.invoke(main, ["list", str(spec), "--format", "json"]).stdout)
    assert doc["variants"][0] == {
        "name": "lr1e-05_seed1",
        "values": {"training.lr": 1e-05, "training.seed": 1},
    }


def test_render_dry_run_json_is_one_document_for_all_specs(project):
    a = write_project(project, "grid:\n  training.seed: [1, 2]\n", name="a.yaml")
    b = write_project(
        project,
        "grid:\n  training.seed: [3]\n",
        head="sweepgen: 1\nname: other\n"
        'template: ../templates/t.yaml.j2\noutput: "{{ variant.name }}.yaml"\n',
        name="b.yaml",
    )
    got = CliRunner().invoke(main, ["render", str(a), str(b), "--dry-run", "--format", "json"])
    assert got.exit_code == 0, got.output
    doc = json.loads(got.stdout)
    assert [(r["file"].split("/")[-1], r["action"]) for r in doc] == [
        ("seed1.yaml", "create"),
        ("seed2.yaml", "create"),
        ("seed3.yaml", "create"),
    ]
    assert not (project / "generated").exists()


def test_render_csv_summarises_each_spec(project):
    spec = write_project(project, "grid:\n  training.seed: [1, 2]\n")
    got = CliRunner().invoke(main, ["render", str(spec), "--format", "csv"])
    rows = list(csv.reader(io.StringIO(got.stdout)))
    assert rows[0] == ["spec", "folder", "files", "created", "updated", "unchanged", "removed"]
    assert rows[1][2:] == ["2", "2", "0", "0", "0"]


def test_usage_errors_use_our_error_and_hint_format_with_exit_2(project):
    got = CliRunner().invoke(main, ["list"], prog_name="sweepgen")
    assert got.exit_code == 2
    assert got.stderr.startswith("error: Missing argument 'SPEC'")
    assert "hint: Usage: sweepgen list [OPTIONS] SPEC" in got.stderr and "--help" in got.stderr
    bad = CliRunner().invoke(main, ["list", "x.yaml", "--format", "xml"])
    assert bad.exit_code == 2 and bad.stderr.startswith("error: Invalid value for '--format'")
    unknown = CliRunner().invoke(main, ["rendr"])
    assert unknown.exit_code == 2 and "error: No such command 'rendr'" in unknown.stderr


def test_quiet_hides_status_lines_and_verbose_adds_timings(project):
    spec = str(write_project(project, "grid:\n  training.seed: [1, 2]\n"))
    normal = CliRunner().invoke(main, ["render", spec])
    assert "2 file(s) in generated/demo/" in normal.stdout
    quiet = CliRunner().invoke(main, ["-q", "check", spec])
    assert quiet.exit_code == 0 and quiet.stdout == ""
    verbose = CliRunner().invoke(main, ["-v", "render", spec])
    assert verbose.exit_code == 0 and "compiled and wrote 1 spec(s) in" in verbose.stderr
    both = CliRunner().invoke(main, ["-q", "-v", "list", spec])
    assert both.exit_code == 2 and "contradict" in both.stderr
    # -q never hides problems: an edited file is still reported
    out = project / "generated" / "demo" / "seed2.yaml"
    out.write_text(out.read_text() + "x: 1\n")
    edited = CliRunner().invoke(main, ["-q", "check", spec])
    assert edited.exit_code == 1 and "edited by hand" in edited.stdout
