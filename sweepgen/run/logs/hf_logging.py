"""Whether a Hugging Face Trainer config (``trl grpo`` and every HF Trainer) leaves its metrics in a
file ``report`` reads: the Trainer writes them only into a checkpoint's trainer_state.json (none
with ``save_strategy: "no"``) or through a ``report_to`` tracker (TRL's default is ``none``); else
they are only printed, and a sweep of such runs has nothing to report."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

_NO_TRACKER: tuple[object, ...] = (None, "none", [], ["none"])


def writes_no_metrics(config: Mapping[str, Any]) -> bool:
    """True for a Trainer config that saves no checkpoint and reports to no tracker."""
    return config.get("save_strategy") == "no" and config.get("report_to", "none") in _NO_TRACKER
