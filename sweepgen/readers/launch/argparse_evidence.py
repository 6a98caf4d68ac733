"""Whether a Python program a launch line runs reads its flags with argparse alone, so their order
is no matter to it: the script's own evidence, for programs not on the known-parser list
(DeepSpeed-Chat's ``main.py``, a project's ``train.py``).

The program is a ``.py`` path the line names; it is looked for beside the diffed script and at its
project's root (the folder holding ``.git`` or ``pyproject.toml``, ``basepath.root_of``), where a
launch script is most often run from. Each file found must lie inside that project (resolved,
links included) and be read as text through Python's ``ast``: never imported or run. It is
order-free when it imports argparse (or transformers' ``HfArgumentParser``, argparse underneath),
calls ``parse_args()`` (``parse_args_into_dataclasses()``), and does nothing that sees the order:
no ``sys.argv`` (a run name, a log line, a hand-rolled parser), no ``parse_known_args`` (the
words left over go on in order), no ``argparse.Action`` of its own or ``action=`` that is not
one of argparse's names, no ``fromfile_prefix_chars`` and no two options given one ``dest=``
(the last given wins). Found nowhere, or any of these seen, the order is kept (``@argv
order``): a wrong "order-free" would hide a real change, a wrong "kept" only shows one more line.
"""

from __future__ import annotations

import ast
import os
from collections.abc import Callable
from functools import lru_cache
from typing import Any

from sweepgen.fs import confine
from sweepgen.readers import basepath

_MAX_BYTES = 4_000_000  # a program larger than this is not read (its order kept)
_PARSE_CALLS = {"parse_args", "parse_args_into_dataclasses"}
_PARSERS = {"argparse", "HfArgumentParser"}
# argparse's own actions, by the names `add_argument(action=...)` takes
_ACTIONS = {"store", "store_const", "store_true", "store_false", "append", "append_const", "extend", "count",
            "help", "version"}  # fmt: skip


def order_free(program: str, where: str) -> bool:
    """Whether ``program`` (a path as a launch line in file ``where`` names it) reads its flags
    with argparse alone (the module's note)."""
    if not program.endswith(".py") or not os.path.isfile(where):
        return False
    root = os.path.realpath(basepath.root_of(where))
    found = _candidates(program, where, root) - {None}
    return bool(found) and all(_reads_argparse_only(path, *_stamp(path)) for path in found if path)


def _candidates(program: str, where: str, root: str) -> set[str | None]:
    """The files ``program`` may be: beside ``where`` and at the project's root, each resolved and
    inside the project (None where it is not a file there)."""
    places = {os.path.dirname(os.path.realpath(where)), root}
    return {_inside(os.path.join(place, program), root) for place in places}


def _inside(path: str, root: str) -> str | None:
    real = os.path.realpath(path)
    return real if confine.within(real, root) and os.path.isfile(real) else None


def _stamp(path: str) -> tuple[int, int]:
    """The file's size and change time: the cache holds a file's reading while it is unchanged."""
    info = os.stat(path)
    return info.st_size, info.st_mtime_ns


@lru_cache(maxsize=256)
def _reads_argparse_only(path: str, size: int, _changed: int) -> bool:
    if size > _MAX_BYTES:
        return False
    try:
        with open(path, "rb") as handle:
            tree = ast.parse(handle.read())
    except (OSError, SyntaxError, ValueError, RecursionError, MemoryError):
        # the last two: nested past Python's parser (`x = ----...1` is its MemoryError, never the
        # machine's), as `python` itself refuses the program; its flags' order is then kept
        return False
    return _Evidence(tree).order_free()


class _Evidence:
    """What a program's syntax tree says about the order of its flags."""

    def __init__(self, tree: ast.AST) -> None:
        self.nodes = list(ast.walk(tree))

    def order_free(self) -> bool:
        return self.imports_parser() and self.parses() and not self.sees_order()

    def imports_parser(self) -> bool:
        """``import argparse``, ``from argparse import ...``, ``from transformers import
        HfArgumentParser``."""
        imports = [node for node in self.nodes if isinstance(node, (ast.Import, ast.ImportFrom))]
        names = {alias.name for node in imports for alias in node.names}
        modules = {node.module for node in imports if isinstance(node, ast.ImportFrom)}
        return bool((names | modules) & _PARSERS)

    def parses(self) -> bool:
        return any(_called(node) in _PARSE_CALLS for node in self.nodes)

    def sees_order(self) -> bool:
        return any(map(_sees_order, self.nodes)) or self.shared_dest()

    def shared_dest(self) -> bool:
        """Two options of one ``dest`` (``--lr`` and ``--learning-rate`` with ``dest="lr"``: the
        last given wins), or an option whose ``dest`` is not written out as plain strings."""
        dests = [_dest(node) for node in self.nodes if _called(node) == "add_argument"]
        names = [d for d in dests if d is not None]
        return len(names) != len(dests) or len(set(names)) != len(names)


def _dest(call: ast.AST) -> str | None:
    """The ``dest`` argparse gives an ``add_argument`` call: its ``dest=``, else its first long
    option's name (else its first name) with ``-`` as ``_``; None where any part is computed."""
    assert isinstance(call, ast.Call)
    given = [kw.value for kw in call.keywords if kw.arg == "dest"]
    texts = _strings(given or call.args)
    if texts is None or given:
        return texts[0] if texts else None
    first = next((t for t in texts if t.startswith("--")), texts[0])
    return first.lstrip("-").replace("-", "_")


def _strings(nodes: list[ast.expr]) -> list[str] | None:
    """The texts of ``nodes`` where each is a string written out; None where any is not (or none)."""
    texts = [n.value for n in nodes if isinstance(n, ast.Constant) and isinstance(n.value, str)]
    return texts if texts and len(texts) == len(nodes) else None


def _called(node: ast.AST) -> str | None:
    """The method or function name a call node calls."""
    return _name(node.func) if isinstance(node, ast.Call) else None


def _name(node: ast.expr) -> str | None:
    """``x`` of ``a.x`` or of ``x``."""
    return getattr(node, "attr", None) or getattr(node, "id", None)


def _sees_order(node: ast.AST) -> bool:
    """``sys.argv`` (or ``argv`` taken from sys), ``parse_known_args``, an Action of its own, an
    ``action=`` argparse does not name, ``fromfile_prefix_chars``."""
    check = _ORDER_CHECKS.get(type(node))
    return check is not None and check(node)


def _attribute(node: ast.Attribute) -> bool:
    return node.attr in ("argv", "orig_argv", "parse_known_args")


def _from_sys(node: ast.ImportFrom) -> bool:
    return node.module == "sys" and any(a.name in ("argv", "orig_argv") for a in node.names)


def _own_action(node: ast.ClassDef) -> bool:
    return "Action" in map(_name, node.bases)


def _call(node: ast.Call) -> bool:
    return any(map(_order_keyword, node.keywords))


def _order_keyword(keyword: ast.keyword) -> bool:
    """``fromfile_prefix_chars=``, or an ``action=`` that is none of argparse's own (by name, or
    ``BooleanOptionalAction``: a flag after its negation is kept as ``@flag order``)."""
    if keyword.arg == "fromfile_prefix_chars":
        return True
    value = keyword.value
    own = (isinstance(value, ast.Constant) and value.value in _ACTIONS) or _name(
        value
    ) == "BooleanOptionalAction"
    return keyword.arg == "action" and not own


_ORDER_CHECKS: dict[type, Callable[[Any], bool]] = {
    ast.Attribute: _attribute, ast.ImportFrom: _from_sys, ast.ClassDef: _own_action, ast.Call: _call,
}  # fmt: skip
