"""Wrappers that run a program, read by their own getopt tables: ``chrt``, ``sudo``, ``flock``,
``xargs``, ``stdbuf``, ``systemd-run``, ``runuser -u``, ``doas``, GNU ``time`` (the program) and
bash's ``exec``, ``command`` and ``time``.

Each parses its words as GNU ``getopt_long`` with a leading ``+`` does (its options end at the
first word that is not one): short switches bundle (``-ec``), a short option's value is the rest
of its word or the next word whatever it looks like, an optional value (``::``) only ever the rest
of its word, a long option takes ``--name=v`` or ``--name v`` and may be written as any start of
its name that begins no other; ``--`` ends the options. Then the operands the wrapper takes before
the command (chrt's priority, flock's lock file) and sudo's ``NAME=value`` words; the command is
what follows. An option is kept under its long name where it has one (``-u bob`` and ``--user=bob``
are one option); options of one exclusive group, of which the last given wins (chrt's policies,
flock's lock kinds, xargs' ``-L``/``-n``), are kept as one key in the order given, so ``chrt -f
-r`` is not ``chrt -r -f``. A line the table does not read (an option it lacks, a value missing, a
word not evaluated where an option may be) or one that runs no command (``chrt -p``, ``sudo -l``,
``command -v``, ``flock ... -c CODE``) is not peeled: its words stay the command's. runuser's getopt has no
``+``: it permutes, so an option anywhere before ``--`` is runuser's, and the other words, in
order, are the command's.

The tables are the tools' own: ``--help`` of chrt and flock (util-linux 2.38.1), xargs (GNU
findutils 4.9.0), stdbuf (GNU coreutils 9.1) and systemd-run as installed here, held to the tools in
``tests/readers/test_getopt_wrappers.py``; sudo's from its source (``src/parse_args.c``, sudo
1.9.17: ``+Aa:BbC:c:D:Eeg:Hh::iKklNnPp:R:r:SsT:t:U:u:Vv`` and ``sudo_long_opts``; sudo is not
installed here); runuser's from util-linux 2.38.1's ``--help``, GNU time's from ``/usr/bin/time
--help`` as installed here, doas' from OpenBSD's ``doas.c`` (``+C:Lnsu:``; not installed here);
bash's builtins from ``help exec``/``help command`` and the ``time`` keyword (bash 5.2: one
``-p``, then an optional ``--``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

Word = Any  # a word of the command: its text, or a part not evaluated (model.NotEvaluated)
GNU_TIME = "time (GNU)"  # the table of `/usr/bin/time`, the program (`time` alone is bash's keyword)


@dataclass(frozen=True)
class Table:
    """One wrapper's getopt table."""

    short: str  # getopt's short spec without the `+`: `a:` takes a value, `a::` an attached one
    long: dict[str, str]  # long name -> "", ":" or "::", and the short letter it stands for after `/`
    operands: tuple[str, ...] = ()  # the keys of the operands before the command
    runs_nothing: frozenset[str] = frozenset()  # keys after which no command runs
    groups: dict[str, str] = field(default_factory=dict)  # key -> the key of its exclusive group
    env_words: bool = False  # sudo: `NAME=value` words before the command
    permutes: bool = False  # getopt without `+` (runuser): an option after the command is still the tool's
    needs: str = ""  # an option without which no command runs as read here (runuser's `--user`)
    not_commands: frozenset[str] = frozenset()  # words where the command stands that start none


def _long(spec: str) -> dict[str, str]:
    """``"fifo/f batch/b sched-runtime:/T"`` as ``{"fifo": "/f", ...}``: each long name, its kind
    and the short letter it shares (none after a lone `/`)."""
    out = {}
    for item in spec.split():
        name, _, letter = item.partition("/")
        kind = name[len(name.rstrip(":")) :]
        out[name.rstrip(":")] = f"{kind}/{letter}"
    return out


def short_keys(table: Table, aliases: dict[str, str] | None = None) -> dict[str, str]:
    """``table``'s short letters -> the long name each stands for (the first listed, where
    aliases share a letter), with ``aliases`` (a letter naming a long option of another kind)."""
    letters = {v.partition("/")[2]: k for k, v in reversed(table.long.items()) if v.partition("/")[2]}
    return {**letters, **(aliases or {})}


