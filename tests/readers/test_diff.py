"""The semantic diff and its --allow gate: type-strict changes, dotted paths, glob rules, and
properties that tie the diff to type-strict equality."""

from __future__ import annotations

import datetime as dt
import math

import pytest
from diff_support import compared
from hypothesis import given, settings
from hypothesis import strategies as st

from sweepgen.errors import UserError
from sweepgen.readers.diff import (
    ABSENT,
    Change,
    deepdiff_changes,
    diff,
    disallowed,
    format_path,
    jsonable,
    parse_glob,
    parse_globs,
    strictly_equal,
    unmatched_globs,
)
from sweepgen.readers.python.pyast import Ref


def _summary(changes):
    return [(c.dotted, c.kind, c.old, c.new) for c in changes]


def test_equal_configs_have_no_changes():
    cfg = {"a": {"b": [1, 2.0, True, None, "x"], "c": (1,)}, "d": {3, 4}}
    assert diff(cfg, {"a": {"b": [1, 2.0, True, None, "x"], "c": (1,)}, "d": {4, 3}}) == []


def test_one_one_point_oh_and_true_are_three_different_values():
    changes = diff({"x": 1, "y": 1, "z": 1.0}, {"x": 1.0, "y": True, "z": True})
    assert [(c.dotted, c.kind, c.old_type, c.new_type) for c in changes] == [
        ("x", "type_changed", "int", "float"),
        ("y", "type_changed", "int", "bool"),
        ("z", "type_changed", "float", "bool"),
    ]


def test_nested_changes_are_reported_at_their_leaf_with_dotted_paths():
    old = {"training": {"seed": 42, "lr": 3e-6}, "pipeline": [{"type": "A"}, {"type": "B"}]}
    new = {"training": {"seed": 7, "lr": 3e-6}, "pipeline": [{"type": "A"}, {"type": "C"}]}
    assert _summary(diff(old, new)) == [
        ("pipeline[1].type", "changed", "B", "C"),
        ("training.seed", "changed", 42, 7),
    ]


def test_added_and_removed_keys_and_list_items():
    old = {"a": 1, "l": [1, 2, 3]}
    new = {"b": {"c": 2}, "l": [1, 2]}
    assert _summary(diff(old, new)) == [
        ("a", "removed", 1, ABSENT),
        ("b", "added", ABSENT, {"c": 2}),
        ("l[2]", "removed", 3, ABSENT),
    ]


def test_lists_are_aligned_by_content_and_index_by_index_when_asked():
    # an insertion at the front is one change; index by index it shifts every later one
    assert _summary(diff({"l": [1, 2]}, {"l": [0, 1, 2]})) == [("l[0]", "added", ABSENT, 0)]
    assert _summary(diff({"l": [1, 2]}, {"l": [0, 1, 2]}, aligned=False)) == [
        ("l[0]", "changed", 1, 0),
        ("l[1]", "changed", 2, 1),
        ("l[2]", "added", ABSENT, 2),
    ]
    rows = [{"name": f"r{i}", "lr": i} for i in range(6)]
    edited = [*rows[:2], {"name": "new", "lr": 9}, *rows[2:]]
    edited[5] = {"name": "r4", "lr": 40}  # and an edit further down, inside a row
    assert _summary(diff({"rows": rows}, {"rows": edited})) == [
        ("rows[2]", "added", ABSENT, {"name": "new", "lr": 9}),
        ("rows[5].lr", "changed", 4, 40),
    ]
    assert _summary(diff({"l": [1, 2, 3]}, {"l": [1, 3]})) == [("l[1]", "removed", 2, ABSENT)]


@pytest.mark.parametrize(
    "old, new",
    [
        ({1: "a"}, {True: "a"}),
        ({1: "a"}, {1.0: "a"}),
        ({(1, 2): "a"}, {(True, 2): "a"}),
    ],
)
def test_dict_keys_that_python_calls_equal_but_differ_in_type_are_different_keys(old, new):
    changes = diff(old, new)
    (old_key,), (new_key,) = old, new
    assert sorted((c.kind, repr(c.path)) for c in changes) == [
        ("added", repr((new_key,))),
        ("removed", repr((old_key,))),
    ]
    assert not strictly_equal(old, new) and not strictly_equal(new, old)
    assert diff(old, dict(old)) == [] and strictly_equal(old, dict(old))


