"""The one allow-glob grammar (sweepgen.globs): what it matches, what it refuses, and that matching
agrees with a plain recursive reference on random globs and paths (the reference is exponential in
the worst case, so it only runs on small inputs; the linear matcher runs on the hostile ones)."""

from __future__ import annotations

import fnmatch

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sweepgen import globs, paths


@pytest.mark.parametrize(
    "pattern, path, hit",
    [
        ("a.b", ("a", "b"), True),
        ("a.b", ("a", "b", "c"), False),
        ("a.*", ("a", "b"), True),
        ("a.*", ("a", 0), True),
        ("a.**", ("a",), True),
        ("a.**", ("a", "b", 1, "c"), True),
        ("a.**", ("ab",), False),
        ("**.seed", ("training", "seed"), True),
        ("**.seed", ("seed",), True),
        ("a.**.z", ("a", "z"), True),
        ("a.**.z", ("a", "b", "c"), False),
        ("**.**.x", ("x",), True),
        ("lr_*", ("lr_end",), True),
        ("lr_?", ("lr_ab",), False),
        ("*x*", ("abc",), False),
        ("p[1]", ("p", 1), True),
        ("p[1]", ("p", "1"), False),
        ("p[*].type", ("p", 3, "type"), True),
        ('env["a.b"]', ("env", "a.b"), True),
        ('env["a*"]', ("env", "ab"), False),
        ('env["a*"]', ("env", "a*"), True),
    ],
)
def test_glob_grammar(pattern, path, hit):
    assert globs.compile_glob(pattern).match(path) is hit


@pytest.mark.parametrize(
    "pattern, why",
    [
        ("", "empty pattern"),
        ("a..b", "empty segment"),
        ("a.", "empty segment"),
        ("a[x]", "bracket segment"),
        ('a["b"', "unclosed"),
        ("a b", "unexpected ' '"),
        ("x" * 5000, "longer than 4096"),
    ],
)
def test_invalid_globs_say_why(pattern, why):
    with pytest.raises(globs.GlobError) as info:
        globs.compile_glob(pattern)
    assert why in info.value.why


def test_the_spec_gate_uses_the_same_grammar():
    assert paths.matches("streamer.params.n", ["streamer.params.**"])
    assert paths.matches("streamer.params", ["streamer.params.**"])
    assert not paths.matches("streamer.paramsX", ["streamer.params.**"])
    assert paths.matches("lr_end", ["lr_*"]) and not paths.matches("a.b", ["a"])


def test_hostile_globs_answer_at_once():
    """These hang a backtracking regex for hours; here they are a few thousand steps (no timing:
    a regression would hang the test run, which is the failure)."""
    key = "a" * 5000
    assert not globs.compile_glob("*a" * 60 + "b").match((key,))
    assert not globs.compile_glob(".".join(["**"] * 60) + ".z").match(tuple("a" * 2000))
    assert globs.compile_glob(".".join(["**"] * 60) + ".z").match(tuple("a" * 2000) + ("z",))


def _reference(segments: tuple, path: tuple) -> bool:
    """Straightforward recursive matcher (exponential worst case): the specification."""
    if not segments:
        return not path
    head, tail = segments[0], segments[1:]
    if head is globs.ANY_DEPTH:
        return any(_reference(tail, path[i:]) for i in range(len(path) + 1))
    if not path:
        return False
    token = path[0]
    if isinstance(head, globs.Literal):
        ok = isinstance(token, str) and token == str(head)
    elif isinstance(head, int):
        ok = type(token) is int and token == head
    elif head == "*":
        ok = True
    else:
        ok = isinstance(token, str) and fnmatch.fnmatchcase(token, head)
    return ok and _reference(tail, path[1:])


_KEY = st.text(alphabet="ab", min_size=0, max_size=5)
_SEG = st.one_of(
    st.text(alphabet="ab*?", min_size=1, max_size=5),
    st.just("**"),
    st.integers(0, 2).map(lambda i: f"[{i}]"),
    st.just("[*]"),
)


@settings(max_examples=400, deadline=None)
@given(
    st.lists(_SEG, min_size=1, max_size=5),
    st.lists(st.one_of(_KEY, st.integers(0, 2)), min_size=0, max_size=6),
)
def test_linear_matcher_agrees_with_the_reference(segs, path):
    pattern = ""
    for seg in segs:
        pattern += seg if seg.startswith("[") and pattern else ("." + seg if pattern else seg)
    try:
        glob = globs.compile_glob(pattern)
    except globs.GlobError:
        return  # e.g. a leading [0]: not every random string is a glob
    assert glob.match(tuple(path)) is _reference(glob.segments, tuple(path))
