"""The interpreter's own options on a launch line, read as CPython's getopt reads them: switches
bundle (``-uB``), ``-W``/``-X`` take the rest of their word or the next one, ``-m``/``-c`` end the
options the same way (``-mpkg.t``, ``-um pkg.t``). Held to the interpreter running here."""

from __future__ import annotations

import shlex
import subprocess
import sys

import pytest
from diff_support import line_changes

_SHOW = (
    "import sys; print(sys.argv[1:], sys.warnoptions, sys._xoptions, sys.flags.optimize, sys.flags.verbose)"
)


def _python_sees(options: list[str]) -> str:
    run = subprocess.run(
        [sys.executable, "-I", *options], capture_output=True, text=True, check=True, timeout=60
    )
    return run.stdout


@pytest.mark.parametrize(
    ("one", "two"),
    [
        (["-W", "ignore", "-c", _SHOW, "1"], ["-Wignore", "-c", _SHOW, "1"]),
        (["-X", "dev", "-c", _SHOW], ["-Xdev", "-c", _SHOW]),
        (["-O", "-v", "-c", _SHOW], ["-Ov", "-c", _SHOW]),
        (["-O", "-W", "ignore", "-c", _SHOW], ["-OW", "ignore", "-c", _SHOW]),
        (["-O", "-c", _SHOW, "2"], ["-Oc", _SHOW, "2"]),
        (["-c", _SHOW, "3"], ["-c" + _SHOW, "3"]),
    ],
)
def test_spellings_cpython_reads_alike_are_equal(one, two):
    assert _python_sees(one) == _python_sees(two)  # the oracle
    assert line_changes(f"python {shlex.join(one)}", f"python {shlex.join(two)}") == []


@pytest.mark.parametrize(
    ("one", "two"),
    [
        ("python -m pkg.t --lr 1", "python -mpkg.t --lr 1"),
        ("python -u -m pkg.t --lr 1", "python -um pkg.t --lr 1"),
        ("python -u -B t.py", "python -uB t.py"),
    ],
)
def test_a_module_or_script_spelled_with_bundled_options_is_the_same_run(one, two):
    assert line_changes(one, two) == []


@pytest.mark.parametrize(
    ("one", "two"),
    [
        ("python -Wignore t.py", "python -Wdefault t.py"),
        ("python -um pkg.t --lr 1", "python -um pkg.s --lr 1"),
        ("python -mpkg.t --lr 1", "python -mpkg.t --lr 2"),
        ("python -uB t.py", "python -u t.py"),
        ("python -u t.py", "python t.py -u"),  # after the script, the script's own flag
    ],
)
def test_spellings_cpython_reads_apart_differ(one, two):
    assert line_changes(one, two)
