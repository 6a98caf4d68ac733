"""Wrappers read by their own getopt tables (`chrt`, `flock`, `xargs`, `stdbuf`, `sudo`,
`systemd-run`, bash's `exec`/`command`/`time`), held to the installed tools: a stub `python` on
PATH prints the words it gets, its scheduling policy and the buffering stdbuf asked for. Before
round twenty each was the program, its words read as argparse reads them, so an option moved from
the wrapper across the program (`chrt -f 10 python t.py --x 1` against `chrt --x 1 -f 10 python
t.py`) read as "no differences"; and `bash -eo pipefail -c CODE` was a program `bash` whose code
was never read."""

from __future__ import annotations

import getopt
import os
import shutil

import pytest
from diff_support import bash_runs, line_changes
from hypothesis import given, settings
from hypothesis import strategies as st

from sweepgen.readers.launch import getopt_wrappers
from sweepgen.readers.shell.shellconfig import read_shell

_TOOLS = ("bash", "chrt", "flock", "xargs", "stdbuf")
needs_tools = pytest.mark.skipif(
    any(shutil.which(tool) is None for tool in _TOOLS), reason="util-linux/coreutils/findutils not installed"
)
_STUB = (
    "#!/bin/bash\nprintf '<%s>' \"$@\"; echo\n"
    "echo \"pol=$(chrt -p $$ | sed 's/pid [0-9]*//g' | tr '\\n' ' ') "
    'buf=${_STDBUF_O-}/${_STDBUF_E-}/${_STDBUF_I-}"\n'
)

# (line, line): the two lines run differently, or alike, exactly as the stub shows
_PAIRS = [
    ("chrt -b 0 python t.py --x 1", "chrt --x 1 -b 0 python t.py"),
    ("chrt -b 0 python t.py --x 1", "chrt -b 0 python t.py --x 2"),
    ("chrt -b 0 python t.py", "chrt -i 0 python t.py"),
    ("chrt -b 0 python t.py", "chrt --batch 0 python t.py"),
    ("chrt -b 0 python t.py", "chrt --bat 0 python t.py"),
    ("chrt -b -i 0 python t.py", "chrt -i -b 0 python t.py"),
    ("chrt -b 0 -- python t.py", "chrt -b 0 python t.py"),
    ("chrt -b -- 0 python t.py", "chrt -b 0 python t.py"),
    ("flock {lock} python t.py --x 1", "flock --x 1 {lock} python t.py"),
    ("flock {lock} python t.py --x 1", "flock {lock} python t.py --x 2"),
    ("flock -w 5 {lock} python t.py", "flock --timeout=5 {lock} python t.py"),
    ("xargs -n 1 python t.py --x 1", "xargs --x 1 -n 1 python t.py"),
    ("xargs -r python t.py --x 1", "xargs python t.py --x 1"),
    ("xargs python t.py --x 1", "xargs python t.py --x 2"),
    ("stdbuf -oL python t.py --x 1", "stdbuf --x 1 -oL python t.py"),
    ("stdbuf -oL python t.py", "stdbuf -o L python t.py"),
    ("stdbuf -oL python t.py", "stdbuf --output=L python t.py"),
    ("stdbuf -oL python t.py", "stdbuf -o0 python t.py"),
    ("stdbuf -oL -eL python t.py", "stdbuf -eL -oL python t.py"),
    ("stdbuf -oL python t.py", "stdbuf -eL python t.py"),
    ("time -p python t.py --x 1", "time python t.py --x 1"),
    ("time -p python t.py --x 1", "time -p python t.py --x 2"),
    ("command python t.py --x 1", "command python t.py --x 2"),
    ("command -p python t.py --x 1", "command python t.py --x 1"),
    ("exec -a foo python t.py --x 1", "exec -a foo python t.py --x 2"),
    # bash's builtins behind another wrapper are programs of that name, no builtin (a fuzz found it)
    ("xargs -n 1 command python t.py --x 1", "command xargs -n 1 python t.py --x 1"),
    ("chrt -i 0 command python t.py --x 1", "command chrt -i 0 python t.py --x 1"),
]

