"""A person's own training script that parses TRL's GRPO or RLOO config (``python train.py --config
{config}``, ``accelerate launch train.py --config {config}``): the checks of what that config class
itself refuses, before any run starts.

TRL's docs have a script build its arguments with ``TrlParser((ScriptArguments, GRPOConfig,
ModelConfig))``: ``GRPOConfig.__post_init__`` then refuses a generation batch of no whole groups,
and transformers' ``TrainingArguments`` bf16 on a machine without a GPU, at each run's start,
whatever the script does next. The script is a project file (inside the working folder, never
through a link, at most 1 MiB), parsed, never run: it is taken for one when it calls ``TrlParser``
or ``HfArgumentParser`` and names one TRL config class, GRPO's or RLOO's. With ``TrlParser`` the
script's command line is merged over the config as TRL's scripts merge it (trl_flags); with
``HfArgumentParser`` the config alone is judged where the script reads a file
(``parse_yaml_file``, ``parse_json_file``, ``parse_dict``), else (``parse_args_into_dataclasses``
alone) the command line's values alone, over the class's defaults: the rendered config is read by
no one. Nothing else of the script (its rewards, its dataset, its own options) is known, so nothing
else is judged.
"""

from __future__ import annotations

import ast
import os
from collections.abc import Sequence
from pathlib import Path

from sweepgen.errors import UserError
from sweepgen.fs.outtree import check_rel
from sweepgen.run.core.runfiles import read_bytes

_PARSERS = frozenset({"TrlParser", "HfArgumentParser"})
# each TRL config class a script may parse, and the TRL command whose class it is
_CLASSES = {
    "GRPOConfig": "grpo",
    "RLOOConfig": "rloo",
    "SFTConfig": "sft",
    "DPOConfig": "dpo",
    "KTOConfig": "kto",
    "RewardConfig": "reward",
    "DistillationConfig": "distillation",
}
_JUDGED = frozenset({"grpo", "rloo"})  # the classes whose own refusals the start checks know
_MAX_SOURCE_BYTES = 1 << 20


# how the script's parser reads the config: the command line over the config file (TrlParser),
# the command line alone (HfArgumentParser.parse_args_into_dataclasses and no file read), the file
READS_BOTH, READS_ARGV, READS_FILE = "command line over config", "command line", "config"
# HfArgumentParser's methods that read a config from a file or a dict instead of the command line
_FILE_READERS = frozenset({"parse_yaml_file", "parse_json_file", "parse_dict"})


def parsed_class(command: Sequence[str]) -> tuple[str, str, str] | None:
    """(the TRL command whose config class the command's own script parses, the script's word in
    the command, what its parser reads: READS_BOTH, READS_ARGV or READS_FILE) for a GRPO or RLOO
    config; None otherwise."""
    word = next((w for w in command[1:] if w.endswith(".py")), "")
    names = _names(_parsed(word)) if word else set()
    command_of = _one_class(names)
    return (command_of, word, _reads(names)) if command_of and names & _PARSERS else None


def _reads(names: set[str]) -> str:
    """What the parser the script spells reads (parsed_class)."""
    if "TrlParser" in names:
        return READS_BOTH
    argv_only = "parse_args_into_dataclasses" in names and not names & _FILE_READERS
    return READS_ARGV if argv_only else READS_FILE


def _one_class(names: set[str]) -> str | None:
    """The TRL command of the one TRL config class ``names`` holds, if it is GRPO's or RLOO's."""
    classes = {_CLASSES[name] for name in names & _CLASSES.keys()}
    return classes.pop() if len(classes) == 1 and classes <= _JUDGED else None


def _names(tree: ast.Module | None) -> set[str]:
    """Every name the module spells (``GRPOConfig``, ``trl.GRPOConfig``'s attribute)."""
    return {_spelled(n) for n in ast.walk(tree or ast.Module(body=[], type_ignores=[]))} - {""}


def _spelled(node: ast.AST) -> str:
    return str(getattr(node, "id", "") or getattr(node, "attr", ""))


def _parsed(rel: str) -> ast.Module | None:
    """The AST of the project file ``rel`` (relative, inside the working folder, no link); None for
    anything else, or a file that does not read or parse."""
    try:
        check_rel(os.getcwd(), rel)
        data = read_bytes(Path(rel), limit=_MAX_SOURCE_BYTES)
        return ast.parse(data, rel) if data is not None else None
    except (OSError, ValueError, UserError, SyntaxError, RecursionError):
        return None
