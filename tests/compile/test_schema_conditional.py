"""`if`/`then`/`else` in the schema subset, against the `jsonschema` package as the oracle, and the
schema code_choices writes for an option closed only under another field's value."""

from __future__ import annotations

from typing import Any

import jsonschema
from hypothesis import given, settings
from hypothesis import strategies as st

from sweepgen.compile.schema import code_choices, jsonschema_subset

_LEAVES = st.sampled_from(
    [
        {"properties": {"g": {"enum": ["a"]}}},
        {"properties": {"g": {"enum": ["a"]}}, "required": ["g"]},
        {"properties": {"f": {"enum": ["x", "y"]}}},
        {"properties": {"f": {"type": "string", "enum": ["x"]}}},
        {"required": ["f"]},
        True,
        False,
    ]
)


@st.composite
def _conditionals(draw: st.DrawFn) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "object", "if": draw(_LEAVES)}
    for key in ("then", "else"):
        if draw(st.booleans()):
            schema[key] = draw(_LEAVES)
    return {"allOf": [schema]} if draw(st.booleans()) else schema


_CONFIGS = st.dictionaries(
    st.sampled_from(["f", "g"]), st.sampled_from(["a", "b", "x", "y", True, 1]), max_size=2
)


@settings(deadline=None, max_examples=500)
@given(_conditionals(), _CONFIGS)
def test_a_conditional_schema_fits_exactly_what_jsonschema_accepts(schema, config):
    jsonschema_subset.check_schema(schema)
    oracle = jsonschema.Draft202012Validator(schema).is_valid(config)
    assert (jsonschema_subset.validate(config, schema) == []) == oracle


def _schema(default: Any, when: tuple[Any, ...]) -> dict[str, Any]:
    props = {
        "scale": {"anyOf": [{"type": "string"}, {"type": "boolean"}], "default": "group"},
        "agg": {"type": ["string", "boolean", "integer"], "default": default},
    }
    closes = (["batch", "group", "none"], "trl raises for any other value when agg is 'sum', x.py:9")
    rule = code_choices._if_then(props, "scale", (("agg", when),), closes)
    return {"type": "object", "properties": props, "allOf": [rule]}


def test_an_option_closed_under_another_s_default_is_held_when_that_one_is_left_out():
    schema = _schema("sum", ("sum",))
    [(path, message)] = jsonschema_subset.validate({"scale": "batc"}, schema)
    assert path == "scale" and "must be one of ['batch', 'group', 'none'] or boolean" in message
    assert "when agg is 'sum', x.py:9" in message and "did you mean 'batch'?" in message
    assert jsonschema_subset.validate({"scale": "batc", "agg": "mean"}, schema) == []  # never read there
    assert jsonschema_subset.validate({"scale": False}, schema) == []  # TRL maps booleans itself
    assert jsonschema_subset.validate({"scale": "batch"}, schema) == []


def test_an_option_closed_under_a_value_that_is_not_the_default_needs_that_value_given():
    schema = _schema(False, (True,))  # `use_vllm: true`, default false
    assert jsonschema_subset.validate({"scale": "batc"}, schema) == []
    assert jsonschema_subset.validate({"scale": "batc", "agg": 1}, schema) == []  # 1 is not true
    assert jsonschema_subset.validate({"scale": "batc", "agg": True}, schema) != []


@settings(deadline=None, max_examples=200)
@given(
    st.sampled_from([1, 0.5, 2, 0.1]),
    st.one_of(
        st.integers(-20, 20),
        st.floats(-20, 20, allow_nan=False, allow_infinity=False).map(lambda f: round(f, 1)),
    ),
)
def test_multiple_of_fits_exactly_what_jsonschema_accepts(step, value):
    """multipleOf (TRL's `*_steps` above 1 must be whole: 2.0 is, 2.5 is not), the subset against
    the jsonschema package, alone and under `not`."""
    for schema in (
        {"multipleOf": step},
        {"type": "number", "exclusiveMinimum": 1, "not": {"multipleOf": step}},
    ):
        jsonschema_subset.check_schema(schema)
        oracle = jsonschema.Draft202012Validator(schema).is_valid(value)
        assert (jsonschema_subset.validate(value, schema) == []) == oracle, (schema, value)
