"""Inputs are bounded before they are read (``limits.input_bytes``, checked from the file's size).

Before: a 4 GB include was read whole into memory (exit 70 under a 3 GB cap) and a spec with a 300 MB
comment was read and accepted. Both are sparse files here: nothing is written to disk, and a size
check that comes first answers in milliseconds.
"""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest
from fs_support import ENV, snapshot

from sweepgen.compile.spec.project import INPUT_BYTES

BOUND = 30  # seconds; generous for a loaded machine (reading 4 GB takes far longer)


def _project(tmp_path: Path, spec_tail: str = "") -> Path:
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "victim.txt").write_text("keep me\n")
    proj = tmp_path / "proj"
    for folder in ("specs", "templates", "configs"):
        (proj / folder).mkdir(parents=True)
    (proj / "templates" / "t.yaml.j2").write_text("seed: {{ training.seed }}\n")
    (proj / "configs" / "base.yaml").write_text("training: {seed: 0}\n")
    (proj / "specs" / "demo.yaml").write_text(
        "sweepgen: 1\nname: demo\ntemplate: ../templates/t.yaml.j2\noutput: '{{ variant.name }}.yaml'\n"
        "base: {include: [../configs/base.yaml]}\ngrid: {training.seed: [1, 2]}\n" + spec_tail
    )
    return proj


def _cli(tmp_path: Path, proj: Path, *args: str) -> tuple[int, str]:
    before = snapshot(tmp_path / "outside")  # not the project: it holds the sparse giants
    started = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-m", "sweepgen", *args],
        cwd=proj,
        env=ENV,
        capture_output=True,
        text=True,
        timeout=BOUND * 4,
        check=False,
    )
    assert time.monotonic() - started < BOUND
    out = done.stdout + done.stderr
    assert "Traceback" not in out
    assert snapshot(tmp_path / "outside") == before
    return done.returncode, out


def _sparse(path: Path, size: int, head: bytes = b"") -> None:
    with open(path, "wb") as fh:
        fh.write(head)
        fh.truncate(size)


def test_a_4_gb_include_is_refused_from_its_size(tmp_path):
    proj = _project(tmp_path)
    _sparse(proj / "configs" / "base.yaml", 4 << 30, b"training: {seed: 0}\n#")
    code, out = _cli(tmp_path, proj, "render", "specs/demo.yaml")
    assert code == 2, out
    assert "specs/demo.yaml:5:" in out and "included file" in out, out
    assert f"larger than the limit of {INPUT_BYTES:,} bytes (4,294,967,296)" in out, out
    assert "limits: {input_bytes: N}" in out
    assert not (proj / "generated").exists()


def test_a_spec_with_a_300_mb_comment_is_refused_from_its_size(tmp_path):
    proj = _project(tmp_path)
    spec = proj / "specs" / "demo.yaml"
    _sparse(spec, 300 << 20, spec.read_bytes() + b"# a comment\n#")
    for command in ("render", "check", "list"):
        code, out = _cli(tmp_path, proj, command, "specs/demo.yaml")
        assert code == 2, out
        assert "spec file" in out and "larger than the limit" in out and "314,572,800" in out, out


@pytest.mark.parametrize("what", ["include", "template"])
def test_the_input_limit_applies_and_can_be_raised(tmp_path, what):
    proj = _project(tmp_path, "limits: {input_bytes: 12}\n")
    code, out = _cli(tmp_path, proj, "render", "specs/demo.yaml")
    assert code == 2 and "larger than the limit of 12 bytes" in out, out
    spec = proj / "specs" / "demo.yaml"
    if what == "template":  # the include passes, the 26-byte template does not
        spec.write_text(spec.read_text().replace("input_bytes: 12", "input_bytes: 22"))
        code, out = _cli(tmp_path, proj, "render", "specs/demo.yaml")
        assert code == 2 and "template" in out and "(26)" in out, out
    spec.write_text(spec.read_text().replace("input_bytes: 12", "input_bytes: 1000").replace("22", "1000"))
    assert _cli(tmp_path, proj, "render", "specs/demo.yaml")[0] == 0
