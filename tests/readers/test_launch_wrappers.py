"""coreutils' and util-linux's wrappers (`timeout`, `taskset`, `nice`, `setsid`, `ionice`) peeled
as launchers, held to the installed tools: a stub `python` on PATH prints the words it gets and
what the wrapper changed (niceness, CPU affinity, I/O class). The program and its arguments are
found behind the wrapper, and a change of the wrapper's own options shows; before, the wrapper was
the program, and `taskset -c 0 python t.py --x 1` read as `taskset --x 1 -c 0 python t.py`."""

from __future__ import annotations

import argparse
import getopt
import os
import shutil

import pytest
from diff_support import bash_runs, line_changes

from sweepgen.readers.shell.shellconfig import read_shell

_TOOLS = ("bash", "timeout", "taskset", "nice", "setsid", "ionice")
needs_tools = pytest.mark.skipif(
    any(shutil.which(tool) is None for tool in _TOOLS), reason="coreutils/util-linux wrappers not installed"
)
_STUB = (
    "#!/bin/bash\nprintf '<%s>' \"$@\"; echo\n"
    "echo \"nice=$(nice) cpus=$(taskset -pc $$ | sed 's/.*: //') io=$(ionice -p $$)\"\n"
)

# (line, line): the two lines run differently, or alike, exactly as the stub shows
_PAIRS = [
    ("taskset -c 0 python t.py --x 1", "taskset --x 1 -c 0 python t.py"),
    ("taskset -c 0 python t.py", "taskset -c 0,1 python t.py"),
    ("taskset -c 0 python t.py --lr 1", "taskset -c 0 python t.py --lr 2"),
    ("timeout 10 python t.py --lr 1", "timeout 10 python t.py --lr 2"),
    ("timeout 10 python t.py a b", "timeout 10 python t.py b a"),
    ("timeout -s KILL -k 5 10 python t.py", "timeout -k 5 -s KILL 10 python t.py"),
    ("nice -5 python t.py", "nice -n 5 python t.py"),
    ("nice -5 python t.py", "nice -n 6 python t.py"),
    ("nice -n 5 python t.py -n 6", "nice -n 6 python t.py -n 5"),
    ("ionice -c 3 python t.py", "ionice -c 2 python t.py"),
    ("setsid -f python t.py --lr 1", "setsid -f python t.py --lr 2"),
    ("nohup timeout 10 taskset -c 0 python t.py", "nohup timeout 10 taskset -c 1 python t.py"),
    # a `--` after the wrapper's first operand is the command it runs (it read as a separator)
    ("env A=1 python t.py --x 1", "env A=1 -- python t.py --x 1"),
    ("env -u A -- python t.py --x 1", "env -u A python t.py --x 1"),
    ("timeout 10 python t.py", "timeout 10 -- python t.py"),
    ("timeout -s KILL -- 10 python t.py", "timeout -s KILL 10 python t.py"),
    ("taskset 0x1 -- python t.py", "taskset 0x1 python t.py"),
    ("env -- A=1 python t.py", "env A=1 python t.py"),
]


# round twenty-two: an option written after the wrapper's first operand is the command it runs
# (getopt's `+`), never the wrapper's option; before, `env A=1 -i cmd` read as `env -i A=1 cmd`
# and `timeout 10 --preserve-status cmd` as `timeout --preserve-status 10 cmd`: "no differences"
_AFTER_OPERAND_PAIRS = [
    ("env -i A=1 python t.py", "env A=1 -i python t.py"),
    ("env -u A A=1 python t.py", "env A=1 -u A python t.py"),
    ("timeout --preserve-status 10 python t.py", "timeout 10 --preserve-status python t.py"),
    ("taskset -a 0x1 python t.py", "taskset 0x1 -a python t.py"),
]


