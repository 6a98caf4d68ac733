"""`sweepgen cancel` of a search stops the search: its running `sweepgen run` asks no new trial,
exits 1 saying so and how to resume, and that command goes on to exactly n. Real processes (the
sweepgen CLI, the fake trainer, the local executor)."""

from __future__ import annotations

import time

from search_support import RUN_ARGS, logged_steps, study, sweepgen, write_search_project

SWEEP = "generated/fake_search"
SLOW = {"x": 0.5, "y": 0.5, "steps": 20, "step_s": 0.1, "seed": 0, "noise": 0.0, "output_dir": None}


def test_cancel_stops_the_search_and_its_command_line_resumes_it(tmp_path):
    spec = write_search_project(tmp_path, {"n": 8, "parallel": 2, "sampler": "random"}, base=SLOW)
    assert sweepgen(tmp_path, "render", str(spec)).returncode == 0
    proc = sweepgen(tmp_path, "run", SWEEP, *RUN_ARGS, wait=False)
    deadline = time.monotonic() + 120
    while not logged_steps(tmp_path / "runs" / "fake_search" / "t0000"):
        assert time.monotonic() < deadline and proc.poll() is None, "t0000 never trained"
        time.sleep(0.05)
    cancel = sweepgen(tmp_path, "cancel", SWEEP)
    assert "Traceback" not in cancel.stderr, cancel.stderr
    assert "the search was asked to stop" in cancel.stdout, cancel.stdout + cancel.stderr
    assert "--command" in cancel.stdout.replace("\n", "")  # the resume command, spelled out
    out, err = proc.communicate(timeout=180)
    assert proc.returncode == 1, out + err
    assert "the search was cancelled" in err and "--command" in err.replace("\n", ""), err
    asked = study(tmp_path).get_trials()
    assert len(asked) < 8, "the search stopped asking"
    status = sweepgen(tmp_path, "status", SWEEP)
    said = " ".join(status.stdout.split())  # (rich wraps long lines at spaces)
    assert "no `sweepgen run` drives this search now: `sweepgen run generated/fake_search --command" in said
    # the recorded command line goes on: no option given again
    done = sweepgen(tmp_path, "run", SWEEP, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    trials = study(tmp_path).get_trials()
    assert sorted(t.number for t in trials) == list(range(8))
    assert [t.state.name for t in trials] == ["COMPLETE"] * 8
    for t in trials:
        assert (tmp_path / "runs" / "fake_search" / f"t{t.number:04d}" / "summary.json").is_file()
