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
Everything else is spread test by test, the tests marked ``slow`` first: xdist sends groups largest
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
    items.sort(key=lambda item: item.nodeid not in slow and groups.get(item.nodeid) not in slow_groups)
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
