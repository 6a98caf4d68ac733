"""A Hydra override's value is typed by Hydra's own grammar, not YAML's: `a=0x10` is the string
"0x10" to Hydra (YAML reads 16), `a=inf` a float (YAML: a string). Held against hydra-core's override
parser (hydra-core is in the `dev` extra: the reference is always there), and by fixed cases: flow
lists and dicts item by item, quoted values, and `a=1,2` sweeps included."""

from __future__ import annotations

import math

import pytest
from hydra.core.override_parser.overrides_parser import OverridesParser
from hydra.core.override_parser.types import ChoiceSweep, QuotedString
from hypothesis import given, settings
from hypothesis import strategies as st

from sweepgen.readers.diff import diff
from sweepgen.readers.shell.shellconfig import read_shell
from sweepgen.readers.structured.hydravalue import Refused, Sweep, read_value

SPELLINGS = ["0x10", "010", "00", "0o17", "inf", "-inf", ".inf", "+.inf", "NaN", ".NaN", "1_000", "1__0",
             "1_", "1e5", "1E5", "1.", ".5", "1.e5", "1e5_0", "+1", "-0", "TRUE", "fAlse", "yes", "Null",
             "1:30", "0b1", "1e-5", "0.00001"]  # fmt: skip


def _same(a: object, b: object) -> bool:
    """Equal and of the same type all the way down (dict keys and their order too)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a):
        return math.isnan(b)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    if isinstance(a, dict) and isinstance(b, dict):
        pairs = zip(a.items(), b.items())
        return len(a) == len(b) and all(_same(k, j) and _same(v, w) for (k, v), (j, w) in pairs)
    return a == b


def _hydra(value: object) -> object:
    """hydra-core's reading in this module's terms: a simple sweep is a ``Sweep``, a quoted string
    its text; a function's result (computed by Hydra, kept as source here) is ``Refused``."""
    if isinstance(value, ChoiceSweep):
        return Sweep(_hydra(x) for x in value.list) if value.simple_form else Refused
    if isinstance(value, QuotedString):
        return value.text
    if isinstance(value, list):
        return [_hydra(x) for x in value]
    if isinstance(value, dict):
        return {_hydra(k): _hydra(v) for k, v in value.items()}
    return value if value is None or isinstance(value, (str, int, float)) else Refused


def _both(text: str) -> tuple[object, object]:
    """(hydra-core's reading of ``a=text``, ours); ``Refused`` where either refuses."""
    try:
        theirs = _hydra(OverridesParser.create().parse_override(f"a={text}").value())
    except Exception:  # noqa: BLE001 - whatever Hydra raises, it refuses the value
        theirs = Refused
    try:
        ours = read_value(text)
    except Refused:
        ours = Refused
    return theirs, ours


def test_override_values_that_yaml_and_hydra_read_differently():
    assert read_value("0x10") == "0x10" and read_value("010") == "010"
    assert read_value("1_000") == 1000 and read_value("inf") == math.inf
    assert read_value(".inf") == ".inf" and read_value("TRUE") is True and read_value("nulL") is None
    for one, two in [("a=0x10", "a=16"), ("a=010", "a=10"), ("a=inf", "\"a='inf'\""), ("a=.inf", "a=inf")]:
        a = read_shell(f"python -m app {one}\n").data
        b = read_shell(f"python -m app {two}\n").data
        assert diff(a, b), (one, two)
    # argparse's int()/float() refuse `0x10` and `.inf`: never the same as 16 and inf
    a, b = read_shell("python t.py --x 0x10 --y .inf\n").data, read_shell("python t.py --x 16 --y inf\n").data
    assert [c.dotted for c in diff(a, b)] == ['commands["t.py"].--x', 'commands["t.py"].--y']


APART = [("010", "10"), ("00", "0"), ("-07", "-7"), ("null", "~"), ("Null", "null")]


