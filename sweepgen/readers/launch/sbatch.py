"""``#SBATCH`` directives as one mapping keyed by each option's long name.

sbatch takes most options in two spellings (``-t 3-00:00:00`` and ``--time=3-00:00:00``); a diff
that kept both would call a respelling a change and miss that ``-N 2`` and ``--nodes=4`` set the
same thing. The table below is ``man sbatch`` (Slurm 22.05, Debian's slurm-client package): every
documented short/long pair and whether each option takes a value, nothing guessed
(tests/readers/test_sbatch.py holds it to the installed page).
"""

from __future__ import annotations

from typing import Any

from sweepgen.readers.launch.slurm_options import Options, collect, read_options, with_pyxis

OPTIONS = Options(
    short_to_long={
        "-A": "--account", "-B": "--extra-node-info", "-C": "--constraint", "-D": "--chdir",
        "-F": "--nodefile", "-G": "--gpus", "-H": "--hold", "-J": "--job-name", "-L": "--licenses",
        "-M": "--clusters", "-N": "--nodes", "-O": "--overcommit", "-Q": "--quiet", "-S": "--core-spec",
        "-V": "--version", "-W": "--wait", "-a": "--array", "-b": "--begin", "-c": "--cpus-per-task",
        "-d": "--dependency", "-e": "--error", "-h": "--help", "-i": "--input", "-k": "--no-kill",
        "-m": "--distribution", "-n": "--ntasks", "-o": "--output", "-p": "--partition", "-q": "--qos",
        "-s": "--oversubscribe", "-t": "--time", "-v": "--verbose", "-w": "--nodelist", "-x": "--exclude",
    },
    value=frozenset({
        "--account", "--acctg-freq", "--array", "--batch", "--bb", "--bbf", "--begin", "--chdir",
        "--cluster-constraint", "--clusters", "--comment", "--constraint", "--container", "--core-spec",
        "--cores-per-socket", "--cpu-freq", "--cpus-per-gpu", "--cpus-per-task", "--deadline",
        "--delay-boot", "--dependency", "--distribution", "--error", "--exclude", "--export",
        "--export-file", "--extra-node-info", "--gid", "--gpu-bind", "--gpu-freq", "--gpus",
        "--gpus-per-node", "--gpus-per-socket", "--gpus-per-task", "--gres", "--gres-flags", "--hint",
        "--input", "--job-name", "--kill-on-invalid-dep", "--licenses", "--mail-type", "--mail-user",
        "--mcs-label", "--mem", "--mem-bind", "--mem-per-cpu", "--mem-per-gpu", "--mincpus", "--network",
        "--nodefile", "--nodelist", "--nodes", "--ntasks", "--ntasks-per-core", "--ntasks-per-gpu",
        "--ntasks-per-node", "--ntasks-per-socket", "--open-mode", "--output", "--partition", "--power",
        "--prefer", "--priority", "--profile", "--qos", "--reservation", "--signal", "--sockets-per-node",
        "--switches", "--thread-spec", "--threads-per-core", "--time", "--time-min", "--tmp", "--uid",
        "--wait-all-nodes", "--wckey", "--wrap"
    }),
    no_value=frozenset({
        "--contiguous", "--help", "--hold", "--ignore-pbs", "--no-requeue", "--overcommit",
        "--oversubscribe", "--parsable", "--quiet", "--reboot", "--requeue", "--spread-job", "--test-only",
        "--usage", "--use-min-nodes", "--verbose", "--version", "--wait"
    }),
    optional_value=frozenset({
        "--exclusive", "--get-user-env", "--nice", "--no-kill", "--propagate"
    }),
)  # fmt: skip


READ = with_pyxis(OPTIONS)  # what directives and a command line are read with: pyxis's options too


def read_directive(words: list[str]) -> dict[str, Any]:
    """The options of one ``#SBATCH`` line keyed by long name: ``-t 1:00``, ``-t1:00``,
    ``--time 1:00`` and ``--time=1:00`` all read ``{"--time": "1:00"}``."""
    pairs, _end = read_options(list(words), 0, READ, _not_an_option, stop_at_operand=False)
    return collect(pairs)


def _not_an_option(word: object) -> bool:
    return not str(word).startswith("-")


# C's isspace() in the "C" locale, which Slurm's tokenizer splits on
_BLANKS = frozenset(" \t\n\v\f\r")


def directive_words(text: str) -> list[str]:
    """The words sbatch reads from what follows ``#SBATCH`` on a line, by Slurm's own tokenizer
    (``_get_argument`` in src/sbatch/opt.c), not a shell's: a backslash takes the next character as
    it is, inside quotes too (``"a\\tb"`` is ``atb``); an unquoted, unescaped ``#`` ends the line,
    also inside a word; an empty word (``""``) ends it too. ValueError where sbatch refuses the line
    (an unmatched quote, a word that starts with ``:``)."""
    words: list[str] = []
    i = 0
    while True:
        while i < len(text) and text[i] in _BLANKS:
            i += 1
        if i == len(text):
            return words
        if text[i] == ":":
            raise ValueError("sbatch refuses a word that starts with ':'")
        word, i = _directive_word(text, i)
        if not word:
            return words
        words.append(word)


def _directive_word(text: str, i: int) -> tuple[str, int]:
    """One word of a directive from ``text[i:]`` and where it ends (Slurm's loop, step by step)."""
    out: list[str] = []
    quote, escaped = "", False
    while i < len(text) and (quote or text[i] not in _BLANKS) and text[i] != "\n":
        char = text[i]
        i += 1
        if escaped:
            escaped = False
        elif char == "\\":
            escaped = True
            continue
        elif quote:
            if char == quote:
                quote = ""
                continue
        elif char in "\"'":
            quote = char
            continue
        elif char == "#":
            return "".join(out), i - 1
        out.append(char)
    if quote:
        raise ValueError(f"unmatched {quote}")
    return "".join(out), i


def waits_for_value(words: list[str]) -> bool:
    """Whether a directive line ends with an option still waiting for its value: sbatch reads all
    directive lines as one argument list, so getopt takes the next line's first word (``#SBATCH -J``
    then ``#SBATCH -N2`` names the job ``-N2``)."""
    waiting = False
    for word in words:
        if word == "--" and not waiting:
            return False
        waiting = not waiting and _option_waits(word)  # a waiting option takes this word as its value
    return waiting


def _option_waits(word: str) -> bool:
    """Whether ``word`` read as an option ends with one that takes its value from the next word."""
    if word.startswith("--"):
        return "=" not in word and word in READ.value
    for at in range(1, len(word) if word.startswith("-") else 0):
        long = OPTIONS.short_to_long.get("-" + word[at])
        if long is None or long not in OPTIONS.no_value:
            return long in OPTIONS.value and at == len(word) - 1
    return False