_HELP = "help/h version/V"
TABLES: dict[str, Table] = {
    "chrt": Table(
        "bdfiorRT:P:D:ampvhV",
        _long("batch/b deadline/d fifo/f idle/i other/o rr/r reset-on-fork/R sched-runtime:/T "
              "sched-period:/P sched-deadline:/D all-tasks/a max/m pid/p verbose/v " + _HELP),
        operands=("@priority",),
        runs_nothing=frozenset({"--max", "--pid", "--help", "--version"}),
        groups=dict.fromkeys(("--batch", "--deadline", "--fifo", "--idle", "--other", "--rr"), "@policy"),
    ),
    "flock": Table(
        "sexunw:E:oc:FhV",
        _long("shared/s exclusive/x unlock/u nonblock/n nb/n timeout:/w wait:/w conflict-exit-code:/E "
              "close/o command:/c no-fork/F verbose/ " + _HELP),
        operands=("@lock",),
        runs_nothing=frozenset({"--command", "--help", "--version"}),
        not_commands=frozenset({"-c", "--command"}),
        groups=dict.fromkeys(("--shared", "--exclusive", "--unlock"), "@lock kind"),
    ),
    "xargs": Table(
        "0a:E:e::i::I:l::L:n:oprs:txP:d:",
        _long("null/0 arg-file:/a delimiter:/d eof::/e replace::/i max-lines:/L max-args:/n open-tty/o "
              "max-procs:/P interactive/p process-slot-var:/ no-run-if-empty/r max-chars:/s show-limits/ "
              "verbose/t exit/x help/ version/"),
        runs_nothing=frozenset({"--help", "--version"}),
        groups={"--max-lines": "@per command", "-l": "@per command", "--max-args": "@per command",
                "--null": "@delimiter", "--delimiter": "@delimiter"},
    ),
    "stdbuf": Table("i:o:e:", _long("input:/i output:/o error:/e help/ version/"),
                    runs_nothing=frozenset({"--help", "--version"})),
    "systemd-run": Table(
        "hrH:M:E:p:tPqGdSu:",
        _long("help/h version/ user/ system/ scope/ unit:/u description:/ slice:/ slice-inherit/ "
              "remain-after-exit/r send-sighup/ host:/H machine:/M service-type:/ wait/ uid:/ gid:/ "
              "nice:/ setenv:/E property:/p tty/t pty/t pipe/P quiet/q on-active:/ on-boot:/ "
              "on-startup:/ on-unit-active:/ on-unit-inactive:/ on-calendar:/ on-timezone-change/ "
              "on-clock-change/ timer-property:/ path-property:/ socket-property:/ no-block/ "
              "no-ask-password/ collect/G working-directory:/ same-dir/d shell/S"),
        runs_nothing=frozenset({"--help", "--version"}),
    ),
    "sudo": Table(
        "Aa:BbC:c:D:Eeg:Hh::iKklNnPp:R:r:SsT:t:U:u:Vv",
        _long("background/b preserve-env::/E edit/e set-home/H login/i remove-timestamp/K list/l "
              "preserve-groups/P shell/s other-user:/U validate/v askpass/A auth-type:/a bell/B "
              "close-from:/C login-class:/c chdir:/D group:/g help/h host:/ reset-timestamp/k "
              "no-update/N non-interactive/n prompt:/p chroot:/R role:/r stdin/S command-timeout:/T "
              "type:/t user:/u version/V"),
        runs_nothing=frozenset({"--edit", "--list", "--validate", "--help", "--host", "--version",
                                "--remove-timestamp", "--other-user"}),
        env_words=True,
    ),
    # util-linux 2.38.1 `runuser --help` (su-common.c: getopt_long without `+`, so it permutes);
    # without `-u` it is su (a shell), and `-c`, `-f`, `-l`, `-s` refuse `-u`
    "runuser": Table(
        "c:fg:G:lmpPs:u:hVw:",
        _long("user:/u preserve-environment/p whitelist-environment:/w group:/g supp-group:/G login/l "
              "command:/c session-command:/ fast/f shell:/s pty/P " + _HELP),
        runs_nothing=frozenset({"--command", "--session-command", "--fast", "--login", "--shell", "--help",
                                "--version"}),
        permutes=True,
        needs="--user",
        not_commands=frozenset({"-"}),
    ),
    # OpenBSD doas (doas.c: getopt "+C:Lnsu:"; not installed here): `-C` checks a config, `-L`
    # clears a persisted login, `-s` runs a shell
    "doas": Table("C:Lnsu:", {}, runs_nothing=frozenset({"-C", "-L", "-s"})),
    # GNU time (`/usr/bin/time --help`), the program, not bash's keyword: `-f` and `-p` each
    # set the format, the last given wins
    GNU_TIME: Table(
        "af:o:pqvV",
        _long("append/a format:/f output:/o portability/p quiet/q verbose/v help/ version/V"),
        runs_nothing=frozenset({"--help", "--version"}),
        groups=dict.fromkeys(("--format", "--portability"), "@format"),
    ),
    # moreutils' chronic (Perl's getopts('ev'): switches bundle, `--` ends them, the first
    # other word starts the command)
    "chronic": Table("ev", {}),
    # procps-ng `watch --help` (its getopt stops at the command: `watch echo a -n 5` shows `a -n
    # 5`); peeled here only with `-x`, which runs the words as given: without it watch joins them
    # into one `sh -c` string (code_wrappers)
    "watch": Table(
        "bced::ghq:n:pvtwx",
        _long("beep/b color/c differences::/d errexit/e chgexit/g equexit:/q interval:/n precise/p "
              "no-title/t no-wrap/w exec/x help/h version/v"),
        runs_nothing=frozenset({"--help", "--version"}),
        needs="--exec",
    ),
    # bash's builtins (`help exec`, `help command`): bash's own getopt, switches bundle
    "exec": Table("cla:", {}),
    "command": Table("pvV", {}, runs_nothing=frozenset({"-v", "-V"})),
}  # fmt: skip
# short letters that name a long option with another kind (xargs' `-I R` is `--replace=R`)
_ALIASES = {"xargs": {"I": "replace", "E": "eof"}, "runuser": {"m": "preserve-environment"}}
# letter -> the long name it stands for (the first listed, where aliases share a letter)
_SHORT_KEYS = {name: short_keys(table, _ALIASES.get(name)) for name, table in TABLES.items()}
NAMES = frozenset(TABLES) - {GNU_TIME} | {"time", "unbuffer"}  # as a script names them
READ = NAMES | {GNU_TIME}  # the tables read() takes
# bash's own (a builtin, a keyword): only where bash reads the command, never behind another wrapper
SHELL_OWN = frozenset({"exec", "command", "time"})


