"""A command line as data: launchers peeled off, the program named, its flags and overrides nested.

``srun -N 2 torchrun --nproc_per_node 8 -m verl.trainer.main_ppo actor.lr=1e-6 --seed 3`` becomes::

    key  "verl.trainer.main_ppo"
    data {"@launcher": {"srun": {"--nodes": 2}, "torchrun": {"--nproc-per-node": 8}},
          "actor": {"lr": 1e-06}, "--seed": 3}

Rules, chosen so that equivalent spellings read the same and no change can hide:

* a command is keyed by its program: the module after ``-m``, else the script (``train.py``), else
  the command's name, so inserting a command before it shifts nothing;
* the interpreter (``python3.11``, ``/usr/bin/python``) and a launcher given by path are kept as
  spelled, under ``@launcher``: another spelling may be another Python;
* a launcher's options are spelled one way: srun's short options by their long names (srun.py),
  torchrun's and accelerate's hyphen/underscore twins alike (launcher_spelling.py);
* argparse flags keep their dashes; ``--f=v`` and ``--f v`` are the same; the words after a flag
  up to the next flag or override are its value (several make a list); a bare flag is True; a flag
  given again collects its values under ``@repeated`` (never the list several words make);
* Hydra overrides ``a.b=1``, ``+a.b=1``, ``++a.b=1``, ``~a.b`` nest by their dots; the prefix stays
  on the first key (``+a``), since adding and overriding are different requests;
* flag values are typed by YAML 1.2 rules (``1e-5`` and ``0.00001`` are the same float), except
  where a program's ``int()``/``float()`` would differ (``0x10``, ``.inf``, zero-padded ``010`` and
  ``null`` stay words); override
  values, flow lists and dicts included, by Hydra's own grammar (hydravalue.py); words that could
  not be expanded stay not-evaluated nodes;
* words no flag takes are kept in order under ``@args`` (compared aligned by content, so one
  inserted word is one change); after ``--``, a wrapper's command lines (``-- source s.sh \\&\\&
  python train.py --lr 1``) are read as commands of their own under ``--``.
"""

from __future__ import annotations

import bisect
import itertools
import os
import re
from collections.abc import Callable
from typing import Any

import re2

from sweepgen.readers.align import ARGV_ORDER
from sweepgen.readers.launch import (
    argparse_evidence,
    code_wrappers,
    containers,
    envsplit,
    getopt_wrappers,
    launcher_spelling,
    sbatch,
    slurm_options,
    srun,
)
from sweepgen.readers.model import NotEvaluated
from sweepgen.readers.structured import hydravalue

Word = str | NotEvaluated

_PYTHON = re.compile(r"python[0-9.]*")
_NEG_NUMBER = re.compile(r"-(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?")
_OVERRIDE = re.compile(r"(\+\+|\+|~)?([A-Za-z_$][\w\-$]*(?:[./@][\w\-$]+)*)(?:=(.*))?", re.S)

# Flags of each launcher that take no value; any other flag takes the next word unless that word
# is itself a flag or names a program.
_LAUNCHERS: dict[str, set[str]] = {
    "torchrun": {"--standalone", "--no-python", "--run-path", "--virtual-local-rank", "--help"},
    # (`--autotuning` takes `tune` or `run`: runner.py, commit 2d991ba)
    "deepspeed": {"--no_python", "--no_local_rank", "--force_multi", "--save_pid", "--no_ssh",
                  "--no_ssh_check", "--bind_cores_to_rank", "--elastic_training", "--help"},
    "accelerate launch": {"--cpu", "--debug", "--downcast_bf16", "--dynamo_use_dynamic",
                          "--dynamo_use_fullgraph", "--dynamo_use_regional_compilation",
                          "--enable_cpu_affinity", "--help", "--fp8_use_autocast_during_eval",
                          "--multi_gpu", "--no_python", "--no_tpu_cluster",
                          "--quiet", "--same_network", "--tpu", "--tpu_cluster", "--tpu_use_sudo",
                          "--use_deepspeed", "--use_fsdp", "--use_megatron_lm", "--use_parallelism_config",
                          "--use_xpu"},
    "srun": {"--exclusive", "--overlap", "--unbuffered", "-u", "--label", "-l", "--pty", "--quiet",
             "-Q", "--verbose", "-v", "--kill-on-bad-exit", "-K"},
    "uv run": {"--no-sync", "--frozen", "--locked", "--isolated", "--no-project", "--no-dev",
               "--all-extras", "--active", "--no-active", "--offline", "--quiet", "-q"},
    "ray job submit": {"--no-wait", "--verify", "-v"},
    "mpirun": {"--allow-run-as-root", "--oversubscribe", "--bind-to-none"},
    "mpiexec": {"--allow-run-as-root", "--oversubscribe", "--bind-to-none"},
    "nohup": set(),
    "env": {"-i", "--ignore-environment"},
    # coreutils' and util-linux's wrappers (their `--help`; each parses with getopt's `+`, so its
    # options end at the first word that is not one): `timeout` and `taskset` take one operand
    # before the command (`_OPERANDS`), `nice -5` is `nice -n 5`
    "timeout": {"--preserve-status", "--foreground", "-v", "--verbose", "--help", "--version"},
    "taskset": {"-a", "--all-tasks", "-p", "--pid", "-c", "--cpu-list", "-h", "--help", "-V", "--version"},
    "nice": {"--help", "--version"},
    "setsid": {"-c", "--ctty", "-f", "--fork", "-w", "--wait", "-h", "--help", "-V", "--version"},
    "ionice": {"-t", "--ignore", "-h", "--help", "-V", "--version"},
    # numactl's getopt table (numactl.c `opts`, github.com/numactl/numactl; not installed here, so
    # read from its source): the options that take no value, every other one takes one
    "numactl": {"-s", "--show", "-l", "--localalloc", "-H", "--hardware", "-t", "--strict", "-d", "--dump",
                "-D", "--dump-nodes", "-u", "--huge", "-T", "--touch", "-V", "--verify", "-a", "--all",
                "-b", "--balancing"},
    # conda's `run` parser (conda/cli/main_run.py, helpers.add_parser_prefix/_verbose): `-n`,
    # `--name`, `-p`, `--prefix` and `--cwd` take a value; the command is an argparse REMAINDER
    "conda run": {"-v", "--verbose", "--debug", "--trace", "--dev", "--debug-wrapper-scripts", "-s",
                  "--no-capture-output", "--live-stream", "-h", "--help"},
}  # fmt: skip
# options that take two words, a name and its value (Open MPI's `--mca btl tcp`, MPICH's and
# Intel MPI's `-genv NAME VALUE`): kept one key per name, `--mca btl`
_PAIR_FLAGS = dict.fromkeys(
    ("mpirun", "mpiexec"), {"--mca", "--gmca", "--prtemca", "--pmixmca", "-genv", "-env"}
)
_SUBCOMMANDS = {"accelerate launch", "uv run", "conda run"}
# the operand a launcher takes before the command it runs, by the name it is kept under
_OPERANDS = {"timeout": "@duration", "taskset": "@mask"}
_MODULE_FLAGS = {"-m", "--module"}
_MODULE_TWINS = {"torchrun", "accelerate launch"}
_OWN_M = {"numactl"}  # launchers whose `-m` is an option of their own (numactl's `--membind`), no module
_SIMPLE_PROGRAMS = {"bash", "sh", "uv", "env", "nohup", "srun", "torchrun", "deepspeed", "accelerate",
                    "ray", "mpirun", "mpiexec", "timeout", "taskset", "nice", "setsid", "ionice", "conda",
                    "numactl", *getopt_wrappers.NAMES}  # fmt: skip
