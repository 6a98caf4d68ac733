"""`prefixItems` (draft 2020-12 tuples: pydantic's export of ``tuple[float, float]``, as TRL's
RLOOConfig.reward_clip_range) against the ``jsonschema`` package as the oracle: the subset says a
value fits exactly when the reference validator does (floats with no fraction left out: the subset
refuses ``1.0`` for an integer on purpose, where JSON Schema takes it)."""

from __future__ import annotations

from typing import Any

import jsonschema
from hypothesis import given, settings
from hypothesis import strategies as st

from sweepgen.compile.schema import jsonschema_subset

_ITEM_SCHEMAS = st.sampled_from(
    [{"type": "number"}, {"type": "integer"}, {"type": "string"}, {"enum": ["a", "b"]}, True, False]
)
_VALUES = st.one_of(
    st.integers(-3, 3),
    st.floats(-2, 2, allow_nan=False).filter(lambda x: not x.is_integer()),
    st.sampled_from(["a", "b", "z"]),
    st.none(),
)


@st.composite
def _tuple_schemas(draw: st.DrawFn) -> dict[str, Any]:
    schema: dict[str, Any] = {
        "type": "array",
        "prefixItems": draw(st.lists(_ITEM_SCHEMAS, min_size=1, max_size=3)),
    }
    if draw(st.booleans()):
        schema["items"] = draw(_ITEM_SCHEMAS)
    if draw(st.booleans()):
        schema["minItems"] = draw(st.integers(0, 3))
    if draw(st.booleans()):
        schema["maxItems"] = draw(st.integers(0, 4))
    return schema


@settings(deadline=None, max_examples=400)
@given(_tuple_schemas(), st.lists(_VALUES, max_size=5))
def test_a_tuple_schema_fits_exactly_what_jsonschema_accepts(schema, value):
    jsonschema_subset.check_schema(schema)
    oracle = jsonschema.Draft202012Validator(schema).is_valid(value)
    assert (jsonschema_subset.validate(value, schema) == []) == oracle


def test_a_tuple_refusal_names_the_place_and_the_tuple_s_shape():
    schema = {
        "type": "object",
        "properties": {
            "reward_clip_range": {
                "anyOf": [
                    {
                        "type": "array",
                        "prefixItems": [{"type": "number"}, {"type": "number"}],
                        "minItems": 2,
                        "maxItems": 2,
                    },
                    {"type": "null"},
                ]
            }
        },
    }
    assert jsonschema_subset.validate({"reward_clip_range": [-1, 1.5]}, schema) == []
    [(path, message)] = jsonschema_subset.validate({"reward_clip_range": [1, 2, 3]}, schema)
    assert path == "reward_clip_range" and "expected [number, number] or null" in message
    inner = jsonschema_subset.validate([1, "x"], schema["properties"]["reward_clip_range"]["anyOf"][0])
    assert inner == [("", "item 1: expected number, got string; value 'x'")] or inner[0][1].startswith(
        "item 1:"
    )


def test_prefix_items_must_be_an_array_of_schemas():
    for bad in ([], {"type": "number"}, "number"):
        try:
            jsonschema_subset.check_schema({"type": "array", "prefixItems": bad})
        except jsonschema_subset.UnsupportedSchema as err:
            assert "prefixItems" in str(err)
        else:
            raise AssertionError(f"prefixItems {bad!r} was taken")
