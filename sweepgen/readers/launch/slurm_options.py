"""How Slurm's commands read their options (getopt_long), so that every spelling of one option reads
as one key: ``-N2``, ``-N 2``, ``--nodes=2`` and ``--nodes 2`` are all ``--nodes: 2``.

getopt's rules, as sbatch and srun apply them (checked against srun 22.05):

* a short option that takes a value takes the rest of its word (``-N2``), else the next word,
  whatever it looks like; ``-N=2`` gives the value ``=2`` (srun: '"=2" is not a valid node count'),
  so it is not ``--nodes=2``;
* short options that take no value may share a word: ``-lu`` is ``-l -u``;
* a short option whose value is optional (``-k[=off]``) takes only the rest of its word;
* a long option takes ``--opt=v`` or, when its value is required, the next word (``--opt v``);
* ``--`` ends the options, and so does, for srun, the first word that is not one (the program).

Values stay the strings Slurm parses, except plain decimal integers (``--nodes=2`` is 2): YAML's
typing would make the job names ``0x10`` and ``16``, or ``1e3`` and ``1000.0``, one value.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from sweepgen.readers.model import NotEvaluated

Word = str | NotEvaluated

Pairs = list[tuple[str, Any]]  # (long name, value), in the order given
TakesNext = Callable[[Word], bool]

_DECIMAL = re.compile(r"-?(0|[1-9][0-9]*)")


@dataclass(frozen=True)
class Options:
    """One Slurm command's options, as its man page lists them."""

    short_to_long: dict[str, str]  # "-N" -> "--nodes"
    value: frozenset[str]  # long names that take a value (--nodes=<minnodes>)
    no_value: frozenset[str]  # long names that take none (--label)
    optional_value: frozenset[str]  # long names whose value must be attached (--no-kill[=off])


# the options pyxis (NVIDIA's SPANK plugin for containers) adds to srun and sbatch, from its
# spank_opts table (github.com/NVIDIA/pyxis, args.c): `srun --container-image=IMG python t.py`
PYXIS_VALUES = frozenset({
    "--container-env", "--container-image", "--container-mounts", "--container-name", "--container-save",
    "--container-workdir",
})  # fmt: skip
PYXIS_SWITCHES = frozenset({
    "--container-entrypoint", "--container-entrypoint-log", "--container-mount-home", "--container-readonly",
    "--container-remap-root", "--container-writable", "--no-container-entrypoint",
    "--no-container-mount-home", "--no-container-remap-root",
})  # fmt: skip


def with_pyxis(options: Options) -> Options:
    """A Slurm command's options (its man page) and pyxis's, as a cluster with pyxis reads them."""
    return Options(
        options.short_to_long,
        options.value | PYXIS_VALUES,
        options.no_value | PYXIS_SWITCHES,
        options.optional_value,
    )


def _slurm_value(raw: str) -> int | str:
    """A value as Slurm reads it: a plain decimal integer is a number, anything else its string."""
    return int(raw) if _DECIMAL.fullmatch(raw) else raw


def read_options(
    words: list[Word], start: int, options: Options, takes_next: TakesNext, *, stop_at_operand: bool
) -> tuple[Pairs, int]:
    """``(long name, value)`` for each option in ``words[start:]``, and where they end.

    A word that is not an option ends them when ``stop_at_operand`` (srun's program), else it is kept
    under ``@args``. An option the table does not know (a newer Slurm's) keeps its spelling and takes
    the next word when ``takes_next`` says that word looks like a value."""
    out: Pairs = []
    i = start
    while i < len(words):
        word = words[i]
        text = _text(word)
        if text == "--":
            return out, i + 1
        if not text.startswith("-") or text == "-":
            if stop_at_operand:
                return out, i
            out.append(("@args", _value(word, text)))
            i += 1
            continue
        i = (_long if text.startswith("--") else _short)(words, i, options, takes_next, out)
    return out, i


def _long(words: list[Word], i: int, options: Options, takes_next: TakesNext, out: Pairs) -> int:
    word = words[i]
    text = _text(word)
    name, eq, attached = text.partition("=")
    if isinstance(word, NotEvaluated) and "$" in name:  # `--$OPT=1`: which option is not known
        out.append((text, word))
        return i + 1
    name = _unabbreviated(name, options)
    if eq:
        out.append((name, _value(word, attached)))
        return i + 1
    return _long_value(words, i, name, options, takes_next, out)


def _unabbreviated(name: str, options: Options) -> str:
    """``name`` as getopt_long reads it: an option of the table by its own name, else by the one
    option whose name it begins (``#SBATCH --comm=x`` is ``--comment=x`` to the real sbatch); a
    prefix of several (sbatch: "option '--nod=1' is ambiguous") or of none keeps its spelling."""
    known = options.value | options.no_value | options.optional_value
    if name in known or len(name) < 3:
        return name
    matches = [long for long in known if long.startswith(name)]
    return matches[0] if len(matches) == 1 else name


