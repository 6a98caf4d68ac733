"""The Python config reader's values are the ones Python computes: small programs of loops with
``break``/``continue``/``else``, augmented assignments and aliased lists, read by sweepgen and run
by Python itself (the oracle; the programs are generated here, never a user's file)."""

from __future__ import annotations

import math
import sys
from typing import Any

import pytest
from diff_support import changes
from hypothesis import example, given, settings
from hypothesis import strategies as st

from sweepgen.readers.compare import compare
from sweepgen.readers.model import NotEvaluated
from sweepgen.readers.python.pyast import read_python


def _run(source: str) -> dict[str, Any]:
    scope: dict[str, Any] = {}
    exec(compile(source, "<generated>", "exec"), scope)  # the oracle: code generated here
    return {k: v for k, v in scope.items() if not k.startswith("__")}


def _plain(value: Any) -> bool:
    if isinstance(value, list):
        return all(_plain(v) for v in value)
    return type(value) in (int, str)


def _agrees(source: str) -> None:
    read = read_python(source).data
    expected = _run(source)
    if any(isinstance(v, list) and len(v) > 10_000 for v in expected.values()):
        return  # past the evaluator's size bounds (pybounds): not evaluated, by design
    for name, value in read.items():
        if _plain(value):
            assert value == expected[name], (name, source)


def test_continue_ends_the_pass_and_break_the_loop():
    source = (
        "x = 0\nfor i in range(5):\n    if i == 3:\n        continue\n    x += i\n"
        "y = []\nfor i in range(5):\n    if i == 3:\n        break\n    y.append(i)\n"
    )
    data = read_python(source).data
    assert data["x"] == 7 and data["y"] == [0, 1, 2]


def test_a_loops_else_runs_unless_it_broke():
    source = "for i in range(3):\n    if i == {}:\n        break\nelse:\n    done = True\n"
    assert read_python(source.format(5)).data["done"] is True
    assert "done" not in read_python(source.format(1)).data


def test_a_jump_under_an_unknown_condition_leaves_the_loop_not_known():
    source = "import os\nx = 0\nfor i in range(3):\n    if os.environ.get('A'):\n        break\n    x += i\n"
    assert isinstance(read_python(source).data["x"], NotEvaluated)


def test_a_continue_moved_is_a_change(tmp_path):
    body = "x = 0\nfor i in range(5):\n    if i == {}:\n        continue\n    x += i\n"
    (tmp_path / "a.py").write_text(body.format(3))
    (tmp_path / "b.py").write_text(body.format(2))
    assert compare(str(tmp_path / "a.py"), str(tmp_path / "b.py")).changes


def test_a_list_repeated_past_the_bound_is_not_known_through_any_holder():
    data = read_python("l = [0] * 1000\nm = l\nl *= 10000\ncfg = dict(m=m)\n").data
    assert isinstance(data["l"], NotEvaluated) and isinstance(data["cfg"]["m"], NotEvaluated)


def test_list_repeated_in_place_changes_every_holder(tmp_path):
    (tmp_path / "a.py").write_text("x = [1]\ny = x\nx *= 2\n")
    (tmp_path / "b.py").write_text("x = [1]\ny = x\nx = x * 2\n")
    assert read_python("x = [1]\ny = x\nx *= 2\n").data["y"] == [1, 1]
    assert compare(str(tmp_path / "a.py"), str(tmp_path / "b.py")).changes


@pytest.mark.parametrize(
    ("start", "statement"),
    [
        ("[]", "x += 0"),
        ("'a'", "x -= 1"),
        ("1", "x /= 0"),
        ("10", "x <<= -1"),
        ("{}", "x |= 1"),
        ("[1]", "x *= 1.5"),
    ],
)
def test_an_augmented_assignment_python_refuses_is_kept_as_source(start, statement):
    # Python raises here (TypeError, ZeroDivisionError, ValueError): the statement is kept, never a crash
    data = read_python(f"x = {start}\n{statement}\n").data
    # kept with the value it read: `x = [] ; x += 0` is not `x = () ; x += 0`
    assert isinstance(data["x"], NotEvaluated) and data["x"].source == f"{statement} where x={start}"


