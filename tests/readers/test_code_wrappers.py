"""Wrappers whose argument is shell code (`su -c`, `runuser -c`, `script -c`, `flock FILE -c`,
`sg GROUP CODE`, `watch CMD...`) and the command-running wrappers `chronic`, `unbuffer` and `watch
-x`, held to the installed tools: a stub program prints the words it gets. Before round
twenty-two each was the program, its code one opaque word, so the program inside was compared
under the wrapper's name and two spellings the tool runs alike (`su -c CODE bob` and `su bob -c
CODE`, `sg G -c CODE` and `sg G CODE`) read as a change."""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess

import pytest
from diff_support import bash_runs, line_changes

from sweepgen.readers.shell.shellconfig import read_shell

_ROOT = os.geteuid() == 0  # su, runuser and sg ask no password of root only
needs_root_tools = pytest.mark.skipif(
    not _ROOT or any(shutil.which(t) is None for t in ("bash", "su", "runuser", "sg", "script", "flock")),
    reason="su/runuser/sg need root here; util-linux or shadow not installed",
)

# (line, line): the tool runs them alike or not, as the stub shows ({py}: the stub's path, since
# su resets PATH; {lock}: a lock file)
_PAIRS = [
    ("su -c '{py} t.py --x 1' root", "su -c '{py} t.py --x 2' root"),
    ("su -c '{py} t.py' root", "su root -c '{py} t.py'"),
    ("su -c '{py} t.py' root", "su --command='{py} t.py' root"),
    ("su -c 'echo no' -c '{py} t.py' root", "su -c '{py} t.py' root"),
    ("su -c '{py} t.py \"$0\"' root a", "su -c '{py} t.py \"$0\"' root b"),
    ("runuser -c '{py} t.py --x 1' root", "runuser root -c '{py} t.py --x 1'"),
    ("runuser -c '{py} t.py --x 1' root", "runuser -c '{py} t.py --x 2' root"),
    ("script -qc '{py} t.py --x 1' /dev/null", "script /dev/null -q -c '{py} t.py --x 1'"),
    ("script -qc '{py} t.py --x 1' /dev/null", "script -qc '{py} t.py --x 2' /dev/null"),
    ("flock {lock} -c '{py} t.py --x 1'", "flock {lock} -c '{py} t.py --x 2'"),
    ("flock {lock} -c '{py} t.py'", "flock {lock} --command '{py} t.py'"),
    ("flock -w 5 {lock} -c '{py} t.py'", "flock --timeout=5 {lock} -c '{py} t.py'"),
    ("sg root -c '{py} t.py --x 1'", "sg root '{py} t.py --x 1'"),
    ("sg root '{py} t.py --x 1' ignored", "sg root '{py} t.py --x 1'"),
    ("sg root '{py} t.py --x 1'", "sg root '{py} t.py --x 2'"),
]


@needs_root_tools
def test_code_wrappers_change_what_the_tools_change(tmp_path):
    stub = tmp_path / "py"
    stub.write_text("#!/bin/bash\nprintf '<%s>' \"$@\"; echo\n")
    stub.chmod(0o755)
    for one, two in _PAIRS:
        one, two = (line.format(py=stub, lock=tmp_path / "lock") for line in (one, two))
        differs = bash_runs(one, tmp_path) != bash_runs(two, tmp_path)
        assert bool(line_changes(one, two)) == differs, (one, two, differs)


@pytest.mark.parametrize(
    "line",
    ["su -c 'python train.py --lr 1' bob", "su - bob -c 'python train.py --lr 1'",
     "runuser -c 'python train.py --lr 1' bob", "script -qc 'python train.py --lr 1' /dev/null",
     "flock -w 5 /tmp/l -c 'python train.py --lr 1'", "sg wheel 'python train.py --lr 1'",
     "watch -n 5 python train.py --lr 1", "watch -n 5 -x python train.py --lr 1",
     "chronic -ev python train.py --lr 1", "unbuffer -p python train.py --lr 1"],
)  # fmt: skip
def test_the_program_a_code_wrapper_runs_is_found(line):
    commands = read_shell(f"#!/bin/bash\n{line}\n").data["commands"]
    assert list(commands) == ["train.py"] and commands["train.py"]["--lr"] == 1, commands
    assert line.split()[0] in commands["train.py"]["@launcher"]


def test_wrapper_grammars_the_stub_cannot_show():
    # watch (it needs a terminal) joins its words into one `sh -c` string, unless -x runs them
    assert line_changes("watch -n 5 python t.py --x 1", "watch -n5 'python t.py --x 1'") == []
    assert line_changes("watch python t.py --x 1", "watch python t.py --x 2") == ['commands["t.py"].--x']
    assert line_changes("watch -x python t.py", "watch python t.py") == [
        'commands["t.py"].@launcher.watch.--exec'
    ]
    # su's `-` is `--login`; chronic's switches bundle; unbuffer's `-p` only as its first word
    assert line_changes("su - bob -c 'python t.py'", "su -l bob -c 'python t.py'") == []
    assert line_changes("chronic -ev python t.py", "chronic -e -v python t.py") == []
    assert line_changes("unbuffer -p python t.py", "unbuffer python t.py -p") == [
        'commands["t.py"].-p',
        'commands["t.py"].@launcher.unbuffer.-p',
    ]


@pytest.mark.parametrize(
    "line",
    ["su bob -- -c 'python t.py'", "runuser -u bob -c 'python t.py'", "script -c 'python t.py' a b",
     "flock /tmp/l -c 'python t.py' extra", "su -c \"$CODE\" bob", "watch $OPT python t.py",
     "su --session-command 'python t.py' bob", "unbuffer -- python t.py"],
)  # fmt: skip
def test_a_code_wrapper_line_the_tool_reads_otherwise_is_not_peeled(line):
    assert "t.py" not in read_shell(f"#!/bin/bash\n{line}\n").data["commands"]


@pytest.mark.skipif(shutil.which("ssh") is None, reason="OpenSSH client not installed")
@pytest.mark.parametrize(
    "line",
    ["ssh -p 2222 hostx python t.py --lr 1", "ssh hostx -p 2222 python t.py --lr 1",
     "ssh hostx python t.py -p 2222 --lr 1", "ssh -t hostx -p2222 -- python t.py --lr 1",
     "ssh hostx 'python t.py -p 1 --lr 1'"],
)  # fmt: skip
def test_ssh_options_end_where_openssh_ends_them(line):
    # `ssh -G` prints the options ssh read (its port) and runs nothing: the oracle for where they end
    shown = subprocess.run(["ssh", "-G", *shlex.split(line)[1:]], capture_output=True, text=True, check=False)
    port = next(int(row.split()[1]) for row in shown.stdout.splitlines() if row.startswith("port "))
    commands = read_shell(f"#!/bin/bash\n{line}\n").data["commands"]
    assert commands["t.py"]["--lr"] == 1, commands
    assert commands["t.py"]["@launcher"]["ssh"].get("-p", 22) == port, commands


def test_ssh_runs_its_words_joined_on_the_remote_shell():
    assert line_changes("ssh n1 python t.py --lr 1", "ssh n1 'python t.py --lr 1'") == []
    assert line_changes("ssh n1 'cd /w && python t.py'", "ssh n1 'cd /v && python t.py'") == [
        "commands.cd.@args[0]",
        'commands["t.py"].@when',
    ]
    for line in ("ssh n1", "ssh -N -L 1:a:2 n1", "ssh -G n1 python t.py", "ssh n1 $CMD"):
        assert "t.py" not in read_shell(f"#!/bin/bash\n{line}\n").data["commands"], line
