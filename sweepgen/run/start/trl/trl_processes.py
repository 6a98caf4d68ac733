"""`trl` runs that ask accelerate for more processes than the GPUs each run is given: refused before
any run starts.

The TRL CLI hands a config's ``num_processes`` (and ``accelerate_config``, a preset such as
``zero2`` or ``multi_gpu`` holding ``num_processes: 8``, or a file) to ``accelerate launch``. Given
one GPU (``--gpus 0,1 --per-gpu 1``, or a Slurm job of ``resources.gpus_per_node: 1``), accelerate
either starts one process, since it sees one GPU, and trains with 1/N of the batch the config says
(a wrong result that looks right), or, with a multi-GPU or DeepSpeed config, starts N processes on
one GPU, which fail. A config whose ``distributed_type`` is ``"NO"`` starts one process whatever its
``num_processes``.

Where the count comes from, as accelerate takes it: ``--num_processes`` on the command line, the TRL
config's ``num_processes``, its ``accelerate_config`` (a file of that name where the run starts,
else TRL's preset), ``--config_file`` on the command line, else accelerate's default config in the
person's cache (``$HF_HOME/accelerate/default_config.yaml``), read as accelerate reads it. Files are
data (YAML, safe-loaded, at most 1 MiB); a project file only by a relative path inside the project,
never through a link: a config naming anything else is not judged.
"""

from __future__ import annotations

import importlib.util
import os
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import yaml

from sweepgen.compile.run_api import read_regular
from sweepgen.errors import ConfigError, Location, SpecError, UserError
from sweepgen.fs.outtree import check_rel
from sweepgen.run.core.base import RunTask
from sweepgen.run.core.runfiles import read_bytes
from sweepgen.run.start.config_where import key_location

_PRESET = re.compile(r"[A-Za-z0-9_-]+")  # the names of trl/accelerate_configs/*.yaml
_COUNT = re.compile(r"[0-9]{1,9}")  # ASCII digits, few enough for int()


def launch_counts(command: Sequence[str]) -> tuple[tuple[int, str] | None, tuple[int, str] | None]:
    """(the count on ``command``'s line, the count its launch config or accelerate's default
    config asks for): read once for all runs."""
    return _command_processes(command), _launch_config(command)


_CLI_KEYS = frozenset(
    {"num_processes", "accelerate_config"}
)  # the CLI's own keys, handed to accelerate launch


def as_launched(config: Mapping[str, Any], command: Sequence[str]) -> Mapping[str, Any]:
    """The run's config as its launch reads it: TRL's CLI (``trl NAME``) hands the config's
    ``num_processes`` and ``accelerate_config`` to ``accelerate launch``; TRL's script run any other
    way (``python -m trl.scripts.grpo``, ``accelerate launch -m trl.scripts.grpo``) parses its config
    leaving the keys no dataclass has aside (``fail_with_unknown_args=False``): they ask for nothing."""
    if _CLI_KEYS.isdisjoint(config) or os.path.basename(command[0] if command else "") == "trl":
        return config
    return {key: value for key, value in config.items() if key not in _CLI_KEYS}


def judge(
    sweep_dir: Path,
    task: RunTask,
    config: Mapping[str, Any],
    counts: tuple[tuple[int, str] | None, tuple[int, str] | None],
    gpus_each: int,
) -> None:
    """Exit 2 when the run's rendered ``config`` (with the command's ``counts``, launch_counts) asks
    accelerate for more processes than the ``gpus_each`` GPUs the run sees."""
    wanted, from_command = _asked(config, *counts)
    if wanted is not None and wanted[0] > max(gpus_each, 1):
        raise _refusal(sweep_dir, task, wanted, gpus_each, from_command=from_command)


def asked(
    config: Mapping[str, Any], counts: tuple[tuple[int, str] | None, tuple[int, str] | None]
) -> int | None:
    """How many processes a run asks accelerate for (launch_counts: the command's), None where
    accelerate's own configuration decides."""
    wanted, _ = _asked(config, *counts)
    return wanted[0] if wanted is not None else None


