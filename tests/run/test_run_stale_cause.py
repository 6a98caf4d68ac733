"""A run made stale by its data file is reported as such, not as "the spec changed"."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

from sweepgen.run.core.base import RunTask
from sweepgen.run.core.plan.data_digest import stale_cause


def task(tmp_path: Path, source: str) -> RunTask:
    run_dir = tmp_path / "runs/a"
    run_dir.mkdir(parents=True, exist_ok=True)
    return RunTask(
        name="a",
        variant="a",
        config_path=tmp_path / "a.yaml",
        run_dir=run_dir,
        argv=("true",),
        config={"data": {"source": source}},
    )


def test_a_changed_data_file_is_named(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    data = tmp_path / "qa.jsonl"
    data.write_text('{"prompt": "1 + 1 =", "answer": 2}\n')
    t = task(tmp_path, "qa.jsonl")
    recorded = {"source": "qa.jsonl", "sha256": hashlib.sha256(data.read_bytes()).hexdigest(), "rows": 1}
    (t.run_dir / "data.json").write_text(json.dumps(recorded))
    assert stale_cause(t) == "its config changed"  # same data: the config is what changed
    data.write_text('{"prompt": "1 + 1 =", "answer": 3}\n')
    cause = stale_cause(t)
    assert cause.startswith("its data file qa.jsonl changed (sha256 " + recorded["sha256"][:12])


def test_without_a_record_the_config_is_named(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert stale_cause(task(tmp_path, "builtin:arithmetic")) == "its config changed"


def test_a_data_file_outside_the_project_is_never_read(tmp_path, monkeypatch):
    """Before, the cause read any file the config named, whole: an absolute path or a link out of
    the project (a pull request's `data.source: /proc/kcore` held `run` reading forever). Now it is
    read as the fingerprint reads it (plan/data_digest.py): outside the project, nothing is opened."""
    project = tmp_path / "proj"
    project.mkdir()
    (project / ".git").mkdir()
    monkeypatch.chdir(project)
    outside = tmp_path / "secret.jsonl"
    outside.write_text('{"prompt": "x", "answer": 1}\n')
    (project / "qa.jsonl").symlink_to(outside)
    opened: list[str] = []
    real_open = os.open
    monkeypatch.setattr(os, "open", lambda p, *a, **k: opened.append(str(p)) or real_open(p, *a, **k))
    for source in (str(outside), "qa.jsonl"):
        t = task(project, source)
        (t.run_dir / "data.json").write_text(json.dumps({"source": source, "sha256": "0" * 64}))
        assert stale_cause(t) == "its config changed"
    assert not [p for p in opened if "secret" in p or p.endswith("qa.jsonl")], opened
