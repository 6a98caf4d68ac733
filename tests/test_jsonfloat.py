"""NaN and infinities in JSON: tagged on the way out, the same floats on the way back."""

from __future__ import annotations

import json
import math

from hypothesis import given
from hypothesis import strategies as st

from sweepgen.formats.jsonfloat import FLOAT_TAG, tag, tagged, untagged
from sweepgen.paths import same

_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=4),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3),
    max_leaves=10,
)


@given(_JSON)
def test_tagged_data_is_strict_json_and_reads_back_as_itself(value):
    text = json.dumps(tagged(value), allow_nan=False)  # raises on a NaN left untagged
    assert same(untagged(json.loads(text)), value)


def test_each_non_finite_float_has_its_own_tag():
    assert [tag(v) for v in (math.nan, math.inf, -math.inf)] == [
        {FLOAT_TAG: "nan"},
        {FLOAT_TAG: "inf"},
        {FLOAT_TAG: "-inf"},
    ]
    assert tagged((1.5, -0.0)) == [1.5, -0.0]  # finite floats are left alone


def test_an_unknown_tag_is_left_as_data():
    assert untagged({FLOAT_TAG: "NaN"}) == {FLOAT_TAG: "NaN"}
    assert untagged({FLOAT_TAG: "nan", "x": 1}) == {FLOAT_TAG: "nan", "x": 1}
