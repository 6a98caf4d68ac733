"""Builtins that bind a variable by name, and files or code that may bind any: what the variable
held before them is not what a later command reads."""

from __future__ import annotations

import pytest

from sweepgen.readers.diff import diff
from sweepgen.readers.shell.shellbinds import ANY, bound_names
from sweepgen.readers.shell.shellconfig import read_shell

_BINDERS = [
    'printf -v LR "%s" 1',
    "builtin printf -v LR %s 1",
    "read LR <<< 1",
    "command read -r -p 'lr?' LR",
    "IFS=, read -r X LR <<< '1,2'",
    "read -a LR <<< 1",
    "mapfile -t LR <<< 1",
    "readarray LR < lrs.txt",
    "let LR=1",
    "getopts ab LR",
    "wait -p LR",
    "source env.sh",
    ". ./env.sh",
    'eval "$1"',
    'read "$1"',
]


@pytest.mark.parametrize("binder", _BINDERS)
def test_a_variable_a_builtin_may_bind_is_not_its_earlier_value(binder):
    # bash runs `python t.py --x 1` (or whatever the builtin bound) on one side and `--x 5` on the
    # other, where the script sets LR=5 again: never "no differences"
    one = read_shell(f"LR=5\n{binder}\npython t.py --x $LR\n").data
    two = read_shell(f"LR=5\n{binder}\nLR=5\npython t.py --x $LR\n").data
    assert diff(one, two) != []


def test_a_command_that_binds_nothing_keeps_the_value():
    one = read_shell('LR=5\nprintf "%s" x\nread -r A <<< 1\npython t.py --x $LR\n').data
    two = read_shell('LR=5\nprintf "%s" x\nread -r A <<< 1\nLR=5\npython t.py --x $LR\n').data
    assert diff(one, two) == []
    assert one["commands"]["t.py"]["--x"] == 5


@pytest.mark.parametrize(
    ("words", "names"),
    [
        (["read", "-r", "-p", "lr?", "X", "Y"], {"X", "Y"}),
        (["read"], {"REPLY"}),
        (["read", "-raARR", "-d", ""], {"ARR"}),
        (["command", "read", "Q"], {"Q"}),
        (["mapfile", "-t", "-O", "1", "L"], {"L"}),
        (["readarray"], {"MAPFILE"}),
        (["printf", "-v", "X[2]", "%s", "1"], {"X"}),
        (["printf", "-vX", "%s", "1"], {"X"}),
        (["let", "N=1", "M++", "K"], {"N", "M"}),
        (["getopts", "ab", "o"], {"o", "OPTARG", "OPTIND"}),
        (["wait", "-n", "-p", "J"], {"J"}),
    ],
)
def test_bound_names_holds_every_name_the_builtin_binds(words, names):
    assert names <= set(bound_names(words) or ())


@pytest.mark.parametrize(
    ("words", "names"),
    [
        (["printf", "%s", "-v"], []),
        (["eval", "X=1"], []),  # known code is read where it runs
        (["echo", "X"], []),
        (["eval", None], ANY),
        (["source", "env.sh"], ANY),
        ([".", "env.sh"], ANY),
        (["read", None], ANY),
    ],
)
def test_bound_names_of_what_binds_nothing_or_anything(words, names):
    assert bound_names(words) == names


@pytest.mark.parametrize("loader", ["source env.sh", ". env.sh", 'eval "$EXTRA"'])
def test_after_a_sourced_file_a_variable_is_not_its_value_before(loader):
    # env.sh may set LR: `$LR` is what it left, never the 5 bound before it
    one = read_shell(f"LR=5\n{loader}\npython t.py --x $LR\n").data
    two = read_shell(f"LR=5\n{loader}\npython t.py --x 5\n").data
    assert diff(one, two) != []