def _asked(
    config: Mapping[str, Any], on_command_line: tuple[int, str] | None, elsewhere: tuple[int, str] | None
) -> tuple[tuple[int, str] | None, bool]:
    """What a run asks for, in accelerate's order, and whether the command line says so (else its
    config's key). A config naming ``accelerate_config`` hands TRL's ``--config_file`` over the rest."""
    from_config = processes(config)
    if on_command_line or from_config:
        return on_command_line or from_config, on_command_line is not None
    return (None if isinstance(config.get("accelerate_config"), str) else elsewhere), True


# launch options that start more than one process, or take the count from a file or another launcher
_SEVERAL = frozenset(
    spelling
    for name in (
        "multi_cpu", "multi_gpu", "num_machines", "use_deepspeed", "use_fsdp", "use_megatron_lm",
        "mpirun_hostfile", "config_file", "accelerate_config", "num_processes",
    )
    for spelling in (f"--{name}", f"--{name.replace('_', '-')}")
)  # fmt: skip
_PYTHON = re.compile(r"python(3(\.[0-9]+)?)?")


def one_process(command: Sequence[str], config: Mapping[str, Any]) -> bool:
    """Whether a run of TRL's ``command`` with ``config`` starts one process on a machine without a
    GPU: TRL's CLI, ``python`` running TRL's script, or ``accelerate launch`` of it, with nothing
    asking accelerate for more (no count, multi-process or launch-config option on the command line,
    no ``num_processes`` or ``accelerate_config`` in the config, no accelerate default config in the
    person's cache, no ``ACCELERATE_*`` setting in the environment): accelerate's default there is
    its simple launcher, one process. Any other launcher (torchrun, deepspeed, a shell) is not
    judged."""
    if not command or any(word.partition("=")[0] in _SEVERAL for word in command):
        return False
    if config.get("num_processes") is not None or config.get("accelerate_config") is not None:
        return False
    if _default_config() is not None or any(k.startswith("ACCELERATE_") for k in os.environ):
        return False
    return _plain_launcher(command)


def _plain_launcher(command: Sequence[str]) -> bool:
    """``trl NAME``, ``accelerate launch``, or ``python -m trl.scripts.NAME`` / ``python FILE.py``."""
    program = os.path.basename(command[0])
    if program == "trl":
        return True
    if program == "accelerate":
        return list(command[1:2]) == ["launch"]  # a tuple or a list
    second = command[1] if len(command) > 1 else ""
    third = command[2] if len(command) > 2 else ""
    return bool(_PYTHON.fullmatch(program)) and (
        (second == "-m" and third.startswith("trl.scripts.")) or second.endswith(".py")
    )


def _refusal(
    sweep_dir: Path, task: RunTask, wanted: tuple[int, str], gpus_each: int, *, from_command: bool
) -> ConfigError:
    count, said_by = wanted
    key = said_by.partition(":")[0]
    return ConfigError(
        f"run {task.name!r} asks accelerate for {count} processes ({said_by}) but each run is given "
        f"{gpus_each} GPU(s): accelerate would train one process with 1/{count} of the batch the config "
        "says, or start them all on one GPU",
        location=Location("--command")
        if from_command or "config_file" in key
        else key_location(sweep_dir, task, key),
        key=None if from_command else key,
        hint=f"give each run {count} GPUs (resources.gpus_per_run: {count} in the spec, then --gpus "
        f"takes {count} a run), or ask for {gpus_each} process(es)",
    )


def processes(config: Mapping[str, Any]) -> tuple[int, str] | None:
    """(how many processes, the key that says so) a TRL config asks accelerate for; None when it
    leaves it to accelerate's own configuration."""
    explicit = config.get("num_processes")
    if isinstance(explicit, int) and not isinstance(explicit, bool):
        return explicit, "num_processes"
    preset = config.get("accelerate_config")
    if not isinstance(preset, str):
        return None
    held = _project_file(preset)  # TRL takes a file of that name before its preset of that name
    if held is None:
        return None
    count = _preset_processes(preset) if held is _NOT_THERE else _several(held)
    return (count, f"accelerate_config: {preset}") if count is not None else None


