"""torchrun's and accelerate's hyphen/underscore twins and short options read as one flag."""

from __future__ import annotations

import pytest
from diff_support import line_changes

from sweepgen.readers.launch import cmdline
from sweepgen.readers.launch.launcher_spelling import SHORT_TO_LONG, respell
from sweepgen.readers.shell.shellconfig import read_shell


def _launcher(line: str) -> dict:
    commands = read_shell(f"#!/bin/bash\n{line}\n").data["commands"]
    assert list(commands) == ["train.py"], commands
    return commands["train.py"]["@launcher"]


_SPELLINGS = {
    "torchrun": [
        "torchrun --nproc_per_node 8 -r 3",
        "torchrun --nproc-per-node=8 -r3",
        "torchrun --redirects 3 --nproc-per-node 8",
    ],
    "torchrun booleans": [
        "torchrun --no_python --rdzv_backend c10d",
        "torchrun --no-python --rdzv-backend=c10d",
    ],
    "accelerate": [
        "accelerate launch --num-processes 4 --multi-gpu -q",
        "accelerate launch --quiet --num_processes=4 --multi_gpu",
    ],
}


@pytest.mark.parametrize("spellings", list(_SPELLINGS.values()), ids=list(_SPELLINGS))
def test_equivalent_spellings_read_the_same(spellings):
    read = [_launcher(f"{s} train.py --lr 1") for s in spellings]
    assert all(r == read[0] for r in read), read


def test_respelled_flags_still_compare_their_values():
    eight = _launcher("torchrun --nproc_per_node 8 train.py")
    assert eight == {"torchrun": {"--nproc-per-node": 8}}
    assert eight != _launcher("torchrun --nproc-per-node 4 train.py")
    # a bare flag of accelerate's does not swallow the script
    assert _launcher("accelerate launch --multi-gpu train.py") == {"accelerate launch": {"--multi_gpu": True}}


def test_the_program_keeps_its_own_spelling():
    # only the launcher's flags are respelled: the script's `--per_device` is not its `--per-device`
    a = read_shell("torchrun --nproc_per_node 2 train.py --per_device 1\n").data["commands"]["train.py"]
    b = read_shell("torchrun --nproc_per_node 2 train.py --per-device 1\n").data["commands"]["train.py"]
    assert a != b
    assert respell("srun", "--num_gpus") == "--num_gpus"  # a launcher without the rule: as given


def _canonical(launcher: str, option_strings: list[str]) -> set[str]:
    return {respell(launcher, s) for s in option_strings}


@pytest.mark.train
@pytest.mark.parametrize("launcher", ["torchrun", "accelerate launch"])
def test_the_rule_is_the_installed_parsers(launcher):
    """Every spelling of one option reads as one flag, no two options share one, and each option
    that takes no value is known to take none (so it never swallows the script's name)."""
    if launcher == "torchrun":
        from torch.distributed.run import get_args_parser  # torch: only in the train lane

        parser = get_args_parser()
    else:
        from accelerate.commands.launch import launch_command_parser

        parser = launch_command_parser()
    # -m/--module is not a flag of the launcher's own: the module it names is the program
    actions = [a for a in parser._actions if a.option_strings and "-m" not in a.option_strings]
    canonical = [_canonical(launcher, a.option_strings) for a in actions]
    twins = [a.option_strings for a, c in zip(actions, canonical) if len(c) != 1]
    assert not twins
    names = [c.pop() for c in canonical]
    assert len(set(names)) == len(names)
    no_value = {n for a, n in zip(actions, names) if a.nargs == 0}
    assert no_value == cmdline._LAUNCHERS[launcher] - {"--use_xpu"}  # accelerate 1.x dropped --use_xpu
    shorts = {s for a in actions for s in a.option_strings if not s.startswith("--")}
    assert shorts == set(SHORT_TO_LONG[launcher])


