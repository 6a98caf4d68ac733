"""The garbage collector during a compile: paused, or kept away from what was made before."""

from __future__ import annotations

import gc

from sweepgen.compile.output import gc_state


class _Node:
    def __init__(self) -> None:
        self.other: _Node | None = None


def _cycle() -> None:
    a, b = _Node(), _Node()
    a.other, b.other = b, a


def test_paused_turns_collection_off_and_restores_it():
    assert gc.isenabled()
    with gc_state.paused():
        assert not gc.isenabled()
        with gc_state.paused():
            assert not gc.isenabled()
        assert not gc.isenabled()  # the inner block found it off and leaves it off
    assert gc.isenabled()


def _collectable(objects: list[_Node]) -> int:
    """How many of ``objects`` the collector would look at (a frozen object is in no generation).
    Counted by the objects themselves: the freeze count also moves with what other threads (an
    xdist worker's) free or make meanwhile."""
    tracked = {id(o) for o in gc.get_objects()}
    return sum(id(o) in tracked for o in objects)


def test_frozen_hides_what_was_made_before_and_nests():
    assert gc.get_freeze_count() == 0
    before = [_Node() for _ in range(1000)]
    with gc_state.frozen():
        assert _collectable(before) == 0
        made = [_Node() for _ in range(1000)]
        assert _collectable(made) == len(made)
        with gc_state.frozen():
            assert _collectable(made) == 0
            inner_made = [_Node() for _ in range(1000)]
        # the inner block's objects stay out of collections until the outer block ends
        assert _collectable(made) == 0 and _collectable(inner_made) == 0
    assert gc.get_freeze_count() == 0  # the outermost block gives every object back
    assert _collectable(before + made + inner_made) == 3000


def test_a_cycle_made_inside_a_frozen_block_is_still_collected():
    with gc_state.frozen():
        gc.collect()
        _cycle()  # what a template's macro leaves on each render
        assert gc.collect() >= 2


def test_an_error_inside_ends_the_block():
    try:
        with gc_state.frozen():
            raise ValueError("x")
    except ValueError:
        pass
    assert gc.get_freeze_count() == 0
