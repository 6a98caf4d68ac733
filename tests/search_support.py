"""A search project on the fast fake trainer (tests/fixtures/search_trainer.py), and the sweepgen CLI
as a real process, for the search tests and the search benchmark."""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

import yaml

REPO = Path(__file__).resolve().parent.parent
TRAINER = REPO / "tests" / "fixtures" / "search_trainer.py"
COMMAND = f"{shlex.quote(sys.executable)} {shlex.quote(str(TRAINER))} {{config}}"
RUN_ARGS = ("--command", COMMAND, "--done-file", "summary.json")


def write_search_project(
    root: Path, search: dict[str, Any], *, base: dict[str, Any] | None = None, **extra: Any
) -> Path:
    """specs/s.yaml searching x and y of the fake trainer; returns the spec path."""
    (root / "specs").mkdir(parents=True, exist_ok=True)
    (root / "templates").mkdir(exist_ok=True)
    (root / "templates" / "fake.yaml.j2").write_text("{{ config | to_yaml }}\n")
    spec = {
        "sweepgen": 1,
        "name": "fake_search",
        "template": "../templates/fake.yaml.j2",
        "output": "{{ variant.name }}.yaml",
        "derived": {"output_dir": "runs/{{ sweep.name }}/{{ variant.name }}"},
        "base": base
        or {"x": 0.5, "y": 0.5, "steps": 6, "step_s": 0.03, "seed": 0, "noise": 0.01, "output_dir": None},
        "search": {
            "n": 6,
            "parallel": 2,
            "seed": 0,
            "sampler": "tpe",
            "metric": "score",
            "mode": "max",
            "axes": {"x": {"uniform": [0.0, 1.0]}, "y": {"uniform": [0.0, 1.0]}},
            **search,
        },
        **extra,
    }
    path = root / "specs" / "s.yaml"
    path.write_text(yaml.safe_dump(spec, sort_keys=False))
    return path


def sweepgen(cwd: Path, *args: str, wait: bool = True, timeout: float = 120) -> Any:
    """``python -m sweepgen ARGS`` from this checkout; a CompletedProcess, or the Popen with wait=False."""
    env = {**os.environ, "PYTHONPATH": str(REPO), "COLUMNS": "200", "OMP_NUM_THREADS": "1"}
    argv = [sys.executable, "-m", "sweepgen", *args]
    if not wait:
        return subprocess.Popen(
            argv, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
        )
    return subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)


def study(root: Path) -> Any:
    """The search's study, opened with Optuna's own API (as optuna-dashboard would)."""
    import optuna
    from optuna.storages.journal import JournalFileBackend

    path = root / "generated" / "fake_search" / ".search" / "study.journal"
    storage = optuna.storages.JournalStorage(JournalFileBackend(str(path)))
    return optuna.load_study(study_name="sweepgen", storage=storage)
