"""What each command loads as it starts: `run`, `status`, `cancel` and `report` of a grid read its
lock and status files, so they load neither the spec model (pydantic), nor the template sandbox
(jinja2), nor importlib.metadata (sweepgen's version is asked for only where a lock is written or
compared). Every command is a process of its own: together they were ~0.2 s of CPU at every start
(about half of a `status`), and the hostile-inputs corpus starts hundreds of these commands."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner
from spec_support import write_project

from sweepgen.cli import main

# subprocesses must run this checkout's code, not whatever copy is installed in the environment
ENV = dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parents[2]))
HEAVY = ("pydantic", "jinja2", "importlib.metadata", "deepdiff")
# the command run in a fresh interpreter, then the heavy modules it loaded, on stderr's last line
_PROBE = (
    "import json, sys\nfrom sweepgen.cli import main\n"
    "try:\n    main(sys.argv[1:])\nexcept SystemExit as end:\n    code = end.code\n"
    f"loaded = sorted(m for m in {HEAVY!r} if m in sys.modules)\n"
    "print('LOADED', json.dumps([loaded, code]), file=sys.stderr)\n"
)


def _loaded(project: Path, *args: str) -> tuple[list[str], int]:
    proc = subprocess.run(
        [sys.executable, "-c", _PROBE, *args], cwd=project, capture_output=True, text=True, env=ENV
    )
    last = proc.stderr.strip().splitlines()[-1]
    assert last.startswith("LOADED "), proc.stderr
    loaded, code = json.loads(last.removeprefix("LOADED "))
    return loaded, code


@pytest.fixture
def ran_grid(project: Path) -> Path:
    write_project(
        project,
        "grid: {training.seed: [1, 2]}\n",
        template="seed: {{ training.seed }}\noutput_dir: runs/s{{ training.seed }}\n",
    )
    assert CliRunner().invoke(main, ["render", "specs/demo.yaml"]).exit_code == 0
    done = CliRunner().invoke(main, ["run", "generated/demo", "--command", "true {config}"])
    assert done.exit_code == 0, done.output
    for seed in (1, 2):  # what a trainer would have logged, for `report`
        (project / "runs" / f"s{seed}" / "metrics.jsonl").write_text('{"step": 1, "acc": 0.5}\n')
    return project


@pytest.mark.parametrize(
    ("args", "code"),
    [
        (["status", "generated/demo"], 0),
        (["status", "generated/demo", "--format", "json"], 0),
        (["run", "generated/demo", "--command", "true {config}"], 0),
        (["report", "generated/demo", "--metric", "acc"], 0),
        (["report", "generated/demo"], 2),  # no reward among the metrics: exit 2, said in words
        (["cancel", "generated/demo"], 0),
    ],
)
def test_run_side_commands_of_a_grid_load_no_compiler(ran_grid: Path, args: list[str], code: int):
    loaded, exit_code = _loaded(ran_grid, *args)
    assert (loaded, exit_code) == ([], code)


def test_render_still_loads_what_it_needs(project: Path):
    # the probe sees modules: a render does load the spec model and the sandbox
    write_project(project, "grid: {training.seed: [1, 2]}\n")
    loaded, code = _loaded(project, "render", "specs/demo.yaml")
    assert code == 0 and {"pydantic", "jinja2", "importlib.metadata"} <= set(loaded)