@pytest.mark.parametrize(("one", "two"), APART)
def test_flag_words_a_program_may_read_apart_are_never_one_value(one, two):
    """`010` is 10 only to int(); to a str flag, Python's literals, JSON and Hydra it is a zero-padded
    name, and no argparse type makes None of `null` or `~`: each pair is a change, never equal."""
    a, b = read_shell(f"python t.py --x {one}\n").data, read_shell(f"python t.py --x {two}\n").data
    assert [c.dotted for c in diff(a, b)] == ['commands["t.py"].--x'], (one, two)
    same = [read_shell(f"python t.py --x 10 --y {lr}\n").data for lr in ("1e-3", "0.001")]
    assert same[0] == same[1]  # what every numeric reader reads alike stays one value


@pytest.mark.parametrize("text", SPELLINGS)
def test_hydra_reads_each_spelling_so(text):
    parser = OverridesParser.create()
    assert _same(read_value(text), parser.parse_override(f"a={text}").value()), text


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet="0123456789_.eE+-xoinfaINFAtrulsTRULS/$%*@?|", min_size=1, max_size=8))
def test_scalars_agree_with_hydra(text):
    theirs, ours = _both(text)
    assert _same(ours, theirs), text


def _read(word: str) -> dict:
    return read_shell(f"python -m app {word}\n").data


@pytest.mark.parametrize(
    ("one", "two"),
    [
        ("a=[0x10]", "a=[16]"),  # Hydra: ['0x10'] and [16]
        ("a=[010,.inf]", "a=[10,inf]"),
        ("a={k:0x10}", "a={k:16}"),
        ("'a={k: 0x10}'", "'a={k: 16}'"),
        ("a={k:[1,{j:0o17}]}", "a={k:[1,{j:15}]}"),
        ("a=[yes,on]", "a=[true,true]"),  # strings to Hydra, bools to YAML 1.1
        ("a=1,2", "\"a='1,2'\""),  # a sweep over 1 and 2, not the string
        ("a=1,2", "a=[1,2]"),  # a sweep, not a list
        ("'a=\"x\\ty\"'", "'a=\"x\ty\"'"),  # Hydra keeps the backslash: no tab
        ("'a=\"\\x41\"'", "a=A"),
    ],
)
def test_override_values_hydra_reads_differently_are_a_change(one, two):
    assert diff(_read(one), _read(two)), (one, two)


@pytest.mark.parametrize(
    ("one", "two"),
    [
        ("a=[1,2]", "'a=[ 1 , 2 ]'"),
        ("a=[0x10]", 'a=["0x10"]'),
        ("a={k:1_000}", "'a={ k : 1000 }'"),
        ("a=[1e-5]", "a=[0.00001]"),
        ("'a=x\\,y'", "\"a='x,y'\""),  # an escaped comma is a comma, not a sweep
    ],
)
def test_override_values_hydra_reads_alike_are_no_change(one, two):
    assert diff(_read(one), _read(two)) == [], (one, two)


def test_values_hydra_refuses_or_computes_stay_source():
    data = _read("'a=choice(1,2)' 'b=[1,#]' c=café")["commands"]["app"]
    assert [type(data[k]).__name__ for k in "abc"] == ["NotEvaluated"] * 3


PIECES = ["[", "]", "{", "}", ",", ", ", ":", " : ", "0x10", "16", "1e5", "1_0", ".5", "inf", "NaN",
          "TRUE", "null", "a", "b c", "'q'", '"x\\"y"', "'a\\\\'", "${x}", "\\,", "\\ ", "-", "+1",
          "/p", "é", "#", "(", ")", "f(", "=", " ", "\t", "1.", "010", "'", '"', "\\"]  # fmt: skip


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(PIECES), min_size=1, max_size=7).map("".join))
def test_nested_values_agree_with_hydra(text):
    theirs, ours = _both(text)
    assert _same(ours, theirs), (text, ours, theirs)


def test_a_sweep_shows_as_written_and_by_its_own_type():
    (change,) = diff(_read("a=1,2"), _read("a=[1,2]"))
    assert (change.kind, change.old_type, change.new_type, repr(change.old)) == (
        "type_changed",
        "sweep",
        "list",
        "1,2",
    )