# Python's own options that take a value (`python -X dev -W ignore -m pkg`).
_PYTHON_VALUE_FLAGS = {"-X", "-W", "--check-hash-based-pycs"}


def _typed(word: Word) -> Any:
    """A word as YAML 1.2 reads a plain scalar: numbers and bools typed, the rest strings; a null
    spelling (`null`, `~`) stays a word, as no argparse ``type=`` makes None of one."""
    if isinstance(word, NotEvaluated):
        return word
    from sweepgen.readers.structured.yamlfile import plain_scalar_12  # noqa: PLC0415 - yamlfile imports PyYAML: only for words that need it (sbatch lines need none)

    if word == "":
        return ""
    value = plain_scalar_12(word)
    return word if value is None or _refused_number(word, value) else value


# `010`: 10 to int() but 8 to YAML 1.1 and a string to Python's literals, JSON and Hydra: most often
# a zero-padded name (a shard, a split, a date), so `010` and `10` stay two words, never one number
_ZERO_PADDED = re.compile(r"[-+]?0[0-9_]")


def _refused_number(word: str, value: Any) -> bool:
    """A number to YAML that a program's ``int()``/``float()`` refuses (`0x10`, `0o17`, `.inf`) or
    that is zero-padded (`010`): the word stays a string, never 16, inf or 10."""
    if not isinstance(value, (int, float)) or isinstance(value, bool):
        return False
    return not _python_reads(word, value) or (isinstance(value, int) and _ZERO_PADDED.match(word) is not None)


def _python_reads(word: str, value: float) -> bool:
    """Does Python's ``int()``/``float()`` (what argparse's ``type=`` calls) read ``word`` as ``value``?"""
    try:
        parsed = int(word) if isinstance(value, int) else float(word)
    except ValueError:
        return False
    return parsed == value or (parsed != parsed and value != value)


def _override_value(word: Word, where: str, line: int) -> Any:
    """A Hydra override's value as Hydra reads it (``hydravalue``): typed by its grammar, flow
    lists and dicts item by item, ``a,b`` a sweep; what Hydra refuses or computes stays source."""
    if isinstance(word, NotEvaluated):
        return word
    try:
        return hydravalue.read_value(word)
    except hydravalue.Refused:
        return NotEvaluated(word, where, line)


def _text(word: Word) -> str:
    return word.source if isinstance(word, NotEvaluated) else word


def is_flag(word: Word) -> bool:
    text = _text(word)
    return text.startswith("-") and len(text) > 1 and not _NEG_NUMBER.fullmatch(text)


def _looks_like_program(word: Word) -> bool:
    text = _text(word)
    base = os.path.basename(text)
    return bool(_PYTHON.fullmatch(base)) or base in _SIMPLE_PROGRAMS or base.endswith((".py", ".sh"))


def _launcher_name(words: list[Word]) -> tuple[str, int] | None:
    """The launcher at the head of ``words`` and how many words name it."""
    if not words:
        return None
    head = os.path.basename(_text(words[0]))
    named = _subcommand_launcher(head, words)
    if named is not None:
        return named
    if (head in _LAUNCHERS or head in getopt_wrappers.NAMES) and " " not in head:
        return head, 1
    return None


def _subcommand_launcher(head: str, words: list[Word]) -> tuple[str, int] | None:
    """A launcher named by a program and its subcommand (``accelerate launch``, ``uv run``,
    ``ray job submit``) and how many words that takes."""
    second = _text(words[1]) if len(words) > 1 else ""
    if f"{head} {second}" in _SUBCOMMANDS or f"{head} {second}" in containers.TABLES:
        return f"{head} {second}", 2
    if head == "ray" and second == "job" and len(words) > 2 and _text(words[2]) == "submit":
        return "ray job submit", 3
    return None


def split_launchers(words: list[Word], assigned: bool = False) -> tuple[dict[str, Any], list[Word]]:
    """Peel launchers off ``words``: ({launcher: its flags}, the inner command's words).
    ``assigned``: the command had ``NAME=value`` words before it, so a ``time`` there is no
    keyword of bash's but the program (``A=1 time -f x cmd`` runs ``/usr/bin/time``)."""
    launchers: dict[str, Any] = {}
    while True:
        found = _launcher_name(words)
        if found is None:
            return launchers, words
        name, used = found
        name = _program_named(name, words, bool(launchers) or assigned)
        read = _wrapper_read(name, words, used)
        if read is None:  # a builtin's name behind a wrapper; an option a table lacks: the command's words
            return launchers, words
        flags, rest, module = read
        key = _as_written(name, words)
        launchers[key if key not in launchers else f"{key} #{len(launchers) + 1}"] = flags
        words = _split_string(name, flags, rest)
        if module is not None:
            # `torchrun -m pkg.mod`: the inner program is a module, as with `python -m`, run by
            # the launcher's own interpreter (so no interpreter of its own is recorded)
            return launchers, [_LauncherPython("python"), "-m", module, *words]


