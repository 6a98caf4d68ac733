"""torchrun's, ``accelerate launch``'s, deepspeed's, mpirun's and ``conda run``'s flags under one
spelling each.

Both register every long option with hyphens and with underscores (torch.distributed.run's
``--nproc-per-node``/``--nproc_per_node``; accelerate: "Arguments can be passed in with either
hyphens or underscores"), and a few short ones, so ``--nproc_per_node 8`` and ``--nproc-per-node=8``
are one setting. Each is spelled as its tool lists it first; tests/readers/test_launcher_spelling.py
holds the rule to the installed parsers (no two options ever share a spelling). deepspeed's runner
(deepspeed/launcher/runner.py, not installed here) registers ``-H``/``--hostfile``,
``-i``/``--include``, ``-e``/``--exclude`` and ``--num_gpus``/``--num_accelerators`` as one option
each; mpirun (Open MPI, MPICH and Intel MPI alike) reads ``-n`` as ``-np``; ``conda run``
(conda/cli/main_run.py) registers ``-n``/``--name``, ``-p``/``--prefix``, ``-v``/``--verbose`` and
``-s``/``--no-capture-output``/``--live-stream`` as one option each.
"""

from __future__ import annotations

# torchrun's long option strings, as torch.distributed.run's get_args_parser registers them (both
# spellings of each; tests/readers/test_launcher_spelling.py holds the list to the installed parser).
# Its parser takes a long option by any start of it that begins one string only (argparse's
# allow_abbrev): `--nnode 2` is `--nnodes 2`, `--max-r 3` `--max-restarts 3`; a start of several
# (`--nproc`: `--nproc-per-node` and `--nproc_per_node`) is refused ("ambiguous option") and kept as
# written. accelerate's `launch` parser is made with allow_abbrev=False: its starts stay as written.
_TORCHRUN_LONG = frozenset({
    "--duplicate-stderr-filters", "--duplicate-stdout-filters", "--duplicate_stderr_filters",
    "--duplicate_stdout_filters", "--event-log-handler", "--event_log_handler", "--help", "--local-addr",
    "--local-ranks-filter", "--local_addr", "--local_ranks_filter", "--log-dir", "--log_dir",
    "--logs-specs", "--logs_specs", "--master-addr", "--master-port", "--master_addr", "--master_port",
    "--max-restarts", "--max_restarts", "--module", "--monitor-interval", "--monitor_interval",
    "--nnodes", "--no-python", "--no_python", "--node-rank", "--node_rank", "--nproc-per-node",
    "--nproc_per_node", "--numa-binding", "--numa_binding", "--rdzv-backend", "--rdzv-conf",
    "--rdzv-endpoint", "--rdzv-id", "--rdzv_backend", "--rdzv_conf", "--rdzv_endpoint", "--rdzv_id",
    "--redirects", "--role", "--run-path", "--run_path", "--shutdown-timeout", "--shutdown_timeout",
    "--signals-to-handle", "--signals_to_handle", "--standalone", "--start-method", "--start_method",
    "--tee", "--virtual-local-rank", "--virtual_local_rank",
})  # fmt: skip
# deepspeed's runner (deepspeed/launcher/runner.py, github.com/deepspeedai/DeepSpeed commit 2d991ba;
# not installed here, so read from its source, not held to it) is a plain ArgumentParser, which
# takes abbreviations too: `--num_node 2` is `--num_nodes 2`
_DEEPSPEED_LONG = frozenset({
    "--account", "--autotuning", "--bind_core_list", "--bind_cores_to_rank", "--comment",
    "--elastic_training", "--enable_each_rank_log", "--exclude", "--force_multi", "--help", "--hostfile",
    "--include", "--launcher", "--launcher_args", "--master_addr", "--master_port", "--max_elastic_nodes",
    "--min_elastic_nodes", "--module", "--no_local_rank", "--no_python", "--no_ssh", "--no_ssh_check",
    "--node_rank", "--num_accelerators", "--num_gpus", "--num_nodes", "--save_pid", "--ssh_port",
})  # fmt: skip
ABBREVIATED = {"torchrun": _TORCHRUN_LONG, "deepspeed": _DEEPSPEED_LONG}

# launcher -> (the separator its options are respelled from, the one they are spelled with)
_SEPARATORS = {"torchrun": ("_", "-"), "accelerate launch": ("-", "_")}
# short options that take a value: argparse reads `-r3`, `-r=3` and `-r 3` alike
SHORT_TO_LONG = {
    "torchrun": {"-r": "--redirects", "-t": "--tee", "-h": "--help"},
    "accelerate launch": {"-t": "--tee", "-q": "--quiet", "-h": "--help"},
    "deepspeed": {"-H": "--hostfile", "-i": "--include", "-e": "--exclude", "-h": "--help"},
    # conda/cli/main_run.py and helpers.add_parser_prefix/_verbose
    "conda run": {
        "-n": "--name",
        "-p": "--prefix",
        "-s": "--no-capture-output",
        "-v": "--verbose",
        "-h": "--help",
    },
}
# a second name of one option, whole (before any `=value`)
_TWINS = {
    "deepspeed": {"--num_accelerators": "--num_gpus"},
    "mpirun": {"-n": "-np", "-mca": "--mca", "-gmca": "--gmca"},
    "mpiexec": {"-n": "-np", "-mca": "--mca", "-gmca": "--gmca"},
    "conda run": {"--live-stream": "--no-capture-output"},
}
_NO_VALUE = {"-h", "-q", "-s", "-v"}


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
    name = _unabbreviated(launcher, name)
    if launcher in _SEPARATORS:
        old, new = _SEPARATORS[launcher]
        name = "--" + name[2:].replace(old, new)
    return twins.get(name, name) + eq + value


def _unabbreviated(launcher: str, name: str) -> str:
    """A long option as its parser reads it: ``name`` where it is one of its strings, else the one
    string it begins, where the parser allows that; a start of several or none, as written."""
    strings = ABBREVIATED.get(launcher)
    if strings is None or name in strings:
        return name
    matches = [string for string in strings if string.startswith(name)]
    return matches[0] if len(matches) == 1 else name
