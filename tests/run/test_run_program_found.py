"""A local `--command` whose program is not there (trl not installed, its environment not active, a
script path mistyped or not executable) started every run, each failed at once ("could not start:
No such file or directory"), and the right environment then needed `--rerun-failed` too. Now `run`
stops before any run starts, exit 2 at `--command`; the runs stay pending."""

from __future__ import annotations

import shlex
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner
from run_support import make_config_sweep

from sweepgen.cli import main
from sweepgen.run.core.base import STATUS_FILE

WRITER = "import sys; open(sys.argv[2] + '/done.txt', 'w').write('ok')\n"


def _sweep(root: Path) -> None:
    configs = {f"r{i}": {"output_dir": f"runs/t/r{i}", "lr": i} for i in (1, 2)}
    make_config_sweep(root, configs, sweep="t", values={n: {"lr": c["lr"]} for n, c in configs.items()})
    (root / "writer.py").write_text(WRITER)


@pytest.mark.parametrize(
    ("program", "said"),
    [
        ("sweepgen-no-such-trainer-xyz", "which is not on PATH"),
        ("./train.sh", "which does not exist"),
        ("./notexec.sh", "which is not an executable file"),
        ("CUDA_VISIBLE_DEVICES=0 python", "an environment assignment, which only a shell reads"),
    ],
)
def test_a_program_that_would_not_start_stops_run_with_nothing_started(cli_cwd, program, said):
    _sweep(cli_cwd)
    Path("notexec.sh").write_text("#!/bin/sh\n")  # no execute bit
    result = CliRunner().invoke(main, ["run", "generated/t", "--command", f"{program} {{config}}"])
    assert result.exit_code == 2, result.output
    assert result.stderr.startswith("--command: error: --command starts ") and said in result.stderr
    assert "Traceback" not in result.output
    assert not list(Path("runs/t").glob(f"*/{STATUS_FILE}"))  # no run was started, nor failed
    # the right command then runs every run once, without --rerun-failed
    good = f"{shlex.quote(sys.executable)} writer.py {{config}} {{run_dir}}"
    ran = CliRunner().invoke(main, ["run", "generated/t", "--command", good, "--done-file", "done.txt"])
    assert ran.exit_code == 0, ran.output
    assert sorted(p.parent.name for p in Path("runs/t").glob("*/done.txt")) == ["r1", "r2"]


def test_nothing_to_start_needs_no_program(cli_cwd):
    """Every run finished: `run` only reports, even from a shell where the trainer is not found."""
    _sweep(cli_cwd)
    good = f"{shlex.quote(sys.executable)} writer.py {{config}} {{run_dir}}"
    assert CliRunner().invoke(main, ["run", "generated/t", "--command", good]).exit_code == 0
    again = CliRunner().invoke(
        main, ["run", "generated/t", "--command", "sweepgen-no-such-trainer-xyz {config}"]
    )
    assert again.exit_code == 0, again.output
