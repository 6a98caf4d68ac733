"""A search over a TRL config is judged by `run`'s TRL start checks (trl_start) as each trial
starts: a refusal every trial would meet is the user's error before any trial runs; one that
depends on a sampled value refuses that trial only (told failed, never run)."""

from __future__ import annotations

import shlex
import sys

from search_support import cli, study, sweepgen, write_search_project

# TRL's script run by this interpreter: the run's environment is sweepgen's own
TRL = f"{shlex.quote(sys.executable)} -m trl.scripts.grpo --config {{config}}"
BASE = {"x": 0.5, "y": 0.5, "steps": 2, "step_s": 0.01, "seed": 0, "noise": 0.0, "output_dir": None}


def _said(done) -> str:
    return " ".join((done.stdout + done.stderr).split())


def test_a_reward_function_trl_cannot_load_stops_a_search_before_its_first_trial(tmp_path):
    (tmp_path / "my_rewards.py").write_text("def accuracy(completions, **kwargs):\n    return [0.0]\n")
    base = {**BASE, "reward_funcs": ["my_rewards.acuracy"]}
    spec = write_search_project(tmp_path, {"n": 3, "parallel": 2, "sampler": "random"}, base=base)
    assert cli(tmp_path, "render", str(spec)).returncode == 0
    done = sweepgen(tmp_path, "run", "generated/fake_search", "--command", TRL)
    said = _said(done)
    assert done.returncode == 2, said
    assert "Traceback" not in said
    assert "generated/fake_search/t0000.yaml:" in said  # file:line:col of the key
    assert "reward_funcs names 'my_rewards.acuracy', which `trl grpo` cannot load" in said
    assert not (tmp_path / "runs").exists()  # nothing started
    # the trial is left open (not told failed): the next `run`, the config fixed, runs it
    trials = study(tmp_path).get_trials()
    assert [t.state.name for t in trials] == ["RUNNING"]


def test_a_refusal_that_depends_on_a_sampled_value_refuses_that_trial_only(tmp_path):
    """num_generations is an axis: each trial drawing a group size that does not divide its
    generation batch is told failed with the reason and never runs (another draw might fit), not
    the whole search refused."""
    sizes = {"per_device_train_batch_size": 4, "gradient_accumulation_steps": 1, "num_processes": 1}
    base = {**BASE, **sizes, "num_generations": 2}
    axes = {"num_generations": {"choice": [3, 5]}}
    search = {"n": 2, "parallel": 1, "sampler": "random", "axes": axes}
    spec = write_search_project(tmp_path, search, base=base)
    assert cli(tmp_path, "render", str(spec)).returncode == 0, "render"
    done = sweepgen(tmp_path, "run", "generated/fake_search", "--command", TRL)
    said = _said(done)
    assert "Traceback" not in said
    assert "refused" in said and "num_generations" in said, said
    trials = study(tmp_path).get_trials()
    assert [t.state.name for t in trials] == ["FAIL", "FAIL"]
    assert not (tmp_path / "runs").exists()


def test_a_dry_run_of_a_search_meets_the_start_checks_its_first_trial_would(tmp_path):
    """`run --dry-run` of a search printed its plan for a reward TRL cannot load, and the real run
    then refused it: a trial is rendered in memory and judged, and nothing is written (no trial
    file, no study, no lock entry); a refusal that depends on a sampled value is left to the run."""
    (tmp_path / "my_rewards.py").write_text("def accuracy(completions, **kwargs):\n    return [0.0]\n")
    base = {**BASE, "reward_funcs": ["my_rewards.acuracy"], "bf16": False}
    spec = write_search_project(tmp_path, {"n": 3, "parallel": 2, "sampler": "random"}, base=base)
    assert cli(tmp_path, "render", str(spec)).returncode == 0
    sweep = tmp_path / "generated" / "fake_search"
    before = sorted(p.name for p in sweep.iterdir())
    lock = (sweep / "sweep.lock.json").read_bytes()
    done = sweepgen(tmp_path, "run", "generated/fake_search", "--command", TRL, "--dry-run")
    said = _said(done)
    assert done.returncode == 2, said
    assert "Traceback" not in said
    assert "generated/fake_search/t0000.yaml:" in said
    assert "reward_funcs names 'my_rewards.acuracy', which `trl grpo` cannot load" in said
    assert sorted(p.name for p in sweep.iterdir()) == before
    assert (sweep / "sweep.lock.json").read_bytes() == lock
    assert not (tmp_path / "runs").exists()
    # the reward fixed: the plan is printed, still nothing written
    spec.write_text(spec.read_text().replace("my_rewards.acuracy", "my_rewards.accuracy"))
    assert cli(tmp_path, "render", str(spec)).returncode == 0
    before = sorted(p.name for p in sweep.iterdir())
    done = sweepgen(tmp_path, "run", "generated/fake_search", "--command", TRL, "--dry-run")
    assert done.returncode == 0, _said(done)
    assert "search fake_search: 3 trials" in _said(done)
    assert sorted(p.name for p in sweep.iterdir()) == before


def test_a_dry_run_leaves_a_refusal_of_a_sampled_value_to_the_trials_drawing_it(tmp_path):
    """A group size of 3 does not divide the batch of 4 (the trials drawing it are refused in the
    run), 2 does: the plan is printed, nothing written."""
    sizes = {"per_device_train_batch_size": 4, "gradient_accumulation_steps": 1, "num_processes": 1}
    base = {**BASE, **sizes, "num_generations": 2, "bf16": False}
    search = {"n": 2, "parallel": 1, "sampler": "random", "axes": {"num_generations": {"choice": [3, 2]}}}
    spec = write_search_project(tmp_path, search, base=base)
    assert cli(tmp_path, "render", str(spec)).returncode == 0, "render"
    done = sweepgen(tmp_path, "run", "generated/fake_search", "--command", TRL, "--dry-run")
    assert done.returncode == 0, _said(done)
    assert "search fake_search: 2 trials" in _said(done)
    assert not (tmp_path / "generated" / "fake_search" / "t0000.yaml").exists()
    assert not (tmp_path / "generated" / "fake_search" / ".search" / "study.journal").exists()


def test_a_missing_dataset_folder_stops_a_search_sampling_a_key_other_checks_read(tmp_path):
    """num_generations is an axis, and a key the generation check reads: a `./dataset` folder that
    is not there was still judged "the trial's own" (a sampled key was among those any check reads),
    and trial after trial was told failed. The dataset check's refusal reads dataset_name alone,
    which no draw changes: exit 2 before any trial runs, its `--dry-run` too."""
    sizes = {"per_device_train_batch_size": 4, "gradient_accumulation_steps": 1, "num_processes": 1}
    base = {**BASE, **sizes, "num_generations": 2, "bf16": False, "dataset_name": "./dataset"}
    axes = {"num_generations": {"choice": [2, 4]}}
    spec = write_search_project(
        tmp_path, {"n": 3, "parallel": 1, "sampler": "random", "axes": axes}, base=base
    )
    assert cli(tmp_path, "render", str(spec)).returncode == 0, "render"
    for dry in (["--dry-run"], []):
        done = sweepgen(tmp_path, "run", "generated/fake_search", "--command", TRL, *dry)
        said = _said(done)
        assert done.returncode == 2, said
        assert "dataset_name './dataset' is no folder of" in said and "Traceback" not in said
        assert "generated/fake_search/t0000.yaml:" in said
    assert [t.state.name for t in study(tmp_path).get_trials()] == ["RUNNING"]  # left open, not failed
    assert not (tmp_path / "runs").exists()