# round twenty-one: GNU time (the program: a path, behind a wrapper, after `NAME=value`), runuser
# (it permutes: an option after the command is runuser's own) and doas; before, `/usr/bin/time -v
# python t.py` was the program `-v` and runuser's/doas' options read as the program's
_MORE_PAIRS = [
    ("/usr/bin/time -f x python t.py --x 1", "/usr/bin/time -f x python t.py --x 2"),
    ("/usr/bin/time -f x python t.py --x 1", "/usr/bin/time --x 1 -f x python t.py"),
    ("/usr/bin/time -f x python t.py", "/usr/bin/time --format=x python t.py"),
    ("/usr/bin/time -f x python t.py", "/usr/bin/time --form x python t.py"),
    ("/usr/bin/time -fx python t.py", "/usr/bin/time -f y python t.py"),
    ("/usr/bin/time -q -f x python t.py", "/usr/bin/time -f x -q python t.py"),
    ("/usr/bin/time -f x python t.py", "/usr/bin/time -f x python3 t.py"),
    ("/usr/bin/time -f x -a -o /dev/null python t.py", "/usr/bin/time -f x python t.py"),
    ("chrt -b 0 /usr/bin/time -f x python t.py --x 1", "chrt -b 0 /usr/bin/time -f x python t.py --x 2"),
    ("command time -f x python t.py", "command time -f y python t.py"),
    ("A=1 time -f x python t.py", "A=1 time -f y python t.py"),
]
_RUNUSER_PAIRS = [
    ("runuser -u root -- python t.py --x 1", "runuser -u root -- python t.py --x 2"),
    ("runuser -u root python t.py", "runuser --user=root python t.py"),
    ("runuser -u root python t.py", "runuser -u root python3 t.py"),
    ("runuser -u root -- python t.py -m", "runuser -u root python t.py -m"),
    ("runuser -m -u root python t.py", "runuser -u root python t.py -m"),
    ("runuser -u root python t.py -- --x", "runuser -u root -- python t.py --x"),
    ("runuser -u root -- python t.py --x", "runuser -u root -- python t.py -- --x"),
]


# round twenty-two: bash finds its keyword `time` before it unquotes or expands a word, and only at
# the start of a pipeline; `\time`, `"time"`, `$T` and `a | time` run the program /usr/bin/time.
# Before, each read as the keyword: `time python t.py` against `\time python t.py` was "equal"
_TIME_PAIRS = [
    ("time python t.py", "\\time python t.py"),
    ("time -f x python t.py", "\\time -f x python t.py"),
    ('"time" -f x python t.py', "\\time -fx python t.py"),
    ("T=time; $T -f x python t.py", "time -f x python t.py"),
    ("true | time -f x python t.py", "true | time -fx python t.py"),
    ("true | time -f x python t.py --x 1", "true | time -f x python t.py --x 2"),
    ("\\time -o /dev/null -p python t.py", "\\time --output=/dev/null --portability python t.py"),
]


def _stub(folder) -> None:
    stub = folder / "python"
    stub.write_text(_STUB)
    stub.chmod(0o755)


@needs_tools
def test_wrappers_change_what_the_tools_change(tmp_path):
    _stub(tmp_path)
    for one, two in _PAIRS:
        one, two = (line.format(lock=tmp_path / "lock") for line in (one, two))
        differs = bash_runs(one, tmp_path) != bash_runs(two, tmp_path)
        assert bool(line_changes(one, two)) == differs, (one, two, differs)


@needs_tools
def test_gnu_time_and_runuser_change_what_the_tools_change(tmp_path):
    _stub(tmp_path)
    (tmp_path / "python3").write_text('#!/bin/bash\necho 3; exec "${0%3}" "$@"\n')
    (tmp_path / "python3").chmod(0o755)
    pairs = _MORE_PAIRS + (_RUNUSER_PAIRS if os.geteuid() == 0 and shutil.which("runuser") else [])
    for one, two in pairs:
        differs = bash_runs(one, tmp_path) != bash_runs(two, tmp_path)
        assert bool(line_changes(one, two)) == differs, (one, two, differs)


@needs_tools
def test_time_is_the_keyword_only_where_bash_reads_one(tmp_path):
    _stub(tmp_path)
    for one, two in _TIME_PAIRS:
        differs = bash_runs(one, tmp_path) != bash_runs(two, tmp_path)
        assert bool(line_changes(one, two)) == differs, (one, two, differs)


def test_doas_and_runuser_options_are_theirs():
    # doas is not installed here: its table (doas.c, getopt "+C:Lnsu:") held by hand
    assert line_changes("doas -u bob python t.py", "doas -n -u bob python t.py") == [
        'commands["t.py"].@launcher.doas.-n'
    ]
    assert line_changes("doas -u bob python t.py --x 1", "doas -u bob python t.py --x 2") == [
        'commands["t.py"].--x'
    ]
    # runuser's `-m` keeps the environment: no stub shows it, the option does
    assert line_changes("runuser -u bob python t.py", "runuser -m -u bob python t.py") == [
        'commands["t.py"].@launcher.runuser.--preserve-environment'
    ]


