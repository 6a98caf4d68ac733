"""`--command 'trl grpo --config {config} --num_generation 4'`: an option TRL's script does not take
(a prefix of two, `--no_bf16`, `--num_processes` to `python -m trl.scripts.grpo`) failed every run at
its start in argparse; refused before any run starts. The options are read from the installed
sources: TRL's own parsers and accelerate's are the oracle."""

from __future__ import annotations

import importlib
import shlex
import sys

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


@pytest.fixture
def sweep(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    configs = {f"beta{b}": {"beta": b, "output_dir": f"runs/t/beta{b}", "bf16": False} for b in (1, 2)}
    values = {n: {"beta": c["beta"]} for n, c in configs.items()}
    make_config_sweep(tmp_path, configs, sweep="t", values=values)


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


def test_the_options_read_from_source_are_the_parsers_own():
    """Every training command's script parser (HfArgumentParser over its dataclasses) and
    accelerate's launch parser: the option strings read from source are exactly theirs."""
    for command in trl_cli.COMMANDS:
        parser = importlib.import_module(f"trl.scripts.{command}").make_parser()
        assert trl_guess.script_options(command) == set(parser._option_string_actions), command
    launch = importlib.import_module("accelerate.commands.launch").launch_command_parser()
    assert trl_options._launch_options() == set(launch._option_string_actions)
