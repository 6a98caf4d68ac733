"""Shared test set-up: hermetic environment, the ``--update-golden`` flag, golden-file helper.

Tests must not touch the real home directory or the network: every test gets a temporary HOME and
offline Hugging Face settings. A pre-existing Hugging Face cache stays readable (tiny local models),
but nothing is ever downloaded.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
GOLDEN = Path(__file__).resolve().parent / "golden"
_REAL_HF_HOME = os.environ.get("HF_HOME") or os.path.join(os.path.expanduser("~"), ".cache", "huggingface")


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--update-golden", action="store_true", default=False,
                     help="rewrite golden files from the current output instead of comparing")


@pytest.fixture(autouse=True)
def _hermetic(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    home = tmp_path_factory.mktemp("home")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / ".config"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(home / ".cache"))
    monkeypatch.setenv("HF_HOME", _REAL_HF_HOME)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    monkeypatch.setenv("TRANSFORMERS_OFFLINE", "1")
    monkeypatch.setenv("WANDB_MODE", "disabled")
    monkeypatch.setenv("OMP_NUM_THREADS", os.environ.get("OMP_NUM_THREADS", "1"))


@pytest.fixture
def update_golden(request: pytest.FixtureRequest) -> bool:
    return bool(request.config.getoption("--update-golden"))


@pytest.fixture
def golden(update_golden: bool):
    """``golden("render/x.py", text)``: compare with tests/golden/<name>, or rewrite it with --update-golden."""

    def check(name: str, text: str | bytes) -> None:
        path = GOLDEN / name
        data = text.encode("utf-8") if isinstance(text, str) else text
        if update_golden:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(data)
            return
        assert path.exists(), f"missing golden file {path}; run pytest --update-golden and review it"
        assert data == path.read_bytes(), f"output differs from {path}; if intended, run pytest --update-golden"

    return check


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty project folder (specs/, templates/) as the working directory."""
    (tmp_path / "specs").mkdir()
    (tmp_path / "templates").mkdir()
    monkeypatch.chdir(tmp_path)
    return tmp_path
