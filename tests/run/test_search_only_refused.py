"""`run --only` on a search sweep: refused, exit 2, before anything is asked or started (before: the
option was ignored and the whole search ran, every trial it asks: runs nobody asked for)."""

from __future__ import annotations

from search_support import RUN_ARGS, sweepgen, write_search_project


def test_run_only_on_a_search_is_exit_2_and_starts_nothing(tmp_path):
    write_search_project(tmp_path, {"n": 3, "parallel": 1})
    assert sweepgen(tmp_path, "render", "specs/s.yaml").returncode == 0
    for extra in ((), ("--dry-run",)):
        refused = sweepgen(tmp_path, "run", "generated/fake_search", *RUN_ARGS, "--only", "t0000", *extra)
        assert refused.returncode == 2, refused.stdout + refused.stderr
        assert "Traceback" not in refused.stderr
        said = " ".join(refused.stderr.split())
        assert "--only t0000: a search sweep's runs are the trials its controller asks" in said
        assert "generated/fake_search" in said and "hint: leave --only out" in said
    assert not (tmp_path / "runs").exists() or not any((tmp_path / "runs").rglob("*.yaml"))
    assert not (tmp_path / "generated/fake_search/.search/study.journal").exists()
    # the search itself still runs, to its n trials
    assert sweepgen(tmp_path, "run", "generated/fake_search", *RUN_ARGS).returncode == 0
