"""A render that writes streams its files into a staging folder as it renders them
(sweepgen/compile/output/staging.py): killed or failing before the files are put in place, it leaves the
previous render's files and lock as they were; the next render (of either spec) cleans up and finishes.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from fs_support import ENV, cli, leftovers, outside_project, snapshot, write_spec

from sweepgen.compile import api
from sweepgen.compile.output.parallel import WORKERS_ENV

JOURNAL = ".sweepgen-journal.json"
NEW = "changed: {{ training.seed }}\n"
# slow from the 21st variant on (a loop that renders nothing), so a signal lands while staging
SLOW = "changed: {{ training.seed }}{% for i in range(30000 if training.seed > 20 else 0) %}{% endfor %}\n"


@pytest.fixture
def proj(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    return outside_project(tmp_path, monkeypatch)


def staged(sweep: Path) -> list[Path]:
    return list(sweep.glob(".staged.sweepgen-*.tmp"))


def kill_while_staging(proj: Path, sweep: Path) -> None:
    proc = subprocess.Popen(
        [sys.executable, "-m", "sweepgen", "render", "specs/demo.yaml"],
        cwd=proj,
        env=ENV,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    deadline = time.monotonic() + 120
    while len(staged(sweep)) < 10:
        assert proc.poll() is None, f"render ended before the signal: {proc.communicate()}"
        assert time.monotonic() < deadline, "the render never staged a file"
        time.sleep(0.005)
    proc.send_signal(signal.SIGKILL)
    proc.communicate(timeout=60)
    assert proc.returncode == -signal.SIGKILL


def test_sigkill_while_staging_a_fresh_folder_then_the_next_render_recovers(proj: Path) -> None:
    write_spec(proj, 300, template=SLOW)
    sweep = proj / "generated/demo"
    kill_while_staging(proj, sweep)
    assert 10 <= len(staged(sweep)) < 300
    assert sorted(os.listdir(sweep)) == sorted(p.name for p in staged(sweep))  # nothing else yet
    rc, out = cli("check", "specs/demo.yaml")
    assert rc == 1 and "interrupted: temporary file left by a render that did not finish" in out, out
    write_spec(proj, 300, template=NEW)
    assert cli("render", "specs/demo.yaml")[0] == 0
    assert leftovers(proj / "generated") == [] and cli("check", "specs/demo.yaml")[0] == 0


def test_sigkill_while_staging_leaves_the_previous_render_and_the_next_one_recovers(
    proj: Path, tmp_path: Path
) -> None:
    write_spec(proj, 300)
    assert cli("render", "specs/demo.yaml")[0] == 0
    sweep = proj / "generated/demo"
    before = snapshot(sweep)
    write_spec(proj, 300, template=SLOW)
    kill_while_staging(proj, sweep)
    temps = staged(sweep)
    assert 10 <= len(temps) < 300
    assert not (sweep / JOURNAL).exists()
    assert snapshot(sweep, *temps) == before  # old files and lock, byte for byte
    rc, out = cli("check", "specs/demo.yaml")
    assert rc == 1 and "interrupted: temporary file left by a render that did not finish" in out, out
    assert "edited" not in out
    write_spec(proj, 300, template=NEW)
    assert cli("render", "specs/demo.yaml") == (
        0,
        "specs/demo.yaml: 300 file(s) in generated/demo/ (0 created, 300 updated, 0 unchanged, 0 removed)\n",
    )
    assert leftovers(proj / "generated") == []
    assert sorted(os.listdir(sweep)) == sorted(["sweep.lock.json", *(f"seed{i}.yaml" for i in range(1, 301))])
    assert cli("check", "specs/demo.yaml")[0] == 0
    assert (tmp_path / "outside/victim.txt").read_text() == "keep me\n"


@pytest.mark.parametrize("workers", ["1", "2"])
def test_a_template_error_after_files_were_staged_writes_nothing(
    proj: Path, monkeypatch: pytest.MonkeyPatch, workers: str
) -> None:
    monkeypatch.setenv(WORKERS_ENV, workers)
    write_spec(proj, 40)
    assert cli("render", "specs/demo.yaml")[0] == 0
    before = snapshot(proj / "generated")
    write_spec(proj, 40, template="{{ training.seed }}: {{ 1 // (training.seed - 37) }}\n")
    rc, out = cli("render", "specs/demo.yaml")
    assert rc == 2 and "template fails for variant 'seed37'" in out, out
    assert snapshot(proj / "generated") == before  # the 36 staged files and their folder are gone


def test_two_specs_the_second_failing_leave_no_trace_of_the_first(proj: Path, tmp_path: Path) -> None:
    first = write_spec(proj, 3, name="one")
    second = write_spec(proj, 3, name="two", template="{{ nope }}\n")
    (proj / "templates" / "t.yaml.j2").write_text("seed: {{ training.seed }}\n")
    second.write_text(second.read_text().replace("t.yaml.j2", "bad.yaml.j2"))
    (proj / "templates" / "bad.yaml.j2").write_text("{{ nope }}\n")
    before = snapshot(tmp_path)
    rc, out = cli("render", str(first.relative_to(proj)), str(second.relative_to(proj)))
    assert rc == 2 and "nope" in out, out
    assert snapshot(tmp_path) == before and not (proj / "generated").exists()


def test_two_specs_naming_one_sweep_folder_are_refused_before_anything_is_written(
    proj: Path, tmp_path: Path
) -> None:
    first = write_spec(proj, 2, name="one")
    second = proj / "specs/other.yaml"
    second.write_text(first.read_text())
    before = snapshot(tmp_path)
    rc, out = cli("render", "specs/one.yaml", "specs/other.yaml")
    assert rc == 2 and "both render to generated/one" in out, out
    assert snapshot(tmp_path) == before


def test_a_dry_run_stages_nothing(proj: Path, tmp_path: Path) -> None:
    write_spec(proj, 3)
    before = snapshot(tmp_path)
    outcomes = api.render(["specs/demo.yaml"], "generated", dry_run=True)
    assert [o.count("create") for o in outcomes] == [3]
    assert snapshot(tmp_path) == before


def test_a_bad_output_template_leaves_no_folder(proj: Path, tmp_path: Path) -> None:
    write_spec(proj, 3, output="{{ variant.name }")
    before = snapshot(tmp_path)
    rc, out = cli("render", "specs/demo.yaml")
    assert rc == 2 and "`output` is not a valid template" in out, out
    assert snapshot(tmp_path) == before


def test_a_late_error_in_a_parallel_render_clears_every_staged_file(
    proj: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """2,500 files staged by two workers; the last variants fail, and every staged file goes."""
    monkeypatch.setenv(WORKERS_ENV, "2")
    write_spec(proj, 2500, template="{{ training.seed }}: {{ 1 // (training.seed - 2490) }}\n")
    rc, out = cli("render", "specs/demo.yaml")
    assert rc == 2 and "template fails for variant 'seed2490'" in out, out
    assert not (proj / "generated").exists()


def test_staged_files_of_a_dead_render_with_this_pid_are_no_obstacle(proj: Path) -> None:
    write_spec(proj, 3)
    assert cli("render", "specs/demo.yaml")[0] == 0
    write_spec(proj, 3, template=NEW)
    (proj / f"generated/demo/.staged.sweepgen-{os.getpid()}-1.tmp").write_text("half a fi")
    assert cli("render", "specs/demo.yaml")[0] == 0  # in this process: the same pid
    assert leftovers(proj / "generated") == []
    assert cli("check", "specs/demo.yaml")[0] == 0