class _Refused(Exception):
    """A word this reading does not take: the line is not peeled."""


@dataclass
class _Line:
    table: Table
    shorts: dict[str, str]  # letter -> long name
    words: list[Word]
    text: Callable[[Word], str]
    typed: Callable[[Word], Any]
    part: Callable[[Word, str], Any]
    flags: dict[str, Any] = field(default_factory=dict)
    ended: bool = False  # the options ended with `--`

    def add(self, key: str, value: Any) -> None:
        """``key`` given ``value``; a grouped option as ``key`` (or ``key=value``) under its
        group's key; a repeated one keeps every value, in order."""
        group = self.table.groups.get(key)
        if group is not None:
            key, value = group, key if value is True else f"{key}={self.text(value)}"
        if key not in self.flags:
            self.flags[key] = value
        elif isinstance(self.flags[key], _Repeats):
            self.flags[key].append(value)
        else:
            self.flags[key] = _Repeats([self.flags[key], value])

    def long_option(self, at: int) -> int:
        """``--name[=v]`` at ``words[at]``: added; the index after it."""
        written, eq, attached = self.text(self.words[at])[2:].partition("=")
        name = self._long_name(written)
        kind, _, letter = self.table.long[name].partition("/")
        name = self.shorts.get(letter, name)  # one key for an option's every name
        if eq and not kind:
            raise _Refused(name)
        if eq or kind == "::":
            self.add(f"--{name}", self.part(self.words[at], attached) if eq else True)
            return at + 1
        if kind == ":":
            if at + 1 >= len(self.words):
                raise _Refused(name)
            self.add(f"--{name}", self.typed(self.words[at + 1]))
            return at + 2
        self.add(f"--{name}", True)
        return at + 1

    def _long_name(self, written: str) -> str:
        """The long option ``written`` names: itself, else the one option it starts (getopt_long)."""
        if written in self.table.long:
            return written
        starts = {self._option(n): n for n in self.table.long if n.startswith(written)} if written else {}
        if len(starts) != 1:
            raise _Refused(written)  # none, or several options: getopt refuses it
        return next(iter(starts.values()))

    def _option(self, name: str) -> str:
        """What long ``name`` stands for: its short letter's option where it has one, else itself."""
        letter = self.table.long[name].partition("/")[2]
        return self.shorts.get(letter, name)

    def short_options(self, at: int) -> int:
        """A word of bundled short options at ``words[at]``: added; the index after it."""
        letters = self.text(self.words[at])[1:]
        for j, letter in enumerate(letters):
            kind = self._kind(letter)
            key = f"--{self.shorts[letter]}" if letter in self.shorts else f"-{letter}"
            if kind:
                return self._short_value(key, kind, letters[j + 1 :], at)
            self.add(key, True)
        return at + 1

    def _kind(self, letter: str) -> str:
        """``""``, ``":"`` or ``"::"``: whether short option ``letter`` takes a value."""
        found = self.table.short.find(letter)
        if letter == ":" or found < 0:
            raise _Refused(letter)
        after = self.table.short[found + 1 : found + 3]
        return after[: len(after) - len(after.lstrip(":"))]

    def _short_value(self, key: str, kind: str, rest: str, at: int) -> int:
        """A short option that takes a value: the rest of its word, else (a required value) the
        next word; the index after it."""
        if rest or kind == "::":
            self.add(key, self.part(self.words[at], rest) if rest else True)
            return at + 1
        if at + 1 >= len(self.words):
            raise _Refused(key)
        self.add(key, self.typed(self.words[at + 1]))
        return at + 2