def test_dataclass_field_order_is_compared(tmp_path):
    head = "from dataclasses import dataclass\n@dataclass\nclass C:\n"
    (tmp_path / "a.py").write_text(head + "    lr: float = 1.0\n    wd: float = 2.0\ncfg = C(3.0)\n")
    (tmp_path / "b.py").write_text(head + "    wd: float = 2.0\n    lr: float = 1.0\ncfg = C(3.0)\n")
    changes = compare(str(tmp_path / "a.py"), str(tmp_path / "b.py")).changes
    assert {c.dotted for c in changes} == {"C.__field_order__[0]", "C.__field_order__[1]"}


_SIMPLE = st.sampled_from(
    [
        "x += {n}",
        "x = x * {n}",
        "l.append(x)",
        "l += [{n}]",
        "l *= 2",
        "m = l",
        "m.append({n})",
        "x = len(l)",
    ]
)


@st.composite
def _block(draw: Any, depth: int, in_loop: bool) -> list[str]:
    lines: list[str] = []
    for _ in range(draw(st.integers(1, 3))):
        kind = draw(st.sampled_from(["simple", "simple", "if", "for", "jump"]))
        n = draw(st.integers(0, 3))
        if kind == "jump" and in_loop:
            lines.append(draw(st.sampled_from(["break", "continue"])))
        elif kind in ("if", "for") and depth < 2:
            # an `if` and a `for` (whose body may jump), each with an `else` or not
            head = f"if x > {n}:" if kind == "if" else f"for i{depth} in range({n + 1}):"
            lines += [head, *_indented(draw(_block(depth + 1, in_loop or kind == "for")))]
            if draw(st.booleans()):
                lines += ["else:", *_indented(draw(_block(depth + 1, in_loop)))]
        else:
            lines.append(draw(_SIMPLE).format(n=n))
    return lines


def _indented(lines: list[str]) -> list[str]:
    return ["    " + line for line in lines]


@settings(deadline=None, max_examples=300)
@given(_block(0, False))
def test_property_loops_and_jumps_read_as_python_runs_them(lines):
    source = "x = 1\nl = [0]\nm = []\n" + "\n".join(lines) + "\n"
    _agrees(source)


