"""The bundled trainer cannot be shadowed by a user's file: it is installed as `sweepgen_trainer`
and started without the working folder on its import path."""

from __future__ import annotations

import subprocess

from sweepgen.run.core.plan.tasks import DEFAULT_COMMAND


def test_files_in_the_working_folder_do_not_replace_the_trainer(tmp_path):
    # every name the trainer's start imports, taken by the user's working folder
    for name in ("sweepgen_trainer", "trainer", "sweepgen"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "__init__.py").write_text("raise SystemExit('SHADOWED ' + __name__)\n")
    (tmp_path / "trainer.py").write_text("raise SystemExit('SHADOWED trainer.py')\n")
    argv = [arg.replace("{config}", "--help") for arg in DEFAULT_COMMAND]
    done = subprocess.run(argv, cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert "SHADOWED" not in done.stdout + done.stderr
    assert done.returncode == 0, done.stderr
    assert "usage: python -m sweepgen_trainer CONFIG.yaml" in done.stderr
