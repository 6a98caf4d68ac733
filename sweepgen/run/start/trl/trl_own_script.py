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
import io
import os
import tokenize
from collections.abc import Callable, Sequence
from pathlib import Path

from sweepgen.errors import Location, UserError
from sweepgen.fs.outtree import check_rel
from sweepgen.fs.safefs import UnsafePath
from sweepgen.run.core.runfiles import RunFileError, read_bytes

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
_MAX_SOURCE_BYTES = 1 << 20


# how the script's parser reads the config: the command line over the config file (TrlParser),
# the command line alone (HfArgumentParser.parse_args_into_dataclasses and no file read), the file
READS_BOTH, READS_ARGV, READS_FILE = "command line over config", "command line", "config"
# HfArgumentParser's methods that read a config from a file or a dict instead of the command line
_FILE_READERS = frozenset({"parse_yaml_file", "parse_json_file", "parse_dict"})


# the fields of TRL's script arguments and config classes that TRL's own scripts' start checks
# judge: judged for a script of one's own only where it is seen to hand them on (``handed``)
CHECKED = frozenset({"dataset_name", "dataset_config", "datasets", "model_name_or_path"}) | frozenset(
    {"resume_from_checkpoint", "chat_template_path", "reward_funcs"}
)
_TEMPLATE_TRAINERS = frozenset({"SFTTrainer", "RewardTrainer"})  # read args.chat_template_path


def parsed_class(
    command: Sequence[str], warn: Callable[[Location, str], None] | None = None
) -> tuple[str, str, str, frozenset[str]] | None:
    """(the TRL command whose config class the command's own script parses, the script's word in
    the command, what its parser reads: READS_BOTH, READS_ARGV or READS_FILE, the fields it is
    seen to hand on: ``handed``) for a script parsing one TRL config class; None otherwise. A script
    that is there but not read (outside the working folder, a link, a FIFO, past 1 MiB, not Python
    that parses, nested too deeply to parse) is not judged, and ``warn`` says so at its name."""
    word = next((w for w in command[1:] if w.endswith(".py")), "")
    tree, unread = _parsed(word) if word else (None, "")
    if unread and warn is not None:
        warn(
            Location(word),
            f"not read ({unread}): whether it parses a TRL config class is not known, {_UNJUDGED}",
        )
    names = _names(tree)
    command_of = _one_class(names)
    if not command_of or not names & _PARSERS:
        return None
    return command_of, word, _reads(names), handed(tree)


_UNJUDGED = "so what TRL's config classes refuse was not checked before the runs"


def handed(tree: ast.Module | None) -> frozenset[str]:
    """The fields of ``CHECKED`` the script's text hands on as TRL's scripts do (the module's
    docstring): an attribute of that name (``script_args.dataset_name``) at the argument's place."""
    found: set[str] = set()
    for node in ast.walk(tree or ast.Module(body=[], type_ignores=[])):
        if isinstance(node, ast.Call):
            found |= _call_hands(node)
    return frozenset(found)


def _call_hands(call: ast.Call) -> set[str]:
    """The fields one call hands on: at (position, keyword) of a callee the checks know."""
    func = _spelled(call.func)
    if func == "load_dataset":
        return _dataset_handed(call)
    return {name for name, hands in _HANDS.items() if hands(func, call)}


def _dataset_handed(call: ast.Call) -> set[str]:
    """``load_dataset(script_args.dataset_name, name=script_args.dataset_config)``."""
    if _field(call, 0, "path") != "dataset_name":
        return set()
    return {"dataset_name", *(("dataset_config",) if _field(call, 1, "name") == "dataset_config" else ())}


def _model_handed(func: str, call: ast.Call) -> bool:
    """``from_pretrained(model_args.model_name_or_path)``, ``XTrainer(model=model_args....)``."""
    if func == "from_pretrained":
        return _field(call, 0, "pretrained_model_name_or_path") == "model_name_or_path"
    return func.endswith("Trainer") and _field(call, 0, "model") == "model_name_or_path"