# pairs Python runs apart (the oracle says so): never "no differences"
_APART = [
    # a part not evaluated reads the values bound where it stands, not its names' later ones
    ("a = [1, 2]\nlst = list(map(str, a))\na[0] = 9\n", "a = [1, 2]\na[0] = 9\nlst = list(map(str, a))\n"),
    (
        "try:\n    x = 1\nexcept Exception:\n    x = 2\nx += 1\n",
        "try:\n    x = 1\nexcept Exception:\n    x = 2\nx += 1\nx += 1\n",
    ),
    # a slice assigned replaces the list's items in place; one not known leaves the list not known
    ("a = []\na[1:2] = [5, 6]\nb = a\n", "a = []\na[1:2] = [5, 6]\na[1:2] = [5, 6]\nb = a\n"),
    (
        "import os\ni = len(os.sep)\na = [1]\na[i:i] = [3]\nb = a\n",
        "import os\ni = len(os.sep)\na = [1]\na[i:i] = [3]\na[i:i] = [3]\nb = a\n",
    ),
    (
        "import os\ni = len(os.sep)\na = [1]\nb = list(a)\na[i:i] = [3]\n",
        "import os\ni = len(os.sep)\na = [1]\na[i:i] = [3]\nb = list(a)\n",
    ),
    # `del` of a list's item deletes it in place (every holder sees it); starred unpacking and a
    # statement kept as source (`while`) carry the values they read
    ("a = [1, 2]\nb = a\na = [1, 2]\ndel a[0]\n", "a = [1, 2]\nb = a\ndel a[0]\na = [1, 2]\n"),
    ("a = [1, 2]\nb = a\nb += [4]\nx, *rest = a\n", "a = [1, 2]\nb = a\nx, *rest = a\nb += [4]\n"),
    ("x = 16\nwhile x < 3:\n    x += 1\n", "x = 2\nwhile x < 3:\n    x += 1\n"),
    ("a = [1, 2]\na.clear()\nx = max(a, default=0)\n", "a = [1, 2]\nx = max(a, default=0)\na.clear()\n"),
    # a name an assignment bound to an import calls what it holds there
    (
        "import math, cmath\nm = math\nx = [m.sqrt(4)]\nm = cmath\ns = str(x)\n",
        "import math, cmath\nm = cmath\nx = [m.sqrt(4)]\ns = str(x)\n",
    ),
    (
        "import math, cmath\nf = math.sqrt\nx = [f(4)]\nf = cmath.sqrt\ns = str(x)\n",
        "import math, cmath\nf = cmath.sqrt\nx = [f(4)]\ns = str(x)\n",
    ),
    # a method of what a call returned works on the program's object (here the module's names),
    # never on a record of the call
    ("lr = 1\nglobals().update(lr=2)\n", "lr = 1\nglobals().update(lr=3)\n"),
    ("lr = 1\nvars().update({'lr': 2})\n", "lr = 1\n"),
    ("lr = 1\n_ = globals().update(lr=2)\n", "lr = 1\n_ = None\n"),
    # `globals()`, `vars()`, `eval` read names by a string: what they read is every name's value
    ("lr = 1\nx = globals()['lr']\nlr = 3\n", "lr = 2\nx = globals()['lr']\nlr = 3\n"),
    ("lr = 1\nx = globals().get('lr')\nlr = 3\n", "lr = 2\nx = globals().get('lr')\nlr = 3\n"),
    ("lr = 1\nx = eval('lr')\nlr = 3\n", "lr = 2\nx = eval('lr')\nlr = 3\n"),
    ("lr = 1\nx = dict(vars())['lr']\ndel lr\n", "lr = 2\nx = dict(vars())['lr']\ndel lr\n"),
    ("lr = 1\nx = 'a%(lr)s' % globals()\nlr = 3\n", "lr = 2\nx = 'a%(lr)s' % globals()\nlr = 3\n"),
    # an augmented assignment Python does in place on an operand the reader does not compute
    # leaves the object not known for every holder (`x = l` is not `x = list(l)` then)
    ("d = {'a': 1}\nx = d\nd |= [('b', 2)]\n", "d = {'a': 1}\nx = dict(d)\nd |= [('b', 2)]\n"),
    ("l = [1]\nx = l\nl += 'ab'\n", "l = [1]\nx = list(l)\nl += 'ab'\n"),
    ("l = [1]\nx = l\nl += {'k': 1}\n", "l = [1]\nx = list(l)\nl += {'k': 1}\n"),
    ("l = [1]\nx = l\nl += range(2)\n", "l = [1]\nx = list(l)\nl += range(2)\n"),
    # a set's augmented operators change it in place: every holder sees it
    ("s = {1}\nt = s\ns |= {2}\n", "s = {1}\nt = s\ns = s | {2}\n"),
    ("s = {1, 2}\nt = s\ns -= {2}\n", "s = {1, 2}\nt = s\ns = s - {2}\n"),
    ("s = {1, 2}\nt = s\ns &= {2}\n", "s = {1, 2}\nt = s\ns = s & {2}\n"),
    ("s = {1, 2}\nt = s\ns ^= {3}\n", "s = {1, 2}\nt = s\ns = s ^ {3}\n"),
    # a dict view kept is no list (not subscriptable, not JSON) and is live: a key added later shows
    ("a = {'x': [1]}\nb = a.values()\n", "a = {'x': [1]}\nb = [[1]]\n"),
    ("a = {'x': 1}\nb = a.keys()\na['y'] = 2\n", "a = {'x': 1}\nb = list(a.keys())\na['y'] = 2\n"),
    ("a = {'x': 1}\nb = [a.items()]\n", "a = {'x': 1}\nb = [[('x', 1)]]\n"),
]


@pytest.mark.parametrize(("one", "two"), _APART)
def test_a_pair_python_runs_apart_is_never_equal(one, two, tmp_path):
    assert _run(one) != _run(two)  # the oracle: a real change
    (tmp_path / "a.py").write_text(one)
    (tmp_path / "b.py").write_text(two)
    assert compare(str(tmp_path / "a.py"), str(tmp_path / "b.py")).changes