@pytest.mark.parametrize(
    "wrapper",
    ["chrt -f 10", "chrt --rr 5", "sudo -u bob", "sudo -E -u bob A=1", "flock -w 5 /tmp/lock", "xargs -n 1",
     "stdbuf -oL", "systemd-run --user -p CPUQuota=50%", "time -p", "command", "exec -a x",
     "/usr/bin/time -v", "sudo time -f %e", "runuser -u bob --", "doas -u bob"],
)  # fmt: skip
def test_the_program_behind_a_getopt_wrapper_is_found(wrapper):
    commands = read_shell(f"#!/bin/bash\n{wrapper} python train.py --lr 1\n").data["commands"]
    assert list(commands) == ["train.py"] and commands["train.py"]["--lr"] == 1, commands
    assert wrapper.split()[0] in commands["train.py"]["@launcher"]


def test_a_wrapper_option_the_stub_cannot_see_still_shows():
    # a shared lock against an exclusive one: the program's words alike, the wrapper's option shown
    assert line_changes("flock -s /tmp/l python t.py", "flock -x /tmp/l python t.py") == [
        'commands["t.py"].@launcher.flock["@lock kind"]'
    ]


def test_a_wrapper_word_not_known_is_not_taken_for_the_command():
    # `stdbuf $OPT python t.py`: $OPT may be an option (and its value the next word) or the command
    commands = read_shell("#!/bin/bash\nstdbuf $OPT python t.py\n").data["commands"]
    assert "$OPT" not in commands and list(commands) == ["stdbuf"], commands
    # sudo's NAME=value words reach the program as strings, as env's do
    assert line_changes("sudo A=1.0 python t.py", "sudo A=1.00 python t.py")


@pytest.mark.parametrize(
    "line",
    ["chrt -p 10 1234", "sudo -l python t.py", "command -v python", "flock -c 'python t.py' /tmp/l",
     "chrt --nonsense 1 python t.py", "runuser -u bob -c x python t.py",
     "runuser -u bob python t.py $ARGS", "doas -s python t.py"],
)  # fmt: skip
def test_a_wrapper_that_runs_no_command_is_not_peeled(line):
    assert "t.py" not in read_shell(f"#!/bin/bash\n{line}\n").data["commands"]


# sudo is not installed here: its table (src/parse_args.c) held to Python's getopt, which reads a
# `+` table as glibc does (options end at the first operand); `-h`/`-E` (optional values) left out
_SUDO_SHORT = "Aa:BbC:c:D:Eeg:HiKklNnPp:R:r:SsT:t:U:u:Vv"
_SUDO_OPTIONS = ["-u bob", "-u al", "--user=bob", "-g wheel", "-H", "-n", "-b", "-D /w", "-P", "-S"]


@settings(deadline=None, max_examples=40)
@given(*[st.lists(st.sampled_from(_SUDO_OPTIONS), max_size=3)] * 2)
def test_sudo_reads_as_its_getopt_table_splits_it(one, two):
    lines = [f"sudo {' '.join(options)} python t.py --lr 1" for options in (one, two)]
    spelled = {"--user": "-u", "--group": "-g"}
    parsed = []
    for line in lines:
        options, rest = getopt.getopt(line.split()[1:], _SUDO_SHORT, ["user=", "group="])
        seen = {}
        for key, value in options:
            seen[spelled.get(key, key)] = value  # sudo keeps the last of each
        parsed.append((seen, rest))
    changes = line_changes(*lines)
    if parsed[0] != parsed[1]:
        assert changes, lines
    assert all("@launcher.sudo" in change for change in changes), changes  # the program is t.py, unchanged


def test_wrapper_tables_name_each_option_once():
    # every long option's letter is one of its table's short options (a typo would read `-x` as
    # a switch of its own)
    for name, table in getopt_wrappers.TABLES.items():
        for long_name, spec in table.long.items():
            letter = spec.partition("/")[2]
            assert not letter or letter in table.short, (name, long_name)


# (line, line): `bash` with option bundles holding `-o` before `-c`: bash takes each `o`'s value
# from the next word in turn; before, the code was never read and `-eo pipefail` was `bash`'s flag
_SHELL_PAIRS = [
    ('bash -eo pipefail -c "python t.py --lr 1"', 'bash -eo pipefail -c "python t.py --lr 2"'),
    (
        'bash -eo pipefail -c "false | python t.py; python t.py \\$?"',
        'bash -e -c "false | python t.py; python t.py \\$?"',
    ),
    ('bash -eo pipefail -c "false | python t.py"', 'bash -e -o pipefail -c "false | python t.py"'),
    ('bash -oe pipefail -c "false | python t.py"', 'bash -eo pipefail -c "false | python t.py"'),
    ('bash -ceo pipefail "python t.py"', 'bash -eo pipefail -c "python t.py"'),
    ('bash -o errexit -c "false; python t.py"', 'bash -e -c "false; python t.py"'),
    ('bash -o errexit -c "false; python t.py"', 'bash -c "false; python t.py"'),
]  # fmt: skip


