"""A lock does not depend on the environment that wrote it: rendered in the core environment (no
torch, no trl) it checks clean in the full one, and the reverse; a `schema: trl:GRPOConfig` lock
written where trl is installed checks clean under `--no-import` where it is not (the skipped schema
check is reported), and `render --no-import` leaves it as it was."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.train  # needs both environments: this one with trl, and the core one

REPO = Path(__file__).resolve().parents[2]
FULL = sys.executable
LIGHT = os.environ.get("SWEEPGEN_LIGHT_PYTHON") or str(
    Path(sys.prefix).with_name(".venv-light") / "bin" / "python"
)

FILE_SPEC = """\
sweepgen: 1
name: grpo_file
template: ../templates/t.yaml.j2
output: "{{ variant.name }}.yaml"
schema: ../schemas/grpo.json
base: {learning_rate: 1.0e-6, loss_type: dapo, beta: 0.0}
grid: {beta: [0.0, 0.04]}
"""
MODULE_SPEC = FILE_SPEC.replace("grpo_file", "grpo_module").replace("../schemas/grpo.json", "trl:GRPOConfig")


def sweepgen(python: str, cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    return subprocess.run(
        [python, "-m", "sweepgen", *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=300
    )


@pytest.fixture
def two_envs(tmp_path: Path) -> Path:
    # never skipped: the full lane runs beside the core environment (scripts/test.sh makes both)
    assert Path(LIGHT).exists(), f"no core environment at {LIGHT} (set SWEEPGEN_LIGHT_PYTHON)"
    probe = subprocess.run([LIGHT, "-c", "import trl"], capture_output=True)
    assert probe.returncode != 0, "the core environment must not have trl"
    for folder in ("specs", "templates", "schemas"):
        (tmp_path / folder).mkdir()
    shutil.copy(REPO / "schemas" / "trl_grpo_config.json", tmp_path / "schemas" / "grpo.json")
    (tmp_path / "templates" / "t.yaml.j2").write_text("{{ config | to_yaml }}\n")
    (tmp_path / "specs" / "file.yaml").write_text(FILE_SPEC)
    (tmp_path / "specs" / "module.yaml").write_text(MODULE_SPEC)
    return tmp_path


def test_a_schema_file_lock_is_the_same_in_both_environments(two_envs):
    lock = two_envs / "generated" / "grpo_file" / "sweep.lock.json"
    for writer, reader in ((LIGHT, FULL), (FULL, LIGHT)):
        shutil.rmtree(two_envs / "generated", ignore_errors=True)
        assert sweepgen(writer, two_envs, "render", "specs/file.yaml").returncode == 0
        written = lock.read_bytes()
        for args in (["check", "specs/file.yaml"], ["check", "--full", "specs/file.yaml"]):
            checked = sweepgen(reader, two_envs, *args)
            assert checked.returncode == 0, (writer, reader, checked.stdout + checked.stderr)
        assert sweepgen(reader, two_envs, "render", "specs/file.yaml").returncode == 0
        assert lock.read_bytes() == written


def test_a_module_schema_lock_survives_an_environment_without_the_package(two_envs):
    assert sweepgen(FULL, two_envs, "render", "specs/module.yaml").returncode == 0
    lock = two_envs / "generated" / "grpo_module" / "sweep.lock.json"
    written = lock.read_bytes()
    assert b'"module:trl": "trl==' in written
    plain = sweepgen(LIGHT, two_envs, "check", "specs/module.yaml")
    assert plain.returncode == 2 and "cannot import schema module 'trl'" in plain.stdout + plain.stderr
    skipped = sweepgen(LIGHT, two_envs, "check", "--no-import", "specs/module.yaml")
    assert skipped.returncode == 0, skipped.stdout + skipped.stderr
    assert "schema check skipped (--no-import)" in skipped.stderr
    assert sweepgen(LIGHT, two_envs, "render", "--no-import", "specs/module.yaml").returncode == 0
    assert lock.read_bytes() == written
    assert sweepgen(FULL, two_envs, "check", "specs/module.yaml").returncode == 0