def test_a_dict_view_iterated_where_it_is_written_reads_as_its_items():
    source = (
        "a = {'x': 1}\nb = [k for k in a.keys()]\nc = sorted(a.items())\nd = 'x' in a.keys()\n"
        "for k, v in a.items():\n    e = k\nf = [*a.values()]\ng = list(a.values())\nh = len(a.keys())\n"
    )
    assert read_python(source).data == {**_run(source), "a": {"x": 1}}


def test_a_slice_assigned_is_pythons():
    for source in ("a = [1, 2, 3]\na[1:2] = [5, 6]\n", "a = [1, 2, 3]\na[::2] = [7, 8]\nb = a\n"):
        _agrees(source)
        assert read_python(source).data["a"] == _run(source)["a"]


@pytest.mark.parametrize("method", ["update(lr=2)", "pop('lr')", "setdefault('lr', 2)"])
def test_a_method_of_a_returned_object_is_kept_as_source(method, tmp_path):
    # `get_cfg()` may return an object the program holds elsewhere: what the method does to it is
    # not known, so an edit of its arguments is a change
    source = "from lib import get_cfg\nget_cfg().{}\n"
    (tmp_path / "a.py").write_text(source.format(method))
    (tmp_path / "b.py").write_text(source.format(method.replace("2", "3").replace("'lr'", "'bs'")))
    assert compare(str(tmp_path / "a.py"), str(tmp_path / "b.py")).changes
    assert isinstance(read_python(source.format(method)).data["__statements__"][0], NotEvaluated)


def test_a_read_through_sys_modules_shows_every_names_value(tmp_path):
    # `sys.modules[__name__]` is the module itself: reading an attribute of it reads that name
    source = "import sys\nlr = {}\nx = getattr(sys.modules[__name__], 'lr')\nlr = 3\n"
    (tmp_path / "a.py").write_text(source.format(1))
    (tmp_path / "b.py").write_text(source.format(2))
    changes = compare(str(tmp_path / "a.py"), str(tmp_path / "b.py")).changes
    assert changes and all(c.path[0] == "x" for c in changes)


@pytest.mark.parametrize(
    "call", ["update_cfg(cfg)", "cfg.__ior__({'lr': 2})", "hooks.register(cfg)", "cfg.__setitem__('lr', 2)"]
)
def test_which_names_share_what_a_call_not_followed_was_given_is_data(call, tmp_path):
    # `cfg = base` then a call that changes cfg changes base too; `cfg = dict(base)` leaves it:
    # both show the values before the call, so the names the call may have changed are listed
    source = "from lib import update_cfg, hooks\nbase = dict(lr=1)\ncfg = {}\n{}\n"
    (tmp_path / "a.py").write_text(source.format("base", call))
    (tmp_path / "b.py").write_text(source.format("dict(base)", call))
    changes = compare(str(tmp_path / "a.py"), str(tmp_path / "b.py")).changes
    assert [(c.dotted, c.kind, c.old) for c in changes] == [("__changed_by_calls__[0]", "removed", "base")]


@pytest.mark.parametrize(
    ("one", "two"),
    [
        ("A = auto()\n    B = auto()\n", "B = auto()\n    A = auto()\n"),  # A is 1, then 2
        ("A = 'a'\n    B = 'b'\n", "B = 'b'\n    A = 'a'\n"),  # list(E), E's first member
    ],
)
def test_an_enums_members_swapped_is_a_change(one, two, tmp_path):
    head = "from enum import Enum, auto\nclass E(Enum):\n    "
    members = [[(m.name, m.value) for m in _run(head + body)["E"]] for body in (one, two)]
    assert members[0] != members[1]  # the oracle: Python iterates and numbers them apart
    (tmp_path / "a.py").write_text(head + one)
    (tmp_path / "b.py").write_text(head + two)
    changes = compare(str(tmp_path / "a.py"), str(tmp_path / "b.py")).changes
    assert [c.dotted for c in changes] == ["E.__member_order__[0]", "E.__member_order__[1]"]


