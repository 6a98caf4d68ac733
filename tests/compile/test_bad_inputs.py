"""The bad-input corpus: every folder under tests/bad_inputs/ is a small project that must fail.

Each case holds ``spec.yaml`` (plus templates, schema or a pre-rendered ``generated/``) and
``expected.yaml``: the command to run, its exit code, where the error points (``file:line:col``)
and a substring of the message. The test also asserts no traceback and that nothing was written.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from sweepgen.cli import main

CASES = Path(__file__).resolve().parents[1] / "bad_inputs"
NAMES = sorted(p.name for p in CASES.iterdir() if (p / "expected.yaml").exists())


def _snapshot(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def test_corpus_is_large_enough():
    assert len(NAMES) >= 25


@pytest.mark.parametrize("name", NAMES)
def test_bad_input_fails_cleanly(name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    case = tmp_path / name
    shutil.copytree(CASES / name, case)
    expected = yaml.safe_load((case / "expected.yaml").read_text())
    monkeypatch.chdir(case)
    before = _snapshot(case)
    result = CliRunner().invoke(main, [expected["command"], "spec.yaml"])
    out = result.output
    assert result.exit_code == expected["exit"], out
    assert "Traceback" not in out and "internal error" not in out, out
    assert f"{expected['where']}: " in out, out
    assert expected["message"] in out, out
    assert _snapshot(case) == before, "a failing command must not write anything"
