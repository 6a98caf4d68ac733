"""Wrappers whose argument is shell code, not a command's words: ``su -c CODE``, ``runuser -c
CODE`` (su's form, without ``-u``), ``script -c CODE``, ``flock FILE -c CODE``, ``sg GROUP [-c]
CODE``, ``watch CMD...`` without ``-x`` (it joins its words with spaces into one ``sh -c``
string) and ``ssh HOST CMD...`` (its words joined with spaces, run by the remote shell). Each is
read as the wrapper's options and operands, then the code, which the shell reader reads as the
script it is (as ``bash -c CODE``), so a change inside is a change of the program it runs, under
that program's name, with the wrapper under ``@launcher``.

The grammars are the tools' own, held to the installed tools in
``tests/readers/test_code_wrappers.py``: su and runuser (util-linux 2.38.1 ``--help``, getopt
without ``+``: an option anywhere before ``--`` is theirs; ``su -c CODE bob a b`` runs the shell
with ``-c CODE a b``, so ``a`` is ``$0``; ``-c`` given twice, the last wins; a lone ``-`` is
``--login``), script (util-linux ``--help``, permuting; one operand, the typescript), flock
(``flock [options] FILE -c CODE``, exactly: options only before FILE), sg (shadow's ``sg [-]
GROUP [[-c] COMMAND]``: words after the command are ignored; ``/bin/sh`` runs it) and watch
(procps-ng, ``+``: its options end at the command). A line with an option a table lacks, a
word not evaluated where an option may be, or another shape is not peeled: its words stay the
wrapper's, as given.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from sweepgen.readers.launch import getopt_wrappers
from sweepgen.readers.launch.getopt_wrappers import TABLES, Table

Word = Any  # a word of the command: its text, or a part not evaluated (model.NotEvaluated)

_SU = Table(
    "c:fg:G:lmpPs:w:hV",
    {k: v for k, v in TABLES["runuser"].long.items() if k != "user"},
    permutes=True,
)
_SCRIPT = Table(
    "aB:c:eE:fhI:m:O:o:qT:t::V",
    {"log-in": ":/I", "log-out": ":/O", "log-io": ":/B", "log-timing": ":/T", "timing": "::/t",
     "logging-format": ":/m", "append": "/a", "command": ":/c", "return": "/e", "flush": "/f",
     "force": "/", "echo": ":/E", "output-limit": ":/o", "quiet": "/q", "help": "/h", "version": "/V"},
    permutes=True,
)  # fmt: skip
_ALIASES = {"m": "preserve-environment"}  # su's `-m` and `-p` are one option
# OpenSSH 9.2's getopt string (ssh.c), held to `ssh -G` in the tests; `-G`, `-N`, `-O`, `-Q`,
# `-V` and `-W` run no command
_SSH = Table("1246ab:c:e:fgi:kl:m:no:p:qstvxAB:CD:E:F:GI:J:KL:MNO:P:Q:R:S:TVw:W:XYy", {})
_SSH_RUNS_NOTHING = frozenset({"-G", "-N", "-O", "-Q", "-V", "-W"})
# runuser's `-u` refuses `-c`; `--session-command` keeps the session (not read here)
_RUNS_NOTHING = frozenset({"--help", "--version", "--user", "--session-command"})


@dataclass(frozen=True)
class Code:
    """A wrapper that runs shell code: its options and operands, the code, and the words the
    shell gets after it (``$0 $1 ...``)."""

    flags: dict[str, Any]
    code: str
    argv: list[Word]


@dataclass(frozen=True)
class Reading:
    """How the words are read: the shell reader's own word functions."""

    text: Callable[[Word], str]
    typed: Callable[[Word], Any]
    part: Callable[[Word, str], Any]
    not_evaluated: Callable[[Word], bool]

    def parse(
        self, table: Table, words: list[Word], aliases: dict[str, str] | None = None
    ) -> tuple[dict[str, Any], list[Word]] | None:
        """``table``'s options after the wrapper's name, and the words its getopt leaves."""
        read = self.text, self.typed, self.part, self.not_evaluated
        return getopt_wrappers.parse(table, words, 1, *read, aliases)

    def code(self, word: Word) -> str | None:
        """A code word's text; None where it is not evaluated (`su -c "$CODE"`)."""
        return None if self.not_evaluated(word) else self.text(word)


def read(name: str, words: list[Word], reading: Reading) -> Code | None:
    """The code wrapper ``name`` (``words[0]``, by its base name) runs; None where the line is
    not read so."""
    reader = _READS.get(name)
    return None if reader is None else reader(words, reading)


