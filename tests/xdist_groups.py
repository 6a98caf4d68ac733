"""Which tests share one pytest-xdist worker, for scripts/test.sh's `-n N --dist loadgroup`.

tests/conftest.py registers this module as a plugin. Grouped together on one worker:
- every test on a Slurm test cluster (``slurm_cluster``, ``slurm_cluster_2n``): the session-scoped
  cluster (tests/slurm_cluster.py) holds a machine-wide lock until its session ends, so a second
  worker's Slurm tests would wait for the first worker's end (both clusters' tests stay on that
  one worker, so that only one cluster's jobs run at a time beside the other workers);
- the tests of a module with a module-scoped fixture (a finished search, a built report), which each
  worker would otherwise build again;
- every test marked ``browser``, with the other tests of a group one of them is in: the session-scoped
  ``chromium`` fixture (tests/chromium_browser.py) then starts one browser (and playwright's driver)
  in the whole lane, not one per worker.
Everything else is spread test by test, the tests marked ``slow`` first, then the ``LONG_FIRST`` ones
(below), longest first: xdist sends groups largest
first and then the single tests in collection order, where the slow trainer and end-to-end tests
(tests/trainer/, tests/test_*.py) come last, so one of them started near the end ran alone while the
other workers had nothing left. tmp_path, the session temp folder and so SWEEPGEN_CACHE
(``tiny_cache``) are per worker already; apt-get installs are serialised by the ci/*_up.sh scripts.

Why not xdist's own loadgroup: it sends a test's group to the controller as a suffix of the test's
node id, which pytest 9.2's structured node ids no longer let it write (pytest-xdist issue 1386: the
marks are silently ignored). Here each worker writes the groups it collected to a JSON file in a
folder the controller made, and the controller's scheduler reads them once every worker has
collected (xdist schedules only then), before the first test is sent.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any

import pytest

_KEY = "sweepgen_xdist_groups"  # the folder, in each worker's workerinput


# the fixtures that start a test cluster (tests/slurm_cluster.py); a `slurm` test without one needs
# only the [slurm] extra (stand-in Slurm commands, a dry run) and is spread like any other
CLUSTER_FIXTURES = frozenset({"slurm_cluster", "slurm_cluster_2n"})


# The core lane's longest single tests, longest first (a --durations profile of the lane on a loaded
# 2-core machine: 14 s to 165 s there). xdist sends the groups first (largest first), then the single
# tests in collection order: one of these sent among the last ones ran alone for up to a minute while
# the other worker had nothing left. After the `slow` tests, these go first, longest first. A name
# that no longer exists is simply not matched; a new long test belongs here.
LONG_FIRST = (
    "tests/run/test_report_sequential.py::test_the_family_wise_error_rate_over_every_look_stays_under_alpha_where_peeking_does_not",
    "tests/run/test_report_stats.py::test_interval_excludes_zero_exactly_when_the_verdict_decides",
    "tests/run/test_report_joint.py::test_together_they_cover_less_than_each_level_but_at_least_the_bound",
    "tests/readers/test_diff_mutations.py::test_every_one_token_mutation_of_the_corpus",
    "tests/run/test_metrics_held.py::test_wide_entries_are_gathered_one_at_a_time",
    "tests/readers/test_hydra_reference.py::test_random_trees_compose_as_hydra_composes_them",
    "tests/cli/test_precommit_hook.py::test_try_repo_checks_specs_in_a_non_default_layout",
    "tests/readers/test_readers_limits.py::test_explosive_inputs_are_refused_not_run[loops.py]",
    "tests/run/test_search.py::test_a_trial_re_attached_after_its_controller_died_is_still_pruned_and_stopped",
    "tests/run/test_search.py::test_ctrl_c_stops_the_trials_with_a_checkpoint_and_the_next_run_resumes_them",
    "tests/run/test_search_cancel.py::test_cancel_stops_the_search_and_its_command_line_resumes_it",
    "tests/compile/test_render_transactions_property.py::test_any_interrupted_history_recovers_with_one_render",
    "tests/run/test_run_until_decided.py::test_a_run_killed_between_looks_runs_each_seed_once_and_counts_each_look_once[round]",
    "tests/run/test_run_until_decided.py::test_a_run_killed_between_looks_runs_each_seed_once_and_counts_each_look_once[look]",
    "tests/test_xdist_groups.py::test_slurm_and_module_fixture_tests_each_stay_on_one_worker",
    "tests/run/test_metrics_held.py::test_a_logged_value_is_held_in_16_bytes[csv]",
    "tests/run/test_report_stats.py::test_accuracy_over_few_items_keeps_the_error_rate[2-5]",
    "tests/run/test_report_sequential.py::test_accuracy_over_few_items_keeps_the_sequential_error_rate",
    "tests/run/test_report_power.py::test_the_seeds_needed_say_how_uncertain_a_spread_from_few_seeds_makes_them",
    "tests/test_xdist_groups.py::test_slow_tests_are_sent_before_the_other_single_tests",
    "tests/compile/test_yaml_dialects.py::test_the_scan_never_misses_a_value_the_two_read_apart",
    "tests/run/test_search.py::test_repeats_run_each_trial_with_k_seeds_and_tell_the_mean",
    "tests/readers/test_diff_limits.py::test_the_shell_reader_is_linear_in_script_length[appends]",
    "tests/run/test_search.py::test_sigkill_at_random_moments_then_run_again_reaches_exactly_n",
    "tests/run/test_run_until_decided.py::test_held_out_seeds_keep_their_fixed_n_table",
    "tests/run/test_search.py::test_exactly_n_trials_each_differing_from_the_base_only_in_the_axes",
    "tests/run/test_metrics_held.py::test_a_trainer_state_is_read_an_entry_at_a_time",
    "tests/run/test_run_until_decided.py::test_the_report_table_gives_the_sequential_verdict_not_a_fixed_n_one",
    "tests/run/test_search.py::test_a_trial_pruned_by_a_controller_killed_before_it_saw_the_stop_is_never_resumed",
    "tests/run/test_supervise.py::test_cancel_of_a_run_whose_supervisor_is_stopped_says_so_and_it_stops_once_continued",
    "tests/cli/test_precommit_hook.py::test_installed_hook_checks_an_exported_trl_schema_without_trl",
    "tests/run/test_search.py::test_a_point_failing_a_constraint_is_told_failed_and_never_run",
    "tests/run/test_search_cancel.py::test_cancel_only_of_a_re_attached_run_fails_its_trial_and_never_restarts_it",
    "tests/readers/test_diff_limits.py::test_the_shell_reader_is_linear_in_script_length[commands]",
    "tests/run/test_run_hint_scope.py::test_the_retry_hint_of_a_round_goes_on_with_the_rounds_never_the_whole_grid",
    "tests/test_docs_shell.py::test_the_run_md_report_walkthrough_prints_its_table",
    "tests/cli/test_precommit_hook.py::test_the_hook_s_plain_install_trusts_a_lock_the_editable_install_wrote",
    "tests/run/test_kill9_faults.py::test_kill9_of_sweepgen_run_with_a_foreign_trainer_starts_each_run_once[1]",
    "tests/run/test_search_disk_faults.py::test_a_disk_filled_under_a_searchs_runs_is_exit_2_and_nothing_starts_after",
    "tests/run/test_trl_search_start.py::test_a_dry_run_of_a_search_meets_the_start_checks_its_first_trial_would",
    "tests/run/test_run_until_decided.py::test_looks_another_run_recorded_meanwhile_are_kept_not_written_over",
)


def group_of(item: pytest.Item) -> str | None:
    if CLUSTER_FIXTURES.intersection(getattr(item, "fixturenames", ())):
        return "slurm"
    mark = item.get_closest_marker("xdist_group")
    if mark is not None:
        return str(mark.args[0] if mark.args else mark.kwargs.get("name", "default"))
    info = getattr(item, "_fixtureinfo", None)  # no public API lists a test's fixtures with scopes
    for defs in getattr(info, "name2fixturedefs", {}).values():
        if any(d.scope == "module" for d in defs):
            return "module:" + item.nodeid.partition("::")[0]
    return None


BROWSER = "browser"


def with_one_browser(items: list[pytest.Item], groups: dict[str, str]) -> dict[str, str]:
    """``groups`` with every ``browser`` test, and every test of a group holding one, in one group
    (a Slurm cluster's tests keep theirs: none of them drives a browser)."""
    browsing = {groups.get(item.nodeid) for item in items if item.get_closest_marker(BROWSER) is not None}
    joined = dict(groups)
    for item in items:
        group = groups.get(item.nodeid)
        if group != "slurm" and (
            item.get_closest_marker(BROWSER) is not None or (group and group in browsing)
        ):
            joined[item.nodeid] = BROWSER
    return joined


def _controller_dir(config: pytest.Config) -> Path | None:
    return getattr(config, "_sweepgen_xdist_groups", None)


def pytest_configure(config: pytest.Config) -> None:
    dist = getattr(config.option, "dist", "no")
    if dist == "loadgroup" and not hasattr(config, "workerinput"):
        config._sweepgen_xdist_groups = Path(tempfile.mkdtemp(prefix="sweepgen-xdist-groups-"))  # type: ignore[attr-defined]


def pytest_unconfigure(config: pytest.Config) -> None:
    folder = _controller_dir(config)
    if folder is not None:
        shutil.rmtree(folder, ignore_errors=True)


@pytest.hookimpl(optionalhook=True)
def pytest_configure_node(node: Any) -> None:
    folder = _controller_dir(node.config)
    if folder is not None:
        node.workerinput[_KEY] = str(folder)


@pytest.hookimpl(trylast=True)  # after -k/-m deselection: the ids are the ones xdist will schedule
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    folder = getattr(config, "workerinput", {}).get(_KEY)
    if folder is None:
        return
    groups = with_one_browser(
        items, {item.nodeid: group for item in items if (group := group_of(item)) is not None}
    )
    # the same stable order on every worker, so their collections still agree; a group with a slow
    # test moves whole, its tests in their order (a module-scoped fixture is still built once)
    slow = {item.nodeid for item in items if item.get_closest_marker("slow") is not None}
    slow_groups = {groups[nodeid] for nodeid in slow if nodeid in groups}
    rank = {nodeid: i for i, nodeid in enumerate(LONG_FIRST)}
    items.sort(
        key=lambda item: (
            item.nodeid not in slow and groups.get(item.nodeid) not in slow_groups,
            rank.get(item.nodeid, len(rank)),
        )
    )
    worker = config.workerinput["workerid"]  # type: ignore[attr-defined]
    tmp = Path(folder, f".{worker}.json")
    tmp.write_text(json.dumps(groups), encoding="utf-8")
    os.replace(tmp, Path(folder, f"{worker}.json"))  # whole, before this worker reports its collection


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    folder = _controller_dir(config)
    if folder is None:
        return None
    from xdist.scheduler import LoadScopeScheduling

    class FileGroupScheduling(LoadScopeScheduling):  # type: ignore[misc]
        """loadgroup, with the groups read from the workers' files instead of node-id suffixes."""

        groups: dict[str, str] | None = None

        def _split_scope(self, nodeid: str) -> str:
            if self.groups is None:
                self.groups = {}
                for path in sorted(folder.glob("*.json")):
                    self.groups.update(json.loads(path.read_text(encoding="utf-8")))
            return self.groups.get(nodeid, nodeid)

    return FileGroupScheduling(config, log)
