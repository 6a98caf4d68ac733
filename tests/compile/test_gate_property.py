"""The fast allowed-diff gate agrees exactly with deepdiff, the reference.

Random nested configs (mappings, lists, scalars with type changes such as 1 vs 1.0 vs True), random
override sequences applied copy-on-write: the paths the gate finds by looking only under touched
paths are exactly the paths deepdiff reports between the base and the variant (deepdiff's paths cut
at the first list index, since lists are leaves for overrides).
"""

from __future__ import annotations

from deepdiff import DeepDiff
from hypothesis import given, settings
from hypothesis import strategies as st

from sweepgen import paths
from sweepgen.compile.spec import overrides
from sweepgen.errors import Location

# "__d__": deepdiff skips dunder keys unless told not to; the gate must not.
KEYS = st.sampled_from(["a", "b", "c", "__d__"])
SCALARS = st.one_of(
    st.sampled_from([0, 1, 2, 0.0, 1.0, 2.5, True, False, None, "x", "1", ""]), st.integers(-5, 5)
)
LEAVES = st.one_of(SCALARS, st.lists(SCALARS, max_size=3))
CONFIGS = st.recursive(LEAVES, lambda inner: st.dictionaries(KEYS, inner, max_size=4), max_leaves=15).filter(
    lambda x: isinstance(x, dict)
)
VALUES = st.recursive(
    LEAVES,
    lambda inner: st.one_of(st.dictionaries(KEYS, inner, max_size=3), st.lists(inner, max_size=2)),
    max_leaves=6,
)
LOC = Location("t.yaml", 1, 1)


def deepdiff_paths(a: dict, b: dict) -> set[str]:
    found = set()
    # threshold_to_diff_deeper=0: report key by key even when two mappings share few keys;
    # zip_ordered_iterables: compare lists item by item, else deepdiff's hash-based list diff misses
    # [0, 1.0] -> [0, 1] (hash(1) == hash(1.0)), a type change the gate rightly reports
    tree = DeepDiff(
        a,
        b,
        view="tree",
        threshold_to_diff_deeper=0,
        ignore_private_variables=False,
        zip_ordered_iterables=True,
    )
    for report in tree.values():
        for level in report:
            parts = level.path(output_format="list")
            cut = []
            for part in parts:
                if isinstance(part, int):  # keys are strings here, so an int is a list index
                    break
                cut.append(part)
            found.add(".".join(cut))
    return found


@st.composite
def base_and_ops(draw):
    base = draw(CONFIGS)
    ops, current = [], base
    for _ in range(draw(st.integers(1, 5))):
        existing = list(paths.all_paths(current))
        kind = draw(st.sampled_from(["set", "add", "delete"]))
        if kind in ("set", "delete") and existing:
            path = tuple(draw(st.sampled_from(existing)).split("."))
        else:
            parents = [()] + [
                tuple(p.split(".")) for p in existing if isinstance(paths.get(current, p), dict)
            ]
            parent = draw(st.sampled_from(parents))
            free = [k for k in "abcde" if k not in paths.get(current, parent)]
            if not free:
                continue
            kind, path = "add", parent + (draw(st.sampled_from(free)),)
        value = None if kind == "delete" else draw(VALUES)
        op = overrides.Op(kind, path, value, LOC, "variant:v")
        current, _ = overrides.apply_all(current, [op], {}, where="test")
        ops.append(op)
    return base, ops


@settings(max_examples=150, deadline=None)
@given(base_and_ops())
def test_gate_agrees_with_deepdiff_on_random_overrides(case):
    base, ops = case
    variant, _ = overrides.apply_all(base, ops, {}, where="test")
    touched = tuple(op.path for op in ops)
    assert paths.diff_at(base, variant, touched) == deepdiff_paths(base, variant)


@settings(max_examples=150, deadline=None)
@given(CONFIGS, CONFIGS)
def test_full_leaf_diff_agrees_with_deepdiff_on_random_pairs(a, b):
    assert set(paths.diff_paths(a, b)) == deepdiff_paths(a, b)


@given(base_and_ops())
def test_applying_overrides_never_mutates_the_input(case):
    import copy

    base, ops = case
    snapshot = copy.deepcopy(base)
    overrides.apply_all(base, ops, {}, where="test")
    assert paths.same(base, snapshot)


def test_type_changes_are_differences():
    assert paths.diff_at({"a": 1}, {"a": 1.0}, (("a",),)) == {"a"}
    assert paths.diff_at({"a": 1}, {"a": True}, (("a",),)) == {"a"}
    assert paths.diff_at({"a": [1]}, {"a": [1.0]}, (("a",),)) == {"a"}
    assert paths.diff_at({"a": {"b": 1}}, {"a": {"b": 1}}, (("a",),)) == set()