@pytest.mark.parametrize("launcher", ["torchrun --nproc_per_node 2", "accelerate launch"])
def test_module_short_and_long_are_one_flag(launcher):
    # both launchers register `-m` and `--module` as one option: one spelling, no change
    def read(flag: str) -> dict:
        return read_shell(f"{launcher} {flag} pkg.train --lr 1\n").data["commands"]["pkg.train"]

    assert read("-m") == read("--module")
    assert read("-m") != read_shell(f"{launcher} pkg.train --lr 1\n").data["commands"]["pkg.train"]
    # deepspeed's runner has `--module` only: its `-m` is another word, kept as written
    ds_short, ds_long = (
        read_shell(f"deepspeed {f} pkg.train\n").data["commands"]["pkg.train"] for f in ("-m", "--module")
    )
    assert ds_short != ds_long


_TWIN_SPELLINGS = {
    # deepspeed/launcher/runner.py: add_argument("-H", "--hostfile"), ("-i", "--include"),
    # ("-e", "--exclude"), ("--num_gpus", "--num_accelerators"): argparse, one option each
    "deepspeed hostfile": [
        "deepspeed -H hf",
        "deepspeed --hostfile hf",
        "deepspeed -Hhf",
        "deepspeed --hostfile=hf",
    ],
    "deepspeed include": ["deepspeed -i localhost:0,1", "deepspeed --include localhost:0,1"],
    "deepspeed exclude": ["deepspeed -e w1:0", "deepspeed --exclude=w1:0"],
    "deepspeed gpus": ["deepspeed --num_gpus 8", "deepspeed --num_accelerators=8"],
    # Open MPI's, MPICH's and Intel MPI's mpirun read `-n` and `-np` alike
    "mpirun": ["mpirun -np 4", "mpirun -n 4"],
}


@pytest.mark.parametrize("spellings", list(_TWIN_SPELLINGS.values()), ids=list(_TWIN_SPELLINGS))
def test_one_option_two_names_is_no_change(spellings):
    read = [_launcher(f"{s} train.py --lr 1") for s in spellings]
    assert all(r == read[0] for r in read), read


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("deepspeed -H hf", "deepspeed --hostfile hg"),
        ("deepspeed -i localhost:0", "deepspeed --exclude localhost:0"),
        ("deepspeed --num_gpus 8", "deepspeed --num_accelerators 4"),
        ("mpirun -np 4", "mpirun -n 8"),
        ("mpirun -np 4", "mpirun -N 4"),  # Open MPI's -N is processes per node: another option
    ],
)
def test_the_twins_still_compare_their_values(old, new):
    assert _launcher(f"{old} train.py") != _launcher(f"{new} train.py")


# (launch line, launch line): torchrun's argparse (allow_abbrev) reads a long option by any start
# of it that begins one of its strings only; the two orders give the last value, 8 or 4
_ABBREVIATED = [
    ("torchrun --nproc-per-node 4 --nproc-per 8", "torchrun --nproc-per 8 --nproc-per-node 4"),
    ("torchrun --nnodes 2 --nnode 3", "torchrun --nnode 3 --nnodes 2"),
    ("torchrun --nnode=2 --max-r 3 --stand", "torchrun --nnodes 2 --max-restarts=3 --standalone"),
    ("torchrun --nproc 8", "torchrun --nproc-per-node 8"),  # ambiguous: torchrun refuses the first
    ("accelerate launch --num_proc 4", "accelerate launch --num_processes 4"),  # allow_abbrev=False
]


def test_an_abbreviated_torchrun_option_is_the_option_it_begins(tmp_path):
    same = [line_changes(f"{a} train.py", f"{b} train.py", tmp_path) == [] for a, b in _ABBREVIATED]
    assert same == [False, False, True, False, False]


