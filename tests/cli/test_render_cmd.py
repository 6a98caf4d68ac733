"""`sweepgen render` and `python -m sweepgen` through the real CLI (CliRunner and subprocess)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from click.testing import CliRunner
from spec_support import write_project

from sweepgen.cli import main

# subprocesses must run this checkout's code, not whatever copy is installed in the environment
ENV = dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parents[2]))


def test_render_reports_what_it_did(project):
    write_project(project, "grid: {training.seed: [1, 2]}\n")
    result = CliRunner().invoke(main, ["render", "specs/demo.yaml"])
    assert result.exit_code == 0, result.output
    assert (
        "specs/demo.yaml: 2 file(s) in generated/demo/ (2 created, 0 updated, 0 unchanged, 0 removed)"
        in result.output
    )
    result = CliRunner().invoke(main, ["render", "specs/demo.yaml"])
    assert "(0 created, 0 updated, 2 unchanged, 0 removed)" in result.output


def test_dry_run_prints_the_plan_table_and_writes_nothing(project):
    write_project(
        project,
        "grid: {training.seed: [1, 2]}\n",
        head="sweepgen: 1\nname: demo\ntemplate: "
        '../templates/t.yaml.j2\noutput: "{{ variant.name }}.yaml"\nrun_name: "r{{ training.seed }}"\n',
    )
    result = CliRunner().invoke(main, ["render", "--dry-run", "specs/demo.yaml"])
    assert result.exit_code == 0, result.output
    for cell in ("seed1.yaml", "seed2", "r2", "create", "sweep.lock.json", "dry run"):
        assert cell in result.output
    assert not (project / "generated").exists()


def test_output_root_option(project):
    write_project(project)
    result = CliRunner().invoke(main, ["render", "specs/demo.yaml", "-o", "out/gen"])
    assert result.exit_code == 0, result.output
    assert (project / "out/gen/demo/base.yaml").exists()
    header = (project / "out/gen/demo/base.yaml").read_text().splitlines()[0]
    assert "from ../specs/demo.yaml" in header  # relative to the project root: the output root's parent


def test_bad_spec_exits_2_without_traceback(project):
    write_project(project, "variants:\n  a: {training.sed: 1}\n")
    result = CliRunner().invoke(main, ["render", "specs/demo.yaml"])
    assert result.exit_code == 2
    assert result.output.startswith("specs/demo.yaml:9:7: error: override path `training.sed` does not exist")
    assert "hint: did you mean `training.seed`?" in result.output and "Traceback" not in result.output


def test_no_spec_is_a_usage_error(project):
    assert CliRunner().invoke(main, ["render"]).exit_code == 2


def test_python_dash_m_and_exit_codes(project):
    write_project(project, "variants:\n  a: {training.sed: 1}\n")
    proc = subprocess.run(
        [sys.executable, "-m", "sweepgen", "render", "specs/demo.yaml"],
        capture_output=True,
        text=True,
        env=ENV,
    )
    assert proc.returncode == 2 and "specs/demo.yaml:9:7: error:" in proc.stderr and proc.stdout == ""


def test_help_does_not_import_heavy_modules():
    code = (
        "import sys\nfrom sweepgen.cli import main\n"
        "try:\n    main(['--help'])\nexcept SystemExit:\n    pass\n"
        "print(sorted(m for m in ('jinja2', 'pydantic', 'deepdiff', 'rich', 'yaml', 'torch')"
        " if m in sys.modules),"
        " file=sys.stderr)"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=ENV)
    assert proc.stderr.strip() == "[]"
    assert "render" in proc.stdout and "check" in proc.stdout and "list" in proc.stdout


def test_dry_run_and_summary_show_a_path_that_looks_like_rich_markup_verbatim(project):
    write_project(project, "grid: {training.seed: [1, 2]}\n")
    (project / "specs").rename(project / "[bold]specs")
    for args in (["--dry-run"], []):
        result = CliRunner().invoke(main, ["render", *args, "[bold]specs/demo.yaml"])
        assert result.exit_code == 0, result.output
        assert "[bold]specs/demo.yaml" in result.output