class _Repeats(list):  # type: ignore[type-arg]
    """The values of an option given more than once, in order."""


def read(
    name: str, words: list[Word], at: int, text: Callable[[Word], str], typed: Callable[[Word], Any],
    part: Callable[[Word, str], Any], not_evaluated: Callable[[Word], bool],
) -> tuple[dict[str, Any], list[Word]] | None:  # fmt: skip
    """The options and operands of wrapper ``name`` from ``words[at:]``; the words of the command
    it runs. None where the line is not read so (see the module's note)."""
    if name in _OWN_READS:
        return _OWN_READS[name](words, at, text)
    line = _Line(TABLES[name], _SHORT_KEYS[name], words, text, typed, part)
    words_of = _permuted if line.table.permutes else _command
    try:
        command = words_of(line, at, not_evaluated)
    except _Refused:
        return None
    return (line.flags, command) if command and _runs(line, command) else None


def parse(
    table: Table, words: list[Word], at: int, text: Callable[[Word], str], typed: Callable[[Word], Any],
    part: Callable[[Word, str], Any], not_evaluated: Callable[[Word], bool],
    aliases: dict[str, str] | None = None,
) -> tuple[dict[str, Any], list[Word]] | None:  # fmt: skip
    """``table``'s options from ``words[at:]`` as its getopt reads them, and the words it leaves
    (operands, in order; with ``+``, every word after the options); None where it refuses one."""
    line = _Line(table, short_keys(table, aliases), words, text, typed, part)
    try:
        if table.permutes:
            return line.flags, _permuted(line, at, not_evaluated)
        return line.flags, line.words[_options(line, at, not_evaluated) :]
    except _Refused:
        return None


