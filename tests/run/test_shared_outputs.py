"""Runs whose trainer config names one output folder (verl's `trainer.default_local_dir`, a nested
`output_dir`, `save_path`...) are refused before any run starts, at the file and line that names it;
folders that differ once OmegaConf's interpolations are resolved, values left unresolved, keys a
trainer reads from and scripts are not."""

from __future__ import annotations

import hashlib
import json
import shlex
import sys
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st
from run_support import make_config_sweep
from search_support import RUN_ARGS, cli, sweepgen, write_search_project

from sweepgen import output_keys, paths
from sweepgen.cli import main

COUNTER = "import sys; open('starts.txt', 'a').write(sys.argv[1] + '\\n')"


def _sweep(root: Path, trainer: dict[str, Any], per_run: dict[str, dict[str, Any]] | None = None) -> str:
    """Two runs `a` and `b` whose configs hold ``trainer`` (``per_run`` merged into each); returns
    the --command that records every start."""
    configs = {}
    for name in ("a", "b"):
        section = {**trainer, **(per_run or {}).get(name, {})}
        configs[name] = {"output_dir": f"runs/t/{name}", "seed": ord(name), "trainer": section}
    make_config_sweep(root, configs, sweep="t", values={n: {"seed": c["seed"]} for n, c in configs.items()})
    (root / "counter.py").write_text(COUNTER)
    return f"{shlex.quote(sys.executable)} counter.py {{name}} {{config}}"


