"""A render checks every output path before it creates anything (docs/OUTPUT.md's promise).

Before: an output path under ``sweep.lock.json/`` exited 2 only after writing the files and a
journal into a new ``sweep.lock.json/`` folder, and the corrected spec could not be rendered until
that folder was deleted by hand.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from fs_support import snapshot, sweepgen

BOUND = 60  # seconds; generous for a loaded machine


def _project(tmp_path: Path, output: str) -> Path:
    (tmp_path / "outside").mkdir(exist_ok=True)
    (tmp_path / "outside" / "victim.txt").write_text("keep me\n")
    proj = tmp_path / "proj"
    (proj / "specs").mkdir(parents=True, exist_ok=True)
    (proj / "templates").mkdir(exist_ok=True)
    (proj / "templates" / "t.yaml.j2").write_text("seed: {{ training.seed }}\n")
    (proj / "specs" / "demo.yaml").write_text(
        f"sweepgen: 1\nname: demo\ntemplate: ../templates/t.yaml.j2\noutput: {output!r}\n"
        "base: {training: {seed: 0}}\ngrid: {training.seed: [1, 2]}\n"
    )
    return proj


def _render(tmp_path: Path, proj: Path) -> tuple[int, str]:
    started = time.monotonic()
    done = sweepgen(proj, "render", "specs/demo.yaml", timeout=BOUND * 2)
    assert time.monotonic() - started < BOUND
    out = done.stdout + done.stderr
    assert "Traceback" not in out
    return done.returncode, out


@pytest.mark.parametrize("output", ["sweep.lock.json/{{ variant.name }}.yaml", "sweep.lock.json"])
def test_an_output_under_the_lock_name_writes_nothing(tmp_path, output):
    proj = _project(tmp_path, output)
    before = snapshot(tmp_path)
    code, out = _render(tmp_path, proj)
    assert code == 2, out
    assert "specs/demo.yaml:4:" in out and "reserved for sweepgen's own files" in out, out
    assert snapshot(tmp_path) == before and not (proj / "generated").exists()
    # the corrected spec renders at once: nothing was left to delete by hand
    _project(tmp_path, "{{ variant.name }}.yaml")
    assert _render(tmp_path, proj)[0] == 0
    assert sorted(p.name for p in (proj / "generated" / "demo").iterdir()) == [
        "seed1.yaml",
        "seed2.yaml",
        "sweep.lock.json",
    ]


@pytest.mark.parametrize("name", ["sweep.lock.json", ".sweepgen-journal.json"])
def test_a_folder_where_the_lock_or_journal_goes_stops_the_render_before_any_write(tmp_path, name):
    proj = _project(tmp_path, "{{ variant.name }}.yaml")
    (proj / "generated" / "demo" / name).mkdir(parents=True)
    before = snapshot(tmp_path)
    code, out = _render(tmp_path, proj)
    assert code == 2, out
    assert f"generated/demo/{name} is a folder where sweepgen must write a file" in out, out
    assert snapshot(tmp_path) == before
