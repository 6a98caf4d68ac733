"""torchrun's and ``accelerate launch``'s flags under one spelling each.

Both register every long option with hyphens and with underscores (torch.distributed.run's
``--nproc-per-node``/``--nproc_per_node``; accelerate: "Arguments can be passed in with either
hyphens or underscores"), and a few short ones, so ``--nproc_per_node 8`` and ``--nproc-per-node=8``
are one setting. Each is spelled as its tool lists it first; tests/readers/test_launcher_spelling.py
holds the rule to the installed parsers (no two options ever share a spelling).
"""

from __future__ import annotations

# launcher -> (the separator its options are respelled from, the one they are spelled with)
_SEPARATORS = {"torchrun": ("_", "-"), "accelerate launch": ("-", "_")}
# short options that take a value: argparse reads `-r3`, `-r=3` and `-r 3` alike
SHORT_TO_LONG = {
    "torchrun": {"-r": "--redirects", "-t": "--tee", "-h": "--help"},
    "accelerate launch": {"-t": "--tee", "-q": "--quiet", "-h": "--help"},
}
_NO_VALUE = {"-h", "-q"}


def _short_respelled(launcher: str, flag: str) -> str:
    """A short option by its long name (``-r3`` is ``--redirects=3``); one the launcher has no long
    name for, as given."""
    short, attached = flag[:2], flag[2:]
    long = SHORT_TO_LONG[launcher].get(short)
    if long is None:
        return flag
    if short in _NO_VALUE:
        return long if not attached else flag  # `-qx` is not argparse's `--quiet`: kept as given
    return f"{long}={attached.removeprefix('=')}" if attached else long


def respell(launcher: str, flag: str) -> str:
    """``flag`` (one word) as ``launcher`` spells it first: ``--nproc_per_node=8`` is
    ``--nproc-per-node=8`` for torchrun, ``-r3`` is ``--redirects=3``; other launchers' flags as given."""
    if launcher not in _SEPARATORS:
        return flag
    if not flag.startswith("--"):
        return _short_respelled(launcher, flag)
    name, eq, value = flag.partition("=")
    old, new = _SEPARATORS[launcher]
    return "--" + name[2:].replace(old, new) + eq + value