# round twenty-two: a flag moved across a positional of a program sweepgen does not know (an
# unpeeled wrapper such as prlimit, a script reading sys.argv) is a change: `prlimit --nofile=9
# python t.py` limits python, `prlimit python t.py --nofile=9` passes the flag to t.py; both read
# as `prlimit {--nofile: 9, @args: [python, t.py]}`, "no differences"
_PLACE_PAIRS = [
    ("prlimit --nofile=4096 python t.py --x 1", "prlimit python t.py --nofile=4096 --x 1"),
    ("prlimit --nofile=4096 python t.py", "prlimit python t.py --nofile=4096"),
    ("python t.py --a=1 x", "python t.py x --a=1"),
    ("python t.py --a=1 x --b 2", "python t.py --a=1 x --b 3"),
    ("python t.py --a=1 x", "python t.py --a=1 x y"),
]


@pytest.mark.skipif(shutil.which("prlimit") is None, reason="util-linux prlimit not installed")
def test_a_flag_moved_across_a_positional_is_a_change(tmp_path):
    stub = tmp_path / "python"
    stub.write_text(_STUB)
    stub.chmod(0o755)
    for one, two in _PLACE_PAIRS:
        differs = bash_runs(one, tmp_path) != bash_runs(two, tmp_path)
        assert bool(line_changes(one, two)) == differs, (one, two, differs)
    # an inserted positional is that change alone, never a move of every flag after it
    assert line_changes("python t.py --a=1 x --b 2", "python t.py --a=1 w x --b 2") == [
        'commands["t.py"].@args[0]'
    ]


# round twenty-two: a wrapper inside `bash -c` of the same name as one outside it wrote over the
# outer one, so `nice -n 5 bash -c 'nice -n 1 cmd'` against `nice -n 3 bash -c 'nice -n 1 cmd'`
# (niceness 6 against 4) read as "no differences"
_NESTED_PAIRS = [
    ("nice -n 5 bash -c 'nice -n 1 python t.py'", "nice -n 3 bash -c 'nice -n 1 python t.py'"),
    ("nice -n 5 bash -c 'nice -n 1 python t.py'", "nice -n 5 bash -c 'nice -n 2 python t.py'"),
    ("timeout 50 bash -c 'timeout 60 python t.py'", "timeout 50 bash -c 'timeout 60 python t.py --x'"),
]


@needs_tools
def test_a_wrapper_nested_in_bash_c_keeps_the_outer_one(tmp_path):
    stub = tmp_path / "python"
    stub.write_text(_STUB)
    stub.chmod(0o755)
    for one, two in _NESTED_PAIRS:
        differs = bash_runs(one, tmp_path) != bash_runs(two, tmp_path)
        assert bool(line_changes(one, two)) == differs, (one, two, differs)
    assert line_changes(
        "timeout 5 bash -c 'timeout 6 python t.py'", "timeout 9 bash -c 'timeout 6 python t.py'"
    )


@needs_tools
def test_an_option_after_a_wrapper_operand_is_its_command(tmp_path):
    stub = tmp_path / "python"
    stub.write_text(_STUB)
    stub.chmod(0o755)
    for one, two in _AFTER_OPERAND_PAIRS:
        differs = bash_runs(one, tmp_path) != bash_runs(two, tmp_path)
        assert bool(line_changes(one, two)) == differs, (one, two, differs)


@needs_tools
@pytest.mark.skipif((os.cpu_count() or 1) < 2, reason="affinity pairs need two CPUs")
def test_wrappers_change_what_the_tools_change(tmp_path):
    stub = tmp_path / "python"
    stub.write_text(_STUB)
    stub.chmod(0o755)
    for one, two in _PAIRS:
        differs = bash_runs(one, tmp_path) != bash_runs(two, tmp_path)
        assert bool(line_changes(one, two)) == differs, (one, two, differs)


@pytest.mark.parametrize("wrapper", ["timeout 10", "taskset -c 0", "nice -n 5", "setsid -w", "ionice -c 3"])
def test_the_program_behind_a_wrapper_is_found(wrapper):
    commands = read_shell(f"#!/bin/bash\n{wrapper} python train.py --lr 1\n").data["commands"]
    assert list(commands) == ["train.py"] and commands["train.py"]["--lr"] == 1, commands
    assert wrapper.split()[0] in commands["train.py"]["@launcher"]


