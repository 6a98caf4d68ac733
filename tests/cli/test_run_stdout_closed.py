"""`sweepgen run DIR | head` (issue 35): the reader of standard output going away must not stop the
sweep. The first EPIPE sends the rest of the output to /dev/null with one note on stderr, every run
still starts once and finishes, and `run` exits with the sweep's own code, never a traceback."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DEADLINE_S = 300  # a loaded machine; only a hang reaches it

SPEC = """sweepgen: 1
name: demo
template: ../templates/t.yaml.j2
output: "{{ variant.name }}.yaml"
base: {seed: 0}
grid:
  seed: [1, 2, 3, 4]
"""


def _project(tmp_path: Path) -> Path:
    (tmp_path / "specs").mkdir()
    (tmp_path / "templates").mkdir()
    (tmp_path / "specs" / "demo.yaml").write_text(SPEC)
    (tmp_path / "templates" / "t.yaml.j2").write_text("seed: {{ seed }}\noutput_dir: runs/s{{ seed }}\n")
    return tmp_path


def _sweepgen(cwd: Path, *args: str, **kw) -> subprocess.Popen:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    return subprocess.Popen([sys.executable, "-m", "sweepgen", *args], cwd=cwd, env=env, **kw)


def test_run_piped_into_head_finishes_the_sweep_and_exits_with_its_code(tmp_path: Path):
    project = _project(tmp_path)
    assert _sweepgen(project, "render", "specs/demo.yaml").wait(DEADLINE_S) == 0
    # each run prints a line to its log and takes a moment, so `run` is still printing when the
    # reader goes away after its first line (as `| head -1` does)
    command = "sleep 0.3; echo {config}"
    proc = _sweepgen(
        project,
        "run",
        "generated/demo",
        "-j",
        "1",
        "--shell",
        "--command",
        command,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert proc.stdout is not None and proc.stderr is not None
    first = proc.stdout.readline()
    assert first, "run printed nothing"
    proc.stdout.close()  # the reader is gone: the next write is EPIPE
    err = proc.stderr.read().decode()
    code = proc.wait(DEADLINE_S)
    assert code == 0, err
    assert "Traceback" not in err and "internal error" not in err, err
    assert "standard output was closed" in err and "sweepgen status generated/demo" in err, err
    for seed in (1, 2, 3, 4):  # every run ran, once, to its end: none cancelled by the closed pipe
        status = json.loads((project / "runs" / f"s{seed}" / "sweepgen_status.json").read_text())
        assert status["state"] == "finished", status
        assert status.get("attempt", 1) == 1, status


def test_a_dry_run_cut_short_by_its_reader_is_still_exit_2(tmp_path: Path):
    """A listing has nothing to go on with: as for every other command, the cut is exit 2, said once."""
    project = _project(tmp_path)
    assert _sweepgen(project, "render", "specs/demo.yaml").wait(DEADLINE_S) == 0
    read, write = os.pipe()
    os.close(read)  # no reader at all: the first write is EPIPE
    proc = _sweepgen(
        project,
        "run",
        "generated/demo",
        "--dry-run",
        "--command",
        "echo {config}",
        stdout=write,
        stderr=subprocess.PIPE,
    )
    os.close(write)
    _, err = proc.communicate(timeout=DEADLINE_S)
    assert proc.returncode == 2, err
    assert b"Traceback" not in err and b"Broken pipe" in err, err
