"""A render on a case-insensitive file system (macOS, Windows, exFAT drives): a case-only rename of
outputs (`Seed1.yaml` -> `seed1.yaml`, `x/` -> `X/`) writes the new names and deletes nothing it
just wrote; `check` is green after it. Run on a real exFAT mount (tests/casefold_mount.py)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
SPEC = """\
sweepgen: 1
name: demo
template: ../templates/t.yaml.j2
output: "{output}"
base:
  training: {{seed: 1, lr: 0.1}}
grid:
  training.seed: [1, 2]
"""


def _sweepgen(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    argv = [sys.executable, "-m", "sweepgen", *args]
    return subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=120)


def _render(root: Path, output: str) -> None:
    (root / "specs" / "demo.yaml").write_text(SPEC.format(output=output))
    result = _sweepgen(root, "render", "specs/demo.yaml")
    assert result.returncode == 0, result.stdout + result.stderr


def _tree(folder: Path) -> dict[str, str]:
    """Every file under ``folder`` by the name the file system stores (its case), with its text."""
    out = {}
    for here, _dirs, files in os.walk(folder):
        for name in files:
            path = Path(here, name)
            out[path.relative_to(folder).as_posix()] = path.read_text()
    return out


@pytest.mark.parametrize(
    "before, after, names",
    [
        ("Seed{{ training.seed }}.yaml", "seed{{ training.seed }}.yaml", ["seed1.yaml", "seed2.yaml"]),
        ("x/s{{ training.seed }}.yaml", "X/s{{ training.seed }}.yaml", ["X/s1.yaml", "X/s2.yaml"]),
        ("a/B{{ training.seed }}.yaml", "A/b{{ training.seed }}.yaml", ["A/b1.yaml", "A/b2.yaml"]),
    ],
)
def test_a_case_only_rename_writes_the_new_names(casefold_dir: Path, before: str, after: str, names) -> None:
    root = casefold_dir / "proj"
    (root / "specs").mkdir(parents=True)
    (root / "templates").mkdir()
    (root / "templates" / "t.yaml.j2").write_text("{{ config | to_yaml }}")
    _render(root, before)
    _render(root, after)
    files = _tree(root / "generated" / "demo")
    assert sorted(files) == sorted([*names, "sweep.lock.json"]), files
    for name, seed in zip(names, (1, 2)):
        assert f"seed: {seed}" in files[name]
    check = _sweepgen(root, "check", "specs/demo.yaml")
    assert check.returncode == 0, check.stdout + check.stderr
    again = _sweepgen(root, "render", "specs/demo.yaml")  # and nothing to do after it
    assert again.returncode == 0 and "0 created, 0 updated" in again.stdout + again.stderr, again
