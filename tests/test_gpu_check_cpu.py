"""benchmarks/gpu_check.sh with its GPU flags off: the prepared GPU check runs its
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


def cpu_check(tmp_path: Path, python: str, only: str, timeout: float) -> subprocess.CompletedProcess[str]:
    """`gpu_check.sh OUT --cpu` with these levels, its output in tmp_path/gc."""
    env = {
        **os.environ,
        "PYTHON": python,
        "GPU_CHECK_ONLY": only,
        "GPU_CHECK_DEADLINE": "1200",
        "GPU_CHECK_LIMIT_SCALE": "10",  # each level's GPU limit is seconds; a loaded CPU needs more
        "OMP_NUM_THREADS": "1",
    }
    return subprocess.run(
        ["bash", str(REPO / "benchmarks" / "gpu_check.sh"), str(tmp_path / "gc"), "--cpu"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def test_the_gpu_check_runs_on_cpu_and_writes_a_json_per_level_and_one_table(tmp_path):
    out = tmp_path / "gc"
    proc = cpu_check(tmp_path, sys.executable, "trl_one|one", timeout=1500)
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


# Set-up before the first level on a GPU machine: wheels, models, the import check (§16: ~40 s).
SETUP_S = 60
MIN_START_S = 45  # gpu_check.sh skips a level with less than this left


def dry_levels(mode: list[str]) -> tuple[list[tuple[str, int, list[str]]], int]:
    proc = subprocess.run(
        ["bash", str(REPO / "benchmarks" / "gpu_check.sh"), "/nonexistent-is-not-written", *mode],
        env={k: v for k, v in os.environ.items() if not k.startswith("GPU_CHECK")} | {"GPU_CHECK_DRY": "1"},
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    *rows, last = proc.stdout.splitlines()
    levels = [(name, int(limit), args.split()) for name, limit, args in (r.split("|", 2) for r in rows)]
    return levels, int(last.split("|")[1])


@pytest.mark.parametrize("mode", [[], ["--cpu"]])
def test_every_levels_grpo_settings_are_a_valid_run_config(mode):
    """Each level's --grpo KEY=VALUE goes through bench_packing's own parser into a RunConfig, so a
    quoting slip in gpu_check.sh fails here, not on the lent GPU."""
    sys.path.insert(0, str(REPO / "benchmarks"))
    import bench_generation
    import bench_packing

    from sweepgen_trainer.config import RunConfig

    levels, _ = dry_levels(mode)
    seen = set()
    for name, _, args in levels:
        pairs = list(zip(args, args[1:]))
        if args[0] == "@gen":  # bench_generation: one grpo section per --variant
            variants = [bench_generation.variant(v)[1] for k, v in pairs if k == "--variant"]
            assert len(variants) == 4, name
        else:
            variants = [dict(bench_packing.grpo_setting(v) for k, v in pairs if k == "--grpo")]
        for settings in variants:
            grpo = {"batch_size": 32, "num_generations": 16, **settings}
            RunConfig.model_validate({"run_name": name, "output_dir": f"runs/{name}", "grpo": grpo})
            seen.update(settings)
    assert {"cache_implementation", "transformers_continuous_batching_config", "torch_compile"} <= seen


def test_the_unmeasured_levels_come_first_and_eos_and_smol4_start_even_in_the_worst_case():
    levels, deadline = dry_levels([])
    names = [name for name, _, _ in levels]
    assert names[:5] == ["one", "eos_one", "gen", "static_one", "smol4"]
    for target in ("eos_one", "smol4"):
        before = sum(limit for name, limit, _ in levels[: names.index(target)])
        assert SETUP_S + before + MIN_START_S <= deadline, target


def test_a_level_reads_the_runs_folders_only_not_the_gpu_share_lock_beside_them(tmp_path):
    """On the lent H200 every `--gpus` level failed reading `.sweepgen-gpus.lock/metrics.jsonl`: the
    runs folder holds sweepgen's GPU share lock beside the runs once `--gpus` is given (never on CPU,
    so the CPU check above could not see it)."""
    sys.path.insert(0, str(REPO / "benchmarks"))
    import bench_packing

    from sweepgen.fs.filenames import GPU_LOCK

    for name in ("seed-1", "seed-0"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "metrics.jsonl").write_text('{"step_time": 1.0}\n')
    (tmp_path / GPU_LOCK).write_text("")
    folders = bench_packing.run_folders(tmp_path)
    assert [f.name for f in folders] == ["seed-0", "seed-1"]
    assert bench_packing.read_rows(folders) == [[{"step_time": 1.0}], [{"step_time": 1.0}]]


def test_the_check_stops_when_the_first_levels_harness_fails_rather_than_spend_the_lease(tmp_path):
    """A bench_packing that fails on its own (no results, not its time limit) at the first training
    level fails every level the same way: on the lent GPU that cost 400 s of a 900-s lease (§52)."""
    # set-up (the import check, env.txt, the models) passes at once: only the levels' loop is tested
    wrapper = tmp_path / "python"
    wrapper.write_text(
        '#!/bin/sh\ncase "$1" in *bench_packing.py) exit 3;; -c|-|*make_gpu_models.py) exit 0;; esac\n'
        f'exec {sys.executable} "$@"\n'
    )
    wrapper.chmod(0o755)
    out = tmp_path / "gc"
    proc = cpu_check(tmp_path, str(wrapper), "one|trl_one", timeout=120)
    assert proc.returncode == 1, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert "one: bench_packing failed without results (exit 3): the check stops here" in proc.stdout
    one = json.loads((out / "levels" / "one.json").read_text())
    after = json.loads((out / "levels" / "trl_one.json").read_text())
    assert one == {"level": "one", "failed": "exit 3"}
    assert after == {"level": "trl_one", "skipped": "one failed in bench_packing itself"}
    assert "one failed in bench_packing itself" in (out / "table.md").read_text()
