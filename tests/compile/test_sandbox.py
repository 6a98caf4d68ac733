"""The template filters: YAML written by `to_yaml` reads back identically with YAML 1.1 and 1.2 readers."""

from __future__ import annotations

import math

import yaml
from hypothesis import example, given
from hypothesis import strategies as st

from sweepgen.compile.template.sandbox import pyrepr
from sweepgen.compile.template.yamlfilter import YamlWriter, to_yaml, yaml_scalar
from sweepgen.formats.yamlio import loads
from sweepgen.paths import same

TEXT = st.text(st.characters(blacklist_categories=("Cs", "Cc", "Zl", "Zp", "Co", "Cn")), max_size=8)
SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(10**12), 10**12),
    st.floats(allow_nan=False, allow_infinity=True),
    TEXT,
    st.sampled_from(
        [
            "yes",
            "no",
            "on",
            "off",
            "y",
            "n",
            "null",
            "~",
            "1e-5",
            "0x1f",
            "1_000",
            "2025-05-15",
            "- a",
            "a: b",
            "#x",
            "'q'",
            '"q"',
            "",
            " lead",
            "trail ",
            "${HOME}/x",
            "{a}",
            "[a]",
            "@x",
            "`x",
            "!x",
            "%x",
            "&x",
            "*x",
            "|",
            ">",
        ]
    ),
)
TREES = st.recursive(
    SCALARS,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(TEXT, inner, max_size=3),
    max_leaves=15,
)


@given(TREES)
def test_to_yaml_round_trips_through_both_yaml_readers(value):
    doc = {"v": value}
    text = to_yaml(doc)
    assert same(yaml.safe_load(text), doc)  # PyYAML: YAML 1.1 rules
    assert same(loads(text, "t.yaml", string_keys=False).data, doc)  # ours: YAML 1.2 rules


@given(TREES)
def test_cached_writer_gives_the_same_text_as_a_fresh_one(value):
    writer = YamlWriter()
    doc = {"a": value, "b": {"c": value}}
    assert writer(doc) == writer(doc) == to_yaml(doc)


# values a cache keyed by equality would confuse: 0.0 == -0.0 == False, 1 == 1.0 == True, nan != nan
LOOKALIKES = st.sampled_from([0.0, -0.0, 0, False, 1, 1.0, True, math.nan, -math.nan, math.inf, "0", None])


@given(st.lists(st.dictionaries(st.sampled_from("ab"), LOOKALIKES | SCALARS, max_size=2), max_size=6))
@example([{"a": 0.0}, {"a": -0.0}, {"a": 1}, {"a": 1.0}, {"a": True}])
def test_one_writer_over_many_variants_writes_each_as_a_fresh_writer_would(leaves):
    """As a render uses it: one writer, variant after variant, each a few changed leaves."""
    writer = YamlWriter()
    for changed in leaves:
        doc = {"section": {"a": 1, "b": 2, **changed}}
        assert writer(doc) == to_yaml(doc)


def test_float_spelling_survives_yaml_1_1():
    assert yaml_scalar(1e-5) == "1.0e-05" and yaml.safe_load("x: 1.0e-05")["x"] == 1e-5
    assert yaml_scalar(3.0) == "3.0" and yaml_scalar(math.inf) == ".inf" and yaml_scalar(True) == "true"


@given(TREES)
def test_pyrepr_is_a_python_literal(value):
    import ast

    if isinstance(value, float) and math.isinf(value):
        return
    text = pyrepr(value)
    if "inf" in text:
        return  # float("inf") is an expression, not a literal
    assert same(ast.literal_eval(text), value)
