"""``check`` cannot be talked past by editing a generated file and its sha256 in the lock.

Before the lock carried a digest, plain ``check`` trusted the forged sha256 (exit 0) and ``render``
called the file "unchanged" and kept the edit. Now a lock whose digest does not hold is not trusted:
the spec is rendered and compared. A forger who also recomputes the digest (it is no secret) still
passes the local fast path, as docs/OUTPUT.md says; under ``CI=true`` nothing is trusted without
rendering, so there the forgery is caught too.
"""

from __future__ import annotations

import hashlib
import json
import re
import subprocess
import sys
import time
from pathlib import Path

from fs_support import ENV, snapshot

from sweepgen.compile.output.lockfile import lock_digest

BOUND = 60  # seconds; generous, the machine may be loaded
EDIT = b"# a hand edit\n"


def _cli(proj: Path, *args: str, ci: bool = False) -> tuple[int, str]:
    env = dict(ENV, CI="true") if ci else ENV
    started = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-m", "sweepgen", *args],
        cwd=proj,
        env=env,
        capture_output=True,
        text=True,
        timeout=BOUND * 3,
    )
    assert time.monotonic() - started < BOUND
    out = done.stdout + done.stderr
    assert "Traceback" not in out
    return done.returncode, out


def _project(tmp_path: Path) -> Path:
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "victim.txt").write_text("keep me\n")
    proj = tmp_path / "proj"
    (proj / "specs").mkdir(parents=True)
    (proj / "templates").mkdir()
    (proj / "templates" / "t.yaml.j2").write_text("seed: {{ training.seed }}\n")
    (proj / "specs" / "demo.yaml").write_text(
        "sweepgen: 1\nname: demo\ntemplate: ../templates/t.yaml.j2\noutput: '{{ variant.name }}.yaml'\n"
        "base: {training: {seed: 0}}\ngrid: {training.seed: [1, 2, 3]}\n"
    )
    assert _cli(proj, "render", "specs/demo.yaml")[0] == 0
    return proj


def _forge(proj: Path, *, recompute_digest: bool) -> bytes:
    """Edit seed2.yaml and write its new sha256 into the lock (and the digest, if asked)."""
    target = proj / "generated/demo/seed2.yaml"
    old = hashlib.sha256(target.read_bytes()).hexdigest()
    edited = target.read_bytes() + EDIT
    target.write_bytes(edited)
    lock_path = proj / "generated/demo/sweep.lock.json"
    text = lock_path.read_text().replace(old, hashlib.sha256(edited).hexdigest())
    if recompute_digest:
        text = lock_digest.seal(re.sub(r'  "digest": "[0-9a-f]{64}",\n', "", text))
    lock_path.write_text(text)
    return edited


def test_a_careless_forgery_is_caught_by_plain_check(tmp_path):
    proj = _project(tmp_path)
    _forge(proj, recompute_digest=False)
    before = snapshot(tmp_path)
    code, out = _cli(proj, "check", "--diff", "specs/demo.yaml")
    assert code == 1, out
    assert "generated/demo/seed2.yaml:" in out and "edited by hand" in out and "a hand edit" in out, out
    assert "lock file was edited by hand: its digest does not match its content" in out, out
    assert snapshot(tmp_path) == before


def test_render_does_not_keep_a_forged_edit(tmp_path):
    proj = _project(tmp_path)
    _forge(proj, recompute_digest=False)
    outside = snapshot(tmp_path, proj)
    code, out = _cli(proj, "render", "specs/demo.yaml")
    assert code == 0, out
    assert "1 updated" in out, out
    assert EDIT not in (proj / "generated/demo/seed2.yaml").read_bytes()
    assert lock_digest.holds((proj / "generated/demo/sweep.lock.json").read_bytes())
    assert _cli(proj, "check", "specs/demo.yaml")[0] == 0
    assert snapshot(tmp_path, proj) == outside


def test_under_ci_even_a_recomputed_digest_is_caught(tmp_path):
    proj = _project(tmp_path)
    _forge(proj, recompute_digest=True)
    assert lock_digest.holds((proj / "generated/demo/sweep.lock.json").read_bytes())
    before = snapshot(tmp_path)
    code, out = _cli(proj, "check", "--diff", "specs/demo.yaml", ci=True)
    assert code == 1, out
    assert "generated/demo/seed2.yaml:" in out and "a hand edit" in out, out
    # the local fast path trusts a lock whose digest holds: this is what CI=true (or --full) is for
    assert _cli(proj, "check", "specs/demo.yaml")[0] == 0
    assert _cli(proj, "check", "--full", "specs/demo.yaml")[0] == 1
    assert snapshot(tmp_path) == before


def test_under_ci_a_forged_input_hash_is_caught(tmp_path):
    proj = _project(tmp_path)
    template = proj / "templates/t.yaml.j2"
    old = hashlib.sha256(template.read_bytes()).hexdigest()
    template.write_text("seed: {{ training.seed + 1 }}\n")
    lock_path = proj / "generated/demo/sweep.lock.json"
    data = lock_path.read_text().replace(old, hashlib.sha256(template.read_bytes()).hexdigest())
    lock_path.write_text(lock_digest.seal(re.sub(r'  "digest": "[0-9a-f]{64}",\n', "", data)))
    code, out = _cli(proj, "check", "specs/demo.yaml", ci=True)
    assert code == 1 and "stale" in out, out


def test_the_digest_covers_every_line_but_its_own():
    text = '{\n  "base": {},\n  "files": [\n    {"sha256": "ab"}\n  ],\n  "varying": []\n}\n'
    sealed = lock_digest.seal(text).encode()
    assert lock_digest.holds(sealed) and not lock_digest.edited(sealed)
    assert json.loads(sealed)["digest"] == hashlib.sha256(text.encode()).hexdigest()
    for i in range(len(sealed)):  # any one byte changed anywhere breaks it
        if sealed[i : i + 1] in b"0123456789abcdef" and sealed[i - 1 : i] != b"\\":
            forged = sealed[:i] + (b"1" if sealed[i : i + 1] != b"1" else b"2") + sealed[i + 1 :]
            assert not lock_digest.holds(forged)
    assert not lock_digest.holds(text.encode()) and not lock_digest.edited(text.encode())
