"""`status` of a search exits as `run` does: 1 when every trial ended and none is complete (here:
the trainer never logs the search's metric), 0 while one is complete."""

from __future__ import annotations

from search_support import RUN_ARGS, cli, sweepgen, write_search_project


def test_status_exits_1_like_run_when_no_trial_logged_the_metric(tmp_path):
    write_search_project(tmp_path, {"n": 2, "parallel": 1, "metric": "never_logged"})
    assert cli(tmp_path, "render", "specs/s.yaml").returncode == 0
    done = sweepgen(tmp_path, "run", "generated/fake_search", *RUN_ARGS)
    assert done.returncode == 1, done.stdout + done.stderr
    shown = cli(tmp_path, "status", "generated/fake_search")
    assert shown.returncode == 1, shown.stdout + shown.stderr
    assert "0 complete" in shown.stdout and "never_logged" in shown.stdout


def test_status_exits_0_when_the_search_has_a_complete_trial(tmp_path):
    write_search_project(tmp_path, {"n": 2, "parallel": 1})
    assert cli(tmp_path, "render", "specs/s.yaml").returncode == 0
    assert sweepgen(tmp_path, "run", "generated/fake_search", *RUN_ARGS).returncode == 0
    shown = cli(tmp_path, "status", "generated/fake_search")
    assert shown.returncode == 0, shown.stdout + shown.stderr
