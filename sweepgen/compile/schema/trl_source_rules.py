"""What TRL, transformers or PEFT raise at a run's start that types do not say (trl_raises: both
generation sizes set, fewer than 2 generations, a ``*_steps`` above 1 that is no whole number,
save_steps no multiple of eval_steps under load_best_model_at_end, ...), for a ``trl <command>``
config that no ``schema: trl:<command>`` checked: `run`'s start applies them as the schema does.

The command's fields, their literal defaults and the classes its parser takes are read from the
installed TRL's source (trl_guess), never imported: no minute-long import of trl at `run`'s start.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from sweepgen.compile.schema import jsonschema_subset, trl_guess, trl_raises

_NOT = "matches a schema under `not` ("


def refusals(command: str, config: Mapping[str, Any], *, own: bool = False) -> list[tuple[str, str]]:
    """(dotted path, why) of each rule ``config`` (a run's config as ``trl <command>`` reads it: the
    command line's values over the file's) breaks; none where TRL's source cannot be read here.
    ``own``: read by a person's own script parsing the command's config class: that class's rules
    alone (its ``__post_init__`` and TrainingArguments' raise while it parses, whatever the script
    does next), none of ModelConfig's or ScriptArguments' (which the script may not parse)."""
    fields = trl_guess.config_class_fields(command) if own else trl_guess.script_fields(command)
    if not fields.names:
        return []
    found = jsonschema_subset.validate(dict(config), _rules(fields))
    return [
        *((path, _why(message)) for path, message in found),
        *trl_raises.across_fields(dict(config), fields.defaults),
    ]


def config_class(command: str) -> str:
    """The name of ``trl <command>``'s config class (``GRPOConfig``)."""
    return trl_guess.config_class(command)


def _rules(fields: trl_guess.ScriptFields) -> dict[str, Any]:
    """trl_raises' rules for the fields and classes the command's parser takes, as one schema."""
    props: dict[str, Any] = {name: {} for name in fields.names}
    rules = trl_raises.refused(props, fields.classes)
    return {"type": "object", "properties": {k: v for k, v in props.items() if v}, "allOf": rules}


def _why(message: str) -> str:
    """A rule's own words (its ``$comment``), without the schema's phrasing around them."""
    return message[len(_NOT) : -1] if message.startswith(_NOT) and message.endswith(")") else message
