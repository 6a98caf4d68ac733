"""The schema key a refused key was most likely meant to be, for a refusal's "did you mean".

Spelling distance alone points a renamed key at the wrong field: TRL's ``torch_dtype`` (the name
transformers used before ``dtype``) is closer in letters to ``torch_compile`` than to ``dtype``. A key
whose name is an allowed key with a leading word added (``torch_dtype``, ``model_dtype``: renames drop
a namespace word) is taken to mean that key first; otherwise the closest spelling, if close enough.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable

_SHORTEST_WORD_MATCH = 3  # a one- or two-letter key (`r`) ends too many names to be meant by them


def closest_key(name: str, known: Iterable[str]) -> str | None:
    names = [str(key) for key in known]
    within = [key for key in names if len(key) >= _SHORTEST_WORD_MATCH and _adds_a_leading_word(name, key)]
    if within:
        return max(within, key=lambda key: (len(key), key))
    close = difflib.get_close_matches(name, names, n=1)
    return close[0] if close else None


def _adds_a_leading_word(name: str, key: str) -> bool:
    return name.endswith("_" + key)
