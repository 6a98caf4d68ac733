"""NaN and infinities in JSON, one convention for every file and every `--format json` output.

JSON has neither, and ``null`` would lose both the value and the difference between "diverged" and
"not measured", so a non-finite float is written as ``{"$float": "nan" | "inf" | "-inf"}`` and read
back as the float (the lock, `list`/`diff`/`check` tables, `report --format json`). A mapping whose only
key is ``$float`` is therefore not plain data; the lock refuses such a config key.
"""

from __future__ import annotations

import math
from typing import Any

FLOAT_TAG = "$float"
_FLOATS = {"nan": math.nan, "inf": math.inf, "-inf": -math.inf}


def tag(value: float) -> dict[str, str]:
    """The JSON form of a non-finite float."""
    return {FLOAT_TAG: "nan" if math.isnan(value) else ("inf" if value > 0 else "-inf")}


def tagged(value: Any) -> Any:
    """``value`` (JSON-like) with every non-finite float tagged, as ``json.dumps(allow_nan=False)`` needs."""
    if isinstance(value, float) and not math.isfinite(value):
        return tag(value)
    if isinstance(value, dict):
        return {k: tagged(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [tagged(v) for v in value]
    return value


def untagged(value: Any) -> Any:
    """``value`` as read from JSON with every tag turned back into its float (an unknown tag stays)."""
    if isinstance(value, dict):
        if len(value) == 1 and FLOAT_TAG in value:
            return _FLOATS.get(value[FLOAT_TAG], value)
        return {k: untagged(v) for k, v in value.items()}
    if isinstance(value, list):
        return [untagged(v) for v in value]
    return value
