"""srun's options read as their long names however they are spelled: every pair of `man srun`."""

from __future__ import annotations

import pytest
from slurm_man_support import man_page, options_from_man

from sweepgen.readers.launch.srun import OPTIONS
from sweepgen.readers.model import NotEvaluated
from sweepgen.readers.shell.shellconfig import read_shell


def _command(options: str, tail: str = "python train.py --lr 1") -> dict:
    commands = read_shell(f"#!/bin/bash\nsrun {options} {tail}\n").data["commands"]
    assert len(commands) == 1, commands
    return next(iter(commands.values()))


def _srun(options: str) -> dict:
    return _command(options)["@launcher"]["srun"]


@pytest.mark.parametrize("short", sorted(OPTIONS.short_to_long))
def test_every_short_option_reads_as_its_long_name(short):
    long = OPTIONS.short_to_long[short]
    if long in OPTIONS.no_value:
        assert _srun(short) == _srun(long) == {long: True}
        return
    if long in OPTIONS.optional_value:  # its value only attached: `-K1`, `--kill-on-bad-exit=1`
        assert _srun(short) == _srun(long) == {long: True}
        assert _srun(f"{short}v1") == _srun(f"{long}=v1") == {long: "v1"}
        return
    expected = {long: "v1"}
    assert _srun(f"{short} v1") == _srun(f"{short}v1") == _srun(f"{long}=v1") == _srun(f"{long} v1")
    assert _srun(f"{short} v1") == expected
    assert _srun(f"{short} v1") != _srun(f"{long}=v2")


def test_a_launch_line_in_every_spelling_is_one_command():
    spellings = ["-N2 -n 8 -l", "--nodes 2 --ntasks=8 --label", "-lN2 --ntasks 8", "--nodes=2 -n8 -l"]
    read = [_command(s) for s in spellings]
    assert all(r == read[0] for r in read)
    assert read[0]["@launcher"]["srun"] == {"--nodes": 2, "--ntasks": 8, "--label": True}
    assert read[0]["--lr"] == 1  # the program's own flags stay the program's


def test_spellings_that_are_not_the_same_value():
    assert _srun("-N=2") == {"--nodes": "=2"} != _srun("--nodes=2")  # srun: '"=2" is not a valid node count'
    assert _srun("-J 0x10") != _srun("-J 16")
    assert _srun("-J 1e3") != _srun("-J 1000.0")
    # an optional value is never the next word: after `-K 1`, `1` is the program srun runs
    assert _srun("-K1") == {"--kill-on-bad-exit": 1}
    commands = read_shell("srun -K 1 train.py\n").data["commands"]
    assert commands["1"]["@launcher"]["srun"]["--kill-on-bad-exit"] is True
    assert _srun("--exclusive") != _srun("--exclusive=user")


def test_options_end_at_the_program_and_at_a_double_dash():
    assert _command("-n 2", "python -N 3 train.py")["@launcher"]["srun"] == {"--ntasks": 2}
    assert _command("-n 2 --", "train.py -N 3")["@launcher"]["srun"] == {"--ntasks": 2}
    assert _command("-n 2 --", "train.py -N 3")["-N"] == 3


def test_a_value_that_could_not_be_expanded_stays_not_evaluated():
    assert _srun('-N "$NODES"') == _srun('--nodes="$NODES"') == _srun('-N"$NODES"')
    value = _srun('-N "$NODES"')["--nodes"]
    assert isinstance(value, NotEvaluated)
    assert _srun("--nodes='$NODES'") != _srun('--nodes="$NODES"')  # a literal is not the variable


def test_an_option_this_slurm_does_not_document_keeps_its_spelling():
    assert _srun("--newer-option 3") == {"--newer-option": 3}
    assert _srun("--newer-option") == {"--newer-option": True}


@pytest.mark.skipif(not man_page("srun").exists(), reason="Debian's slurm-client man page is not installed")
def test_the_table_is_the_man_page():
    assert options_from_man("srun") == OPTIONS


@pytest.mark.parametrize(
    ("options", "tail", "read"),
    [
        # pyxis's switches take no value, its options one (args.c's spank_opts), whatever it looks like
        ("--container-remap-root", "trainer --lr 1", {"--container-remap-root": True}),
        ("--container-image python", "python train.py --lr 1", {"--container-image": "python"}),
        ("--container-image=python", "python train.py --lr 1", {"--container-image": "python"}),
        (
            "--container-name torchrun --container-writable",
            "python train.py",
            {"--container-name": "torchrun", "--container-writable": True},
        ),
        (
            "--no-container-mount-home --container-mounts /d:/d",
            "./run.sh",
            {"--no-container-mount-home": True, "--container-mounts": "/d:/d"},
        ),
    ],
)
def test_pyxis_options_are_read_as_pyxis_registers_them(options, tail, read):
    command = _command(options, tail)
    assert command["@launcher"]["srun"] == read
    assert "--lr" not in read and ("--lr" not in tail or command["--lr"] == 1)


def test_pyxis_options_in_sbatch_directives():
    directives = "#SBATCH --container-image nvcr.io/nvidia/pytorch:24.01-py3\n#SBATCH --container-writable\n"
    assert read_shell("#!/bin/bash\n" + directives + "srun true\n").data["sbatch"] == {
        "--container-image": "nvcr.io/nvidia/pytorch:24.01-py3",
        "--container-writable": True,
    }