def _program_named(name: str, words: list[Word], not_first: bool) -> str:
    """``name``, or ``""`` where it names one of bash's builtins but is none there (behind a
    wrapper, as a path), or GNU time's table where ``time`` is no keyword of bash's (behind a
    wrapper or ``NAME=value`` words, as a path: ``/usr/bin/time -v``)."""
    if name not in getopt_wrappers.SHELL_OWN or not (not_first or _text(words[0]) != name):
        return name
    return getopt_wrappers.GNU_TIME if name == "time" else ""


def _wrapper_read(
    name: str, words: list[Word], used: int
) -> tuple[dict[str, Any], list[Word], Word | None] | None:
    """A launcher's flags, the words of the command it runs and the module it runs (``torchrun -m``);
    None where the launcher is not peeled."""
    if not name:
        return None
    if name in _TABLE_READS:
        return _TABLE_READS[name](name, words, used)
    flags, i, module = _launcher_flags(name, words, used)
    return flags, words[i:], module


def _srun_read(name: str, words: list[Word], used: int) -> tuple[dict[str, Any], list[Word], None]:
    pairs, i = slurm_options.read_options(words, used, srun.READ, _option_value, stop_at_operand=True)
    return slurm_options.collect(pairs), words[i:], None


def _container_read(
    name: str, words: list[Word], used: int
) -> tuple[dict[str, Any], list[Word], None] | None:
    """A container's options (its own table) and the words of its command; None where the table
    does not read the line."""
    read = containers.read(name, words, used, _text, _typed, _part)
    return None if read is None else (read[0], words[read[1] :], None)


def _getopt_read(name: str, words: list[Word], used: int) -> tuple[dict[str, Any], list[Word], None] | None:
    """A getopt tool's options (``getopt_wrappers``) and the words of its command; None where
    its table does not read the line."""
    got = getopt_wrappers.read(name, words, used, _text, _typed, _part, _not_evaluated)
    if got is None:
        return None
    flags, command = got
    return {k: _Repeated(v) if getopt_wrappers.repeated(v) else v for k, v in flags.items()}, command, None


_TABLE_READS: dict[str, Callable[[str, list[Word], int], tuple[dict[str, Any], list[Word], None] | None]] = {
    "srun": _srun_read,
    **dict.fromkeys(containers.TABLES, _container_read),
    **dict.fromkeys(getopt_wrappers.READ, _getopt_read),
}


def _not_evaluated(word: Word) -> bool:
    return isinstance(word, NotEvaluated)


_SPLIT_FLAGS = {"-S", "--split-string"}  # env's, whose value is a command line (no other table has them)


def _split_string(name: str, flags: dict[str, Any], rest: list[Word]) -> list[Word]:
    """``env -S "A=1 python t.py --lr 1"``: the words env splits the string into by its own rules
    (``envsplit``: quotes, escapes, comments), read as given in its place (taken out of ``flags``:
    its options and ``NAME=value`` words are env's, ``env -S "python t.py"`` is ``env python
    t.py``), then ``rest``; the words env runs. A string env refuses, or one holding a ``${VAR}``
    from env's own environment, is kept as env's option, as written."""
    key = "-S" if "-S" in flags else "--split-string"
    value = flags.get(key) if name == "env" else None
    split = envsplit.split(value) if isinstance(value, str) else None
    if split is None or not all(known for _, known in split):
        return rest
    del flags[key]
    words: list[Word] = ["env", *(text for text, _ in split), *rest]
    more, i, _ = _launcher_flags("env", words, 1)
    for option, given in more.items():
        _add(flags, option, given)
    return words[i:]


class _LauncherPython(str):
    """The interpreter a launcher runs ``-m pkg`` with: its own, not one the script names."""

    __slots__ = ()


def _as_written(name: str, words: list[Word]) -> str:
    """A launcher's key with its program as the script spells it: `/opt/venv/bin/torchrun` is
    another install than the `torchrun` on PATH, so the two never read as one; GNU time run by
    its bare name is `time (GNU)`, never bash's keyword `time`."""
    written = _text(words[0])
    if name == getopt_wrappers.GNU_TIME:  # the program, never bash's keyword of the same name
        return getopt_wrappers.GNU_TIME if written == "time" else written
    return written + name[len(os.path.basename(written)) :]


def _part(word: Word, value: str) -> Any:
    """``value``, a part of ``word``, typed; not evaluated when its word was not."""
    return NotEvaluated(value, word.where, word.line) if isinstance(word, NotEvaluated) else _typed(value)


def _option_value(word: Word) -> bool:
    """Whether the word after a launcher option that is not known to take no value (or one srun's
    manual does not list) is that option's value: not a flag, a program or ``--``."""
    return not is_flag(word) and not _looks_like_program(word) and _text(word) != "--"


def _launcher_flags(name: str, words: list[Word], i: int) -> tuple[dict[str, Any], int, Word | None]:
    """The flags of launcher ``name`` from ``words[i:]``, where its command starts, and the module
    it runs when it is given one (``torchrun -m pkg``)."""
    booleans = _LAUNCHERS[name]
    flags: dict[str, Any] = {}
    while i < len(words):
        word = words[i]
        if not is_flag(word):
            if not _launcher_word(name, word, flags):
                break
            i += 1
            continue
        text = launcher_spelling.respell(name, _text(word))
        if text == "--":
            return flags, _separator_end(name, words, i, flags), None
        if _operand_given(name, flags):
            break  # `env A=1 -i cmd`, `timeout 10 -s KILL cmd`: options ended, `-i` is the command
        if _runs_module(name, text) and i + 1 < len(words):
            # kept: `accelerate launch -m pkg.t` runs a module, `accelerate launch pkg.t` a file
            # torchrun and accelerate register `-m` and `--module` as one option: one spelling
            flags["--module" if name in _MODULE_TWINS else text] = True
            return flags, i + 2, words[i + 1]
        i = _pair_flag(name, flags, text, words, i) or _launcher_flag(flags, text, words, i, booleans)
        if name == "env" and text.partition("=")[0] in _SPLIT_FLAGS:
            break  # env runs the words `-S` splits, then the rest: `env -S "python t.py" --lr 1`
    return flags, i, None


