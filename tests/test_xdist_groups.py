"""tests/xdist_groups.py, through a real `pytest -n 2 --dist loadgroup` on a throwaway test folder:
every test on a Slurm test cluster on one worker (its lock is held for a whole session), the tests
of a module with a module-scoped fixture on one worker, the rest (other `slurm` tests too) spread
over both."""

from __future__ import annotations

import os
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

TESTS = Path(__file__).resolve().parent

CONFTEST = """\
import pytest

pytest_plugins = ("xdist_groups",)

def pytest_configure(config):
    config.addinivalue_line("markers", "slurm: a Slurm test")

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


def test_slurm_and_module_fixture_tests_each_stay_on_one_worker(tmp_path: Path) -> None:
    suite = tmp_path / "suite"
    suite.mkdir()
    for name, text in {
        "conftest.py": CONFTEST,
        "record.py": RECORD,
        "test_with_fixture.py": WITH_FIXTURE,
        "test_free.py": FREE,
    }.items():
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
    workers: dict[str, list[str]] = defaultdict(list)
    for line in where.read_text().splitlines():
        kind, worker = line.split()
        workers[kind].append(worker)
    assert len(workers["slurm"]) == 4 and len(set(workers["slurm"])) == 1, workers
    assert len(workers["module"]) == 6 and len(set(workers["module"])) == 1, workers
    assert len(workers["free"]) == 12 and set(workers["free"]) == {"gw0", "gw1"}, workers
    assert len(workers["spread"]) == 12 and set(workers["spread"]) == {"gw0", "gw1"}, workers