@pytest.mark.train
def test_abbreviations_read_as_the_installed_torchrun_reads_them(tmp_path):
    from torch.distributed.run import get_args_parser  # torch: only in the train lane

    from sweepgen.readers.launch.launcher_spelling import ABBREVIATED

    parser = get_args_parser()
    strings = {s for a in parser._actions for s in a.option_strings if s.startswith("--")}
    assert ABBREVIATED["torchrun"] == strings and parser.allow_abbrev

    def parsed(line: str) -> object:
        try:
            return vars(parser.parse_args([*line.split()[1:], "train.py"]))
        except SystemExit:
            return "refused"

    for one, two in _ABBREVIATED[:4]:
        equal = parsed(one) == parsed(two) != "refused"
        assert (line_changes(f"{one} train.py", f"{two} train.py", tmp_path) == []) == equal, (one, two)


def test_deepspeed_reads_its_runners_abbreviations_and_autotuning_value(tmp_path):
    # deepspeed's runner (runner.py, not installed here: its source's table) is a plain argparse
    # parser: `--num_node 3` is `--num_nodes 3`, and `--autotuning` takes `tune` or `run`
    one, two = "deepspeed --num_nodes 2 --num_node 3", "deepspeed --num_node 3 --num_nodes 2"
    assert line_changes(f"{one} train.py", f"{two} train.py", tmp_path)
    assert line_changes("deepspeed --num_gp 2 train.py", "deepspeed --num_gpus 2 train.py", tmp_path) == []
    assert _launcher("deepspeed --autotuning run train.py --lr 1") == {"deepspeed": {"--autotuning": "run"}}


@pytest.mark.parametrize(
    ("one", "two"),
    [
        ("--learning_rate 1 --learning 2", "--learning 2 --learning_rate 1"),
        ("--lr-decay 0.5 --lr 1", "--lr 1 --lr-decay 0.5"),
        ("--lr 1 --lr-decay 0.5", "--lr 1 --lr-decay 0.5 --seed 3"),
    ],
)
def test_a_programs_flag_after_a_longer_one_it_starts_keeps_its_place(one, two, tmp_path):
    # the oracle: argparse itself (allow_abbrev, its default), for a program with one option of
    # the longer name: the later value wins, so the two orders may be two runs
    import argparse

    parser = argparse.ArgumentParser()
    for name in ("--learning_rate", "--lr-decay", "--seed"):
        parser.add_argument(name)
    ran = [vars(parser.parse_args(line.split())) for line in (one, two)]
    found = line_changes(f"python train.py {one}", f"python train.py {two}", tmp_path)
    assert bool(found) == (ran[0] != ran[1]), found
    # a flag written before the longer ones it starts (the usual order) adds no record
    assert "@flag order" not in _commands_of("python train.py --lr 1 --lr-decay 0.5")


def _commands_of(line: str) -> dict:
    return read_shell(line + "\n").data["commands"]["train.py"]


# Open MPI's `--mca NAME VALUE` (`-mca`, `--gmca`, `--prtemca`, `--pmixmca`) and MPICH's/Intel MPI's
# `-genv NAME VALUE` take two words (`mpirun --help mca`, MPICH's `mpiexec -help`); before, `--mca
# btl tcp python t.py` ran the program `tcp`. `mpiexec` is read as mpirun is.
@pytest.mark.parametrize(
    ("one", "two", "changes"),
    [
        ("mpirun --mca btl tcp python t.py", "mpirun --mca btl self python t.py",
         ['commands["t.py"].@launcher.mpirun["--mca btl"]']),
        ("mpirun --mca btl tcp --mca pml ob1 python t.py", "mpirun -mca pml ob1 --mca btl tcp python t.py",
         []),
        ("mpiexec -genv A 1.0 -n 2 python t.py", "mpiexec -np 2 -genv A 1.00 python t.py",
         ['commands["t.py"].@launcher.mpiexec["-genv A"]']),
        ("mpiexec -n 2 python t.py --a 1", "mpiexec -n 2 python t.py --a 2", ['commands["t.py"].--a']),
    ],
)  # fmt: skip
def test_mpi_options_of_two_words(one, two, changes):
    assert line_changes(one, two) == changes