def test_two_runs_naming_one_checkpoint_folder_are_refused_before_any_starts(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    command = _sweep(tmp_path, {"project_name": "p", "default_local_dir": "checkpoints/p/gsm8k"})
    done = CliRunner().invoke(main, ["run", "generated/t", "--command", command])
    assert done.exit_code == 2, done.output
    line = (
        Path("generated/t/b.yaml").read_text().splitlines().index("  default_local_dir: checkpoints/p/gsm8k")
        + 1
    )
    said = " ".join(done.stderr.split())
    assert f"generated/t/b.yaml:{line}:" in said
    assert "runs 'a' and 'b' would both write to 'checkpoints/p/gsm8k'" in said
    assert "(at `trainer.default_local_dir`)" in said and "derived: {trainer.default_local_dir:" in said
    assert "Traceback" not in done.output
    assert not Path("starts.txt").exists() and not Path("runs").exists()  # nothing started


@pytest.mark.parametrize(("one", "two"), [("ckpt/Run", "ckpt/run"), ("ckpt/./a/", "ckpt/a")])
def test_two_spellings_of_one_folder_are_one_folder(tmp_path, monkeypatch, one, two):
    """`ckpt/Run` and `ckpt/run` are one folder on macOS and Windows, as `runs/A` is for run folders."""
    monkeypatch.chdir(tmp_path)
    command = _sweep(tmp_path, {}, {"a": {"save_path": one}, "b": {"save_path": two}})
    done = CliRunner().invoke(main, ["run", "generated/t", "--command", command])
    assert done.exit_code == 2, done.output
    assert f"runs 'a' and 'b' would both write to '{two}'" in " ".join(done.stderr.split())
    assert not Path("starts.txt").exists()


@pytest.mark.parametrize(
    ("per_run", "refused"),
    [
        ({"a": {"experiment_name": "x"}, "b": {"experiment_name": "y"}}, False),  # differ once resolved
        ({"a": {"experiment_name": "x"}, "b": {"experiment_name": "x"}}, True),  # the same once resolved
    ],
)
def test_omegaconf_interpolations_are_resolved_before_folders_are_compared(
    tmp_path, monkeypatch, per_run, refused
):
    monkeypatch.chdir(tmp_path)
    trainer = {"default_local_dir": "checkpoints/${trainer.experiment_name}"}
    command = _sweep(tmp_path, trainer, per_run)
    done = CliRunner().invoke(main, ["run", "generated/t", "--command", command])
    assert done.exit_code == (2 if refused else 0), done.output
    assert ("would both write to 'checkpoints/x'" in done.stderr) is refused
    assert Path("starts.txt").exists() is not refused


@pytest.mark.parametrize(
    "trainer",
    [
        {"default_local_dir": "${oc.env:HOME}/ckpt"},  # a resolver call: never evaluated, never guessed
        {"checkpoint_dir": "/models/base"},  # torchtune reads its input checkpoint from here
        {"ckpt_path": "/models/base.ckpt"},  # Lightning resumes from here
        {"save_path": ""},  # empty: names no folder
    ],
)
def test_unresolved_values_and_keys_a_trainer_reads_from_are_not_refused(tmp_path, monkeypatch, trainer):
    monkeypatch.chdir(tmp_path)
    done = CliRunner().invoke(main, ["run", "generated/t", "--command", _sweep(tmp_path, trainer)])
    assert done.exit_code == 0, done.output
    assert sorted(Path("starts.txt").read_text().split()) == ["a", "b"]


def _script_sweep(root: Path, lines: dict[str, str], suffix: str = ".sh", head: str = "#!/bin/bash\n") -> str:
    """generated/t/{a,b}.sh (or ``suffix``), each ``head`` and ``lines[name]``; the lock describes them."""
    command = _sweep(root, {})
    lock_path = root / "generated/t/sweep.lock.json"
    lock = json.loads(lock_path.read_text())
    for entry in lock["files"]:
        name = entry["variant"]
        text = f"{head}{lines[name]}\n"
        (root / "generated/t" / f"{name}.yaml").unlink()
        (root / "generated/t" / f"{name}{suffix}").write_text(text)
        entry.update(path=f"{name}{suffix}", sha256=hashlib.sha256(text.encode()).hexdigest())
    lock_path.write_text(json.dumps(lock))
    return command


ORLHF = "deepspeed --module openrlhf.cli.train_ppo_ray "
VERL = "python3 -m verl.trainer.main_ppo trainer.default_local_dir=ckpt/$EXP"


@pytest.mark.parametrize(
    ("a", "b", "refused"),
    [
        (ORLHF + "--save_path ./ckpt/x", ORLHF + "--save-path ./ckpt/x", True),  # one flag, two spellings
        (ORLHF + "--save_path ./ckpt/x", "train.py --output_dir ckpt/x", True),  # one folder, two keys
        (f"EXP=a\n{VERL}", f"EXP=a\n{VERL}", True),  # a Hydra override, its variable evaluated
        (f"EXP=a\n{VERL}", f"EXP=b\n{VERL}", False),
        (
            "train --save_path ckpt/$SLURM_JOB_ID",
            "train --save_path ckpt/$SLURM_JOB_ID",
            False,
        ),  # unknown: no guess
    ],
)
def test_launch_scripts_are_read_with_the_shell_reader(tmp_path, monkeypatch, a, b, refused):
    monkeypatch.chdir(tmp_path)
    command = _script_sweep(tmp_path, {"a": a, "b": b})
    done = CliRunner().invoke(main, ["run", "generated/t", "--command", command])
    assert done.exit_code == (2 if refused else 0), done.output
    assert ("would both write to" in done.stderr) is refused
    assert "Traceback" not in done.output


def test_a_script_s_shared_folder_is_refused_at_the_line_that_names_it(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    script = "OUT=ckpt/x\n\npython train.py \\\n  --lr 1 \\\n  --save-path $OUT"  # line 6
    command = _script_sweep(tmp_path, {"a": script, "b": script})
    done = CliRunner().invoke(main, ["run", "generated/t", "--command", command])
    assert done.exit_code == 2 and "generated/t/b.sh:6:" in " ".join(done.stderr.split()), done.output


PY_HEAD = "import os\nfrom configs import Config, Sweep\n\n"


@pytest.mark.parametrize(
    ("a", "b", "refused", "key"),
    [
        # a keyword argument of a nested call, as a Python sweep config sets it
        (
            "sweep = Sweep(\n    name='a',\n    config=Config(save_dir='ckpt/x'),\n)",
            "sweep = Sweep(\n    name='b',\n    config=Config(save_dir='ckpt/x'),\n)",
            True,
            "sweep.config.save_dir",
        ),
        ("cfg = dict(output_dir='runs/' + 'x')", "cfg = {'output_dir': 'runs/x'}", True, "cfg.output_dir"),
        ("save_path = f'ckpt/{1 + 1}'", "save_path = 'ckpt/2'", True, "save_path"),
        ("sweep = Sweep(save_dir='ckpt/a')", "sweep = Sweep(save_dir='ckpt/b')", False, ""),
        # read where the run happens, never guessed
        ("save_dir = os.environ['OUT']", "save_dir = os.environ['OUT']", False, ""),
    ],
)
def test_python_configs_are_read_without_importing_them(tmp_path, monkeypatch, a, b, refused, key):
    monkeypatch.chdir(tmp_path)
    command = _script_sweep(tmp_path, {"a": a, "b": b}, suffix=".py", head=PY_HEAD)
    done = CliRunner().invoke(main, ["run", "generated/t", "--command", command])
    assert done.exit_code == (2 if refused else 0), done.output
    said = " ".join(done.stderr.split())
    assert ("would both write to" in said) is refused and "Traceback" not in done.output
    if refused:  # at the line of the name that holds it, and the key as written
        assert "generated/t/b.py:4:" in said and f"(at `{key}`)" in said, said


configs = st.recursive(
    st.one_of(
        st.none(), st.integers(), st.text(max_size=4), st.sampled_from(sorted(output_keys.OUTPUT_KEYS))
    ),
    lambda inner: st.one_of(
        st.lists(inner, max_size=3),
        st.dictionaries(
            st.sampled_from([*sorted(output_keys.OUTPUT_KEYS), "a", "b", "trainer"]), inner, max_size=4
        ),
    ),
    max_leaves=12,
)


@settings(deadline=None)
@given(configs)
def test_every_output_key_set_to_a_folder_is_found_and_nothing_else(config):
    found = dict(output_keys.locations(config))
    for path, value in found.items():
        assert path[-1] in output_keys.OUTPUT_KEYS and paths.get(config, ".".join(path)) == value
    expected = 0
    stack = [config]
    while stack:  # count the mappings' output keys holding a non-empty string, lists not entered
        node = stack.pop()
        if isinstance(node, dict):
            for key, value in node.items():
                if key in output_keys.OUTPUT_KEYS and isinstance(value, str) and value.strip():
                    expected += 1
                else:
                    stack.append(value)
    assert len(found) == expected


def test_a_search_trial_naming_an_earlier_trial_s_folder_is_refused_before_it_runs(tmp_path):
    """A search renders one trial at a time: the second trial of a base with one checkpoint folder
    is told failed with the reason, never run."""
    base = {"x": 0.5, "y": 0.5, "steps": 2, "step_s": 0.01, "seed": 0, "noise": 0.0, "output_dir": None}
    spec = write_search_project(
        tmp_path, {"n": 2, "parallel": 1, "sampler": "random"}, base={**base, "trainer": {"save_dir": "ckpt"}}
    )
    assert cli(tmp_path, "render", str(spec)).returncode == 0
    done = sweepgen(tmp_path, "run", "generated/fake_search", *RUN_ARGS)
    said = " ".join((done.stdout + done.stderr).split())
    assert "refused" in said and "would both write to 'ckpt'" in said, said
    assert "Traceback" not in said
    ran = sorted(p.name for p in (tmp_path / "runs" / "fake_search").iterdir())
    assert ran == ["t0000"], ran  # the first trial ran, the second never started


def _hub_sweep(root: Path, per_run: dict[str, dict[str, Any]]) -> str:
    """Two runs `a` and `b` of a Hugging Face Trainer config (top-level keys, as `trl grpo` reads)."""
    configs = {n: {"output_dir": f"runs/t/{n}", "seed": ord(n), **per_run[n]} for n in ("a", "b")}
    make_config_sweep(root, configs, sweep="t", values={n: {"seed": c["seed"]} for n, c in configs.items()})
    (root / "counter.py").write_text(COUNTER)
    return f"{shlex.quote(sys.executable)} counter.py {{name}} {{config}}"


@pytest.mark.parametrize("second", ["org/grpo-tldr", "Org/GRPO-tldr"])  # Hub ids ignore case
def test_two_runs_pushing_to_one_hub_repository_are_refused_before_any_starts(tmp_path, monkeypatch, second):
    """`push_to_hub: true` with one `hub_model_id`: the later push replaces the earlier run's model."""
    monkeypatch.chdir(tmp_path)
    pushed = {"push_to_hub": True}
    command = _hub_sweep(
        tmp_path, {"a": {**pushed, "hub_model_id": "org/grpo-tldr"}, "b": {**pushed, "hub_model_id": second}}
    )
    done = CliRunner().invoke(main, ["run", "generated/t", "--command", command])
    assert done.exit_code == 2, done.output
    said = " ".join(done.stderr.split())
    line = next(
        i
        for i, text in enumerate(Path("generated/t/b.yaml").read_text().splitlines(), 1)
        if "hub_model_id" in text
    )
    assert f"generated/t/b.yaml:{line}:" in said
    assert f"runs 'a' and 'b' would both push to the Hub repository '{second}'" in said
    assert "{{ variant.run_name }}" in said and "Traceback" not in said
    assert not Path("starts.txt").exists()  # nothing started


@pytest.mark.parametrize(
    "per_run",
    [
        {"a": {"hub_model_id": "org/m"}, "b": {"hub_model_id": "org/m"}},  # not pushed
        {
            "a": {"push_to_hub": True, "hub_model_id": "org/m-a"},
            "b": {"push_to_hub": True, "hub_model_id": "org/m-b"},
        },
        {"a": {"push_to_hub": True}, "b": {"push_to_hub": True}},  # each run's folder names its repository
    ],
)
def test_runs_not_pushing_or_pushing_to_their_own_repositories_are_left_alone(tmp_path, monkeypatch, per_run):
    monkeypatch.chdir(tmp_path)
    command = _hub_sweep(tmp_path, per_run)
    done = CliRunner().invoke(main, ["run", "generated/t", "--command", command])
    assert done.exit_code == 0, done.output
    assert sorted(Path("starts.txt").read_text().split()) == ["a", "b"]


def test_two_runs_resuming_one_checkpoint_are_refused_before_any_starts(tmp_path, monkeypatch):
    """`resume_from_checkpoint: FOLDER` in every run of a sweep: each loads that checkpoint's
    optimizer (its learning rate) and random state, so the learning rates and seeds the runs are
    named and reported by are not what they trained with."""
    monkeypatch.chdir(tmp_path)
    shared = {"resume_from_checkpoint": "runs/old/checkpoint-500"}
    command = _hub_sweep(tmp_path, {"a": shared, "b": shared})
    done = CliRunner().invoke(main, ["run", "generated/t", "--command", command])
    assert done.exit_code == 2, done.output
    said = " ".join(done.stderr.split())
    assert "generated/t/b.yaml:" in said and "Traceback" not in said
    assert "runs 'a' and 'b' would both resume from the checkpoint 'runs/old/checkpoint-500'" in said
    assert "model_name_or_path" in said
    assert not Path("starts.txt").exists()  # nothing started


@pytest.mark.parametrize("second", [{"resume_from_checkpoint": "runs/t/b/checkpoint-4"}, {}])
def test_runs_resuming_their_own_checkpoints_are_left_alone(tmp_path, monkeypatch, second):
    monkeypatch.chdir(tmp_path)
    command = _hub_sweep(tmp_path, {"a": {"resume_from_checkpoint": "runs/t/a/checkpoint-4"}, "b": second})
    done = CliRunner().invoke(main, ["run", "generated/t", "--command", command])
    assert done.exit_code == 0, done.output
    assert sorted(Path("starts.txt").read_text().split()) == ["a", "b"]