# a field -> whether a call (its callee's name, the call) hands it on
_HANDS: dict[str, Callable[[str, ast.Call], bool]] = {
    "datasets": lambda func, _: func == "get_dataset",  # trl.get_dataset: a DatasetMixtureConfig's
    "model_name_or_path": _model_handed,
    "chat_template_path": lambda func, _: func in _TEMPLATE_TRAINERS,
    "resume_from_checkpoint": lambda func, call: (
        func == "train" and _field(call, None, "resume_from_checkpoint") == "resume_from_checkpoint"
    ),
}


def _field(call: ast.Call, position: int | None, keyword: str) -> str:
    """The attribute name the call's argument at ``position`` or ``keyword`` spells ('' otherwise)."""
    given = next((k.value for k in call.keywords if k.arg == keyword), None)
    if given is None and position is not None and _placed(call, position):
        given = call.args[position]
    return given.attr if isinstance(given, ast.Attribute) else ""


def _placed(call: ast.Call, position: int) -> bool:
    """Whether the call has an argument at ``position`` that no ``*args`` before it may shift."""
    return len(call.args) > position and not any(
        isinstance(a, ast.Starred) for a in call.args[: position + 1]
    )


def _reads(names: set[str]) -> str:
    """What the parser the script spells reads (parsed_class): TrlParser's ``parse_args_and_config``
    reads the command line over the config (taken for it where no other reader is named); its
    other readers are HfArgumentParser's own."""
    others = names & (_FILE_READERS | {"parse_args_into_dataclasses"})
    if "TrlParser" in names and ("parse_args_and_config" in names or not others):
        return READS_BOTH
    argv_only = "parse_args_into_dataclasses" in names and not names & _FILE_READERS
    return READS_ARGV if argv_only else READS_FILE


def _one_class(names: set[str]) -> str | None:
    """The TRL command of the one TRL config class ``names`` holds."""
    classes = {_CLASSES[name] for name in names & _CLASSES.keys()}
    return classes.pop() if len(classes) == 1 else None


def _names(tree: ast.Module | None) -> set[str]:
    """Every name the module spells (``GRPOConfig``, ``trl.GRPOConfig``'s attribute)."""
    return {_spelled(n) for n in ast.walk(tree or ast.Module(body=[], type_ignores=[]))} - {""}


def _spelled(node: ast.AST) -> str:
    return str(getattr(node, "id", "") or getattr(node, "attr", ""))


def _parsed(word: str) -> tuple[ast.Module | None, str]:
    """The AST of the project file ``word`` (inside the working folder, no link on the way, at most
    1 MiB), never run; else None and why it was not read ("" when no file is there)."""
    cwd = os.getcwd()
    rel = os.path.relpath(os.path.normpath(os.path.join(cwd, word)), cwd)  # ./train.py is train.py
    try:
        check_rel(cwd, rel)
        data = read_bytes(Path(rel), limit=_MAX_SOURCE_BYTES)
        return (ast.parse(_source(data), rel) if data is not None else None), ""
    except (OSError, ValueError, UserError, SyntaxError, RecursionError, MemoryError) as err:
        return None, _why(err)


# why a script was not read, by what reading it raised (else the error's own words)
_WHY: tuple[tuple[type[BaseException] | tuple[type[BaseException], ...], str], ...] = (
    (UnsafePath, "outside the working folder"),
    # the parser's stack: MemoryError for -----x (not the machine's memory), RecursionError for a.b.b...
    ((RecursionError, MemoryError), "nested too deeply to parse"),
)


def _why(err: BaseException) -> str:
    if isinstance(err, RunFileError):
        return err.reason
    if isinstance(err, UnicodeDecodeError):
        return f"not {err.encoding} text (Python would refuse it: PEP 263)"
    if isinstance(err, SyntaxError):  # a bad coding line too
        return f"not Python that parses: line {err.lineno}: {err.msg}"
    return next((why for kinds, why in _WHY if isinstance(err, kinds)), str(err))


def _source(data: bytes) -> str:
    """``data`` decoded as Python decodes a script it runs: UTF-8 or its coding line's, strictly
    (``ast.parse`` of the bytes lets a byte no encoding has pass in a comment; Python refuses it)."""
    encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    return data.decode(encoding)