def _conda_run_parser() -> argparse.ArgumentParser:
    """conda's `run` parser, its options as conda/cli/main_run.py and helpers.py register them
    (conda is not installed here): argparse itself then splits each line."""
    parser = argparse.ArgumentParser(prog="conda run")
    parser.add_argument("-n", "--name")
    parser.add_argument("-p", "--prefix")
    parser.add_argument("-v", "--verbose", action="count")
    parser.add_argument("--debug", action="store_true")
    parser.add_argument("--trace", action="store_true")
    parser.add_argument("--dev", action="count")
    parser.add_argument("--debug-wrapper-scripts", action="count")
    parser.add_argument("--cwd")
    parser.add_argument("-s", "--no-capture-output", "--live-stream", action="store_true")
    parser.add_argument("executable_call", nargs=argparse.REMAINDER)
    return parser


_CONDA_LINES = [
    "conda run -n a python t.py --lr 1",
    "conda run --name a python t.py --lr 1",
    "conda run -na python t.py --lr 1",
    "conda run --name=b python t.py --lr 1",
    "conda run -n a --live-stream python t.py --lr 1",
    "conda run -s -n a python t.py --lr 1",
    "conda run -n a --no-capture-output python t.py --lr 1",
    "conda run -n a python t.py --lr 2",
    "conda run -n a python t.py -n b --lr 1",
    "conda run -n a --cwd /w python t.py --lr 1",
    "conda run -p /envs/a python t.py --lr 1",
]


def test_conda_run_reads_as_its_parser_splits_it():
    parser = _conda_run_parser()
    parsed = {line: vars(parser.parse_args(line.split()[2:])) for line in _CONDA_LINES}
    for line in _CONDA_LINES:
        commands = read_shell(f"#!/bin/bash\n{line}\n").data["commands"]
        assert list(commands) == ["t.py"], (line, commands)  # the program behind conda run is found
        for other in _CONDA_LINES:
            assert (parsed[line] == parsed[other]) == (not line_changes(line, other)), (line, other)


# (line, line): `bash -c` with the shell's own options around `-c`; before, `bash -lc CODE` was a
# program `bash` whose code was never read (an edit inside it showed as one changed string)
_SHELL_PAIRS = [
    ('bash -ec "python t.py --lr 1"', 'bash -ec "python t.py --lr 2"'),
    ('bash -ec "false; python t.py"', 'bash -c "false; python t.py"'),
    ('bash -e -c "false; python t.py"', 'bash -ec "false; python t.py"'),
    (
        'bash -o pipefail -c "false | python t.py; python t.py \\$?"',
        'bash -c "false | python t.py; python t.py \\$?"',
    ),
    ('bash -c -- "python t.py"', 'bash -c "python t.py"'),
    ('bash -xc "python t.py"', 'bash -c "python t.py"'),
    ('bash -c "python t.py \\$0" -- x', 'bash -c "python t.py \\$0" x'),
]


@needs_tools
def test_shell_options_around_dash_c_are_read_as_bash_reads_them(tmp_path):
    stub = tmp_path / "python"
    stub.write_text("#!/bin/bash\nprintf '<%s>' \"$@\"; echo\n")
    stub.chmod(0o755)
    for one, two in _SHELL_PAIRS:
        differs = bash_runs(one, tmp_path) != bash_runs(two, tmp_path)
        assert bool(line_changes(one, two)) == differs, (one, two, differs)
        assert "t.py" in read_shell(f"#!/bin/bash\n{one}\n").data["commands"], one  # its code was read
    # a login shell (`-l`) reads the login files first: an option of the shell, shown
    assert line_changes('bash -lc "python t.py"', 'bash -c "python t.py"') == [
        'commands["t.py"].@launcher.bash.-l'
    ]