_NOT_THERE = object()  # no file of that name where runs start: a preset's name
_MAX_CONFIG_BYTES = 1 << 20


def _project_file(name: str) -> Any:
    """The YAML of the project file ``name`` (relative, inside, no link on the way), _NOT_THERE when
    no file has that name, None when it cannot be judged (a link, a path leaving the project, too
    large, not YAML): TRL would read it, sweepgen does not."""
    if not name or "\x00" in name:
        return None
    try:
        check_rel(os.getcwd(), name)  # before any stat: nothing outside the project is looked at
        data = read_bytes(Path(name), limit=_MAX_CONFIG_BYTES)  # no link, FIFO or folder; bounded
    except (OSError, ValueError, UserError):
        return None
    return _yaml(data) if data is not None else _NOT_THERE


def _yaml(data: bytes) -> Any:
    try:
        return yaml.safe_load(data.decode("utf-8"))
    # ValueError: an integer past Python's 4,300 digits, a date such as 2024-13-45 (PyYAML's
    # constructors raise it, not YAMLError)
    except (UnicodeDecodeError, yaml.YAMLError, RecursionError, ValueError, OverflowError):
        return None


def _launch_config(command: Sequence[str]) -> tuple[int, str] | None:
    """What the command's ``--config_file`` (a project file), else accelerate's default config file,
    asks for, when it starts several processes."""
    named = _option(_launch_options(command), ("--config_file", "--config-file"))
    if named is not None:
        held = _project_file(named[1])
        count = _several(held) if held is not _NOT_THERE else None
        return (count, " ".join(named)) if count is not None else None
    default = _default_config()
    count = _several(_own_file(default)) if default is not None else None
    return (count, f"accelerate's default config_file {default}") if count is not None else None


def _default_config() -> str | None:
    """accelerate's default config file (accelerate/commands/config/config_args.py), where one is."""
    home = os.environ.get(
        "HF_HOME", os.path.join(os.environ.get("XDG_CACHE_HOME", "~/.cache"), "huggingface")
    )
    path = os.path.join(os.path.expanduser(home), "accelerate", "default_config.yaml")
    return path if os.path.isfile(path) else None


def _own_file(path: str) -> Any:
    """The person's own config file (their cache, not the project's), read as accelerate reads it
    (a link followed), but never waited on: a FIFO swapped in, or a link to /proc/kmsg, whose size
    says 0, held `run` before (``read_regular``: a regular file of at most 1 MiB, else not judged)."""
    try:
        return _yaml(
            read_regular(path, what="accelerate config", loc=Location(path), limit=_MAX_CONFIG_BYTES)
        )
    except SpecError:
        return None


def _command_processes(command: Sequence[str]) -> tuple[int, str] | None:
    """``accelerate launch --num_processes 2 -m trl.scripts.grpo ...``: the command's own count, as
    accelerate's parser reads it: among launch's options before the script only (after the script
    every word is the script's, argparse.REMAINDER), the last one given winning."""
    given = _option(_launch_options(command), ("--num_processes", "--num-processes"))
    if given is None:
        return None
    flag, value = given
    if not _COUNT.fullmatch(value):  # `²` is a digit to str.isdigit, not to int()
        raise ConfigError(
            f"{flag} {value[:40]!r} in --command is not a number of processes",
            location=Location("--command"),
            hint=f"give accelerate a count, e.g. {flag} 2",
        )
    return int(value), flag


def _option(command: Sequence[str], flags: tuple[str, ...]) -> tuple[str, str] | None:
    """(flag, value) of the last of ``flags`` in ``command`` (``--flag value`` or ``--flag=value``):
    argparse keeps the last one given."""
    found = None
    for i, word in enumerate(command):
        flag, eq, value = word.partition("=")
        if flag in flags:
            found = flag, value if eq else (command[i + 1] if i + 1 < len(command) else "")
    return found