def code_wrapper(words: list[Word]) -> tuple[str, code_wrappers.Code] | None:
    """``su -c CODE``, ``script -c``, ``flock FILE -c``, ``sg GROUP CODE``, ``watch CMD...``: the
    wrapper's key (as the script spells it) and what it runs; None for any other line."""
    if not words or isinstance(words[0], NotEvaluated):
        return None
    name = os.path.basename(words[0])
    reading = code_wrappers.Reading(_text, _typed, _part, _not_evaluated)
    found = code_wrappers.read(name, words, reading) if name in code_wrappers.NAMES else None
    if found is None:
        return None
    flags = {k: _Repeated(v) if getopt_wrappers.repeated(v) else v for k, v in found.flags.items()}
    return words[0], code_wrappers.Code(flags, found.code, found.argv)


def _shell_option(word: Word) -> bool:
    return not isinstance(word, NotEvaluated) and word[:1] in "-+" and word not in ("-", "+", "--")


def shell_command_string(words: list[Word]) -> tuple[dict[str, Any], int] | None:
    """``bash -c CODE`` with the shell's other options around ``-c`` (``bash -lc``, ``bash -e -c``,
    ``bash -o pipefail -c``, ``bash --norc -c``, ``bash -c -- CODE``), as bash reads them: every
    option before the first word that is none, ``-c`` anywhere among them (``bash -eo pipefail -c``
    included). The options but ``-c`` and the index of the command string; None where there is no
    ``-c``."""
    options: dict[str, Any] = {}
    has_c, i = False, 1
    while i < len(words) and _shell_option(words[i]):
        step = _shell_word(words, i, options)
        if step is None:
            return None
        has_c, i = has_c or step[1], i + step[0]
    return _command_string_at(words, i + (words[i : i + 1] == ["--"]), options) if has_c else None


def _command_string_at(
    words: list[Word], i: int, options: dict[str, Any]
) -> tuple[dict[str, Any], int] | None:
    """``options`` and ``i`` where ``words[i]`` is a command string bash is given, else None."""
    return (options, i) if i < len(words) and not isinstance(words[i], NotEvaluated) else None


def _shell_word(words: list[Word], i: int, options: dict[str, Any]) -> tuple[int, bool] | None:
    """The shell option at ``words[i]`` added to ``options`` (``-c`` aside): how many words it
    takes and whether it holds ``-c``. Each ``o``/``O`` of a bundle takes the next word in turn,
    as bash reads them (``-eo pipefail`` is ``-e -o pipefail``); ``-o errexit`` is ``-e``. None
    where an ``o`` has no word left to take."""
    word = _text(words[i])
    if word.startswith("--"):
        _add(options, word, True)
        return 1, False
    used, has_c = 1, False
    for letter in word[1:]:
        if letter in "oO":
            if not _shell_option_name(words, i + used, f"{word[0]}{letter}", options):
                return None
            used += 1
        elif letter == "c":
            has_c = True
        else:
            _add(options, f"{word[0]}{letter}", True)
    return used, has_c


def _shell_option_name(words: list[Word], at: int, option: str, options: dict[str, Any]) -> bool:
    """``-o NAME`` (``+o``, ``-O``) with its name from ``words[at]`` added to ``options``, ``-o
    errexit`` as ``-e``; False where no name (known) is there to take."""
    if at >= len(words) or isinstance(words[at], NotEvaluated):
        return False
    name = _text(words[at])
    short = _SET_O.get(name) if option[1] == "o" else None
    _add(options, f"{option[0]}{short}" if short else f"{option} {name}", True)
    return True


# `set -o NAME` names of bash's one-letter options (`help set`): `-o errexit` is `-e`
_SET_O = {
    "allexport": "a", "braceexpand": "B", "errexit": "e", "errtrace": "E", "functrace": "T",
    "hashall": "h", "histexpand": "H", "keyword": "k", "monitor": "m", "noclobber": "C",
    "noexec": "n", "noglob": "f", "notify": "b", "nounset": "u", "onecmd": "t", "physical": "P",
    "privileged": "p", "verbose": "v", "xtrace": "x",
}  # fmt: skip


def _launcher_word(name: str, word: Word, flags: dict[str, Any]) -> bool:
    """A word among a launcher's flags that is not one: env's ``NAME=value``, or anything before
    ray's ``--`` (a stray word is ray's too); False where the launched command starts."""
    text = _text(word)
    if name == "env" and "=" in text and not text.startswith("-"):
        key, _, value = text.partition("=")
        flags[key] = value
        return True
    if name == "ray job submit":
        _add(flags, "@args", _typed(word))
        return True
    return _wrapper_operand(name, word, flags)


def _runs_module(name: str, flag: str) -> bool:
    """Whether ``flag`` of launcher ``name`` names a module it runs (``torchrun -m pkg``)."""
    return flag in _MODULE_FLAGS and name not in _OWN_M


def _separator_end(name: str, words: list[Word], i: int, flags: dict[str, Any]) -> int:
    """Where the command starts at a launcher's ``--`` (``words[i]``): at the ``--`` itself after
    an operand (``env A=1 -- cmd``, ``timeout 10 -- cmd``: options ended before, ``--`` is the
    command), else after it and the operands the launcher still reads."""
    if _operand_given(name, flags):
        return i
    return _after_separator_operands(name, words, i + 1, flags)