# `copy.copy(obj)` and `dataclasses.replace(obj, ...)` make a new object from obj's attributes as
# they are then: one set on obj afterwards never reaches the copy (a list they share is shared)
_COPY_PROGRAMS = [
    ("c = copy.copy(args)\nargs.b = 5\n", "args.b = 5\nc = copy.copy(args)\n"),
    ("c = replace(args, lr=2)\nargs.b = 5\n", "args.b = 5\nc = replace(args, lr=2)\n"),
    (
        "c = dataclasses.replace(args, lr=2)\nargs.b = 5\n",
        "args.b = 5\nc = dataclasses.replace(args, lr=2)\n",
    ),
    ("c = replace(args, lr=2)\nargs.seeds.append(5)\n", "args.seeds.append(5)\nc = replace(args, lr=2)\n"),
    ("c = copy.copy(args)\nargs.seeds.append(5)\n", "args.seeds.append(5)\nc = copy.copy(args)\n"),
]
_HEAD = (
    "import copy\nimport dataclasses\nfrom dataclasses import replace\nfrom lib import G\n"
    "args = G(lr=1, b=1, seeds=[1])\n"
)


@pytest.mark.parametrize(("one", "two"), _COPY_PROGRAMS)
def test_a_copy_holds_the_attributes_it_was_made_from(tmp_path, one, two):
    import dataclasses

    @dataclasses.dataclass
    class G:  # what `from lib import G` stands for when Python runs the programs (the oracle)
        lr: int
        b: int
        seeds: list[int]

    def python_sees(body: str) -> Any:
        scope: dict[str, Any] = {}
        program = _HEAD.replace("from lib import G\n", "") + body
        exec(compile(program, "<generated>", "exec"), {"G": G}, scope)
        return scope["c"]

    for name, body in (("a.py", one), ("b.py", two)):
        (tmp_path / name).write_text(_HEAD + body)
    changes = compare(str(tmp_path / "a.py"), str(tmp_path / "b.py")).changes
    assert (changes == []) == (python_sees(one) == python_sees(two)), changes


class _Rollout:
    n = 8


class _T:
    def __init__(self, **kwargs: Any) -> None:
        self.kwargs, self.rollout = kwargs, _Rollout()


@pytest.mark.parametrize(
    ("one", "two"),
    [
        # written into the first record, or the second: the final `t` has n 8, or 16
        ("t = T(lr=1)\nt.rollout.n = 16\nt = T(lr=2)\n", "t = T(lr=1)\nt = T(lr=2)\nt.rollout.n = 16\n"),
        ("t = T(lr=1)\nt.rollout.n = 16\n", "t = T(lr=2)\nt.rollout.n = 16\n"),
    ],
)
def test_an_assignment_the_reader_cannot_place_keeps_what_it_writes_into(one, two, tmp_path):
    seen = []
    for source in (one, two):
        scope: dict[str, Any] = {"T": _T}
        exec(compile(source, "<generated>", "exec"), scope)  # the oracle: code generated here
        seen.append((scope["t"].kwargs, scope["t"].rollout.n))
    assert seen[0] != seen[1]
    (tmp_path / "a.py").write_text("from lib import T\n" + one)
    (tmp_path / "b.py").write_text("from lib import T\n" + two)
    assert compare(str(tmp_path / "a.py"), str(tmp_path / "b.py")).changes


# a dict view kept is live and stays on the dict it was taken of: `a = {...}` after it leaves the
# view on the old dict, which an edit made before the rebinding still changes
_VIEW_APART = [
    (
        "a = {'x': 1}\nb = a.values()\na['x'] = 2\na = {}\n",
        "a = {'x': 1}\nb = a.values()\na['x'] = 3\na = {}\n",
    ),
    ("a = {'x': 1}\nb = a.keys()\na['y'] = 2\na = {}\n", "a = {'x': 1}\nb = a.keys()\na['z'] = 2\na = {}\n"),
    (
        "a = {'x': 1}\nb = a.items()\na.update(x=5)\nc = list(b)\na = {}\n",
        "a = {'x': 1}\nb = a.items()\na.update(x=6)\nc = list(b)\na = {}\n",
    ),
    # read through the view before a later edit: what it held then
    (
        "a = {'x': 1}\nb = a.values()\na['x'] = 2\nc = sorted(b)\na['x'] = 4\na = {}\n",
        "a = {'x': 1}\nb = a.values()\na['x'] = 3\nc = sorted(b)\na['x'] = 4\na = {}\n",
    ),
]