@pytest.mark.parametrize(
    "old, new",
    [
        ({1, 2}, {1.0, 2}),
        ({1, 2}, {True, 2}),
        ({Ref("torch.float16")}, {"torch.float16"}),
        (frozenset({(1,)}), frozenset({(1.0,)})),
    ],
)
def test_set_members_that_python_calls_equal_but_differ_in_type_are_a_change(old, new):
    assert [(c.path, c.kind) for c in diff({"s": old}, {"s": new})] == [(("s",), "changed")]
    assert not strictly_equal(old, new)
    assert diff({"s": old}, {"s": set(old) if isinstance(old, set) else old}) == [] and strictly_equal(
        old, old
    )


def test_sets_are_reported_whole_and_tuple_is_not_list():
    assert _summary(diff({"s": {1, 2}, "t": (1, 2)}, {"s": {1, 3}, "t": [1, 2]})) == [
        ("s", "changed", {1, 2}, {1, 3}),
        ("t", "type_changed", (1, 2), [1, 2]),
    ]


def test_dunder_and_private_keys_are_compared_too():
    # deepdiff would skip `__doc__`-style keys unless told otherwise
    changes = diff({"__doc__": "a", "_p": 1, "__x": 1}, {"__doc__": "b", "_p": 2, "__x": 2})
    assert [c.dotted for c in changes] == ["__doc__", "__x", "_p"]


def test_nan_equals_nan_and_ref_differs_from_str():
    assert diff({"x": math.nan}, {"x": math.nan}) == []
    (change,) = diff({"x": Ref("torch.bfloat16")}, {"x": "torch.bfloat16"})
    assert (change.old_type, change.new_type) == ("ref", "str")


@pytest.mark.parametrize(
    ("one", "two", "suffix"),
    [
        ("a = nan\n", "a = -nan\n", ".toml"),
        ("a = [+nan, 1]\n", "a = [-nan, 1, 2]\n", ".toml"),
        ('a = float("nan")\n', 'a = float("-nan")\n', ".py"),
        ("a = nan\n", "a = +nan\n", ".toml"),
        ("a = inf\n", "a = +inf\n", ".toml"),
        ('{"a": NaN}', '{"a": NaN}', ".json"),
        ("a: .nan\n", "a: .NaN\n", ".yaml"),
    ],
)
def test_a_nan_sign_is_a_change_where_the_reading_program_can_tell(one, two, suffix, tmp_path):
    # the oracle: what the program gets from tomllib / json / PyYAML / Python itself, and whether
    # `math.copysign` (or `==`) tells the two apart; `nan` and `-nan` were "no differences"
    import json

    import tomllib
    import yaml

    def loaded(text):
        if suffix == ".toml":
            return tomllib.loads(text)["a"]
        if suffix == ".json":
            return json.loads(text)["a"]
        if suffix == ".yaml":
            return yaml.safe_load(text)["a"]
        scope: dict[str, object] = {}
        exec(text, scope)  # the test's own literal config, in the test only
        return scope["a"]

    def observed(value):
        values = value if isinstance(value, list) else [value]
        return [(repr(v), math.copysign(1.0, v)) for v in values]

    program_tells = observed(loaded(one)) != observed(loaded(two))
    reported = [c.dotted for c in compared(one, two, suffix, tmp_path).changes]
    assert bool(reported) == program_tells, reported
    if suffix == ".toml" and program_tells:
        assert jsonable(diff(loaded(one), loaded(two))[0].new) == "-nan"