def _after_separator_operands(name: str, words: list[Word], i: int, flags: dict[str, Any]) -> int:
    """After a wrapper's ``--``, the operands it still reads before its command (``env --
    A=1 cmd``, ``timeout -- 10 cmd``); the index where the command starts."""
    if name not in _OPERANDS and name != "env":
        return i
    while i < len(words) and _launcher_word(name, words[i], flags):
        i += 1
    return i


def _operand_given(name: str, flags: dict[str, Any]) -> bool:
    """Whether a wrapper that stops reading options at its first operand (getopt's `+`: env's
    ``NAME=value``, timeout's duration, taskset's mask) has read one: a ``--`` after it is no
    option, but the command it runs."""
    if name == "env":
        return any(not key.startswith("-") for key in flags)
    return _OPERANDS.get(name) in flags


def _wrapper_operand(name: str, word: Word, flags: dict[str, Any]) -> bool:
    """The operand a coreutils/util-linux wrapper takes before its command (``timeout 10``,
    ``taskset 0x3``, ``nice -5``), added to ``flags``; False where the command starts."""
    text = _text(word)
    operand = _OPERANDS.get(name)
    if operand is not None and operand not in flags:
        flags[operand] = _typed(word)  # `timeout 10 python t.py`: 10 is timeout's, not the command
        return True
    return name == "nice" and _nice_adjustment(text, flags)


def _nice_adjustment(text: str, flags: dict[str, Any]) -> bool:
    """``nice -5`` is ``nice -n 5``, as coreutils reads it: added to ``flags``, where it is one."""
    if "-n" in flags or not _NEG_NUMBER.fullmatch(text):
        return False
    flags["-n"] = _typed(text[1:])
    return True


def _pair_flag(name: str, flags: dict[str, Any], text: str, words: list[Word], i: int) -> int:
    """An option of two words at ``words[i]`` (``--mca btl tcp``) added to ``flags`` as
    ``--mca btl: "tcp"``; the index after it, or 0 where ``text`` is none or its words are missing."""
    if text not in _PAIR_FLAGS.get(name, ()) or i + 2 >= len(words):
        return 0
    _add(
        flags, f"{text} {_text(words[i + 1])}", words[i + 2]
    )  # a string, as MPI passes it: `1.0` is not `1.00`
    return i + 3


def _launcher_flag(flags: dict[str, Any], text: str, words: list[Word], i: int, booleans: set[str]) -> int:
    """One launcher flag at ``words[i]`` (spelled ``text``) added to ``flags``: ``--k=v``, a flag
    and the word after it when that is its value, or a flag that takes none; the index after it."""
    if text.startswith("--") and "=" in text:
        key, _, value = text.partition("=")
        _add(flags, key, _part(words[i], value))
        return i + 1
    if text not in booleans and i + 1 < len(words) and (_option_value(words[i + 1]) or text in _SPLIT_FLAGS):
        _add(flags, text, _typed(words[i + 1]))
        return i + 2
    _add(flags, text, True)
    return i + 1


def program(words: list[Word], launchers: dict[str, Any]) -> tuple[str, list[Word]]:
    """The program's identity and its own arguments. The interpreter joins the launchers as the
    script spells it, with its options (``python3.11 -u`` is ``{"python3.11": {"-u": true}}``):
    ``python``, ``python3`` and ``/usr/bin/python`` may be different Pythons, never one."""
    if not words:
        return "(empty)", []
    head = _text(words[0])
    if not _PYTHON.fullmatch(os.path.basename(head)):
        return head, words[1:]
    options, rest = _python_options(words)
    if not isinstance(words[0], _LauncherPython):
        launchers[head if head not in launchers else f"{head} #{len(launchers) + 1}"] = options
    return _python_program(head, rest)


def _python_options(words: list[Word]) -> tuple[dict[str, Any], list[Word]]:
    """The interpreter's own options (``python -u -X dev``) and the words from what it runs on, read
    by CPython's getopt: switches bundle (``-uB``), ``-W``/``-X`` take the rest of their word or the
    next one (``-Wignore`` is ``-W ignore``), and ``-m``/``-c`` end the options the same way
    (``-um pkg``, ``-mpkg`` are ``-u -m pkg``)."""
    options: dict[str, Any] = {}
    i = 1
    while i < len(words) and is_flag(words[i]) and _text(words[i]) not in ("-m", "-c"):
        text = _text(words[i])
        if text in _PYTHON_VALUE_FLAGS and i + 1 < len(words):
            _add(options, text, _typed(words[i + 1]))
            i += 2
            continue
        if not isinstance(words[i], str) or text.startswith("--"):
            _add(options, text, True)  # a word not known is never split on its source
            i += 1
            continue
        ends, i = _python_bundle(text[1:], words, i, options)
        if ends is not None:
            return options, [*ends, *words[i:]]
    return options, words[i:]


def _python_bundle(
    letters: str, words: list[Word], i: int, options: dict[str, Any]
) -> tuple[list[Word] | None, int]:
    """One word of bundled short options (``-uB``, ``-Wignore``, ``-um``): those it sets added to
    ``options``; the ``-m``/``-c`` it ends with and its value, if any; the index after it."""
    for j, letter in enumerate(letters):
        if letter not in "cmWX":
            _add(options, f"-{letter}", True)
            continue
        rest = letters[j + 1 :]
        value: Word | None = rest if rest else (words[i + 1] if i + 1 < len(words) else None)
        if value is None:
            _add(options, f"-{letter}", True)  # CPython refuses it: kept as written
            return None, i + 1
        after = i + 1 if rest else i + 2
        if letter in "cm":
            return [f"-{letter}", value], after
        _add(options, f"-{letter}", _typed(value))
        return None, after
    return None, i + 1


def _python_program(head: str, words: list[Word]) -> tuple[str, list[Word]]:
    """What the interpreter runs, from ``words``: a module (``-m``), a command string (``-c``, keyed
    by the interpreter), a script, or nothing (a bare ``python``)."""
    option = _text(words[0]) if len(words) > 1 else None
    if option == "-m":
        return _text(words[1]), words[2:]
    if option == "-c":
        return f"{head} -c", words[1:]
    if words:
        return _text(words[0]), words[1:]
    return head, []