def _long_value(
    words: list[Word], i: int, name: str, options: Options, takes_next: TakesNext, out: Pairs
) -> int:
    """A long option with nothing attached: the next word is its value when the option takes one
    (or, for an option this Slurm does not list, when ``takes_next`` says so)."""
    if name in options.no_value or name in options.optional_value:
        out.append((name, True))
        return i + 1
    if i + 1 < len(words) and (name in options.value or takes_next(words[i + 1])):
        out.append((name, _value(words[i + 1], _text(words[i + 1]))))
        return i + 2
    out.append((name, True))  # a value missing (getopt refuses it) or an unknown bare flag
    return i + 1


def _short(words: list[Word], i: int, options: Options, takes_next: TakesNext, out: Pairs) -> int:
    word = words[i]
    text = _text(word)
    for at in range(1, len(text)):
        long = options.short_to_long.get("-" + text[at])
        rest = text[at + 1 :]
        if long is None:
            if at == 1:  # an option this Slurm does not know: its word, and a value if one follows
                return _long(words, i, options, takes_next, out)
            out.append(("-" + text[at:], word if isinstance(word, NotEvaluated) else True))
            return i + 1
        if long in options.no_value:
            out.append((long, True))
            continue
        return _short_value(words, i, long, rest, options, out)
    return i + 1


def _short_value(words: list[Word], i: int, long: str, rest: str, options: Options, out: Pairs) -> int:
    """A short option that takes a value: the rest of its word (``-N2``), else the next word; an
    optional value is only ever attached."""
    if rest or long in options.optional_value:
        out.append((long, _value(words[i], rest) if rest else True))
        return i + 1
    if i + 1 < len(words):
        out.append((long, _value(words[i + 1], _text(words[i + 1]))))
        return i + 2
    out.append((long, True))  # getopt: "option requires an argument"; kept, never dropped
    return i + 1


def _value(word: Word, raw: str) -> Any:
    """``raw`` (a part of ``word``) as a value: not evaluated when its word was not."""
    if isinstance(word, NotEvaluated):
        return NotEvaluated(raw, word.where, word.line)
    return _slurm_value(raw)


def _text(word: Word) -> str:
    return word.source if isinstance(word, NotEvaluated) else word


# options Slurm reads as one value, the last one given replacing the earlier (slurm_opt.c sets the
# field each time): `--time=1:00 --time=2:00` is `--time=2:00` (tests/readers/test_sbatch.py holds
# this to the real sbatch); any other option given again keeps every value, in order
# (round eighteen, held the same way: `--gres=gpu:1 --gres=none` is taken where `--gres=none
# --gres=gpu:1` is refused on a cluster without GPUs, by sbatch and srun alike); `--mail-type` is not
# one: its values add up (`BEGIN` then `END` is `BEGIN,END`), so it stays a list
LAST_WINS = frozenset({
    "--array", "--bb", "--begin", "--chdir", "--cluster-constraint", "--comment", "--container",
    "--cores-per-socket", "--cpu-freq", "--cpus-per-task", "--delay-boot", "--dependency", "--error",
    "--exclude", "--exclusive", "--extra-node-info", "--gpu-bind", "--gpu-freq", "--gres", "--input",
    "--job-name", "--mcs-label", "--mem", "--mem-per-cpu", "--mincpus", "--network", "--nice", "--nodes",
    "--ntasks", "--ntasks-per-core", "--ntasks-per-node", "--ntasks-per-socket", "--output", "--qos",
    "--sockets-per-node", "--switches", "--threads-per-core", "--time", "--time-min", "--tmp",
})  # fmt: skip
# options whose value Slurm reads as a decimal number (strtol, base 10): `--nodes=02` is 2 nodes, and
# `--time=05` 5 minutes; a value of other characters (`2-4`, `1:00:00`) stays as written
NUMBERS = frozenset({
    "--cores-per-socket", "--cpus-per-task", "--mincpus", "--nice", "--nodes", "--ntasks",
    "--ntasks-per-core", "--ntasks-per-node", "--ntasks-per-socket",
    "--sockets-per-node", "--threads-per-core", "--time", "--time-min",
})  # fmt: skip
_LEADING_ZEROS = re.compile(r"-?0[0-9]+")