def _su(words: list[Word], reading: Reading) -> Code | None:
    """``su``/``runuser`` in su's form: ``[options] [-] [USER [ARGS...]]`` with ``-c CODE``."""
    parsed = reading.parse(_SU, words, _ALIASES)
    if parsed is None:
        return None
    flags, rest = parsed
    code = _last(flags.pop("--command", None))
    return _su_operands(flags, rest, code, reading) if isinstance(code, str) and _runs(flags) else None


def _runs(flags: dict[str, Any]) -> bool:
    """Whether su given ``flags`` runs its ``-c`` code as read here."""
    return not _RUNS_NOTHING & set(flags)


def _su_operands(flags: dict[str, Any], rest: list[Word], code: str, reading: Reading) -> Code | None:
    """su's operands: ``-`` (``--login``), the user, the words its shell gets after the code."""
    if rest[:1] and reading.text(rest[0]) == "-":
        flags["--login"], rest = True, rest[1:]
    if rest:
        flags["@user"], rest = rest[0], rest[1:]
    if any(reading.text(w).startswith("-") or reading.not_evaluated(w) for w in rest):
        return None  # after `--`, an option to the shell itself (`su bob -- -c x`)
    return Code(flags, code, rest)


def _script(words: list[Word], reading: Reading) -> Code | None:
    """``script [options] [FILE]`` with ``-c CODE``."""
    parsed = reading.parse(_SCRIPT, words)
    if parsed is None:
        return None
    flags, rest = parsed
    code = _last(flags.pop("--command", None))
    if not isinstance(code, str) or len(rest) > 1 or not _runs(flags):
        return None
    if rest:
        flags["@file"] = rest[0]
    return Code(flags, code, [])


def _flock(words: list[Word], reading: Reading) -> Code | None:
    """``flock [options] FILE -c CODE``: nothing after the code."""
    parsed = reading.parse(TABLES["flock"], words)
    if parsed is None:
        return None
    flags, rest = parsed
    if len(rest) != 3 or reading.text(rest[1]) not in ("-c", "--command") or set(flags) & {"--command"}:
        return None
    code = reading.code(rest[2])
    return None if code is None else Code({**flags, "@lock": rest[0]}, code, [])


def _sg(words: list[Word], reading: Reading) -> Code | None:
    """``sg [-] GROUP [-c] CODE [ignored...]``: ``/bin/sh -c CODE``."""
    flags: dict[str, Any] = {}
    rest = words[1:]
    if rest[:1] and reading.text(rest[0]) == "-":
        flags["--login"], rest = True, rest[1:]
    if len(rest) > 2 and reading.text(rest[1]) == "-c":
        rest = [rest[0], *rest[2:]]
    if len(rest) < 2 or reading.not_evaluated(rest[0]):
        return None
    code = reading.code(rest[1])
    return None if code is None else Code({**flags, "@group": rest[0]}, code, [])


def _watch(words: list[Word], reading: Reading) -> Code | None:
    """``watch [options] CMD...`` without ``-x``: the words joined with spaces, run by ``sh -c``."""
    parsed = reading.parse(TABLES["watch"], words)
    if parsed is None:
        return None
    flags, rest = parsed
    if not rest or "--exec" in flags or not _runs(flags) or any(map(reading.not_evaluated, rest)):
        return None
    return Code(flags, " ".join(reading.text(w) for w in rest), [])


def _ssh(words: list[Word], reading: Reading) -> Code | None:
    """``ssh [options] HOST [options] CMD...``: OpenSSH reads options before the host and again
    after it, up to the first word that is none; the command's words, joined with spaces, are run
    by the remote user's shell (read as bash). No command (a login), or an option that runs none
    (``-G``, ``-N``, ``-O``...): not peeled."""
    parsed = reading.parse(_SSH, words)
    if parsed is None or not parsed[1] or reading.not_evaluated(parsed[1][0]):
        return None
    flags, (host, *_) = parsed
    after = reading.parse(_SSH, parsed[1])  # the options after the host
    if after is None or not after[1] or any(map(reading.not_evaluated, after[1])):
        return None
    flags = {**flags, **after[0], "@host": host}
    runs = not _SSH_RUNS_NOTHING & set(flags)
    return Code(flags, " ".join(map(reading.text, after[1])), []) if runs else None


def _last(value: Any) -> Any:
    """An option's value; its last, where it was given more than once (the last wins)."""
    return value[-1] if getopt_wrappers.repeated(value) else value


_READS: dict[str, Callable[[list[Word], Reading], Code | None]] = {
    "su": _su, "runuser": _su, "script": _script, "flock": _flock, "sg": _sg, "watch": _watch, "ssh": _ssh,
}  # fmt: skip
NAMES = frozenset(_READS)