# `accelerate launch`'s options that take no value (launch_command_parser's store_true actions; a
# test holds this list to accelerate's parser): every other option takes the word after it
LAUNCH_SWITCHES = frozenset(
    spelling
    for name in (
        "cpu", "debug", "downcast_bf16", "dynamo_use_dynamic", "dynamo_use_fullgraph",
        "dynamo_use_regional_compilation", "enable_cpu_affinity", "fp8_use_autocast_during_eval",
        "help", "module", "multi_gpu", "no_python", "no_tpu_cluster", "quiet", "same_network", "tpu",
        "tpu_cluster", "tpu_use_sudo", "use_deepspeed", "use_fsdp", "use_megatron_lm",
        "use_parallelism_config",
    )
    for spelling in (f"--{name}", f"--{name.replace('_', '-')}")
) | {"-h", "-m", "-q"}  # fmt: skip


def _launch_options(command: Sequence[str]) -> Sequence[str]:
    """The words ``accelerate launch`` reads as its own options: from after ``launch`` to the
    training script (the first word that is no option nor an option's value); the whole command
    for any other launcher (``trl grpo --num_processes 2`` hands its whole line to accelerate)."""
    start = _after_launch(command)
    if start is None:
        return command
    i = start
    while i < len(command) and _is_option(command[i]):
        i += 1 if _takes_no_value(command[i]) else 2
    return command[start:i]


def _after_launch(command: Sequence[str]) -> int | None:
    """The index of the word after ``accelerate launch``; None: the command runs no such launch."""
    pairs = zip(command, command[1:])
    return next(
        (i + 2 for i, (a, b) in enumerate(pairs) if (os.path.basename(a), b) == ("accelerate", "launch")),
        None,
    )


def _is_option(word: str) -> bool:
    return word.startswith("-") and word != "-"


def _takes_no_value(word: str) -> bool:
    """A launch switch, ``--opt=value``, or a short option with more after it: switches run
    together (``-mq``) or a value attached (``-tX``)."""
    return word in LAUNCH_SWITCHES or "=" in word or (not word.startswith("--") and len(word) > 2)


def launch_config(name: str) -> Any:
    """The accelerate config ``accelerate_config: NAME`` hands `accelerate launch` (read as YAML):
    the project file of that name, else TRL's preset; None where it is not judged."""
    held = _project_file(name)  # TRL takes a file of that name before its preset of that name
    return _preset(name) if held is _NOT_THERE else held


def _preset_processes(name: str) -> int | None:
    """The ``num_processes`` of TRL's preset ``name`` when it starts several; None otherwise."""
    return _several(_preset(name))


def _preset(name: str) -> Any:
    """TRL's preset ``name`` (trl/accelerate_configs/NAME.yaml, read from the installed package
    without importing it); None where there is none."""
    # a preset is a plain word (`zero2`); anything else is a path (a project file, read by
    # _project_file) or a value no file is named by (`x\0y` from a config is data: never opened)
    spec = importlib.util.find_spec("trl") if _PRESET.fullmatch(name) else None
    folders = list(spec.submodule_search_locations or []) if spec else []
    for folder in folders:
        path = os.path.join(folder, "accelerate_configs", f"{name}.yaml")
        try:
            with open(path, encoding="utf-8") as fh:
                return yaml.safe_load(fh)
        except (OSError, yaml.YAMLError):
            continue
    return None


def _several(preset: Any) -> int | None:
    """A config's ``num_processes`` when accelerate applies it: a local machine's, not single-process."""
    if not isinstance(preset, dict):
        return None
    # only a string is compared: str() of a value is never taken, since a YAML list of aliases
    # (a 1 KiB "billion laughs") is small shared but billions of items written out (18 GB, a hang)
    kind = preset.get("distributed_type")
    if isinstance(kind, str) and kind.upper() == "NO":
        return None
    if preset.get("compute_environment", "LOCAL_MACHINE") != "LOCAL_MACHINE":
        return None
    count = preset.get("num_processes")
    return count if isinstance(count, int) and not isinstance(count, bool) else None
