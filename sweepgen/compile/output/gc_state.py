"""The cyclic garbage collector during a compile: paused while the variants are built, then kept
away from them.

A 100,000-variant sweep builds millions of small dicts and tuples that all live to the end of the
render and make no reference cycles. Each full collection would walk all of them again, to find
nothing: a third of expand's and derive's time, and a third of the validation, lock and write time
after them. In a forked render worker a collection would also write to every page they sit on
(copy-on-write), so each worker would copy the parent's heap.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

_frozen_depth = 0


@contextmanager
def paused() -> Iterator[None]:
    """No collection inside the block (for code that makes no cycles: expand, derive)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


@contextmanager
def frozen() -> Iterator[None]:
    """Everything made so far is left out of every collection until the outermost block ends
    (``gc.freeze``); what is made inside is still collected, since a template's macros make cycles
    on every render. Blocks nest: an inner one freezes what was made since the outer one began, and
    at its end what it made (a spec's rendered files, kept until the outer block writes them)."""
    global _frozen_depth
    gc.freeze()
    _frozen_depth += 1
    try:
        yield
    finally:
        _frozen_depth -= 1
        if _frozen_depth == 0:
            gc.unfreeze()
        else:
            gc.freeze()