# numactl's options, as its getopt table registers them (numactl.c; the tool is not installed
# here): Python's getopt with the same table, which stops at the first operand as numactl's `+`
_NUMACTL_SHORT = "+i:w:P:p:bc:N:C:m:slHS:f:o:L:tM:dDI:uTVa"
_NUMACTL_LONG = [
    "interleave=", "weighted-interleave=", "preferred-many=", "preferred=", "balancing", "cpubind=",
    "cpunodebind=", "physcpubind=", "membind=", "show", "localalloc", "hardware", "shm=", "file=",
    "offset=", "length=", "strict", "shmmode=", "dump", "dump-nodes", "shmid=", "huge", "touch",
    "verify", "all",
]  # fmt: skip
_NUMACTL_LINES = [
    "numactl --cpunodebind=0 --membind=0 python t.py --lr 1",
    "numactl --membind=0 --cpunodebind=0 python t.py --lr 1",
    "numactl -N 0 -m 0 python t.py --lr 1",
    "numactl -N 0 python t.py -m 0 --lr 1",
    "numactl -N 0 -m 0 python t.py --lr 2",
    "numactl -l -N 1 python t.py --lr 1",
    "numactl -N 1 -l python t.py --lr 1",
    "numactl -C 0-3 python t.py --lr 1",
    "numactl -C 0-3 python t.py -C 1 --lr 1",
    "numactl --physcpubind 0-3 -- python t.py --lr 1",
]


def test_numactl_reads_as_its_getopt_table_splits_it():
    spelled = {"--cpunodebind": "-N", "--membind": "-m", "--physcpubind": "-C", "--localalloc": "-l"}
    parsed = {}
    for line in _NUMACTL_LINES:
        options, rest = getopt.getopt(line.split()[1:], _NUMACTL_SHORT[1:], _NUMACTL_LONG)
        parsed[line] = (sorted((spelled.get(k, k), v) for k, v in options), rest)
        commands = read_shell(f"#!/bin/bash\n{line}\n").data["commands"]
        assert list(commands) == ["t.py"], (line, commands)  # the program behind numactl is found
    for one in _NUMACTL_LINES:
        for two in _NUMACTL_LINES:
            if parsed[one] != parsed[two]:
                assert line_changes(one, two), (one, two)
    # options in another order are one setting (getopt reads them all before the command)
    for one, two in [(_NUMACTL_LINES[0], _NUMACTL_LINES[1]), (_NUMACTL_LINES[5], _NUMACTL_LINES[6])]:
        assert parsed[one] == parsed[two] and not line_changes(one, two), (one, two)


_SPLIT_PAIRS = [
    ('env -S "python t.py --lr 1"', 'env -S "python t.py --lr 2"'),
    ('env -S "python t.py --lr 1"', "env python t.py --lr 1"),
    ('env -S "python t.py" --lr 1', "env python t.py --lr 1"),
    ('env -S "python -u t.py"', "env python t.py"),
    ('env -S "A=1 python t.py"', 'env -S "A=2 python t.py"'),
    ("env -S 'python t.py \\\\_x'", "env -S 'python t.py \\\\_y'"),
]


@needs_tools
def test_env_split_string_runs_its_words(tmp_path):
    # `env -S "python t.py"` runs python t.py: the program is found in the string (it was
    # `(empty)`, the whole string one option of env's); a string with env's own escapes stays whole
    stub = tmp_path / "python"
    stub.write_text('#!/bin/bash\nprintf \'<%s>\' "$@"; echo "A=${A-unset}"\n')
    stub.chmod(0o755)
    for one, two in _SPLIT_PAIRS:
        differs = bash_runs(one, tmp_path) != bash_runs(two, tmp_path)
        assert bool(line_changes(one, two)) == differs, (one, two, differs)
    assert list(read_shell('#!/bin/bash\nenv -S "python t.py --lr 1"\n').data["commands"]) == ["t.py"]
