"""One sandboxed call is bounded on its own (the time budget is noticed between steps): calls that
would build far more than their inputs are refused from the result's size, quadratic ones are done
linearly or refused from their input's size, and a shared value repeated by `*`, `+` or a written
list is weighed where it is built, so no later walk of it (`==`, `{{ }}`, `tojson`, `to_yaml`,
`pyrepr`) can run long."""

from __future__ import annotations

import re
import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sweepgen.compile.template import bounds
from sweepgen.compile.template.sandbox import LimitExceeded, make_env

BIG = "{% set x = [0] * 10**6 %}{% set y = [0] * 10**6 %}"
DOUBLING = "{% set ns = namespace(a=[1]) %}{% for i in range(60) %}{% set ns.a = NEXT %}{% endfor %}"


def render(source: str) -> str:
    return make_env().from_string(source).render()


@pytest.mark.parametrize(
    "source, message",
    [
        ('{{ ("x" * 10**7) | wordwrap(1) }}', "`wordwrap` of 10,000,000 characters"),
        ('{{ "a b" | wordwrap(0) }}', "`wordwrap` width 0"),
        ("{{ lipsum(n=10**6) }}", "`lipsum` of more than 100,000 words"),
        ("{{ lipsum(2, False, 20, 10**6) }}", "`lipsum` of more than 100,000 words"),
        ('{{ ("a" * 10**5) | replace("a", "a" * 10**5) }}', "`replace` would build a string"),
        ('{{ ("a" * 10**5).replace("a", "a" * 10**5) }}', "`replace` would build a string"),
        ("{{ [1] | slice(10**9) | list }}", "`slice` into 1,000,000,000 lists"),
        (BIG + "{{ ([x] * 6) | sum(start=[0] * 5 * 10**6) }}", "`sum` would build a value"),
        (BIG + "{{ ([x] * 1000) | pyrepr }}", "`*` would build a value"),
        (BIG + "{{ [x] * 11 == [y] * 11 }}", "`*` would build a value"),
        (BIG + "{{ ([x] * 6) + ([y] * 6) }}", "`+` would build a value"),
        (
            '{% set s = "x" * 10**6 %}{{ [s, s, s, s, s, s, s, s, s, s, s] | join }}',
            "written in the template",
        ),
        (DOUBLING.replace("NEXT", "[ns.a, ns.a]") + "{{ ns.a | tojson }}", "written in the template"),
        (DOUBLING.replace("NEXT", "{'a': ns.a, 'b': ns.a}") + "{{ ns.a }}", "written in the template"),
        (DOUBLING.replace("NEXT", "(ns.a, ns.a)") + "{{ ns.a | to_yaml }}", "written in the template"),
        (DOUBLING.replace("NEXT", "ns.a + ns.a") + "{{ ns.a }}", "`+` would build"),
    ],
)
def test_one_call_cannot_run_long(source, message):
    started = time.monotonic()
    with pytest.raises(LimitExceeded, match=re.escape(message)):
        render(source)
    assert time.monotonic() - started < 10


def test_the_same_calls_within_bounds_still_work():
    assert render('{{ "a b c" | wordwrap(1) }}') == "a\nb\nc"
    assert render(
        "{{ [[1], [2, 3]] | sum(start=[]) }} {{ [1, 2.5] | sum }} {{ [(1,), (2,)] | sum(start=()) }}"
    ) == ("[1, 2, 3] 3.5 (1, 2)")
    assert render("{{ [{'n': 1}, {'n': 2}] | sum(attribute='n') }}") == "3"
    assert render('{{ "aXb" | replace("X", "--") }} {{ "aXb".replace("X", "") }}') == "a--b ab"
    assert render("{{ [1, 2, 3] | slice(2) | list }}") == "[[1, 2], [3]]"
    assert len(render("{{ lipsum(3, False) }}")) > 0
    assert render("{% set x = [0] * 10**6 %}{{ ([x] * 9) | length }} {{ [x, x] | length }}") == "9 2"


def test_sum_of_lists_is_linear():
    started = time.monotonic()
    assert render("{{ ([[0] * 1000] * 5000) | sum(start=[]) | length }}") == "5000000"
    assert time.monotonic() - started < 10


@settings(max_examples=200, deadline=None)
@given(
    st.recursive(
        st.none() | st.integers() | st.text(max_size=5), lambda c: st.lists(c, max_size=4), max_leaves=30
    )
)
def test_weight_counts_a_shared_value_once_per_reference(value):
    shared = [value, value, [value]]
    assert bounds.weight(shared) == 1 + 2 * bounds.weight(value) + 1 + bounds.weight(value)
    assert bounds.weight(shared, limit=3) <= 4