def _seen(source: str) -> dict[str, Any]:
    """What a program importing the config reads, a view by its items."""
    views = (type({}.keys()), type({}.values()), type({}.items()))
    return {k: (type(v).__name__, list(v)) if isinstance(v, views) else v for k, v in _run(source).items()}


@pytest.mark.parametrize(("one", "two"), _VIEW_APART)
def test_a_view_of_a_dict_edited_then_rebound_is_a_change(one, two):
    assert _seen(one) != _seen(two)  # the oracle: a real change
    assert changes(one, two, ".py")


_VIEW_STEPS = [
    "a[{k!r}] = {n}",
    "a.update({k}={n})",
    "a.pop({k!r}, None)",
    "a = {{{k!r}: {n}}}",
    "a.setdefault({k!r}, {n})",
    "c = list(b)",
    "c = sorted(b)",
    "c = len(b)",
    "c = {k!r} in b",
]


@st.composite
def _view_program(draw: Any) -> list[str]:
    """A dict, a view of it kept, then edits of the dict, reads of the view, rebindings."""
    steps = [
        f"a = {{'x': {draw(st.integers(0, 3))}}}",
        f"b = a.{draw(st.sampled_from(['keys', 'values', 'items']))}()",
    ]
    for _ in range(draw(st.integers(1, 5))):
        step = draw(st.sampled_from(_VIEW_STEPS))
        steps.append(step.format(k=draw(st.sampled_from("xyz")), n=draw(st.integers(0, 3))))
    return steps


@settings(deadline=None, max_examples=80)
@given(_view_program(), st.data())
def test_property_a_kept_view_reads_as_python_runs_it(steps, data):
    # one step redrawn: where Python's program reads apart, diff never says "no differences"
    at = data.draw(st.integers(2, len(steps) - 1))
    step = data.draw(st.sampled_from(_VIEW_STEPS))
    edited = [
        *steps[:at],
        step.format(k=data.draw(st.sampled_from("xyz")), n=data.draw(st.integers(0, 3))),
        *steps[at + 1 :],
    ]
    one, two = "\n".join(steps) + "\n", "\n".join(edited) + "\n"
    if _seen(one) != _seen(two):
        assert changes(one, two, ".py"), (one, two)


# a generator expression, zip, enumerate and reversed kept run over the objects they were given when
# they are read: an item appended to that list later (even after `a = []`) is in them
_LAZY = [
    "a = [1]\ng = (x for x in a)\na.append({n})\na = []\ny = list(g)\n",
    "a = [1]\nk = 2\ng = (x * k for x in a)\nk = {n}\ny = list(g)\nk = 5\n",
    "a = [1]\nm = zip(a, a)\na.append({n})\na = []\ny = list(m)\n",
    "a = [1]\nm = enumerate(a)\na.append({n})\na = []\ny = list(m)\n",
    "a = [1]\nm = reversed(a)\na[0] = {n}\na = []\ny = list(m)\n",
    "a = [1]\nc = T(items=(x for x in a))\na.append({n})\na = []\n",
    # a lambda's default is the object it was when the lambda was made
    "a = [1]\nf = lambda x=a: list(x)\na.append({n})\na = []\ny = f()\n",
    "k = {n}\nf = lambda x: x * k\ny = f(1)\nk = 5\n",
]


@pytest.mark.parametrize("program", _LAZY)
def test_a_lazy_iterator_kept_reads_its_list_when_it_is_read(program):
    one, two = program.format(n=2), program.format(n=3)
    if "T(" not in program:  # the oracle (a call to code outside the file cannot run here)
        assert _seen(one) != _seen(two)
    assert changes(one, two, ".py")


def test_a_lazy_iterator_read_where_it_is_written_is_its_items():
    source = (
        "a = [3, 1]\nb = list(zip(a, a))\nc = sorted(x for x in a)\nd = ', '.join(str(x) for x in a)\n"
        "e = list(enumerate(a, 1))\nf = [x for x in reversed(a)]\ng = sum(x for x in a)\n"
    )
    assert read_python(source).data == _run(source)