@needs_tools
def test_shell_option_bundles_with_o_are_read_as_bash_reads_them(tmp_path):
    _stub(tmp_path)
    for one, two in _SHELL_PAIRS:
        differs = bash_runs(one, tmp_path) != bash_runs(two, tmp_path)
        assert bool(line_changes(one, two)) == differs, (one, two, differs)
        assert "t.py" in read_shell(f"#!/bin/bash\n{one}\n").data["commands"], one  # its code was read


# A program's own flags in another order: a script reading `sys.argv` sees it, so the reader keeps
# it unless the program is known to parse its flags (argparse, click, TrlParser: `trl`, TRL's
# scripts), where only a flag after its negation (the last wins) is kept. Before round twenty every
# reorder read as "no differences".
_TOKENS = ["--a 1", "--a 2", "--b 1", "-c 3", "--bf16", "--no_bf16"]


def _trl_like_parser():
    import argparse

    parser = argparse.ArgumentParser()
    parser.add_argument("--a", type=int)
    parser.add_argument("--b", type=int)
    parser.add_argument("-c", type=int)
    parser.add_argument("--bf16", action="store_true", default=None)
    parser.add_argument("--no_bf16", dest="bf16", action="store_false")
    return parser


@settings(deadline=None, max_examples=60)
@given(st.lists(st.sampled_from(_TOKENS), max_size=4), st.data())
def test_a_reorder_the_program_could_see_is_shown(one, data):
    # the second line is the first's tokens in another order, one perhaps dropped or added
    two = data.draw(st.permutations(one))
    if data.draw(st.booleans()):
        two = [*two[1:], *data.draw(st.lists(st.sampled_from(_TOKENS), max_size=1))]
    words = [" ".join(tokens).split() for tokens in (one, two)]
    script = [f"python t.py {' '.join(w)}".strip() for w in words]
    if words[0] != words[1]:  # sys.argv differs: a script reading it sees another command line
        assert line_changes(*script), script
    parser = _trl_like_parser()
    known = [f"python -m trl.scripts.grpo {' '.join(w)}".strip() for w in words]
    if vars(parser.parse_args(words[0])) != vars(parser.parse_args(words[1])):
        assert line_changes(*known), known


def test_an_inserted_flag_is_one_change_and_a_known_parser_ignores_order():
    assert line_changes("python t.py --a 1 --b 2", "python t.py --a 1 --c 3 --b 2") == [
        'commands["t.py"].--c'
    ]
    assert line_changes("python t.py --a 1 --b 2", "python t.py --b 2 --a 1") == [
        'commands["t.py"]["@argv order"]'
    ]
    assert line_changes("trl grpo --a 1 --b 2", "trl grpo --b 2 --a 1") == []


# `env -S STRING` split by env's own rules (quotes, `\_`, `\c`, `#`, `NAME=value`, options), held
# to GNU env: before, a string holding any of them was kept whole as env's option, so the program
# behind it was never found (and `env -S 'A=1 python t.py'` was not `env A=1 python t.py`)
_ENV_PAIRS = [
    ("env -S 'A=1 python t.py'", "env A=1 python t.py"),
    ("env -S 'A=1 python t.py'", "env -S 'A=2 python t.py'"),
    ("env -S 'python t.py a\\_b'", "env -S 'python t.py a b'"),
    ("env -S 'python t.py \"a\\_b\"'", "env -S 'python t.py a\\_b'"),
    ("env -S 'python t.py #--x 1'", "env -S 'python t.py'"),
    ("env -S 'python t.py a\\cb --x'", "env -S 'python t.py a'"),
    ("env -S \"python t.py 'a b'\"", "env -S 'python t.py a b'"),
    ("env -S 'python t.py ${HOME}'", "env -S 'python t.py ${PWD}'"),
    ("env -S '-u A python t.py'", "env -u A python t.py"),
    ("env -S 'python t.py \"\" x'", "env -S 'python t.py x'"),
]


@needs_tools
def test_env_split_string_reads_as_env_splits_it(tmp_path):
    stub = tmp_path / "python"
    stub.write_text('#!/bin/bash\nprintf \'<%s>\' "$@"; echo "A=${A-unset}"\n')
    stub.chmod(0o755)
    for one, two in _ENV_PAIRS:
        differs = bash_runs(f"A=0 {one}", tmp_path) != bash_runs(f"A=0 {two}", tmp_path)
        assert bool(line_changes(one, two)) == differs, (one, two, differs)
    assert list(read_shell("#!/bin/bash\nenv -S 'A=1 python t.py'\n").data["commands"]) == ["t.py"]
