"""`--command 'trl grpo --config {config} --num_generation 4'`: an option TRL's script does not take
(a prefix of two, `--no_bf16`, `--num_processes` to `python -m trl.scripts.grpo`) failed every run at
its start in argparse; refused before any run starts. The options are read from the installed
sources: TRL's own parsers and accelerate's are the oracle."""

from __future__ import annotations

import importlib
import shlex
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner
from run_support import make_config_sweep

from sweepgen.cli import main
from sweepgen.compile.schema import trl_cli, trl_guess
from sweepgen.run.start.trl import trl_options

pytestmark = pytest.mark.train  # the installed TRL's sources (the oracle tests import its parsers)

PYTHON = f"{shlex.quote(sys.executable)} -m trl.scripts.grpo --config {{config}}"
TRL = f"{shlex.quote(sys.executable.rsplit('/', 1)[0])}/trl grpo --config {{config}}"


def _run(command: str) -> tuple[int, str]:
    result = CliRunner().invoke(main, ["run", "generated/t", "--dry-run", "--command", command])
    return result.exit_code, " ".join(result.output.split())


def _sweep(root, extra=None):
    configs = {
        f"beta{b}": {"beta": b, "output_dir": f"runs/t/beta{b}", "bf16": False, **(extra or {})}
        for b in (1, 2)
    }
    values = {n: {"beta": c["beta"]} for n, c in configs.items()}
    make_config_sweep(root, configs, sweep="t", values=values)


@pytest.fixture
def sweep(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    _sweep(tmp_path)


@pytest.mark.parametrize(
    ("command", "refused"),
    [
        (f"{TRL} --num_generation 4", "ambiguous option: it could match --num_generations"),
        (f"{TRL} --lr 1e-5", "ambiguous option"),
        (f"{TRL} --no_bf16", "did you mean `--bf16 false`?"),
        (f"{PYTHON} --num_processes 2", "`--num_processes` to TRL's grpo script"),
        (f"{PYTHON} --learning_rte=1e-5", "no such option"),  # `--learning-rat` is a prefix of one
    ],
)
def test_an_option_trl_s_parser_refuses_is_refused_before_any_run(sweep, command, refused):
    code, said = _run(command)
    assert code == 2 and refused in said, said
    assert "--command:" in said and "every run would fail at its start" in said and "Traceback" not in said


@pytest.mark.parametrize(
    "options",
    [
        "--num_generations 2 --learning-rate=1e-5 --no_shuffle_dataset --max_comp 8",  # a prefix of one
        "--num_processes 1 --mixed_precision no",  # accelerate's, which `trl grpo` hands to it
        "--accelerate_config multi_gpu",  # TRL's CLI turns it into accelerate's --config_file
    ],
)
def test_options_trl_takes_are_left_alone(sweep, options):
    code, said = _run(f"{TRL} {options}")
    assert code == 0, said


@pytest.mark.parametrize(
    ("extra", "command", "refused"),
    [
        ({"learning_rat": 1e-5}, TRL, True),  # accelerate takes no abbreviation, nor this
        ({"learning_rat": 1e-5}, PYTHON, False),  # the script leaves a key no dataclass has aside
        ({"num_processes": 1, "mixed_precision": "no", "accelerate_config": "multi_gpu"}, TRL, False),
    ],
)
def test_a_config_key_trl_hands_to_accelerate_which_refuses_it_is_refused(
    tmp_path, monkeypatch, extra, command, refused
):
    """`trl grpo` hands a config key no dataclass has to `accelerate launch` as `--key value`: one
    accelerate does not take fails every run at its start ("unrecognized arguments")."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    _sweep(tmp_path, extra)
    code, said = _run(command)
    assert (code == 2) is refused, said
    if refused:
        line = Path("generated/t/beta1.yaml").read_text().splitlines().index("learning_rat: 1.0e-05") + 1
        assert f"generated/t/beta1.yaml:{line}:1:" in said and "which `trl grpo` does not take" in said
        assert "did you mean `--learning_rate`?" in said


def test_the_options_read_from_source_are_the_parsers_own():
    """Every training command's script parser (HfArgumentParser over its dataclasses) and
    accelerate's launch parser: the option strings read from source are exactly theirs."""
    for command in trl_cli.COMMANDS:
        parser = importlib.import_module(f"trl.scripts.{command}").make_parser()
        assert trl_guess.script_options(command) == set(parser._option_string_actions), command
    launch = importlib.import_module("accelerate.commands.launch").launch_command_parser()
    assert trl_options._launch_options() == set(launch._option_string_actions)
    assert launch.allow_abbrev is False  # accelerate takes its options by their whole names alone