# options Slurm reads as a time limit (parse_time.c, time_str2mins): minutes, mm:ss, hh:mm:ss, d-hh,
# d-hh:mm, d-hh:mm:ss, rounded up to whole minutes; -1, INFINITE and UNLIMITED (any case) are no limit,
# and so is a `--time` of 0 minutes (`0`, `0:0`; `--time-min=0` is refused, as the others are there).
# `--time=60` and `--time=1:00:00` are one limit (tests/readers/test_sbatch.py holds this to the real
# sbatch); a value of any other shape stays as written (a change, never equal)
TIMES = frozenset({"--time", "--time-min"})
# each shape and its fields' seconds (digits few enough that Slurm's int seconds never overflow: a
# longer value stays as written)
_TIME_SHAPES = (
    (re.compile(r"(\d{1,4})-(\d{1,5})(?::(\d{1,5}))?(?::(\d{1,5}))?"), (86400, 3600, 60, 1)),
    (re.compile(r"(\d{1,5}):(\d{1,5}):(\d{1,5})"), (3600, 60, 1)),
    (re.compile(r"(\d{1,7})(?::(\d{1,5}))?"), (60, 1)),
)
_NO_LIMIT = frozenset({"-1", "infinite", "unlimited"})
_ZERO_SECONDS = {"--time": -60, "--time-min": 0}  # what a limit of 0 is (-60: none)
# options Slurm reads as a size in megabytes (str_to_mbytes): a number with no suffix or M is
# megabytes, K rounds up to whole megabytes, G and T are 1024 and 1024**2 (any case, a B after the
# unit allowed: `1GB`); `--mem=1G` and `--mem=1024` are one request (held to the real sbatch); any
# other shape stays as written (`1.5G`, `1GiB`: sbatch refuses them)
SIZES = frozenset({"--mem", "--mem-per-cpu"})  # `--mem-per-gpu` not held (the test cluster has no GPUs)
_SIZE = re.compile(r"(\d{1,12})(?:([kKmMgGtT])[bB]?)?")
_KILOBYTES = {"k": 1, "m": 1024, "g": 1024**2, "t": 1024**3}


def _seconds(value: str) -> int | None:
    """A time limit's seconds as Slurm counts them; None where its shape is not one Slurm documents."""
    for shape, units in _TIME_SHAPES:
        found = shape.fullmatch(value)
        if found:
            return sum(int(field) * unit for field, unit in zip(found.groups("0"), units, strict=True))
    return None


def _time(option: str, value: str) -> str | None:
    """A time limit as `scontrol show job` prints it: ``UNLIMITED``, ``01:00:00``, ``3-00:00:00``."""
    seconds = -60 if value.lower() in _NO_LIMIT else _seconds(value)
    if seconds is None:
        return None
    minutes = -(-(seconds or _ZERO_SECONDS[option]) // 60)
    days, rest = divmod(minutes, 24 * 60)
    clock = f"{rest // 60:02d}:{rest % 60:02d}:00"
    return "UNLIMITED" if minutes < 0 else f"{days}-{clock}" if days else clock


def _size(option: str, value: str) -> str | None:
    """A size as `scontrol show job` prints it: the largest unit that holds it whole (``1000M``,
    ``16G``, ``0``)."""
    shape = _SIZE.fullmatch(value)
    if shape is None:
        return None
    megabytes = -(-int(shape[1]) * _KILOBYTES[shape.groups("m")[1].lower()] // 1024)
    power = next(power for power in (3, 2, 1, 0) if megabytes % 1024**power == 0)
    return f"{megabytes // 1024**power}{'MGTP'[power]}" if megabytes else "0"


_READ = {**dict.fromkeys(TIMES, _time), **dict.fromkeys(SIZES, _size)}


def _number(key: str, value: Any) -> Any:
    """A value as Slurm reads it: a decimal of an option Slurm reads as a number, its leading zeros
    dropped; a time limit or a size as `scontrol show job` prints it (``01:00:00``, ``1G``)."""
    option = key.removeprefix("#SLURM ")
    read = _READ[option](option, str(value)) if option in _READ and type(value) in (int, str) else None
    if read is not None:
        return read
    if option in NUMBERS and type(value) is str and _LEADING_ZEROS.fullmatch(value):
        return int(value)
    return value


def given_again(key: str, old: Any, new: Any) -> Any:
    """The value of an option given ``old`` and then ``new``: the last where Slurm keeps one, else
    every value, in order (and where either was not evaluated: a word an expansion may split)."""
    known = not any(isinstance(v, NotEvaluated) for v in (*(old if isinstance(old, list) else [old]), new))
    if key.removeprefix("#SLURM ") in LAST_WINS and known:
        return new
    return [*old, new] if isinstance(old, list) else [old, new]


def collect(pairs: Pairs) -> dict[str, Any]:
    """The pairs as a mapping; an option given again is its last value where Slurm keeps that
    (``LAST_WINS``), else a list of its values, in order."""
    out: dict[str, Any] = {}
    for key, given in pairs:
        value = _number(key, given)
        out[key] = value if key not in out else given_again(key, out[key], value)
    return out
