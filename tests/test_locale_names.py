"""Any locale, any file name: output in an explicit safe encoding, names handled as bytes, names that
differ only in case refused, no raw NUL in generated files or CSV, every limit exit 2.

Each test reproduces a symptom of the second hostile-input review: `list` with non-ASCII values
under an ASCII locale exited 70; a non-UTF-8 file name in the sweep folder made `check` exit 70
(`git check-ignore` was handed a surrogate-escaped name); sweeps `good` and `Good` were both
rendered; a raw NUL reached a generated YAML file; a raised `limits.variants` exited 70; a deleted
working directory was reported as a standard-output error.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

from fs_support import ENV, snapshot

BOUND = 60  # seconds; generous for a loaded machine
TEMPLATE = "seed: {{ training.seed }}\n"


def _cli(cwd: Path, *args: str, env: dict[str, str] | None = None) -> tuple[int, str, str]:
    started = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-m", "sweepgen", *args],
        cwd=cwd,
        env=env or ENV,
        capture_output=True,
        timeout=BOUND * 2,
        check=False,
    )
    assert time.monotonic() - started < BOUND
    out, err = done.stdout.decode("utf-8", "replace"), done.stderr.decode("utf-8", "replace")
    assert "Traceback" not in out + err and done.returncode != 70, out + err
    return done.returncode, out, err


def _project(tmp_path: Path, name: str = "good", body: str = "", template: str = TEMPLATE) -> Path:
    (tmp_path / "outside").mkdir(exist_ok=True)
    (tmp_path / "outside" / "victim.txt").write_text("keep me\n")
    proj = tmp_path / "proj"
    (proj / "specs").mkdir(parents=True, exist_ok=True)
    (proj / "templates").mkdir(exist_ok=True)
    (proj / "templates" / "t.yaml.j2").write_text(template)
    (proj / "specs" / f"{name}.yaml").write_text(
        f"sweepgen: 1\nname: {name}\ntemplate: ../templates/t.yaml.j2\n"
        "output: '{{ variant.name }}.yaml'\n"
        + (body or "base: {training: {seed: 0}}\ngrid: {training.seed: [1, 2]}\n")
    )
    return proj


def test_list_with_non_ascii_values_under_an_ascii_locale(tmp_path):
    proj = _project(tmp_path, body='base: {training: {tag: "x"}}\ngrid: {training.tag: {a: "é", b: "中→"}}\n')
    env = {k: v for k, v in ENV.items() if not k.startswith("LC_") and k != "LANG"}
    env.update(LC_ALL="C", LANG="C", PYTHONIOENCODING="ascii")
    code, out, _ = _cli(proj, "list", "specs/good.yaml", env=env)
    assert code == 0 and "\\xe9" in out and "\\u4e2d\\u2192" in out, out
    code, out, _ = _cli(proj, "list", "--format", "csv", "specs/good.yaml", env=env)
    assert code == 0 and "a,é\nb,中→\n" in out, out  # machine formats: UTF-8, unchanged


def test_check_with_a_non_utf8_file_name_in_the_sweep_folder(tmp_path):
    proj = _project(tmp_path)
    subprocess.run(["git", "init", "-q", str(proj)], check=True)
    (proj / ".gitignore").write_text("*.bak\n")
    assert _cli(proj, "render", "specs/good.yaml")[0] == 0
    folder = os.fsencode(proj / "generated" / "good")
    for name in (b"\xff\xfe.yaml", b"\xff\xfe.bak"):  # an orphan, and a git-ignored file
        with open(folder + b"/" + name, "wb") as fh:
            fh.write(b"x: 1\n")
    before = snapshot(tmp_path)
    code, out, _ = _cli(proj, "check", "specs/good.yaml")
    assert code == 1, out
    assert "orphan" in out and ".yaml" in out and ".bak" not in out, out
    assert snapshot(tmp_path) == before


def test_sweeps_that_differ_only_in_case_are_refused(tmp_path):
    proj = _project(tmp_path, "good")
    _project(tmp_path, "Good")
    before = snapshot(tmp_path)
    code, out, err = _cli(proj, "render", "specs/good.yaml", "specs/Good.yaml")
    assert code == 2 and "differ only in case" in err and "specs/Good.yaml:2:" in err, err
    assert snapshot(tmp_path) == before  # nothing written, for either spec
    assert _cli(proj, "render", "specs/good.yaml")[0] == 0
    before = snapshot(tmp_path)
    code, out, err = _cli(proj, "render", "specs/Good.yaml")  # a later render meets the folder on disk
    assert code == 2 and "generated/Good and generated/good" in err, err
    assert snapshot(tmp_path) == before


def test_a_nul_never_reaches_a_generated_file_or_a_csv(tmp_path):
    body = 'base: {training: {seed: 0, tag: "a\\0b"}}\ngrid: {training.seed: [1]}\n'
    proj = _project(tmp_path, body=body, template="tag: {{ training.tag }}\n")
    before = snapshot(tmp_path)
    code, _, err = _cli(proj, "render", "specs/good.yaml")
    assert code == 2 and "templates/t.yaml.j2:1:" in err and "U+0000 raw" in err and "to_yaml" in err, err
    assert snapshot(tmp_path) == before
    (proj / "templates" / "t.yaml.j2").write_text(
        "tag: {{ training.tag | yaml_scalar }}\n{{ config | to_yaml }}\n"
    )
    assert _cli(proj, "render", "specs/good.yaml")[0] == 0
    data = (proj / "generated" / "good" / "seed1.yaml").read_bytes()
    assert b"\x00" not in data and b'tag: "a\\u0000b"' in data
    (proj / "specs" / "good.yaml").write_text(
        (proj / "specs" / "good.yaml")
        .read_text()
        .replace("grid: {training.seed: [1]}", 'grid: {training.tag: {x: "p\\0q", y: r}}')
    )
    code, out, _ = _cli(proj, "list", "--format", "csv", "specs/good.yaml")
    assert code == 0 and "x,p\\x00q\n" in out and "\x00" not in out, out


def test_a_raised_variant_limit_still_ends_in_exit_2(tmp_path):
    axes = "".join(f"  +a{i}: [0, 1, 2, 3, 4, 5, 6, 7, 8, 9]\n" for i in range(10))
    # a spec raises its own limit only to the ceiling: past it, the person running sweepgen says so
    for limit, message in (
        (10**11, "less than or equal to 10000000"),
        (10**7, "10,000,000,000 variants"),
    ):
        proj = _project(tmp_path, body=f"limits: {{variants: {limit}}}\nbase: {{a: 0}}\ngrid:\n{axes}")
        code, _, err = _cli(proj, "list", "--limit", "variants=10000000", "specs/good.yaml")
        assert code == 2 and message in err and "specs/good.yaml:" in err, err


def test_a_deleted_working_directory_is_reported_as_such(tmp_path):
    gone = tmp_path / "gone"
    gone.mkdir()
    proc = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import os, sys, time; time.sleep(1); "
            "from sweepgen.cli import main; sys.argv = ['sweepgen', 'list', 'x.yaml']; main()",
        ],
        cwd=gone,
        env=ENV,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    gone.rmdir()
    out, err = proc.communicate(timeout=BOUND)
    text = (out + err).decode()
    assert proc.returncode == 2, text
    assert "the working directory no longer exists" in text and "stdout" not in text, text
