"""The ``accelerate launch`` options a ``trl <command> --config`` file may hold, as schema properties.

``trl grpo`` parses its config with the script's dataclasses and hands every key they do not take to
``accelerate launch`` as ``--key str(value)`` (trl/cli/commands/training.py), after turning
``accelerate_config: zero2`` (a name of TRL's bundled configs or a path) into ``--config_file``.
TRL's own docs write ``num_processes: 8`` or ``accelerate_config: zero3`` in the training config, so
the schema of ``trl:grpo`` takes them, read from accelerate's own parser. Taken: the options that
take one value, typed as argparse reads ``str(value)``. Left out, so refused: a switch
(``--multi_gpu``) would read the ``True`` after it as the training script, and an option of
``type=bool`` reads every value, ``False`` included, as true; only ``true`` is taken for it.
"""

from __future__ import annotations

import argparse
import importlib
from typing import Any

# the key TRL itself reads before accelerate sees the rest (trl/cli/accelerate_config.py)
ACCELERATE_CONFIG = {
    "type": "string",
    "description": "an accelerate config for `trl` to launch with: a name of TRL's bundled configs "
    "(zero1, zero2, zero3, fsdp1, fsdp2, multi_gpu, single_gpu) or a file path",
}
_TEXT = ["string", "number"]  # str(value) of either is the text argparse reads
_BY_TYPE: dict[Any, Any] = {int: "integer", float: "number"}
_ANY_IS_TRUE = "read as true for any value: leave it out for false"


def launch_properties() -> dict[str, Any]:
    """Option name -> schema of every ``accelerate launch`` option a config key can set."""
    module = importlib.import_module("accelerate.commands.launch")
    parser: argparse.ArgumentParser = module.launch_command_parser()
    props: dict[str, Any] = {"accelerate_config": ACCELERATE_CONFIG}
    for action in parser._actions:  # argparse lists its options nowhere else
        prop = _option(action)
        names = [s[2:] for s in action.option_strings if s.startswith("--")]
        if prop is not None:
            for name in names:  # `--num_processes` and `--num-processes` are both keys TRL passes
                props.setdefault(name, prop)
    return props


def _option(action: argparse.Action) -> dict[str, Any] | None:
    if not action.option_strings or action.nargs is not None:
        return None  # a switch (nargs 0) or a multi-value option: not `--key value`
    help_text = f"`accelerate launch` option{': ' + action.help if action.help else ''}"
    if action.type is bool:
        return {"const": True, "description": f"{help_text} ({_ANY_IS_TRUE})"}
    return {**_value_schema(action), "description": help_text}


def _value_schema(action: argparse.Action) -> dict[str, Any]:
    if action.choices:
        choices = [str(c) for c in action.choices]
        numbers = [int(c) for c in choices if c.isdigit()]  # `fsdp_version: 2` is passed as "2"
        return {"enum": [*choices, *numbers]}
    if getattr(action.type, "__name__", "") == "str_to_bool":
        return {"type": "boolean"}
    return {"type": _BY_TYPE.get(action.type, _TEXT)}