def sbatch_arguments(
    words: list[Word], where: str, lines: list[int]
) -> tuple[dict[str, Any], dict[str, int]]:
    """``sbatch [options] SCRIPT [ARGS]``: sbatch's options (getopt, as ``#SBATCH`` lines read
    them) end at the script; what follows is the script's own ``$1...`` (``@argv``), so
    ``sbatch job.sh --nodes=2`` asks for no node count and passes the script ``--nodes=2``."""
    pairs, i = slurm_options.read_options(words, 0, sbatch.READ, _option_value, stop_at_operand=True)
    out = slurm_options.collect(pairs)
    at = dict.fromkeys(out, lines[0]) if lines else {}
    if i < len(words):
        out["@script"] = words[i]
        at["@script"] = lines[i]
        argv, _ = parse_arguments(words[i + 1 :], where, lines[i + 1 :], _text(words[i]))
        if argv:
            out["@argv"] = argv
    return out, at


def parse_arguments(
    words: list[Word], where: str, lines: list[int], program: str | None = None
) -> tuple[dict[str, Any], dict[str, int]]:
    """argparse flags and Hydra overrides as a nested mapping; the line of each top-level key.
    With ``program`` named, the order its flags were given in (``argv_order``)."""
    out: dict[str, Any] = {}
    at: dict[str, int] = {}
    overrides: list[tuple[str, str]] = []  # (prefix, dotted key) of each Hydra override, in order
    spreads: list[tuple[str, int]] = []  # each spread, with how many overrides came before it
    flags: list[str] = []  # each flag's name, and each spread, in order
    placed: list[str] = []  # each flag's name and each positional's place (`@args[0]`), in order
    i = 0
    while i < len(words):
        word, line = words[i], lines[i]
        text = _text(word)
        if text == "--":
            _after_separator(out, at, words[i + 1 :], where, lines[i + 1 :], line)
            break
        if _spread(word):
            _add(out, text, word)  # its own key: never a flag's value
            at.setdefault(text, line)
            spreads.append((text, len(overrides)))
            flags.append(text)
            placed.append(text)
            i += 1
        elif is_flag(word):
            flags.append(text.partition("=")[0] if text.startswith("--") else text)
            placed.append(flags[-1])
            i = _flag(out, at, words, i, where, line)
        else:
            override = _override_or_positional(out, at, word, where, line)
            overrides.extend(override)
            if not override:
                placed.append(f"@args[{len(out['@args']) - 1}]")
            if not override and _quoted_spread(word):  # `"$@"`: a positional, but it may hold overrides
                spreads.append((text, len(overrides)))
            i += 1
    _note_override_order(out, overrides)
    _note_spread_place(out, overrides, spreads)
    _note_abbreviation_order(out, flags)
    argv_order(out, program, flags, where, placed)
    return out, at


# Programs known to read their flags with a parser to which their order is no matter (argparse,
# click, TRL's TrlParser), but for a flag and its negation (`--bf16 --no_bf16`: the last wins)
_KNOWN_PARSERS = {"sweepgen", "trl", "sweepgen_trainer.eval", "accelerate", "lm_eval"}
_KNOWN_PREFIXES = ("trl.scripts.", "trl.cli", "openrlhf.cli.")


def _known_parser(program: str) -> bool:
    return program in _KNOWN_PARSERS or program.startswith(_KNOWN_PREFIXES)


def argv_order(
    out: dict[str, Any],
    program: str | None,
    flags: list[str],
    where: str = "",
    placed: list[str] | None = None,
) -> None:
    """A script reading ``sys.argv`` sees its flags in the order given, so unless ``program`` is
    known to parse them with argparse, click or TrlParser, that order is kept, ``@argv order``
    (``--a, --b``: ``t.py --a 1 --b 2`` is not ``t.py --b 2 --a 1``; a diff compares the order of
    the flags both sides give, ``align.reconcile_argv_orders``, so an inserted flag is one change);
    for a known parser only a flag given after its negation, or the reverse (``--no_bf16 after
    --bf16``: the last wins), and a flag after a spread that may hold it. A program the script in
    ``where`` runs whose own source shows it reads its flags with argparse alone counts as known
    (``argparse_evidence``)."""
    if program is None:
        return  # an array of flags, not yet a command
    placed = flags if placed is None else placed
    if len(set(placed)) < 2 or not flags:
        return  # one flag, or one given again (`@repeated` keeps those in order): no order to see
    if not _known_parser(program) and not argparse_evidence.order_free(program, where):
        out[ARGV_ORDER] = list(placed)  # compared by the order of the flags both sides give
        return
    after = [*_negations(flags), *_after_spreads(flags)]
    if after:
        out.setdefault("@flag order", []).extend(after)


def _negations(flags: list[str]) -> list[str]:
    """``--no_x after --x`` (or ``--x after --no-x``) for each flag given after its negation."""
    seen: dict[str, str] = {}  # a flag's plain name (no `no`, `_` as `-`) -> the last spelling given
    notes = []
    for flag in flags:
        plain = flag.replace("_", "-")
        base = plain.removeprefix("--no-") if plain.startswith("--no-") else plain
        key = "--" + base.removeprefix("--")
        earlier = seen.get(key)
        if earlier is not None and earlier.replace("_", "-") != plain:
            notes.append(f"{flag} after {earlier}")
        seen[key] = flag
    return notes


def _after_spreads(flags: list[str]) -> list[str]:
    """``--lr after "$@"``: a flag given after a spread, which may hold that flag (the last wins)."""
    notes = []
    spread = None
    for flag in flags:
        if not flag.startswith("-"):
            spread = flag
        elif spread is not None:
            notes.append(f"{flag} after {spread}")
    return notes


def _started(seen: list[str], at: int, name: str) -> list[str]:
    """The names of sorted ``seen`` from ``at`` on that ``name`` starts, itself left out."""
    return [other for other in itertools.takewhile(lambda o: o.startswith(name), seen[at:]) if other != name]


def _long_flag(name: str) -> bool:
    return name.startswith("--")


