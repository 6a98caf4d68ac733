"""``#SBATCH`` directives as one mapping keyed by each option's long name.

sbatch takes most options in two spellings (``-t 3-00:00:00`` and ``--time=3-00:00:00``); a diff
that kept both would call a respelling a change and miss that ``-N 2`` and ``--nodes=4`` set the
same thing. The table below is the short/long pairs of ``man sbatch`` (Slurm 22.05, Debian's
slurm-client package): every documented pair, nothing guessed.
"""

from __future__ import annotations

# short option -> long option, as `man sbatch` lists them ("-t, --time=<time>")
SHORT_TO_LONG: dict[str, str] = {
    "-A": "--account", "-B": "--extra-node-info", "-C": "--constraint", "-D": "--chdir",
    "-F": "--nodefile", "-G": "--gpus", "-H": "--hold", "-J": "--job-name", "-L": "--licenses",
    "-M": "--clusters", "-N": "--nodes", "-O": "--overcommit", "-Q": "--quiet", "-S": "--core-spec",
    "-V": "--version", "-W": "--wait", "-a": "--array", "-b": "--begin", "-c": "--cpus-per-task",
    "-d": "--dependency", "-e": "--error", "-h": "--help", "-i": "--input", "-k": "--no-kill",
    "-m": "--distribution", "-n": "--ntasks", "-o": "--output", "-p": "--partition", "-q": "--qos",
    "-s": "--oversubscribe", "-t": "--time", "-v": "--verbose", "-w": "--nodelist", "-x": "--exclude",
}  # fmt: skip

# short options that take no value (`-H`, `-W`...): the next word is not theirs
NO_VALUE = {"-H", "-O", "-Q", "-V", "-W", "-h", "-k", "-s", "-v"}


def canonical_words(words: list[str]) -> list[str]:
    """``words`` of one directive with every short option spelled long: ``-t 1:00`` and ``-t1:00``
    become ``--time=1:00``; a short option taking no value becomes its bare long flag."""
    out: list[str] = []
    i = 0
    while i < len(words):
        word = words[i]
        short, attached = word[:2], word[2:]
        long = SHORT_TO_LONG.get(short) if word.startswith("-") and not word.startswith("--") else None
        if long is None:
            out.append(word)
        elif short in NO_VALUE:
            out.append(long + ("=" + attached.lstrip("=") if attached else ""))
        elif attached:
            out.append(f"{long}={attached.lstrip('=')}")
        elif i + 1 < len(words):
            out.append(f"{long}={words[i + 1]}")
            i += 1
        else:
            out.append(long)
        i += 1
    return out