def test_a_signed_zero_is_a_change_in_the_walk_and_the_reference():
    # `-0.0 == 0.0` in Python, yet a program reading either prints and names them apart
    # (`f"lr{lr}"`), and `1 / x` or `copysign` tell them apart: YAML, JSON, TOML and Python all
    # read `-0.0` as the negative zero
    for old, new in (({"lr": -0.0}, {"lr": 0.0}), ({"a": [0.0, 1]}, {"a": [-0.0, 1]})):
        assert [c.kind for c in diff(old, new)] == ["changed"] and not strictly_equal(old, new)
        assert _same_changes(diff(old, new, aligned=False), deepdiff_changes(old, new))
    assert diff({"lr": -0.0}, {"lr": -0.0}) == [] and diff({"x": [0.0]}, {"x": [0.0]}) == []
    # lists are aligned by the same rule: one inserted zero is one added item
    assert [(c.dotted, c.kind) for c in diff({"a": [-0.0]}, {"a": [0.0, -0.0]})] == [("a[0]", "added")]


def test_whole_mappings_that_share_nothing_are_still_diffed_key_by_key():
    assert [c.dotted for c in diff({"m": {"a": 1, "b": 2}}, {"m": {"c": 3}})] == ["m.a", "m.b", "m.c"]


def test_root_level_scalars_and_non_mapping_documents():
    assert _summary(diff(1, 2)) == [("(root)", "changed", 1, 2)]
    assert _summary(diff(None, {})) == [("(root)", "type_changed", None, {})]


@pytest.mark.parametrize(
    ("path", "text"),
    [
        (("a", "b"), "a.b"),
        (("a", 0, "b"), "a[0].b"),
        (("env", "a.b"), 'env["a.b"]'),
        (("k", "with space"), 'k["with space"]'),
        (("k", ""), 'k[""]'),
        (("k", "*"), 'k["*"]'),
        (("--lr",), "--lr"),
        (("labels", 3.5), "labels[3.5]"),
        ((), "(root)"),
    ],
)
def test_format_path(path, text):
    assert format_path(path) == text


@pytest.mark.parametrize(
    ("glob", "path", "hit"),
    [
        ("a.b", ("a", "b"), True),
        ("a.b", ("a", "b", "c"), False),
        ("a.*", ("a", "b"), True),
        ("a.*", ("a", "b", "c"), False),
        ("a.*", ("a", 0), True),
        ("a.**", ("a",), True),
        ("a.**", ("a", "b", 1, "c"), True),
        ("a.**", ("ab",), False),
        ("**.seed", ("training", "seed"), True),
        ("**.seed", ("seed",), True),
        ("**", ("x", "y"), True),
        ("a.**.z", ("a", "z"), True),
        ("a.**.z", ("a", "b", "c", "z"), True),
        ("a.**.z", ("a", "b", "c"), False),
        ("lr_*", ("lr_end",), True),
        ("lr_?", ("lr_ab",), False),
        ("p[1]", ("p", 1), True),
        ("p[1]", ("p", "1"), False),
        ("p[*].type", ("p", 3, "type"), True),
        ('env["a.b"]', ("env", "a.b"), True),
        ('env["a*"]', ("env", "ab"), False),
        ('env["a*"]', ("env", "a*"), True),
    ],
)
def test_glob_matches(glob, path, hit):
    assert parse_glob(glob).match(path) is hit


@pytest.mark.parametrize("glob", ["", "a..b", "a.", ".a", "a[x]", 'a["b"', "a b", "a]"])
def test_invalid_globs_are_user_errors_with_a_hint(glob):
    with pytest.raises(UserError) as info:
        parse_glob(glob)
    assert "invalid --allow glob" in info.value.message and info.value.hint


def test_gate_allows_by_glob_and_by_every_leaf_of_an_added_container():
    old = {"s": {"strategy": "identity"}, "seed": 1}
    new = {"s": {"strategy": "coma", "params": {"n": 4, "k": {"deep": 1}}}, "seed": 2}
    changes = diff(old, new)
    assert [c.dotted for c in changes] == ["s.params", "s.strategy", "seed"]
    globs = parse_globs(["s.strategy", "s.params.**"])
    assert [c.dotted for c in disallowed(changes, globs)] == ["seed"]
    # listing the leaves of the added mapping allows it too, but not when one leaf is missing
    leaves = parse_globs(["s.strategy", "s.params.n", "s.params.k.deep", "seed"])
    assert disallowed(changes, leaves) == []
    partial = parse_globs(["s.strategy", "s.params.n", "seed"])
    assert [c.dotted for c in disallowed(changes, partial)] == ["s.params"]


