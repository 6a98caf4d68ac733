"""`@argv order` decided from the program's own source (round twenty-two): a project's `train.py`
that reads its flags with argparse alone (DeepSpeed-Chat's `main.py`, not on the known-parser
list) leaves the order out; one that could see the order keeps it. argparse itself is the oracle:
each program's parser is built here and given both orders."""

from __future__ import annotations

import argparse

import pytest
from diff_support import changes

_PARSER = """import argparse
import deepspeed


def build():
    parser = argparse.ArgumentParser()
    parser.add_argument("--lr", type=float)
    parser.add_argument("--bs", type=int){more}
    parser.add_argument("--offload", action=argparse.BooleanOptionalAction)
    return deepspeed.add_config_arguments(parser)


def parse_args():
    return build().parse_args()
"""
_ORDERS = ("--lr 1 --bs 2 --learning-rate 3", "--bs 2 --learning-rate 3 --lr 1")
# (what the program adds, whether a reorder is a change to it)
_PROGRAMS = [
    ('\n    parser.add_argument("--learning-rate", type=float)', False),
    ('\n    parser.add_argument("--learning-rate", dest="lr", type=float)', True),  # one dest: the last wins
    ('\n    parser.add_argument("--learning-rate")\n    print(__import__("sys").argv)', True),
    ('\n    parser.add_argument("--learning-rate")\n    parser.parse_known_args()', True),
    ('\n    parser.add_argument("--learning-rate", action=Keep)\n\n\nclass Keep(argparse.Action): ...', True),
]


def _namespace(source: str, order: str) -> argparse.Namespace | None:
    """What the program's parser makes of ``order`` (the oracle); None where it sees argv itself."""
    if "argv" in source or "parse_known_args" in source or "argparse.Action" in source:
        return None  # the program sees the order: a change by its own code
    scope: dict = {"deepspeed": type("deepspeed", (), {"add_config_arguments": staticmethod(lambda p: p)})}
    exec(source.replace("import deepspeed\n", ""), scope)
    return scope["build"]().parse_args(order.split())


@pytest.mark.parametrize(("more", "sees_order"), _PROGRAMS)
def test_a_project_program_read_with_argparse_alone_ignores_flag_order(tmp_path, more, sees_order):
    source = _PARSER.format(more=more)
    one, two = (_namespace(source, order) for order in _ORDERS)
    assert (one is None or one != two) == sees_order  # the oracle agrees with the table
    (tmp_path / ".git").mkdir()
    (tmp_path / "training").mkdir()
    (tmp_path / "training" / "main.py").write_text(source)
    (tmp_path / "scripts").mkdir()
    lines = [f"deepspeed training/main.py {order}\n" for order in _ORDERS]
    found = changes(*lines, folder=tmp_path / "scripts")
    assert found == (['commands["training/main.py"]["@argv order"]'] if sees_order else []), found


def test_a_program_not_found_or_outside_the_project_keeps_its_order(tmp_path):
    (tmp_path / ".git").mkdir()
    outside = tmp_path.parent / f"{tmp_path.name}-outside.py"
    outside.write_text(_PARSER.format(more=""))
    (tmp_path / "link.py").symlink_to(outside)
    for program in ("gone.py", "link.py", str(outside)):
        one, two = (f"python {program} {order}\n" for order in ("--lr 1 --bs 2", "--bs 2 --lr 1"))
        assert changes(one, two, folder=tmp_path) == [f'commands["{program}"]["@argv order"]'], program
    # a negation after its flag still shows where the order is otherwise free
    (tmp_path / "main.py").write_text(_PARSER.format(more=""))
    one, two = "python main.py --offload --no-offload\n", "python main.py --no-offload --offload\n"
    assert changes(one, two, folder=tmp_path) == ['commands["main.py"]["@flag order"][0]']


@pytest.mark.parametrize("statement", ["x = " + "-" * 200_000 + "1", "x = " + "a." * 100_000 + "b"])
def test_a_program_nested_past_pythons_parser_keeps_its_order(tmp_path, statement):
    """A pull request's program nested past Python's parser (its MemoryError, its RecursionError)
    made `diff` of a launch script say "out of memory ... the sweep is larger than this machine
    holds" (exit 2): python refuses the program too, so its flags' order is kept."""
    (tmp_path / ".git").mkdir()
    (tmp_path / "train.py").write_text("import argparse\n" + statement + "\n")
    one, two = (f"python train.py {order}\n" for order in ("--lr 1 --bs 2", "--bs 2 --lr 1"))
    assert changes(one, two, folder=tmp_path) == ['commands["train.py"]["@argv order"]']