def _note_abbreviation_order(out: dict[str, Any], flags: list[str]) -> None:
    """argparse (allow_abbrev, its default) reads a long flag by any start of its name, so a flag
    given after a longer one it starts (``--learning_rate 1 --learning 2``) may be that option
    given again, the later value winning: such a flag is kept, ``@flag order`` (``--learning after
    --learning_rate``), so ``--learning 2 --learning_rate 1`` is not the same command. Which flags a
    program has is in its code: where the two are options of their own this is noise, and a flag
    written before the longer ones it starts (the usual ``--lr 1 --lr-decay 0.9``) adds none."""
    seen: list[str] = []  # the names so far, sorted: those a name starts follow it
    after: list[str] = []
    for name in filter(_long_flag, flags):
        at = bisect.bisect_left(seen, name)
        longer = _started(seen, at, name)
        if longer:
            after.append(f"{name} after {', '.join(longer)}")
        if at == len(seen) or seen[at] != name:
            seen.insert(at, name)
    if after:
        out["@flag order"] = after


def _note_spread_place(
    out: dict[str, Any], overrides: list[tuple[str, str]], spreads: list[tuple[str, int]]
) -> None:
    """A spread (``"$@"``, ``${ARGS[@]}``) may hold overrides of its own, and Hydra applies them in
    order: the overrides written after it win over its own, those before give way. The overrides
    after each spread are kept, ``@overrides after`` (``"$@" a.b=1`` is not ``a.b=1 "$@"``); the
    usual launch line, its spread last, has none, so an override inserted before it is one change."""
    after: dict[str, str] = {}
    for text, count in spreads:
        if count < len(overrides):
            key = text if text not in after else f"{text} #{sum(k.split(' #')[0] == text for k in after) + 1}"
            after[key] = ", ".join(prefix + dotted for prefix, dotted in overrides[count:])
    if after:
        out["@overrides after"] = after


def _note_override_order(out: dict[str, Any], overrides: list[tuple[str, str]]) -> None:
    """Hydra applies overrides in order: ``a.b=1 ++a.b=2`` sets 2, ``++a.b=2 a.b=1`` sets 1, and
    ``~a.b`` before or after ``++a.b=3`` keeps or drops it. Overrides of other prefixes that touch
    one path (the same key, or one inside the other) are keyed apart (``a``, ``++a``), so their
    order is kept beside them, ``@order`` (``a.b, ++a.b``); one prefix's repeats are ordered
    already (``@repeated``). Linear in the overrides: each path and its ancestors are looked up."""
    if len({prefix for prefix, _ in overrides}) < 2:
        return  # one prefix (the usual launch line): nothing keyed apart
    at: dict[str, set[str]] = {}  # path -> the prefixes of the overrides of exactly that path
    below: dict[str, set[str]] = {}  # path -> the prefixes of the overrides at or inside it
    for prefix, dotted in overrides:
        at.setdefault(dotted, set()).add(prefix)
        for ancestor in _ancestors(dotted):
            below.setdefault(ancestor, set()).add(prefix)
    touching = [
        prefix + dotted
        for prefix, dotted in overrides
        if below[dotted] - {prefix} or any(at.get(a, set()) - {prefix} for a in _ancestors(dotted))
    ]
    if touching:  # one value, so one move is one change (a key holds no `,` or blank)
        out["@order"] = ", ".join(touching)


def _ancestors(dotted: str) -> list[str]:
    """``a``, ``a.b`` and ``a.b.c`` for ``a.b.c``: the paths an override of it touches above it."""
    parts = dotted.split(".")
    return [".".join(parts[: i + 1]) for i in range(len(parts))]


def _after_separator(
    out: dict[str, Any], at: dict[str, int], rest: list[Word], where: str, lines: list[int], line: int
) -> None:
    """The words after ``--``: the commands a wrapper runs, else plain arguments."""
    inner = _inner_commands(rest, where, lines)
    if inner is not None:
        out["--"] = inner
        at.setdefault("--", line)
        return
    # the `--` itself is in the program's argv: argparse drops it, but fire, click's `nargs=-1` and a
    # script reading sys.argv see it, so `t.py x` and `t.py -- x` are not one command; where
    # positionals came before it, how many (`t.py a -- b` is not `t.py a b --` to sys.argv)
    before = out.get("@args")
    count = len(before) if isinstance(before, list) else 0
    out["--"] = f"after {count} positional{'s' if count > 1 else ''}" if count else True
    at.setdefault("--", line)
    for word in rest:
        _add(out, "@args", _typed(word), always_list=True)


def _flag(out: dict[str, Any], at: dict[str, int], words: list[Word], i: int, where: str, line: int) -> int:
    """The flag at ``words[i]`` and its value: ``--f=v``, else the words up to the next flag, spread
    or override (none: True; several: a list); the index after it."""
    word = words[i]
    text = _text(word)
    if text.startswith("--") and "=" in text:
        key, _, value = text.partition("=")
        unknown = isinstance(word, NotEvaluated)
        # `--x={a,b}` is `--x=a --x=b` to bash, `--x {a,b}` is `--x a b`: the brace word is kept whole
        kept = NotEvaluated(text if _BRACES.search(text) else value, where, line)
        _add(out, key, kept if unknown else _typed(value))
        at.setdefault(key, line)
        return i + 1
    values: list[Any] = []
    j = i + 1
    while j < len(words) and _flag_value(words[j]):
        values.append(_typed(words[j]))
        j += 1
    _add(out, text, _one_or_many(values))
    at.setdefault(text, line)
    return j


def _one_or_many(values: list[Any]) -> Any:
    """A flag's value: True for a bare flag, the word itself for one, the list for several."""
    if not values:
        return True
    return values[0] if len(values) == 1 else values


def _flag_value(word: Word) -> bool:
    """A word after a flag is its value unless it is a flag, a spread or an override itself."""
    return not is_flag(word) and not _spread(word) and _override(word) is None