def _command(line: _Line, at: int, not_evaluated: Callable[[Word], bool]) -> list[Word]:
    """The command's words after the options and operands from ``words[at]`` on (getopt's ``+``)."""
    command = _operands(line, _options(line, at, not_evaluated))
    return [] if command is None else line.words[command:]


def _permuted(line: _Line, at: int, not_evaluated: Callable[[Word], bool]) -> list[Word]:
    """The command's words as getopt without ``+`` leaves them: an option anywhere before ``--`` is
    the tool's (``runuser -u bob python t.py -m`` is ``runuser -m -u bob python t.py``), the
    other words the command's, in order, and every word after ``--``."""
    command: list[Word] = []
    while at < len(line.words):
        at = _options(line, at, not_evaluated)
        if line.ended:
            return command + line.words[at:]
        if at < len(line.words):
            command.append(line.words[at])
            at += 1
    return command


def _runs(line: _Line, command: list[Word]) -> bool:
    """Whether the line as read runs a command: no option that runs none, the option a command
    needs given, and no word where the command stands that makes it code (``flock FILE -c CODE``,
    read by ``code_wrappers``; runuser's ``-``, a login shell, refuses ``-u``)."""
    return (
        not line.table.runs_nothing & set(line.flags)
        and (not line.table.needs or line.table.needs in line.flags)
        and line.text(command[0]) not in line.table.not_commands
    )


def _operands(line: _Line, at: int) -> int | None:
    """The operands the wrapper reads before its command (chrt's priority, flock's file) and
    sudo's ``NAME=value`` words, added to ``line``; the index of the command, None if missing."""
    for key in line.table.operands:
        if at >= len(line.words):
            return None
        line.flags[key] = line.typed(line.words[at])
        at += 1
    return _env_words(line, at) if line.table.env_words else at


def _env_words(line: _Line, at: int) -> int:
    """sudo's ``NAME=value`` words before its command, added to ``line``; the index after them."""
    while at < len(line.words) and _assignment(line.text(line.words[at])):
        key, _, value = line.text(line.words[at]).partition("=")
        word = line.words[at]  # the program gets the value as a string: `1.0` is not `1.00`
        line.add(key, value if isinstance(word, str) else line.part(word, value))
        at += 1
    return at


def repeated(value: Any) -> bool:
    """Whether a flag value read here collects an option given more than once."""
    return isinstance(value, _Repeats)


def _options(line: _Line, at: int, not_evaluated: Callable[[Word], bool]) -> int:
    """The options from ``words[at]`` on, added to ``line``; the index after them (and a ``--``)."""
    while at < len(line.words):
        word = line.text(line.words[at])
        if not_evaluated(line.words[at]):
            raise _Refused(word)  # an option, or the command? Its value may be the next word, or none
        if word == "--":
            line.ended = True
            return at + 1
        if not word.startswith("-") or word == "-":
            return at
        at = line.long_option(at) if word.startswith("--") else line.short_options(at)
    return at


def _assignment(word: str) -> bool:
    name, eq, _ = word.partition("=")
    return bool(eq) and name.isidentifier()


def _unbuffer(
    words: list[Word], at: int, text: Callable[[Word], str]
) -> tuple[dict[str, Any], list[Word]] | None:
    """expect's ``unbuffer``, a Tcl script: its one option is ``-p`` as its first word, exactly (no
    bundle, no ``--``: ``unbuffer -- cmd`` runs a program ``--``), then the command."""
    flags = {"-p": True} if at < len(words) and text(words[at]) == "-p" else {}
    at += len(flags)
    return (flags, words[at:]) if at < len(words) else None


def _time(
    words: list[Word], at: int, text: Callable[[Word], str]
) -> tuple[dict[str, Any], list[Word]] | None:
    """bash's ``time`` keyword: one ``-p``, then an optional ``--``, then the command."""
    flags: dict[str, Any] = {}
    if at < len(words) and text(words[at]) == "-p":
        flags["-p"] = True
        at += 1
    if at < len(words) and text(words[at]) == "--":
        at += 1
    return (flags, words[at:]) if at < len(words) else None


_OWN_READS = {"time": _time, "unbuffer": _unbuffer}  # read by their own rules, no getopt table
