"""Which time limit a local run gets: --time-limit, else the spec's resources.time (a Slurm time,
said when `run` starts), else none; on Slurm --time-limit is refused (its limit is resources.time)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from run_support import FAKE_COMMAND, make_sweep

from sweepgen.cli import main
from sweepgen.compile.output.lockfile.lock import read as read_lock
from sweepgen.errors import UserError
from sweepgen.run.sweep.grid import time_limit


class _Notes:
    def __init__(self) -> None:
        self.said: list[str] = []

    def note(self, text: str) -> None:
        self.said.append(text)


def _with_resources(root: Path, resources: dict) -> Path:
    folder = make_sweep(root, {"a": {}})
    lock = folder / "sweep.lock.json"
    data = json.loads(lock.read_text())
    data["resources"] = resources
    lock.write_text(json.dumps(data))
    return folder


def test_resources_time_is_the_local_limit_unless_time_limit_is_given(tmp_path):
    folder = _with_resources(tmp_path, {"time": "00:02:30"})
    lock = read_lock(str(folder), "x")
    notes = _Notes()
    assert time_limit("local", None, lock, folder, notes) == 180.0  # minutes, seconds rounded up
    assert notes.said and "resources.time (3 min)" in notes.said[0]
    assert time_limit("local", 5.0, lock, folder, notes) == 5.0
    assert time_limit("slurm", None, lock, folder, notes) is None  # Slurm applies it itself


def test_a_bad_resources_time_is_an_error_naming_the_key(tmp_path):
    folder = _with_resources(tmp_path, {"time": "soon"})
    with pytest.raises(UserError) as err:
        time_limit("local", None, read_lock(str(folder), "x"), folder, None)
    assert err.value.key == "resources.time" and "sweep.lock.json" in str(err.value.location.path)


def test_time_limit_on_slurm_is_refused(cli_cwd):
    _with_resources(cli_cwd, {"time": 5})
    result = CliRunner().invoke(
        main,
        ["run", "generated/fake", "--executor", "slurm", "--time-limit", "60", "--command", FAKE_COMMAND],
    )
    assert result.exit_code == 2 and "--time-limit is for the local executor" in result.stderr, result.output
