"""The YAML reader: YAML 1.2 typing where 1.1 bites ML configs, marks for every node, loud errors."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from sweepgen.errors import SpecError
from sweepgen.formats.yamlio import loads
from sweepgen.formats.yamlwrite import dumps


@pytest.mark.parametrize(
    "text, expected",
    [
        ("1e-5", 1e-5),
        ("3.0e-6", 3.0e-6),
        ("-2E+3", -2000.0),
        (".5", 0.5),
        ("1.", 1.0),
        ("42", 42),
        ("-7", -7),
        ("0o17", 15),
        ("0x1F", 31),
        ("012", 12),
        ("true", True),
        ("False", False),
        ("null", None),
        ("~", None),
        ("", None),
        (".inf", math.inf),
        ("-.Inf", -math.inf),
        # YAML 1.1 would turn these into booleans, ints or dates; 1.2 keeps them strings
        ("on", "on"),
        ("off", "off"),
        ("yes", "yes"),
        ("no", "no"),
        ("y", "y"),
        ("N", "N"),
        ("2025_05_15", "2025_05_15"),
        ("1_000", "1_000"),
        ("2025-05-15", "2025-05-15"),
        ("1:30", "1:30"),
        ("'1e-5'", "1e-5"),
        ('"true"', "true"),
        ("!!str 1e-5", "1e-5"),
        ("!!float 3", 3.0),
        ("gpu_1", "gpu_1"),
        ("${HOME}/x", "${HOME}/x"),
    ],
)
def test_scalars_follow_yaml_1_2(text, expected):
    value = loads(f"v: {text}\n", "t.yaml").data["v"]
    assert value == expected and type(value) is type(expected)


def test_nan_is_a_float():
    assert math.isnan(loads("v: .nan\n", "t.yaml").data["v"])


def test_marks_give_one_based_line_and_column_of_keys_and_values():
    doc = loads("a:\n  b: [1, 2]\n  c:\n    - {d: x}\n", "t.yaml")
    assert doc.key_marks[("a", "b")] == (2, 3)
    assert doc.marks[("a", "b")] == (2, 6)
    assert doc.marks[("a", "b", 1)] == (2, 10)
    assert doc.marks[("a", "c", 0, "d")] == (4, 11)
    assert str(doc.loc(("a", "c", 0, "d"), key=True)) == "t.yaml:4:8"
    # a path that does not exist falls back to its closest written ancestor
    assert str(doc.loc(("a", "b", "nope"))) == "t.yaml:2:6"


@pytest.mark.parametrize(
    "text, message, where",
    [
        ("a: 1\nb: 2\na: 3\n", "duplicate key 'a' (first defined at line 1)", "t.yaml:3:1"),
        ("a: {x: 1, x: 2}\n", "duplicate key 'x'", "t.yaml:1:11"),
        ("a: [1, 2\n", "YAML syntax error", "t.yaml:2:1"),
        ("a: 1\n  b: 2\n", "YAML syntax error", "t.yaml:2:4"),
        ("1: x\n", "mapping key '1' is a int", "t.yaml:1:1"),
        ("true: x\n", "mapping key 'true' is a bool", "t.yaml:1:1"),
        ("a: !!python/name:os.system x\n", "unsupported YAML tag", "t.yaml:1:4"),
        ("a: !custom x\n", "unsupported YAML tag", "t.yaml:1:4"),
        ("a: !!int x\n", "'x' is not a valid int", "t.yaml:1:4"),
        ("base: &b {x: 1}\nother:\n  <<: *b\n", "merge keys", "t.yaml:3:3"),
        ("a: 1\n---\nb: 2\n", "holds a second YAML document (`---` here)", "t.yaml:2:1"),
    ],
)
def test_errors_name_file_line_and_column(text, message, where):
    with pytest.raises(SpecError) as err:
        loads(text, "t.yaml")
    assert message in err.value.message
    assert str(err.value.location) == where
    assert err.value.hint


def test_non_string_keys_allowed_when_asked():
    assert loads("1: x\n", "t.yaml", string_keys=False).data == {1: "x"}


def test_anchors_and_aliases_are_plain_data():
    doc = loads("a: &x {b: 1}\nc: *x\n", "t.yaml")
    assert doc.data == {"a": {"b": 1}, "c": {"b": 1}}


def test_empty_document_is_none():
    assert loads("", "t.yaml").data is None
    assert loads("# only a comment\n", "t.yaml").data is None


_TEXT = st.text(st.characters(blacklist_categories=("Cs", "Cc", "Zl", "Zp", "Co", "Cn")), max_size=8)


@given(
    st.recursive(
        st.none()
        | st.booleans()
        | st.integers(-(10**6), 10**6)
        | st.floats(allow_nan=False, allow_infinity=False)
        | _TEXT,
        lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_TEXT.filter(bool), inner, max_size=3),
        max_leaves=12,
    )
)
def test_json_documents_read_back_exactly(value):
    """JSON is YAML 1.2: whatever json.dumps writes must come back identical, types included."""
    import json

    from sweepgen.paths import same

    # (PyYAML cannot read JSON's surrogate-pair escapes, so non-ASCII is written as is)
    assert same(loads(json.dumps({"v": value}, ensure_ascii=False), "t.yaml").data, {"v": value})


# strings that look like a number, a bool or null to one YAML version or the other
_LOOKALIKE = st.text(alphabet="0123456789eE.+-_oxXbfinaNtrulsyO~: ", max_size=6)


@pytest.mark.parametrize(
    "text", ["1e-5", "0o17", "+.5e3", ".inf", "on", "no", "1_000", "0x1F", "~", "", "1:30"]
)
def test_a_string_is_dumped_so_both_yaml_versions_read_a_string(text):
    import yaml

    dumped = dumps({"v": text})
    assert loads(dumped, "t.yaml").data == {"v": text}  # YAML 1.2: how the trainer and report read
    assert yaml.safe_load(dumped) == {"v": text}  # YAML 1.1: how other tools read it


@given(
    st.recursive(
        st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | _TEXT | _LOOKALIKE,
        lambda inner: (
            st.lists(inner, max_size=3)
            | st.dictionaries(_TEXT.filter(bool) | _LOOKALIKE.filter(bool), inner, max_size=3)
        ),
        max_leaves=12,
    )
)
def test_dumped_data_reads_back_exactly(value):
    import yaml

    from sweepgen.paths import same

    dumped = dumps({"v": value})
    assert same(loads(dumped, "t.yaml").data, {"v": value})
    assert same(yaml.safe_load(dumped), {"v": value})


def _laughs(levels: int) -> str:
    lines = ["a0: &a0 [x, x, x, x, x, x, x, x, x, x]"]
    lines += [f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 10) + "]" for i in range(1, levels)]
    return "\n".join(lines) + "\n"


def test_alias_chains_are_shared_and_counted_expanded():
    """Aliases share the object built once, but count as the nodes they expand to: a billion-laughs
    document is refused at once (every later walk of the data would be exponential)."""
    doc = loads(_laughs(9), "t.yaml", max_nodes=None)
    assert doc.data["a8"][0] is doc.data["a7"] and doc.data["a1"][9] is doc.data["a0"]
    sizes = [11]  # a0: the list and its 10 scalars; a_i: the list and 10 copies of a_(i-1)
    for _ in range(8):
        sizes.append(1 + 10 * sizes[-1])
    assert doc.nodes == 1 + sum(sizes)  # the root mapping, then each value expanded
    with pytest.raises(SpecError, match="expands to more than 1,000,000 nodes") as info:
        loads(_laughs(9), "t.yaml")
    assert str(info.value.location).startswith("t.yaml:") and "limits: {yaml_nodes: N}" in info.value.hint
    assert loads(_laughs(5), "t.yaml").nodes < 200_000  # a big, honest document still loads


def test_recursive_aliases_are_refused():
    with pytest.raises(SpecError, match="refers to the node that contains it"):
        loads("a: &a\n  b: *a\n", "t.yaml")
