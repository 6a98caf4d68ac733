"""A call the Python reader does not follow keeps what a name handed it by reference, and what it
held then under ``@given`` where it changed later: an object that copies its argument and one that
keeps it see other values, and only the callee's code tells which it is. Held to Python itself:
generated programs run twice, with a callee that copies and one that keeps (the oracle)."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
from diff_support import changes
from hypothesis import given, settings
from hypothesis import strategies as st

from sweepgen.readers.python.pyast import read_python

_HEAD = "from lib import Trainer\n"


def _changes(tmp_path: Path, one: str, two: str) -> list[str]:
    return changes(_HEAD + one, _HEAD + two, ".py", tmp_path)


@pytest.mark.parametrize(
    ("one", "two"),
    [
        # the round-nine case: an assignment moved across the call
        (
            "args = dict(lr=1)\nc = Trainer(args)\nargs['lr'] = 2\n",
            "args = dict(lr=1)\nargs['lr'] = 2\nc = Trainer(args)\n",
        ),
        # a value overwritten after the call: a trainer that copies saw 1, or 3
        (
            "args = dict(lr=1)\nc = Trainer(args=args)\nargs['lr'] = 2\n",
            "args = dict(lr=3)\nc = Trainer(args=args)\nargs['lr'] = 2\n",
        ),
        # an instance of a class of the file, an attribute set after the call
        (
            "class A:\n    pass\nargs = A()\nargs.lr = 1\nc = Trainer(args)\nargs.lr = 2\n",
            "class A:\n    pass\nargs = A()\nargs.lr = 1\nargs.lr = 2\nc = Trainer(args)\n",
        ),
        # a part of a config handed over, changed in place by a method
        (
            "cfg = dict(optim=dict(lr=1))\nc = Trainer(cfg['optim'])\ncfg['optim'].update(lr=2)\n",
            "cfg = dict(optim=dict(lr=1))\ncfg['optim'].update(lr=2)\nc = Trainer(cfg['optim'])\n",
        ),
        # a spread copies the container, never its items: a nested one is still shared
        (
            "cfg = dict(o=dict(lr=1))\nc = Trainer(**cfg)\ncfg['o']['lr'] = 2\n",
            "cfg = dict(o=dict(lr=1))\ncfg['o']['lr'] = 2\nc = Trainer(**cfg)\n",
        ),
        ("a = [[1]]\nc = Trainer(*a)\na[0].append(2)\n", "a = [[1]]\na[0].append(2)\nc = Trainer(*a)\n"),
        # a list handed over, appended to after the call
        (
            "cbs = ['a']\nc = Trainer(callbacks=cbs)\ncbs.append('b')\n",
            "cbs = ['a']\ncbs.append('b')\nc = Trainer(callbacks=cbs)\n",
        ),
    ],
)
def test_a_change_to_what_a_call_was_handed_by_a_name_after_it_is_a_change(one, two, tmp_path):
    changes = _changes(tmp_path, one, two)
    assert changes and all(c.startswith("c.@given") for c in changes), changes


def test_what_no_later_statement_changes_adds_nothing():
    data = read_python(_HEAD + "args = dict(lr=1)\nc = Trainer(args, opt=args)\n").data
    assert set(data["c"]) == {"call", "args", "kwargs"}


def test_a_record_changed_through_itself_is_a_lazycall_keyword(tmp_path):
    # detectron2's LazyCall: a keyword set on the record is the config; no other name holds it
    one = "c = Trainer(opt=dict(lr=1))\nc.opt['lr'] = 2\n"
    two = "c = Trainer(opt=dict(lr=2))\n"
    assert _changes(tmp_path, one, two) == []


_STATEMENTS = [
    "args['lr'] = 1",
    "args['lr'] = 2",
    "args.update(bs=3)",
    "args.pop('bs', None)",
    "c = Trainer(args)",
]


class _Copies:
    def __init__(self, args: dict[str, Any]) -> None:
        self.args = copy.deepcopy(args)


class _Keeps:
    def __init__(self, args: dict[str, Any]) -> None:
        self.args = args


def _runs(source: str) -> list[Any]:
    seen = []
    for trainer in (_Copies, _Keeps):
        scope: dict[str, Any] = {"Trainer": trainer}
        exec(compile(source, "<generated>", "exec"), scope)  # the oracle: code generated here
        held = scope.get("c")
        seen.append((scope["args"], None if held is None else held.args))
    return seen


_PROGRAM = st.lists(st.sampled_from(_STATEMENTS), min_size=1, max_size=6).map(
    lambda lines: "args = dict(lr=0)\n" + "".join(line + "\n" for line in lines)
)


@settings(deadline=None, max_examples=150)
@given(one=_PROGRAM, two=_PROGRAM)
def test_programs_a_copying_or_a_keeping_callee_tells_apart_are_never_equal(one, two, tmp_path_factory):
    tmp_path = tmp_path_factory.mktemp("given")
    if _runs(one) != _runs(two):
        assert _changes(tmp_path, "\n" + one, "\n" + two), (one, two)
