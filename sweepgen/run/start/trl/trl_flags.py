"""The values a TRL script takes from its own command line, over its config, for the keys the start
checks read: ``trl grpo --config {config} --num_generations 3 --reward_funcs my.reward``.

TrlParser makes the config's keys the parser's defaults, then parses the command line, so a flag
wins over the config's key (the last one of a flag wins, as argparse takes it). Only the script's
own words are read: after ``trl NAME``, after ``-m trl.scripts.NAME`` or after ``.../NAME.py``
(``accelerate launch --num_processes 2 ...`` before them is accelerate's). Each value is typed as
HfArgumentParser types its field: ``int`` (``int | None``: ``none``/``null`` is None), a list
(``nargs="+"``: the words up to the next option), a string. A value ``int()`` refuses fails every
run at its start in argparse ("invalid int value"): refused here, before any starts.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping, Sequence
from pathlib import PurePosixPath
from typing import Any

from sweepgen.errors import ConfigError, Location
from sweepgen.run.start.command_overrides import filled_per_run

# the fields the start checks read, as TRL's dataclasses type them (GRPOConfig, RLOOConfig,
# TrainingArguments, the scripts' arguments)
_INT = frozenset({"per_device_train_batch_size", "gradient_accumulation_steps"})
_OPTIONAL_INT = frozenset({"num_generations", "generation_batch_size", "steps_per_generation"})
_LIST = frozenset({"reward_funcs"})
_STRING = frozenset(
    {"dataset_name", "dataset_config", "model_name_or_path", "model_revision", "chat_template_path"}
)
READ = _INT | _OPTIONAL_INT | _LIST | _STRING
_NEGATIVE = re.compile(r"-[0-9]+(\.[0-9]*)?")  # argparse takes `-3` for a value, not an option


def script_words(command: Sequence[str], script: str) -> list[str]:
    """The words TRL's ``script`` parses: those after ``trl SCRIPT``, ``-m trl.scripts.SCRIPT`` or
    ``.../trl/scripts/SCRIPT.py``; none when the command runs it otherwise."""
    words = list(command)
    if len(words) >= 2 and os.path.basename(words[0]) == "trl":
        return words[2:] if words[1] == script else []
    return _after_script(words, script)


def _after_script(words: list[str], script: str) -> list[str]:
    """The words after the one that names TRL's script (none where no word does)."""
    at = next((i for i in range(len(words)) if _runs_script(words, i, script)), None)
    return words[at + 1 :] if at is not None else []


def _runs_script(words: Sequence[str], at: int, script: str) -> bool:
    """Whether ``words[at]`` is TRL's script: the module ``-m`` names, or its file."""
    if at > 0 and words[at - 1] == "-m":
        return words[at] == f"trl.scripts.{script}"
    path = PurePosixPath(words[at])
    return path.suffix == ".py" and path.stem == script and path.parent.parts[-2:] == ("trl", "scripts")


class _PerRun:
    """A value holding a placeholder `run` fills with each run's own (``--dataset_name data/{name}``):
    not known here, and of no type a judgment reads (not a str, a list or an int), so none judges it."""

    def __repr__(self) -> str:
        return "<filled per run>"


PER_RUN = _PerRun()


def given(command: Sequence[str], script: str, *, after: str | None = None) -> dict[str, Any]:
    """Key -> the value the script's command line gives it (of the keys in ``READ``), typed as
    TRL's parser types it, or ``PER_RUN`` for one holding a placeholder `run` fills with each run's
    own value (``--dataset_name data/{name}``: not known here); exit 2 for a value the parser
    refuses. ``after``: the word of a person's own script, whose words follow it."""
    words = list(command[command.index(after) + 1 :]) if after in command else script_words(command, script)
    found: dict[str, Any] = {}
    for i, word in enumerate(words):
        if not word.startswith("--") or len(word) == 2:
            continue
        name, eq, value = word[2:].partition("=")
        key = name.replace("-", "_")
        if key in READ:
            values = [value] if eq else _following(words[i + 1 :])
            found[key] = PER_RUN if any(map(filled_per_run, values)) else _typed(key, word, values)
    return found


def _following(words: Sequence[str]) -> list[str]:
    """The words an option takes from those after it: up to the next option."""
    taken = []
    for word in words:
        if word.startswith("-") and not _NEGATIVE.fullmatch(word):
            break
        taken.append(word)
    return taken


def _typed(key: str, flag: str, values: list[str]) -> Any:
    if not values:  # argparse's own words
        raise _refusal(flag, "expected at least one argument" if key in _LIST else "expected one argument")
    if key in _LIST:
        return values
    return values[0] if key in _STRING else _int(key, flag, values[0])


def _int(key: str, flag: str, value: str) -> int | None:
    if key in _OPTIONAL_INT and value.lower() in ("none", "null"):
        return None
    try:
        return int(value)  # the parser's own type
    except ValueError:
        raise _refusal(flag, f"invalid int value: {value!r}") from None


def _refusal(flag: str, problem: str) -> ConfigError:
    return ConfigError(
        f"--command gives `{flag}` to TRL's script, whose parser refuses it ({problem}): every run "
        "would fail at its start",
        location=Location("--command"),
        hint=f"give `{flag.partition('=')[0]}` a value TRL's parser takes (a whole number for a size, "
        "one or more names for reward_funcs), or remove it from --command",
    )


def merged(config: Mapping[str, Any], from_command: Mapping[str, Any]) -> Mapping[str, Any]:
    """The run's config as TRL's script reads it: the command line's values over the config's."""
    return {**config, **from_command} if from_command else config
