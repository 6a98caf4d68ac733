"""``to_json`` / ``tojson``: plain JSON for config files, fast enough to call once per leaf.

Jinja's own ``tojson`` is meant for HTML: it escapes ``<``, ``>``, ``&`` and ``'`` and builds a new
encoder on every call, which made it half of a 10,000-variant render. Config files want plain JSON:
keys in their written order, UTF-8 text as it is, and NaN or Infinity refused (they are not JSON;
write the config with ``to_yaml`` or ``pyrepr`` to keep them). Scalars, what a per-leaf template
mostly writes, take a direct path through the C encoders the ``json`` module itself uses, so the
bytes are exactly ``json.dumps(value, ensure_ascii=False, allow_nan=False)``'s.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from typing import Any

from jinja2 import Undefined

from sweepgen.compile.template import bounds

_encode_str = json.encoder.encode_basestring  # json's own (C) string encoder, non-ASCII kept


def _default(value: Any) -> Any:
    if isinstance(value, Undefined):
        value._fail_with_undefined_error()
    raise TypeError(f"to_json cannot write a {type(value).__name__}")


_ENCODER = json.JSONEncoder(ensure_ascii=False, allow_nan=False, default=_default)


def to_json(value: Any, indent: int | None = None) -> str:
    leaf = _LEAVES.get(type(value))  # the per-leaf case, first
    if leaf is not None:
        return leaf(value)
    if value is None:
        return "null"
    if isinstance(value, Undefined):
        value._fail_with_undefined_error()
    try:
        if indent is None:
            return _ENCODER.encode(value)
        bounds.check_indent("to_json", value, indent, per_level=True)
        return json.dumps(value, indent=indent, ensure_ascii=False, allow_nan=False, default=_default)
    except ValueError as err:  # a NaN or Infinity inside a list or mapping
        raise ValueError(f"to_json: {err} (JSON has no NaN or Infinity; use to_yaml or pyrepr)") from None


def _bool(value: bool) -> str:
    return "true" if value else "false"


def _float(value: float) -> str:
    if not math.isfinite(value):
        raise ValueError(
            f"to_json cannot write {value!r}: JSON has no NaN or Infinity (use to_yaml or pyrepr)"
        )
    return float.__repr__(value)


# the JSON of a leaf by its exact type (a subclass goes through the encoder)
_LEAVES: dict[type, Callable[[Any], str]] = {str: _encode_str, bool: _bool, int: int.__repr__, float: _float}
