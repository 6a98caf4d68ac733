"""benchmarks/gpu_check.sh with its GPU flags off (issue 38 item 3): the prepared GPU check runs its
levels as separate invocations, writes a JSON per level and one table, on a machine without a GPU."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.train
REPO = Path(__file__).resolve().parents[1]


def test_the_gpu_check_runs_on_cpu_and_writes_a_json_per_level_and_one_table(tmp_path):
    out = tmp_path / "gc"
    env = {
        **os.environ,
        "PYTHON": sys.executable,
        "GPU_CHECK_ONLY": "trl_one|one",
        "GPU_CHECK_DEADLINE": "1200",
        "GPU_CHECK_LIMIT_SCALE": "10",  # each level's GPU limit is seconds; a loaded CPU needs more
        "OMP_NUM_THREADS": "1",
    }
    proc = subprocess.run(
        ["bash", str(REPO / "benchmarks" / "gpu_check.sh"), str(out), "--cpu"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=1500,
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    levels = {p.stem: json.loads(p.read_text()) for p in (out / "levels").glob("*.json")}
    assert set(levels) == {"trl_one", "one"}  # only the levels asked for, in that order
    for data in levels.values():
        (result,) = data["results"]
        assert result["exit"] == 0, result.get("error")
        assert result["steady_steps_per_s"] > 0 and 0 <= result["truncated_fraction"] <= 1
    assert levels["trl_one"]["results"][0]["trainer"] == "trl"
    ours = levels["one"]["results"][0]
    assert ours["time/generation_s"] > 0 and ours["time/step_s"] >= ours["time/generation_s"]
    table = (out / "table.md").read_text().splitlines()
    assert [line.split("|")[1].strip() for line in table[2:]] == ["trl_one", "one"]
    assert "python" in (out / "env.txt").read_text()
