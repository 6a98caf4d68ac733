"""The README's commands for a TRL user's first hour (and docs/slurm.md's dry run) are *run*, as
written, in a scratch git repository holding a standard `trl grpo` config (docs commands
once failed as written). tests/test_docs_commands.py checks the spelling of every documented
command; this runs the ones of the TRL path that need no GPU, in the README's order, with a
stand-in `trl` on PATH for the run, then reports the runs. A README edit that breaks the path (a
renamed spec, a missing folder, a schema that refuses TRL's own keys) fails here."""

from __future__ import annotations

import os
import re
import shlex
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from run_support import cached_hub_model
from test_first_hour import FAKE_TRL, TRL_CONFIG

ROOT = Path(__file__).resolve().parent.parent
FENCE = re.compile(r"^[ \t]*```([a-z]*)\n(.*?)^[ \t]*```", re.MULTILINE | re.DOTALL)
TRL_PATH = ("configs/grpo.yaml", "trl:grpo", "generated/grpo")  # what marks a command of that path
INLINE = re.compile(r"`(sweepgen [^`\n]+)`")
DEADLINE_S = 900  # trl's first import and a loaded machine


def readme_commands() -> list[str]:
    """The README's `sweepgen` lines of the TRL path (fenced blocks and inline code), in the order
    a reader meets them, exactly as written."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    found: list[tuple[int, str]] = []
    for block in FENCE.finditer(text):
        for line in block.group(2).replace("\\\n", " ").splitlines():
            found.append((block.start(), line))
    outside = FENCE.sub(lambda m: " " * len(m.group(0)), text)  # same offsets, fences blanked
    found += [(m.start(), m.group(1)) for m in INLINE.finditer(outside)]
    out = []
    for _, line in sorted(found, key=lambda f: f[0]):
        line = line.strip().removeprefix("$ ").split(" #", 1)[0].strip()
        if line.startswith("sweepgen ") and any(mark in line for mark in TRL_PATH):
            out.append(line)
    return list(dict.fromkeys(out))


def test_the_readme_holds_the_trl_path():
    commands = readme_commands()
    assert any(c.startswith("sweepgen init --from configs/grpo.yaml") for c in commands), commands
    assert any(c.startswith("sweepgen schema --export trl:grpo") for c in commands), commands
    assert any(c.startswith("sweepgen run generated/grpo") for c in commands), commands


@pytest.mark.train
@pytest.mark.slow
def test_the_readme_trl_commands_run_as_written(tmp_path: Path):
    project = tmp_path / "project"
    (project / "configs").mkdir(parents=True)
    (project / "configs" / "grpo.yaml").write_text(TRL_CONFIG)
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    trl = bin_dir / "trl"
    trl.write_text(FAKE_TRL.format(python=sys.executable))
    trl.chmod(trl.stat().st_mode | stat.S_IEXEC)
    env = {
        **os.environ,
        "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}",
        "XDG_CACHE_HOME": str(tmp_path / "cache"),
        "COLUMNS": "200",
        # offline (the tests' environment): the README's model as `hf download` leaves it
        "HF_HUB_CACHE": str(cached_hub_model(tmp_path / "hub", "Qwen/Qwen2-0.5B-Instruct")),
    }
    ran = []
    for line in [*readme_commands(), "sweepgen report generated/grpo --no-plot"]:
        argv = [sys.executable, "-m", "sweepgen", *shlex.split(line)[1:]]
        done = subprocess.run(argv, cwd=project, env=env, capture_output=True, text=True, timeout=DEADLINE_S)
        said = f"{line} -> {done.returncode}\n{done.stdout}{done.stderr}"
        assert done.returncode == 0, said
        assert "Traceback" not in done.stdout + done.stderr, said
        ran.append(line)
    assert (project / "schemas" / "grpo.json").is_file()  # the export made its folder
    assert (project / "runs").is_dir() and any((project / "runs").rglob("trainer_state.json"))
    assert len(ran) >= 5, ran


SLURM_SPEC = """sweepgen: 1
name: my_sweep
template: ../templates/t.yaml.j2
output: "{{ variant.name }}.yaml"
base: {seed: 0}
grid:
  seed: [1, 2]
resources: {time: "00:10:00", cpus_per_run: 2}
"""


@pytest.mark.slurm
def test_the_slurm_docs_dry_run_runs_as_written(tmp_path: Path):
    """docs/slurm.md's first two commands, on a sweep with the `resources:` the page says it needs:
    the dry run prints the sbatch header and the array tasks and submits nothing."""
    text = (ROOT / "docs" / "slurm.md").read_text(encoding="utf-8")
    block = FENCE.search(text)
    assert block is not None
    lines = [ln.split(" #", 1)[0].strip() for ln in block.group(2).splitlines()][:2]
    assert lines == [
        "sweepgen render specs/my_sweep.yaml",
        "sweepgen run generated/my_sweep --executor slurm --dry-run",
    ], lines
    (tmp_path / "specs").mkdir()
    (tmp_path / "templates").mkdir()
    (tmp_path / "specs" / "my_sweep.yaml").write_text(SLURM_SPEC)
    (tmp_path / "templates" / "t.yaml.j2").write_text("seed: {{ seed }}\noutput_dir: runs/s{{ seed }}\n")
    outputs = []
    for line in lines:
        argv = [sys.executable, "-m", "sweepgen", *shlex.split(line)[1:]]
        done = subprocess.run(argv, cwd=tmp_path, capture_output=True, text=True, timeout=DEADLINE_S)
        assert done.returncode == 0, f"{line}\n{done.stdout}{done.stderr}"
        outputs.append(done.stdout)
    assert "#SBATCH --cpus-per-task=2" in outputs[1] and "#SBATCH --time=10" in outputs[1], outputs[1]
    assert "[1] seed2" in outputs[1] and not (tmp_path / "runs").exists()  # nothing submitted
