"""Read a shell, sbatch or launch script as data, through the tree-sitter bash grammar; nothing runs.

The result::

    {"sbatch": {"--partition": "gpu", "--nodes": 2},             # #SBATCH lines before any command
     "env": {"HF_HOME": "/scratch/hf"},                          # exported variables, final values
     "vars": {...},                                              # other variables the data still needs
     "commands": {"verl.trainer.main_ppo": {...}, "mkdir": {...}}}

Variables are tracked in order and substituted where used (``$VAR``, ``${VAR:-default}``, arrays
``"${ARGS[@]}"``, here-documents read with ``read -d '' CMD <<EOF`` and run as ``$CMD``). A plain
(unexported) variable is left out when every use of it was substituted, since its value then shows
where it is used. Each command is read by ``sweepgen.readers.launch.cmdline``: launchers peeled off, keyed
by program, flags and Hydra overrides nested. Redirections become ``@stdout``/``@stderr``/``@stdin``,
never arguments. Whatever sits inside ``if``/``case``/loops/functions or after ``&&``/``||`` carries
``@when`` with its condition, and a variable bound there is unknown afterwards. Words that depend on
the running system stay not-evaluated nodes.
"""

from __future__ import annotations

import re
from pathlib import Path

from sweepgen.errors import ConfigError, Location
from sweepgen.readers import inputsize
from sweepgen.readers.model import ReadResult
from sweepgen.readers.shell.shellinterp import Reader


def read_shell_file(path: str | Path) -> ReadResult:
    path = Path(path)
    raw = inputsize.read_bytes(path, "shell")  # bytes, never text: that would turn `\r\n` into `\n`
    from sweepgen.formats.yamlio import decode_utf8  # noqa: PLC0415 - yamlio imports PyYAML: a script needs none

    return read_shell(decode_utf8(raw, str(path)), str(path))


def read_shell(text: str, filename: str = "<string>") -> ReadResult:
    if "\x00" in text:
        at = Location.at_offset(filename, text, text.index("\x00"))
        raise ConfigError("a shell script cannot contain NUL bytes", location=at)
    reader = Reader(filename)
    try:
        reader.script(text, 0, [], {})
        reader.at_exit()
        reader.uncalled()
    except RecursionError:
        raise ConfigError("shell script nested too deeply to read", location=Location(filename)) from None
    result = reader.finish()
    if "\r" in text:  # bash reads a carriage return as part of the word before it (`1\r`)
        result.data["@carriage_returns"] = text.count("\r")
    if text.startswith("#!"):
        result.data["@shebang"] = _shebang(text.split("\n", 1)[0])
    return result


def _shebang(line: str) -> str:
    """The interpreter a script run as a program gets (sbatch runs a job script so, and refuses one
    without): ``#!/bin/sh`` is often dash, ``#!/bin/bash -e`` exits at the first failure,
    ``#!/bin/bash -l`` reads the login profile. Spelled as the kernel reads it: blanks after ``#!``
    skipped, the interpreter, then the rest of the line as one argument, its ends stripped."""
    interpreter, argument = re.fullmatch(r"[ \t]*(\S*)[ \t]*(.*?)[ \t\r]*", line[2:], re.S).groups()  # type: ignore[union-attr]
    return f"{interpreter} {argument}" if argument else interpreter
