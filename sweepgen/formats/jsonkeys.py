"""JSON objects whose keys are written once: ``json.loads`` keeps the last of a key written twice
without a word, so a reader of configs (readers/structured/formats.py) and the read-back of rendered files
(compile/output/verify/readback.py) both refuse one through this hook."""

from __future__ import annotations

from typing import Any


class DuplicateKey(Exception):
    def __init__(self, key: str) -> None:
        self.key = key


def no_duplicate_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """``json.loads``'s ``object_pairs_hook``: the object, or DuplicateKey naming the key."""
    result: dict[str, Any] = {}
    for key, value in pairs:
        if key in result:
            raise DuplicateKey(key)
        result[key] = value
    return result