def _override_or_positional(
    out: dict[str, Any], at: dict[str, int], word: Word, where: str, line: int
) -> list[tuple[str, str]]:
    """A Hydra override nested by its dots (its prefix on the first key), else a positional word;
    the override's (prefix, dotted key), if it is one."""
    override = _override(word)
    if override is None:
        _add(out, "@args", _typed(word), always_list=True)
        return []
    prefix, dotted, raw = override
    parsed = None if raw is None else _override_value(raw, where, line)
    _set_override(out, prefix, dotted, parsed)
    at.setdefault(prefix + dotted.split(".")[0], line)
    return [(prefix, dotted)]


_SEPARATORS = {"&&", "||", ";"}
# what may be a brace expansion bash did; RE2, linear: Python's engine tried every split of a
# `{,,,,...` word without its `}` (quadratic: a 300,000-character word held `diff` for minutes)
_BRACES = re2.compile(r"\{[^{}]*(?:,|\.\.)[^{}]*\}")


def _inner_commands(words: list[Word], where: str, lines: list[int]) -> dict[str, Any] | None:
    """A wrapper's ``-- source setup.sh && python train.py --lr 1e-6 ...`` (the separators
    escaped, for the shell the wrapper starts): each command read as one, keyed by its program;
    None when no word after ``--`` starts a program (plain arguments)."""
    segments = _segments(words, lines)
    if not any(_looks_like_program(w[0]) or _text(w[0]) in ("source", ".") for w, _ in segments):
        return None
    out: dict[str, Any] = {}
    for segment, at in segments:
        launchers: dict[str, Any] = {}
        name, arguments = program(segment, launchers)
        parsed, _ = parse_arguments(arguments, where, at[len(at) - len(arguments) :], name)
        out[_numbered_key(name, out)] = {**parsed, **({"@launcher": launchers} if launchers else {})}
    return out


def _segments(words: list[Word], lines: list[int]) -> list[tuple[list[Word], list[int]]]:
    """The words between separators, with their lines; empty ones dropped."""
    segments: list[tuple[list[Word], list[int]]] = [([], [])]
    for word, line in zip(words, lines):
        if _text(word) in _SEPARATORS:
            segments.append(([], []))
        else:
            segments[-1][0].append(word)
            segments[-1][1].append(line)
    return [(w, n) for w, n in segments if w]


def _numbered_key(name: str, out: dict[str, Any]) -> str:
    """``name``, or ``name #n`` for the n-th command of that name."""
    if name not in out:
        return name
    return f"{name} #{sum(k.split(' #')[0] == name for k in out) + 1}"


# (a mark the shell reader adds stays inside the braces: `${A[@] unknown #1}`, `${@ after shift 1}`)
_SPREAD = re.compile(r"\$\{[A-Za-z_][A-Za-z0-9_]*\[[@*]\](?: [^{}]*)?\}|\$[@*]|\$\{[@*](?: [^{}]*)?\}")


def _quoted_spread(word: Word) -> bool:
    """``"$@"``, ``"${ARGS[@]}"``: an array expanded in quotes, kept among the positionals."""
    return (
        isinstance(word, NotEvaluated)
        and word.source[:1] == word.source[-1:] == '"'
        and bool(_SPREAD.fullmatch(word.source[1:-1]))
    )


def _spread(word: Word) -> bool:
    """An array expansion that could not be evaluated (``${ARGS[@]}``, ``$@``): it may stand for
    any number of words, flags included, so it is a part of its own."""
    return isinstance(word, NotEvaluated) and bool(_SPREAD.fullmatch(word.source))


def _override(word: Word) -> tuple[str, str, Word | None] | None:
    """(prefix, dotted key, value) of a Hydra override; a ``~key`` deletion has no value."""
    if isinstance(word, NotEvaluated):
        return _unevaluated_override(word)
    found = _OVERRIDE.fullmatch(word)
    if not found or "$" in found.group(2):
        return None
    prefix, dotted, value = found.group(1) or "", found.group(2), found.group(3)
    if value is None and prefix != "~":
        return None
    return prefix, dotted, value


def _unevaluated_override(word: NotEvaluated) -> tuple[str, str, Word] | None:
    """``key=$VALUE``: an override whose value could not be expanded (its key must be plain)."""
    found = _OVERRIDE.fullmatch(word.source)
    if not found or found.group(3) is None or "$" in found.group(2):
        return None
    return found.group(1) or "", found.group(2), NotEvaluated(found.group(3), word.where, word.line)


def _set_override(out: dict[str, Any], prefix: str, dotted: str, value: Any) -> None:
    parts = dotted.split(".")
    parts[0] = prefix + parts[0]
    node = out
    for part in parts[:-1]:
        child = node.get(part)
        if not isinstance(child, dict):
            if part in node:  # `a=1 a.b=2`: keep the second spelled out rather than lose one
                _add(out, prefix + dotted, value)
                return
            child = node[part] = {}
        node = child
    _add(node, parts[-1], value)


def _add(out: dict[str, Any], key: str, value: Any, *, always_list: bool = False) -> None:
    """Set ``key``; a key given again collects its values in a list, in order."""
    if always_list:
        out.setdefault(key, []).append(value)
    elif key in out:
        seen = out[key]
        if isinstance(seen, _Repeated):
            seen.append(value)  # in place: a flag given n times costs n, not n squared
        else:
            out[key] = _Repeated([seen, value])
    else:
        out[key] = value


class _Repeated(list):  # type: ignore[type-arg]
    """The values of a flag given more than once (``{"@repeated": [...]}`` once the command is read)."""


def plain(value: Any) -> Any:
    """Turn ``_Repeated`` markers into ``{"@repeated": [each value]}``: never the list that one
    flag with several words is, since argparse reads them apart (``--a 1 --a 2`` is 2, or
    ``[1, 2]`` with ``action="append"``; ``--a 1 2`` is ``[1, 2]`` with ``nargs``, else an error)."""
    if isinstance(value, _Repeated):
        return {"@repeated": [plain(v) for v in value]}
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    if isinstance(value, hydravalue.Sweep):
        return hydravalue.Sweep(plain(v) for v in value)
    if isinstance(value, list):
        return [plain(v) for v in value]
    return value