def test_an_added_empty_mapping_needs_its_own_path_allowed():
    change = Change(("p",), "added", ABSENT, {})
    assert disallowed([change], parse_globs(["p"])) == []
    assert disallowed([change], parse_globs(["q"])) == [change]


def test_a_type_change_to_a_mapping_needs_the_old_path_and_the_new_leaves():
    old, new = {"p": 1}, {"p": {"a": 2}}
    (change,) = diff(old, new)
    assert disallowed([change], parse_globs(["p.a"])) == [change]
    assert disallowed([change], parse_globs(["p.**"])) == []


def test_no_globs_means_every_change_is_refused():
    changes = diff({"a": 1}, {"a": 2})
    assert disallowed(changes, []) == changes


def test_a_glob_matching_no_path_is_reported_with_suggestions():
    a = {"debate_streamer": {"reward_shaping_strategy": "identity"}}
    b = {"debate_streamer": {}}
    found = unmatched_globs(["debate_streamer.reward_shapin_strategy", "debate_streamer.*", "x"], a, b)
    assert found == {
        "debate_streamer.reward_shapin_strategy": ["debate_streamer.reward_shaping_strategy"],
        "x": [],
    }


def test_jsonable_keeps_values_readable():
    value = {"t": (1, 2), "s": {2, 1}, "r": Ref("a.b"), "n": math.inf, 3: b"x", "z": ABSENT}
    assert jsonable(value) == {"t": [1, 2], "s": [1, 2], "r": "a.b", "n": "inf", "3": "b'x'", "z": None}


# properties --------------------------------------------------------------------------------------

_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-3, 3),
    st.floats(-3, 3) | st.sampled_from([1.0, 0.0, -0.0, math.nan]),
    st.sampled_from(["", "a", "1", "a.b", "x y"]),
    st.sampled_from([Ref("a"), Ref("a.b")]),
    st.sets(st.integers(0, 3), max_size=3),
)
_keys = st.sampled_from(["a", "b", "c", "a.b", "0", "--lr", "", "__doc__", "_x"])
configs = st.recursive(
    _scalars,
    lambda children: st.one_of(
        st.lists(children, max_size=3),
        st.lists(children, max_size=3).map(tuple),
        st.dictionaries(_keys, children, max_size=4),
    ),
    max_leaves=12,
)
mappings = st.dictionaries(_keys, configs, max_size=4)


def _same_changes(xs, ys):
    return [(c.path, c.kind) for c in xs] == [(c.path, c.kind) for c in ys] and all(
        strictly_equal(x.old, y.old) and strictly_equal(x.new, y.new)
        if x.old is not ABSENT and x.new is not ABSENT
        else (x.old is ABSENT) == (y.old is ABSENT) and (x.new is ABSENT) == (y.new is ABSENT)
        for x, y in zip(xs, ys)
    )


@settings(max_examples=200, deadline=None)
@given(mappings, mappings)
def test_property_the_tree_walk_reports_exactly_what_deepdiff_reports(a, b):
    assert _same_changes(diff(a, b, aligned=False), deepdiff_changes(a, b))


@settings(max_examples=100, deadline=None)
@given(mappings)
def test_property_deepdiff_agrees_on_small_mutations(a):
    # most random pairs differ at the top; mutate one leaf deep inside to probe deeper paths too
    b = _mutate(a)
    assert _same_changes(diff(a, b, aligned=False), deepdiff_changes(a, b))


def _mutate(value):
    if isinstance(value, dict) and value:
        key = sorted(value, key=repr)[0]
        return {**value, key: _mutate(value[key])}
    if isinstance(value, list) and value:
        return [_mutate(value[0]), *value[1:]]
    if isinstance(value, tuple) and value:
        return (_mutate(value[0]), *value[1:])
    if type(value) is int:
        return value + 1
    if type(value) is str:
        return value + "!"
    return [value]


