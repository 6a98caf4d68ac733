"""tests/xdist_groups.py, through a real `pytest -n 2 --dist loadgroup` on a throwaway test folder:
every test on a Slurm test cluster on one worker (its lock is held for a whole session), the tests
of a module with a module-scoped fixture on one worker, every `browser` test on one worker, the rest
(other `slurm` tests too) spread over both, the tests marked `slow` before the others."""

from __future__ import annotations

import os
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parent

CONFTEST = """\
import pytest

pytest_plugins = ("xdist_groups",)

def pytest_configure(config):
    config.addinivalue_line("markers", "slurm: a Slurm test")
    config.addinivalue_line("markers", "browser: a browser test")

@pytest.fixture(scope="session")
def slurm_cluster():
    return "a stand-in cluster"
"""

RECORD = """\
import os

def record(kind):
    with open(os.environ["WHERE"], "a") as fh:
        fh.write(f"{kind} {os.environ['PYTEST_XDIST_WORKER']}\\n")
"""

WITH_FIXTURE = """\
import pytest
from record import record

@pytest.fixture(scope="module")
def built():
    return "built once"

@pytest.mark.parametrize("i", range(6))
def test_uses_the_module_fixture(built, i):
    record("module")

@pytest.mark.slurm
@pytest.mark.parametrize("i", range(3))
def test_slurm_here(slurm_cluster, i):
    record("slurm")
"""

FREE = """\
import time
import pytest
from record import record

pytestmark_cluster = pytest.mark.usefixtures("slurm_cluster")

@pytest.mark.slurm
@pytestmark_cluster
def test_slurm_there():
    record("slurm")

@pytest.mark.slurm  # no cluster: spread like the rest
@pytest.mark.parametrize("i", range(12))
def test_slurm_no_cluster(i):
    time.sleep(0.2)
    record("spread")

@pytest.mark.parametrize("i", range(12))
def test_free(i):
    time.sleep(0.2)  # long enough that one worker cannot take them all before the other starts
    record("free")
"""


# the browser tests of a module with a module-scoped fixture (the module's others go with them) and
# of a module without one: one worker runs them all, so one chromium serves the lane
BROWSER_MODULE = """\
import pytest
from record import record

@pytest.fixture(scope="module")
def page():
    return "a built page"

@pytest.mark.browser
@pytest.mark.parametrize("i", range(2))
def test_browse_the_page(page, i):
    record("browser")

@pytest.mark.parametrize("i", range(2))
def test_read_the_page(page, i):
    record("browser")
"""

BROWSER_FREE = """\
import time
import pytest
from record import record

@pytest.mark.browser
@pytest.mark.parametrize("i", range(6))
def test_browse(i):
    time.sleep(0.2)  # as test_free: spread over both workers were they not one group
    record("browser")
"""


# collected last (file names sort): without the reordering, each would start after every free test
SLOW = """\
import time
import pytest
from record import record

@pytest.mark.slow
@pytest.mark.parametrize("i", range(4))
def test_zz_slow(i):
    time.sleep(0.2)
    record("slow")
"""


def run_suite(tmp_path: Path, files: dict[str, str]) -> list[tuple[str, ...]]:
    """Runs the suite on 2 workers: (kind, worker) of each test, in the order they ran."""
    suite = tmp_path / "suite"
    suite.mkdir()
    for name, text in {"conftest.py": CONFTEST, "record.py": RECORD, **files}.items():
        (suite / name).write_text(text)
    where = tmp_path / "where.txt"
    env = {**os.environ, "WHERE": str(where), "PYTHONPATH": os.pathsep.join([str(TESTS), str(suite)])}
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-n", "2", "--dist", "loadgroup", "-q", "-p", "no:cacheprovider"],
        cwd=suite,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return [tuple(line.split()) for line in where.read_text().splitlines()]


def by_kind(records: list[tuple[str, ...]]) -> dict[str, list[str]]:
    workers: dict[str, list[str]] = defaultdict(list)
    for kind, worker in records:
        workers[kind].append(worker)
    return workers


@pytest.fixture(scope="module")
def records(tmp_path_factory: pytest.TempPathFactory) -> list[tuple[str, ...]]:
    """One run of the five files for the tests (a `pytest -n 2` run is most of each test's time):
    the grouped tests, the single ones and the slow ones, scheduled together as in the real suite."""
    files = {
        "test_with_fixture.py": WITH_FIXTURE,
        "test_free.py": FREE,
        "test_zz_slow.py": SLOW,
        "test_browser_module.py": BROWSER_MODULE,
        "test_browser_free.py": BROWSER_FREE,
    }
    return run_suite(tmp_path_factory.mktemp("xdist"), files)


def test_slurm_and_module_fixture_tests_each_stay_on_one_worker(records: list[tuple[str, ...]]) -> None:
    workers = by_kind(records)
    assert len(workers["slurm"]) == 4 and len(set(workers["slurm"])) == 1, workers
    assert len(workers["module"]) == 6 and len(set(workers["module"])) == 1, workers
    assert len(workers["free"]) == 12 and set(workers["free"]) == {"gw0", "gw1"}, workers
    assert len(workers["spread"]) == 12 and set(workers["spread"]) == {"gw0", "gw1"}, workers


def test_slow_tests_are_sent_before_the_other_single_tests(records: list[tuple[str, ...]]) -> None:
    assert len(by_kind(records)["slow"]) == 4, records
    for worker in ("gw0", "gw1"):  # each worker runs what it is sent in order: no slow test after a free one
        kinds = [kind for kind, w in records if w == worker and kind in ("slow", "free")]
        assert "free" not in kinds or "slow" not in kinds[kinds.index("free") :], (worker, records)


def test_every_browser_test_runs_on_one_worker_with_its_module_fixture_tests(
    records: list[tuple[str, ...]],
) -> None:
    workers = by_kind(records)["browser"]  # one session-scoped chromium for the lane
    assert len(workers) == 10 and len(set(workers)) == 1, records
