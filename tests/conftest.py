"""Shared test set-up: hermetic environment, the ``--update-golden`` flag, golden-file helper.

Tests must not touch the real home directory or the network: every test gets a temporary HOME and
offline Hugging Face settings. A pre-existing Hugging Face cache stays readable (tiny local models),
but nothing is ever downloaded.
"""

from __future__ import annotations

import itertools
import os
import shutil
import signal
import sys
from pathlib import Path

import pytest

# A shell without job control starts background commands with SIGINT ignored, and an ignored signal
# stays ignored in every process started from it: a lane run as `bash scripts/test.sh &` would start
# every `sweepgen` under test deaf to Ctrl-C. The Ctrl-C tests need it as a terminal leaves it (a
# Python handler here is reset to the default in the processes the tests start).
if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)

# the session-scoped `slurm_cluster` and `precommit_wheels` fixtures, for every module that asks for
# them (by name, no import), and which tests share a pytest-xdist worker (tests/xdist_groups.py)
pytest_plugins = ("slurm_cluster", "chromium_browser", "casefold_mount", "precommit_support", "xdist_groups")

ROOT = Path(__file__).resolve().parent.parent
GOLDEN = Path(__file__).resolve().parent / "golden"
_REAL_HF_HOME = os.environ.get("HF_HOME") or os.path.join(os.path.expanduser("~"), ".cache", "huggingface")


# Lanes (scripts/test.sh) are chosen by marker only: the compiler lane runs `-m "not train and not
# slurm"` in a venv without the [train] and [slurm] extras, the full lane `-m "train or slurm"`
# (both leave out `gpu` tests, which need a CUDA device). A test
# that needs an extra carries its marker; nothing is skipped for a missing import (no importorskip),
# so a selected test whose extra is missing fails.
#
# These modules import torch at the top (they hold only `train` tests): they cannot even be collected
# without the extra, so a run whose -m expression can select no `train` test does not collect them.
TRAIN_ONLY_MODULES = frozenset({"test_routing_adapters.py", "test_routing_trainer.py"})
_OTHER_MARKERS = ("slow", "slurm", "gpu", "plot", "browser")


def _may_select(config: pytest.Config, marker: str) -> bool:
    """Whether the -m expression can be true for some test that carries ``marker``."""
    markexpr = config.getoption("markexpr")
    if not markexpr:
        return True
    from _pytest.mark.expression import Expression  # pytest has no public API to evaluate -m

    expr = Expression.compile(markexpr)
    for n in range(len(_OTHER_MARKERS) + 1):
        for others in itertools.combinations(_OTHER_MARKERS, n):
            marks = {marker, *others}
            if expr.evaluate(lambda name, /, marks=marks, **kwargs: name in marks):
                return True
    return False


def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    if collection_path.name in TRAIN_ONLY_MODULES and not _may_select(config, "train"):
        return True
    return None  # let pytest decide


@pytest.hookimpl(wrapper=True)
def pytest_collection(session: pytest.Session):
    """Collects with bytecode writes on, whatever PYTHONDONTWRITEBYTECODE says (the CI machines set
    it): pytest then keeps each test module's assertion-rewritten code in __pycache__, and the next
    pytest process (each xdist worker, each lane) loads it instead of rewriting and compiling every
    module again, over half of a worker's collection time. Only the collection: the tests themselves,
    and every process they start, still run under the environment's setting."""
    saved = sys.dont_write_bytecode
    sys.dont_write_bytecode = False
    try:
        return (yield)
    finally:
        sys.dont_write_bytecode = saved


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--update-golden",
        action="store_true",
        default=False,
        help="rewrite golden files from the current output instead of comparing",
    )


def hermetic_env(home: Path) -> dict[str, str]:
    """What every test's environment sets (HOME and the caches in a temp folder, offline, one
    thread); CI is unset besides. A module-scoped fixture is set up before the autouse fixture
    below, so one that starts processes builds their environment from this itself."""
    return {
        "HOME": str(home),
        "XDG_CONFIG_HOME": str(home / ".config"),
        "XDG_CACHE_HOME": str(home / ".cache"),
        "HF_HOME": _REAL_HF_HOME,
        "HF_HUB_OFFLINE": "1",
        "HF_DATASETS_OFFLINE": "1",
        "TRANSFORMERS_OFFLINE": "1",
        "WANDB_MODE": "disabled",
        "OMP_NUM_THREADS": os.environ.get("OMP_NUM_THREADS", "1"),
    }


@pytest.fixture(autouse=True)
def _hermetic(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    for key, value in hermetic_env(tmp_path_factory.mktemp("home")).items():
        monkeypatch.setenv(key, value)
    # CI=true turns check's fast path off (sweepgen.compile.output.lockfile.lock_digest); tests that want it
    # set it
    monkeypatch.delenv("CI", raising=False)
    # the TRL configs of the tests stand for GPU runs (TRL's bf16 default): `run` judges bf16 against
    # this machine's devices only where a test asks (tests/run/test_trl_machine.py)
    from sweepgen.run.start.trl import trl_precision

    monkeypatch.setattr(trl_precision, "no_accelerator", lambda: False)


@pytest.fixture
def update_golden(request: pytest.FixtureRequest) -> bool:
    return bool(request.config.getoption("--update-golden"))


@pytest.fixture
def golden(update_golden: bool):
    """``golden("render/x.py", text)``: compare with tests/golden/<name>, or rewrite it (--update-golden)."""

    def check(name: str, text: str | bytes) -> None:
        path = GOLDEN / name
        data = text.encode("utf-8") if isinstance(text, str) else text
        if update_golden:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(data)
            return
        assert path.exists(), f"missing golden file {path}; run pytest --update-golden and review it"
        assert data == path.read_bytes(), (
            f"output differs from {path}; if intended, run pytest --update-golden"
        )

    return check


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty project folder (specs/, templates/) as the working directory."""
    (tmp_path / "specs").mkdir()
    (tmp_path / "templates").mkdir()
    monkeypatch.chdir(tmp_path)
    return tmp_path


@pytest.fixture
def cli_cwd(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """tmp_path as the working directory of CLI tests (runs are started from the cwd and write runs/
    under it), with rich consoles made afresh for wide tables, so asserted cells are not wrapped."""
    from sweepgen.cli import _console

    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("COLUMNS", "200")
    _console.stdout.cache_clear()
    _console.stderr.cache_clear()
    yield tmp_path
    _console.stdout.cache_clear()
    _console.stderr.cache_clear()


@pytest.fixture
def grid_project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A copy of tests/fixtures/grid_project (a seeds x beta grid and an sbatch ladder) as the cwd."""
    root = tmp_path / "proj"
    shutil.copytree(Path(__file__).parent / "fixtures" / "grid_project", root)
    monkeypatch.chdir(root)
    return root


@pytest.fixture
def tiny_cache(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    """SWEEPGEN_CACHE in the session's temp folder (the tiny model is built there once per session);
    HF offline; torch on one thread. Only trainer tests use it; without torch they fail, never skip."""
    import torch  # here, not at the top: the compiler lane loads this conftest without torch

    cache = tmp_path_factory.getbasetemp() / "sweepgen-cache"
    cache.mkdir(exist_ok=True)
    monkeypatch.setenv("SWEEPGEN_CACHE", str(cache))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("OMP_NUM_THREADS", "1")
    torch.set_num_threads(1)
    return cache
