"""A Hydra override's value is typed by Hydra's own grammar, not YAML's: `a=0x10` is the string
"0x10" to Hydra (YAML reads 16), `a=inf` a float (YAML: a string). Held against hydra-core's override
parser (hydra-core is in the `dev` extra: the reference is always there), and by fixed cases."""

from __future__ import annotations

import math

import pytest
from hydra.core.override_parser.overrides_parser import OverridesParser
from hypothesis import given, settings
from hypothesis import strategies as st

from sweepgen.readers.cmdline import hydra_scalar
from sweepgen.readers.diff import diff
from sweepgen.readers.shellconfig import read_shell

SPELLINGS = ["0x10", "010", "00", "0o17", "inf", "-inf", ".inf", "+.inf", "NaN", ".NaN", "1_000", "1__0",
             "1_", "1e5", "1E5", "1.", ".5", "1.e5", "1e5_0", "+1", "-0", "TRUE", "fAlse", "yes", "Null",
             "1:30", "0b1", "1e-5", "0.00001"]  # fmt: skip


def _same(a: object, b: object) -> bool:
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a):
        return math.isnan(b)
    return type(a) is type(b) and a == b


def test_override_values_that_yaml_and_hydra_read_differently():
    assert hydra_scalar("0x10") == "0x10" and hydra_scalar("010") == "010"
    assert hydra_scalar("1_000") == 1000 and hydra_scalar("inf") == math.inf
    assert hydra_scalar(".inf") == ".inf" and hydra_scalar("TRUE") is True and hydra_scalar("nulL") is None
    for one, two in [("a=0x10", "a=16"), ("a=010", "a=10"), ("a=inf", "\"a='inf'\""), ("a=.inf", "a=inf")]:
        a = read_shell(f"python -m app {one}\n").data
        b = read_shell(f"python -m app {two}\n").data
        assert diff(a, b), (one, two)
    # argparse's int()/float() refuse `0x10` and `.inf`: never the same as 16 and inf
    a, b = read_shell("python t.py --x 0x10 --y .inf\n").data, read_shell("python t.py --x 16 --y inf\n").data
    assert [c.dotted for c in diff(a, b)] == ['commands["t.py"].--x', 'commands["t.py"].--y']


@pytest.mark.parametrize("text", SPELLINGS)
def test_hydra_reads_each_spelling_so(text):
    parser = OverridesParser.create()
    assert _same(hydra_scalar(text), parser.parse_override(f"a={text}").value()), text


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet="0123456789_.eE+-xoinfaINFAtrulsTRULS", min_size=1, max_size=8))
def test_hydra_scalar_agrees_with_hydra(text):
    parser = OverridesParser.create()
    try:
        expected = parser.parse_override(f"a={text}").value()
    except Exception:  # noqa: BLE001 - a value Hydra refuses has no typing to compare
        return
    assert _same(hydra_scalar(text), expected), text