_STAR_LINES = ["x = 1", "x = 2", "from starmod import *", "y = x"]


@settings(deadline=None, max_examples=25)
@example(one=["x = 1", "from starmod import *"], two=["from starmod import *", "x = 1"])
@example(one=["x = 1", "from starmod import *"], two=["x = 1", "from starmod import *", "x = 1"])
@given(
    one=st.lists(st.sampled_from(_STAR_LINES), min_size=1, max_size=4),
    two=st.lists(st.sampled_from(_STAR_LINES), min_size=1, max_size=4),
)
def test_a_name_bound_before_a_star_import_is_never_equal_to_one_bound_after(one, two, tmp_path_factory):
    # the oracle: Python itself with a module `starmod` that binds x (and a name of its own);
    # `x = 1; from m import *` was "no differences" against `from m import *; x = 1`
    folder = tmp_path_factory.mktemp("star")
    (folder / "starmod.py").write_text("x = 3\nz = 4\n")
    sys.path.insert(0, str(folder))
    try:
        ran = []
        for lines in (one, two):
            scope: dict[str, Any] = {}
            source = "\n".join(lines) + "\n"
            try:
                exec(compile(source, "<generated>", "exec"), scope)  # the oracle: code generated here
            except NameError:  # a name read before any binds it: not a config this is about
                return
            ran.append({k: v for k, v in scope.items() if not k.startswith("__")})
    finally:
        sys.path.remove(str(folder))
        sys.modules.pop("starmod", None)
    if ran[0] != ran[1]:
        assert changes("\n".join(one) + "\n", "\n".join(two) + "\n", ".py"), (one, two)


_SPECIAL_FLOATS = [
    "math.nan", "-math.nan", "-(math.nan)", "float('nan')", "float('-nan')", "-float('nan')",
    "math.inf", "-math.inf", "float('inf')", "float('-inf')", "1e400", "-1e400", "inf", "-inf",
    "np.nan", "-np.nan", "np.inf", "-np.inf", "math.pi", "-math.tau", "math.e", "np.pi",
]  # fmt: skip
_SPECIAL_HEAD = "import math\nimport math as np\nfrom math import inf\n"  # numpy's are math's


def _sign_and_value(value: float) -> tuple[str, float]:
    return repr(value), math.copysign(1.0, value)


@settings(deadline=None, max_examples=40)
@given(st.sampled_from(_SPECIAL_FLOATS), st.sampled_from(_SPECIAL_FLOATS))
@example("-math.nan", "float('-nan')")
@example("math.nan", "-math.nan")
@example("-math.inf", "float('-inf')")
def test_module_float_constants_are_the_values_python_gives(one: str, two: str):
    # `-math.nan` was not evaluated, and `math.inf` a reference never equal to `float("inf")`:
    # each is the float Python computes (its sign too), a change exactly where Python's differ
    values = []
    for spelled in (one, two):
        source = f"{_SPECIAL_HEAD}a = {spelled}\n"
        read, expected = read_python(source).data["a"], _run(source)["a"]
        assert type(read) is float and _sign_and_value(read) == _sign_and_value(expected), spelled
        values.append(_sign_and_value(expected))
    found = changes(f"{_SPECIAL_HEAD}a = {one}\n", f"{_SPECIAL_HEAD}a = {two}\n", ".py")
    assert found == ([] if values[0] == values[1] else ["a"]), (one, two)


def test_numpy_constants_are_its_floats():
    data = read_python("import numpy as np\na = -np.nan\nb = np.inf\nc = np.euler_gamma\n").data
    assert math.copysign(1.0, data["a"]) == -1.0 and data["b"] == math.inf and data["c"] == 0.5772156649015329


def test_a_kept_view_sees_a_key_popped_and_added_again_last():
    # `a.pop('x'); a['x'] = 0` moves x after y: the view `b` iterates y, x where the other file's
    # iterates x, y (Python runs them so); its text wrote the keys sorted, so the two read equal
    one = "a = {'x': 0}\nb = a.keys()\na['x'] = 0\na['y'] = 0\na['x'] = 0\n"
    two = "a = {'x': 0}\nb = a.keys()\na.pop('x', None)\na['y'] = 0\na['x'] = 0\n"
    ran = [list(_exec(source)["b"]) for source in (one, two)]
    assert ran[0] != ran[1] and changes(one, two, ".py") == ["b"]


