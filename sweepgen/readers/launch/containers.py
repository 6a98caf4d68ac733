"""Container wrappers peeled off a launch line: ``apptainer exec`` / ``singularity exec`` and
``enroot start``, each with its options and the image it runs, so that the program inside is
compared as a program (``apptainer exec --nv img.sif python t.py --lr 1`` runs ``t.py``).

Neither tool is installed where sweepgen is tested, so the option tables come from their sources:
apptainer's ``cmd/internal/cli/action_flags.go`` (github.com/apptainer/apptainer, commit 00e9b03:
each flag's name, shorthand and default; a ``bool`` default takes no value) and the flags it
registers from ``cmd/internal/cli`` for the action commands (``--authfile``, ``--docker-*``,
``--pem-path``, ``--passphrase``, ``--no-https``), read by cobra/pflag rules: a value flag takes
the rest of its word (``--bind=/a``, ``-B/a``, ``-B=/a``) or the next word whatever it looks like,
switches bundle (``-ec``), the first word that is not an option is the image and the program
follows it (flags after the image are the program's). enroot's come from ``doc/cmd/start.md``
(github.com/NVIDIA/enroot, commit 085d479): ``enroot start [options] [--] NAME|IMAGE [COMMAND]
[ARG...]``. ``singularity exec`` reads apptainer's options and SingularityCE's own (its
``cmd/internal/cli/action_flags.go`` and ``singularity.go``, github.com/sylabs/singularity, commit
ec04331: the flags registered for the action commands; none of them is one of apptainer's with
another kind or shorthand), since ``singularity`` names either. A line with an option a table
does not hold is not peeled (its words stay the command's, as before): reading an unknown switch
as taking a value, or the reverse, would take the image for a value or a value for the image.

Round eighteen held apptainer's table to its newest source again (commit 917d665, the flags
``action_flags.go`` registers for ``exec``, by its ``DefaultValue``: a ``bool`` a switch, anything
else a value): ``--device``, ``--cdi-dirs``, ``--netns-path`` and ``--no-env`` take a value,
``--sharens``, ``--no-pid``, ``--compat32`` and ``--intel-hpu`` none. ``--oci`` is SingularityCE's
switch (its OCI mode); apptainer registers no flag of that name (an ``apptainer`` that is not
SingularityCE's ``singularity`` refuses it: "unknown flag"), but it is read as the switch it is
wherever it is written, so the image after it stays the image and the program inside is compared
as a program; the flag itself shows as a change (added or removed), never as "no differences".
``--vm*``, ``--authfile``, ``--docker-*``, ``--pem-path``, ``--passphrase`` and ``--no-https``,
which older releases registered, stay: a script for an older apptainer reads as it ran.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

Word = Any  # a word of the command: its text, or a part not evaluated (model.NotEvaluated)

_APPTAINER_VALUES = {
    "--add-caps": "", "--app": "", "--apply-cgroups": "", "--authfile": "", "--bind": "-B",
    "--blkio-weight": "", "--blkio-weight-device": "", "--cdi-dirs": "", "--containlibs": "",
    "--cpu-shares": "", "--cpus": "", "--cpuset-cpus": "", "--cpuset-mems": "", "--cwd": "", "--device": "",
    "--dns": "",
    "--docker-host": "", "--docker-password": "", "--docker-username": "", "--dmtcp-launch": "",
    "--dmtcp-restart": "", "--drop-caps": "", "--env": "", "--env-file": "", "--fusemount": "",
    "--home": "-H", "--hostname": "", "--memory": "", "--memory-reservation": "", "--memory-swap": "",
    "--mount": "", "--netns-path": "", "--network": "", "--network-args": "", "--no-env": "",
    "--no-mount": "", "--overlay": "-o",
    "--pem-path": "", "--pids-limit": "", "--pwd": "", "--scratch": "-S", "--security": "",
    "--tmpdir": "", "--vm-cpu": "", "--vm-ip": "", "--vm-ram": "", "--workdir": "-W",
}  # fmt: skip
_APPTAINER_SWITCHES = {
    "--allow-setuid": "", "--cleanenv": "-e", "--compat": "", "--compat32": "", "--contain": "-c",
    "--containall": "-C", "--disable-cache": "", "--docker-login": "", "--fakeroot": "-f",
    "--ignore-fakeroot-command": "", "--ignore-subuid": "", "--ignore-userns": "", "--intel-hpu": "",
    "--ipc": "-i", "--keep-privs": "", "--net": "-n", "--no-eval": "", "--no-home": "", "--no-https": "",
    "--nohttps": "", "--no-init": "", "--no-nv": "", "--no-pid": "", "--no-privs": "", "--no-rocm": "",
    "--no-umask": "", "--nv": "", "--nvccli": "", "--oci": "", "--oom-kill-disable": "", "--passphrase": "",
    "--pid": "-p", "--rocm": "", "--sharens": "", "--underlay": "", "--unsquash": "", "--userns": "-u",
    "--uts": "", "--vm": "", "--vm-err": "", "--writable": "-w", "--writable-tmpfs": "",
}  # fmt: skip
_SINGULARITYCE_VALUES = {"--data": "", "--proot": ""}
_SINGULARITYCE_SWITCHES = {
    "--keep-layers": "", "--no-compat": "", "--no-oci": "", "--no-setgroups": "", "--no-tmp-sandbox": "",
    "--sif-fuse": "", "--tmp-sandbox": "",
}  # fmt: skip
_ENROOT_VALUES = {"--conf": "-c", "--env": "-e", "--rc": "", "--mount": "-m"}
_ENROOT_SWITCHES = {"--root": "-r", "--rw": "-w"}

# launcher -> (options taking a value, switches), each long name -> its shorthand ("" for none)
TABLES: dict[str, tuple[dict[str, str], dict[str, str]]] = {
    "apptainer exec": (_APPTAINER_VALUES, _APPTAINER_SWITCHES),
    "singularity exec": (
        {**_APPTAINER_VALUES, **_SINGULARITYCE_VALUES},
        {**_APPTAINER_SWITCHES, **_SINGULARITYCE_SWITCHES},
    ),
    "enroot start": (_ENROOT_VALUES, _ENROOT_SWITCHES),
}


class _Line:
    """One container launcher's words being read; ``typed`` types a whole word, ``part`` the value
    attached to one (``--bind=/a``), keeping a word not evaluated so."""

    def __init__(
        self, name: str, words: list[Word], text: Callable[[Word], str], typed: Callable[[Word], Any],
        part: Callable[[Word, str], Any],
    ) -> None:  # fmt: skip
        self.values, self.switches = TABLES[name]
        self.short = {s: long for long, s in (*self.values.items(), *self.switches.items()) if s}
        self.words, self.text, self.typed, self.part = words, text, typed, part
        self.flags: dict[str, Any] = {}

    def option(self, at: int) -> int | None:
        """Read the option at ``at``; the index after it, or None for one the table lacks."""
        word = self.text(self.words[at])
        return self.long(word, at) if word.startswith("--") else self.shorts(word, at)

    def long(self, word: str, at: int) -> int | None:
        key, eq, value = word.partition("=")
        if key in self.switches:
            _add(self.flags, key, self.part(self.words[at], value) if eq else True)
            return at + 1
        if key not in self.values:
            return None
        if eq:
            _add(self.flags, key, self.part(self.words[at], value))
            return at + 1
        return self.next_word(key, at)

    def next_word(self, key: str, at: int) -> int | None:
        if at + 1 >= len(self.words):
            return None
        _add(self.flags, key, self.typed(self.words[at + 1]))
        return at + 2

    def shorts(self, word: str, at: int) -> int | None:
        """A word of shorthands (``-ec``, ``-B/a``, ``-B=/a``, ``-B /a``), as pflag reads it."""
        for index in range(1, len(word)):
            long = self.short.get("-" + word[index])
            if long is None:
                return None
            if long not in self.values:
                _add(self.flags, long, True)
                continue
            rest = word[index + 1 :]
            if rest:
                _add(self.flags, long, self.part(self.words[at], rest.removeprefix("=")))
                return at + 1
            return self.next_word(long, at)
        return at + 1


def read(
    name: str, words: list[Word], at: int, text: Callable[[Word], str], typed: Callable[[Word], Any],
    part: Callable[[Word, str], Any],
) -> tuple[dict[str, Any], int] | None:  # fmt: skip
    """The options of container launcher ``name`` from ``words[at:]``, keyed by their long names,
    with the image under ``@image``; the index of the program's first word. None where a word is
    an option the table does not hold, or no image follows (the line is then not peeled)."""
    line = _Line(name, words, text, typed, part)
    while at < len(words):
        word = text(words[at])
        if word == "--":
            at += 1
            break
        if not word.startswith("-") or word == "-":
            break
        step = line.option(at)
        if step is None:
            return None
        at = step
    if at >= len(words):
        return None
    line.flags["@image"] = typed(words[at])
    return line.flags, at + 1


def _add(flags: dict[str, Any], key: str, value: Any) -> None:
    """A repeated option (``-B /a -B /b``) keeps every value, in order."""
    if key not in flags:
        flags[key] = value
    elif isinstance(flags[key], list):
        flags[key].append(value)
    else:
        flags[key] = [flags[key], value]