def test_reference_handles_sets_and_refs_like_the_walk():
    a = {"s": {1, 2}, "r": Ref("x"), "d": {"__doc__": "a"}}
    b = {"s": {1, 3}, "r": "x", "d": {"__doc__": "b"}}
    assert _same_changes(diff(a, b, aligned=False), deepdiff_changes(a, b))
    assert [c.dotted for c in diff(a, b)] == ["d.__doc__", "r", "s"]


@settings(max_examples=300, deadline=None)
@given(mappings)
def test_property_a_config_does_not_differ_from_itself(a):
    assert diff(a, a) == []


@settings(max_examples=400, deadline=None)
@given(mappings, mappings)
def test_property_no_changes_iff_strictly_equal_and_paths_are_symmetric(a, b):
    assert (diff(a, b) == []) == strictly_equal(a, b)  # aligned, as `sweepgen diff` compares
    forward, backward = diff(a, b, aligned=False), diff(b, a, aligned=False)
    assert (forward == []) == strictly_equal(a, b)
    assert [c.path for c in forward] == [c.path for c in backward]
    for f, r in zip(forward, backward):
        assert strictly_equal(f.old, r.new) and strictly_equal(f.new, r.old)


@settings(max_examples=200, deadline=None)
@given(mappings, mappings)
def test_property_each_changed_path_is_needed_and_enough_for_the_gate(a, b):
    assert disallowed(diff(a, b), [parse_glob(format_path(c.path)) for c in diff(a, b)]) == []
    changes = diff(a, b, aligned=False)  # index by index, changes never nest
    exact = [parse_glob(format_path(c.path)) for c in changes]  # formatting round-trips
    assert disallowed(changes, exact) == []
    for i, change in enumerate(changes):
        # changes never nest, so no other change's path can allow this one
        others = exact[:i] + exact[i + 1 :]
        assert disallowed(changes, others) == [change]


@settings(max_examples=200, deadline=None)
@given(mappings, mappings)
def test_property_a_mutated_copy_reports_exactly_the_mutated_path(a, b):
    for key in b:
        mutated = dict(a)
        mutated[key] = b[key]
        changes = diff(a, mutated)
        if key in a and strictly_equal(a[key], b[key]):
            assert changes == []
        else:
            assert changes and all(c.path[0] == key for c in changes)


@settings(max_examples=300, deadline=None)
@given(st.lists(configs, max_size=8), st.data())
def test_property_one_inserted_item_is_one_added_change(items, data):
    at = data.draw(st.integers(0, len(items)))
    item = data.draw(configs)
    grown = [*items[:at], item, *items[at:]]
    (change,) = diff({"l": items}, {"l": grown})
    assert change.kind == "added" and change.path[0] == "l"
    index = change.path[1]
    assert strictly_equal([*items[:index], grown[index], *items[index:]], grown)
    (change,) = diff({"l": grown}, {"l": items})
    assert change.kind == "removed"


def test_a_time_at_another_offset_is_a_change():
    """TOML and YAML read `07:32Z` and `08:32+01:00` as aware datetimes Python calls equal (one
    instant); a program reading them sees another hour and offset, so the pair is a change."""
    utc, plus1 = dt.timezone.utc, dt.timezone(dt.timedelta(hours=1))
    old = {"start": dt.datetime(1979, 5, 27, 7, 32, tzinfo=utc), "at": dt.time(7, 32, tzinfo=utc)}
    new = {"start": dt.datetime(1979, 5, 27, 8, 32, tzinfo=plus1), "at": dt.time(7, 32, tzinfo=plus1)}
    assert [c.dotted for c in diff(old, new)] == ["at", "start"]
    same_offset = {"start": dt.datetime(1979, 5, 27, 7, 32, tzinfo=dt.timezone(dt.timedelta(0)))}
    assert diff({"start": old["start"]}, same_offset) == []  # `Z` and `+00:00` are one spelling