def _exec(source: str) -> dict:
    scope: dict = {}
    exec(source, scope)
    return scope


# What a `def` fixes when it runs, not when it is called: its defaults, its decorators' arguments, a
# closure's cells. Each pair differs in what `probe()` returns, as Python itself runs them.
_DEF_TIME = [
    (
        "lr = {}\ndef f(x=lr):\n    return x\nlr = 2\nprobe = lambda: f()\n",
        "default read when the def runs",
    ),
    (
        "lr = {}\ndef f(*, x=lr):\n    return x\nlr = 2\nprobe = lambda: f()\n",
        "keyword-only default",
    ),
    (
        "lr = {}\nclass C:\n    def f(self, x=lr):\n        return x\nlr = 2\nprobe = lambda: C().f()\n",
        "a method's default",
    ),
    (
        "import functools\nN = {}\n@functools.lru_cache(N)\ndef f(x):\n    return [x]\nN = 2\n"
        "probe = lambda: f.cache_parameters()['maxsize']\n",
        "a decorator's argument",
    ),
    (
        "def mk(v):\n    def f():\n        return v\n    return f\ng = mk({})\nprobe = lambda: g()\n",
        "a closure's cell",
    ),
    (
        "def mk():\n    v = 0\n    def f():\n        return v\n    v = {}\n    return f\n"
        "g = mk()\nprobe = lambda: g()\n",
        "a cell rebound after the def",
    ),
    (
        "def mk(a):\n    v = 0\n    f = lambda: v\n    v = a\n    return f\n"
        "g = mk({})\nprobe = lambda: g()\n",
        "a lambda's cell rebound after it is made",
    ),
    (
        "def mk(a):\n    def h():\n        return a\n    def f():\n        return h()\n    return f\n"
        "g = mk({})\nprobe = lambda: g()\n",
        "a nested def calling another",
    ),
]


@pytest.mark.parametrize(("program", "what"), _DEF_TIME, ids=[what for _, what in _DEF_TIME])
def test_what_a_def_fixes_when_it_runs_is_part_of_it(program, what, tmp_path):
    one, two = program.format(1), program.format(3)
    assert _run(one)["probe"]() != _run(two)["probe"](), what  # the oracle: Python tells them apart
    (tmp_path / "a.py").write_text(one.replace("probe = ", "# "))
    (tmp_path / "b.py").write_text(two.replace("probe = ", "# "))
    assert compare(str(tmp_path / "a.py"), str(tmp_path / "b.py")).changes, what


def test_a_function_a_branch_leaves_alone_is_no_change(tmp_path):
    # a branch the reader cannot decide runs on a copy of the state: the copy of a function with
    # defaults it did not touch is the same function (before, one file against itself had 2 changes)
    program = "import os\ndef f(x=[]):\n    return x\nif os.environ.get('A'):\n    y = 1\n"
    (tmp_path / "a.py").write_text(program)
    (tmp_path / "b.py").write_text(program)
    assert compare(str(tmp_path / "a.py"), str(tmp_path / "b.py")).changes == []


def test_a_functions_default_a_branch_changes_is_a_change(tmp_path, monkeypatch):
    # a call under a condition the reader cannot decide changes the branch's copy of the default:
    # one call against two is a change (for a while it read as equal: the copy kept the text of
    # the original's default)
    program = "import os\ndef f(x=[]):\n    x.append(1)\n    return 0\nif os.environ.get('SWEEPGEN_T_A'):\n{}"
    one, two = program.format("    f()\n"), program.format("    f()\n    f()\n")
    monkeypatch.setenv("SWEEPGEN_T_A", "1")
    assert _run(one)["f"].__defaults__ != _run(two)["f"].__defaults__  # the oracle: Python itself
    (tmp_path / "a.py").write_text(one)
    (tmp_path / "b.py").write_text(two)
    assert compare(str(tmp_path / "a.py"), str(tmp_path / "b.py")).changes
