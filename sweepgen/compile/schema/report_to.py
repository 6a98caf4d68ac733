"""``report_to`` of a transformers ``TrainingArguments`` (every TRL config): the trackers it names.

Its annotation is ``None | str | list[str]``, and the Trainer refuses any name outside transformers'
own table of callbacks (``INTEGRATION_TO_CALLBACK``, checked by ``get_reporting_integration_callbacks``
when the trainer is built, after the model is loaded), besides ``all`` and ``none``: a schema from
the annotation took ``report_to: tensorbaord`` or ``report_to: "wandb,tensorboard"`` (one name to
transformers), and the run failed minutes in. The names are read from that table of the installed
transformers, never listed here.
"""

from __future__ import annotations

import importlib
from typing import Any

FIELD = "report_to"


def tracker_names(cls: type) -> list[str]:
    """The values ``report_to`` (or one item of its list) may take, for a ``TrainingArguments``
    subclass; empty for any other class, or where transformers' table cannot be read."""
    if not any(_is_training_arguments(k) for k in cls.__mro__):
        return []
    try:  # by name, as the class itself was imported: sweepgen never imports an ML library itself
        table = importlib.import_module("transformers.integrations.integration_utils").INTEGRATION_TO_CALLBACK
    except Exception:  # noqa: BLE001 - an older or broken transformers: the annotation alone decides
        return []
    return [*sorted(table), "all", "none"]


def restrict(prop: dict[str, Any], names: list[str]) -> None:
    """Hold ``report_to``'s string branch, and the string items of its list branch, to ``names``."""
    for branch in [prop, *prop.get("anyOf", [])] if names else []:
        if not isinstance(branch, dict):
            continue
        if branch.get("type") == "string":
            branch["enum"] = names
        items = branch.get("items")
        if branch.get("type") == "array" and isinstance(items, dict) and items.get("type") == "string":
            items["enum"] = names


def _is_training_arguments(klass: type) -> bool:
    return klass.__name__ == "TrainingArguments" and klass.__module__ == "transformers.training_args"
