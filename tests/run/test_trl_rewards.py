"""`trl grpo` / `trl rloo` configs naming a reward function TRL cannot load (`my_rewards.acuracy`, a
module that is not there, `accuracy_rewrd`): every run started, imported trl and failed; refused
before any run starts, at the name's line, without importing the user's module."""

from __future__ import annotations

import shlex
import sys
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from run_support import make_config_sweep

from sweepgen.cli import main

# TRL's script run by this interpreter: the run's environment is sweepgen's own
TRL = f"{shlex.quote(sys.executable)} -m trl.scripts.grpo --config {{config}}"
REWARDS = "def accuracy(completions, **kwargs):\n    return [0.0 for _ in completions]\n"


def _sweep(root: Path, funcs: Any) -> None:
    configs = {
        f"beta{b}": {"beta": b, "output_dir": f"runs/t/beta{b}", "reward_funcs": funcs} for b in (1, 2)
    }
    make_config_sweep(root, configs, sweep="t", values={n: {"beta": c["beta"]} for n, c in configs.items()})


def _run(command: str = TRL):
    result = CliRunner().invoke(main, ["run", "generated/t", "--dry-run", "--command", command])
    return result.exit_code, " ".join(result.output.split())


def _line(text: str) -> int:
    return Path("generated/t/beta1.yaml").read_text().splitlines().index(text) + 1


