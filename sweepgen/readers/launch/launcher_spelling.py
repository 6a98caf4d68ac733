"""torchrun's, ``accelerate launch``'s, deepspeed's and mpirun's flags under one spelling each.

Both register every long option with hyphens and with underscores (torch.distributed.run's
``--nproc-per-node``/``--nproc_per_node``; accelerate: "Arguments can be passed in with either
hyphens or underscores"), and a few short ones, so ``--nproc_per_node 8`` and ``--nproc-per-node=8``
are one setting. Each is spelled as its tool lists it first; tests/readers/test_launcher_spelling.py
holds the rule to the installed parsers (no two options ever share a spelling). deepspeed's runner
(deepspeed/launcher/runner.py, not installed here) registers ``-H``/``--hostfile``,
``-i``/``--include``, ``-e``/``--exclude`` and ``--num_gpus``/``--num_accelerators`` as one option
each; mpirun (Open MPI, MPICH and Intel MPI alike) reads ``-n`` as ``-np``.
"""

from __future__ import annotations

# launcher -> (the separator its options are respelled from, the one they are spelled with)
_SEPARATORS = {"torchrun": ("_", "-"), "accelerate launch": ("-", "_")}
# short options that take a value: argparse reads `-r3`, `-r=3` and `-r 3` alike
SHORT_TO_LONG = {
    "torchrun": {"-r": "--redirects", "-t": "--tee", "-h": "--help"},
    "accelerate launch": {"-t": "--tee", "-q": "--quiet", "-h": "--help"},
    "deepspeed": {"-H": "--hostfile", "-i": "--include", "-e": "--exclude", "-h": "--help"},
}
# a second name of one option, whole (before any `=value`)
_TWINS = {"deepspeed": {"--num_accelerators": "--num_gpus"}, "mpirun": {"-n": "-np"}}
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
    ``--nproc-per-node=8`` for torchrun, ``-r3`` is ``--redirects=3``, deepspeed's ``-H hf`` is
    ``--hostfile hf``, mpirun's ``-n`` is ``-np``; other launchers' flags as given."""
    twins = _TWINS.get(launcher, {})
    if flag in twins:
        return twins[flag]
    if not flag.startswith("--"):
        return _short_respelled(launcher, flag) if launcher in SHORT_TO_LONG else flag
    name, eq, value = flag.partition("=")
    if launcher in _SEPARATORS:
        old, new = _SEPARATORS[launcher]
        name = "--" + name[2:].replace(old, new)
    return twins.get(name, name) + eq + value