def test_a_function_the_user_s_module_does_not_define_is_refused_before_any_run(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    Path("my_rewards.py").write_text(REWARDS.replace("def accuracy", "def acuracy") + "raise SystemExit(9)\n")
    _sweep(tmp_path, ["my_rewards.accuracy"])
    code, said = _run()
    assert code == 2, said
    assert f"generated/t/beta1.yaml:{_line('- my_rewards.accuracy')}:" in said
    assert "reward_funcs names 'my_rewards.accuracy', which `trl grpo` cannot load" in said
    assert (
        "my_rewards.py defines no top-level `accuracy`" in said
        and "did you mean `my_rewards.acuracy`?" in said
    )
    assert "Traceback" not in said  # and the module was never run (it would exit 9)


def test_a_module_found_nowhere_is_refused_before_any_run(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    Path("my_rewards.py").write_text(REWARDS)
    _sweep(tmp_path, ["my_rewards.accuracy", "my_rewardz.accuracy"])
    code, said = _run()
    assert code == 2, said
    assert "reward_funcs names 'my_rewardz.accuracy'" in said and "no module `my_rewardz`" in said
    assert f"generated/t/beta1.yaml:{_line('- my_rewardz.accuracy')}:" in said
    assert "put my_rewardz.py in the folder you run `sweepgen run` from" in said


@pytest.mark.parametrize(
    ("files", "funcs"),
    [
        ({"my_rewards.py": REWARDS}, ["my_rewards.accuracy"]),
        (
            {"pkg/rewards/__init__.py": "from .impl import accuracy\n", "pkg/rewards/impl.py": REWARDS},
            ["pkg.rewards.accuracy"],
        ),
        (
            {"pkg/rewards.py": "try:\n    import x\nexcept ImportError:\n    accuracy = len\n"},
            ["pkg.rewards.accuracy"],
        ),
        (
            {"my_rewards.py": "from elsewhere import *\n"},
            ["my_rewards.accuracy"],
        ),  # not told without running it
        (
            {"my_rewards.py": "try:\n    from fast import *\nexcept ImportError:\n    pass\n"},
            ["my_rewards.accuracy"],
        ),
        ({"my_rewards.py": "def __getattr__(name):\n    return len\n"}, ["my_rewards.accuracy"]),
        ({}, ["json.dumps"]),  # an installed module: not the working folder's
    ],
    ids=["module", "package", "try", "star", "star-in-try", "getattr", "installed"],
)
def test_reward_functions_trl_would_load_are_left_alone(tmp_path, monkeypatch, files, funcs):
    monkeypatch.chdir(tmp_path)
    for rel, text in files.items():
        Path(rel).parent.mkdir(parents=True, exist_ok=True)
        Path(rel).write_text(text)
    _sweep(tmp_path, funcs)
    code, said = _run()
    assert code == 0, said


def test_a_module_of_another_environment_is_not_judged(tmp_path, monkeypatch):
    """A program not beside sweepgen's interpreter runs in an environment that may hold the module
    (and another trl release, whose own reward functions may be others)."""
    monkeypatch.chdir(tmp_path)
    _sweep(tmp_path, ["their_package.accuracy", "a_newer_trl_reward"])
    code, said = _run("/opt/other-env/bin/trl grpo --config {config}")
    assert code == 0, said


@pytest.mark.train  # TRL's own reward functions, read from the installed script
def test_a_name_that_is_none_of_trl_s_own_reward_functions_is_refused(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    _sweep(tmp_path, ["think_format_reward", "accuracy_rewrd"])
    code, said = _run()
    assert code == 2, said
    assert (
        "reward_funcs names 'accuracy_rewrd', which `trl grpo` cannot load: it is none of TRL's own" in said
    )
    assert "did you mean 'accuracy_reward'?" in said


@pytest.mark.train  # TRL's own reward functions and their ImportError, read from the installed source
def test_trl_s_own_reward_whose_package_is_not_installed_is_refused(tmp_path, monkeypatch):
    """`reward_funcs: [accuracy_reward]` (TRL's documented GRPO config) without math_verify: every run
    loaded its model, generated, and raised ImportError at its first reward. The oracle is TRL's own
    function, called as the trainer calls it; one whose packages are here is left alone."""
    import importlib.util

    from trl.rewards import accuracy_reward

    assert importlib.util.find_spec("math_verify") is None  # this environment, as the test expects it
    with pytest.raises(ImportError, match="math_verify"):
        accuracy_reward([[{"role": "assistant", "content": "2"}]], solution=["2"])
    monkeypatch.chdir(tmp_path)
    _sweep(tmp_path, ["think_format_reward", "accuracy_reward"])
    code, said = _run()
    assert code == 2, said
    assert f"generated/t/beta1.yaml:{_line('- accuracy_reward')}:" in said
    assert "TRL's accuracy_reward needs the package 'math_verify', which is not installed" in said
    _sweep(tmp_path, ["think_format_reward"])
    assert _run()[0] == 0


def test_reward_functions_the_command_line_names_are_not_judged_from_the_config(tmp_path, monkeypatch):
    """`--reward_funcs my_rewards.accuracy` on the command line: TRL takes it over the config's
    (mistyped) list, so the runs load what the flag names."""
    monkeypatch.chdir(tmp_path)
    Path("my_rewards.py").write_text(REWARDS)
    _sweep(tmp_path, ["my_rewards.acuracy"])
    code, said = _run(f"{TRL} --reward_funcs my_rewards.accuracy")
    assert code == 0, said


@pytest.mark.parametrize(
    "flags",
    ["--reward_funcs my_rewards.accuracy my_rewards.acuracy", "--reward-funcs=my_rewards.acuracy"],
)
def test_reward_functions_the_command_line_names_are_judged(tmp_path, monkeypatch, flags):
    """`--reward_funcs a b` (argparse's nargs="+": every word up to the next option) is what the runs
    load: judged as the config's list is, and named on the command line."""
    monkeypatch.chdir(tmp_path)
    Path("my_rewards.py").write_text(REWARDS)
    _sweep(tmp_path, ["my_rewards.accuracy"])
    code, said = _run(f"{TRL} {flags} --learning_rate 1e-6")
    assert code == 2, said
    assert "reward_funcs names 'my_rewards.acuracy'" in said and "--command:" in said
    assert "did you mean `my_rewards.accuracy`?" in said and "Traceback" not in said


@pytest.mark.parametrize(
    "source",
    [
        "def _make(k):\n    return lambda completions, **kw: [k] * len(completions)\n"
        "for _n in ('accuracy', 'format'):\n    globals()[_n] = _make(1.0)\n",
        "import sys\nsetattr(sys.modules[__name__], 'accuracy', lambda completions, **kw: [0.0])\n",
    ],
    ids=["globals", "setattr"],
)
def test_a_module_binding_names_it_does_not_spell_is_not_judged(tmp_path, monkeypatch, source):
    """Reward functions made in a loop (`globals()[name] = ...`): the module defines `accuracy` when
    run, though no statement spells it; refusing it would stop a sweep TRL runs."""
    monkeypatch.chdir(tmp_path)
    Path("my_rewards.py").write_text(source)
    _sweep(tmp_path, ["my_rewards.accuracy"])
    code, said = _run()
    assert code == 0, said


def test_one_string_of_reward_functions_is_refused(tmp_path, monkeypatch):
    """`reward_funcs: accuracy_reward` (no list): TRL's script loops over the string, one character a
    name, and fails at the run's start ("Could not load reward function 'a'")."""
    monkeypatch.chdir(tmp_path)
    _sweep(tmp_path, "accuracy_reward")
    code, said = _run()
    assert code == 2, said
    assert f"generated/t/beta1.yaml:{_line('reward_funcs: accuracy_reward')}:" in said
    assert "reward_funcs is one string, 'accuracy_reward'" in said
    assert "write a list: `reward_funcs: [accuracy_reward]`" in said and "Traceback" not in said


def test_a_reward_model_folder_that_is_not_there_is_refused_before_any_run(tmp_path, monkeypatch):
    """GRPO's `reward_model_name_or_path: ./models/rm` (its script loads it with from_pretrained, as
    the policy model) with no such folder: every run loaded its policy model and then failed on the
    reward model ("Repo id must be in the form ..."); the policy model's own check passed it by. Now
    refused at its line, with the folder's close name; a folder that is there passes."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "models" / "rm-v1").mkdir(parents=True)
    configs = {
        f"beta{b}": {
            "beta": b,
            "output_dir": f"runs/t/beta{b}",
            "reward_model_name_or_path": "./models/rm-v2",
        }
        for b in (1, 2)
    }
    make_config_sweep(
        tmp_path, configs, sweep="t", values={n: {"beta": c["beta"]} for n, c in configs.items()}
    )
    code, said = _run()
    assert code == 2, said
    assert f"generated/t/beta1.yaml:{_line('reward_model_name_or_path: ./models/rm-v2')}:" in said
    assert "reward_model_name_or_path './models/rm-v2' is no folder of" in said
    assert "did you mean './models/rm-v1'?" in said
    (tmp_path / "models" / "rm-v2").mkdir()
    assert _run()[0] == 0
