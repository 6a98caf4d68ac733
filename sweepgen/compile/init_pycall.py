"""`init --from train.py`: the literal keyword arguments of the one TRL config call a Python file
holds (``GRPOConfig(output_dir="out", learning_rate=1e-6)``, ``trl.GRPOConfig(...)``), read through
``ast``, never imported or run (SECURITY.md), as the config a spec starts from.

Anything that is not a literal a spec can carry as the same type (a name, an expression, an
f-string, ``**kwargs``, a positional argument, a tuple key, a set, bytes) is refused at its line and
column: a value sweepgen would have to guess is never taken. A tuple becomes a list (the YAML the
runs read has no tuples; TrlParser reads a list for each sequence field).
"""

from __future__ import annotations

import ast
import difflib
from typing import Any

from sweepgen.compile.schema import trl_guess
from sweepgen.errors import Location, UserError

# TRL's config classes (trl_guess._CLASS), the calls taken for a config
CLASSES = frozenset(
    {"GRPOConfig", "RLOOConfig", "SFTConfig", "DPOConfig", "KTOConfig", "RewardConfig", "DistillationConfig"}
)
_HINT = (
    "write the value itself in the call (a number, string, true/false, None, list or dict), then init again"
)


def config_call(path: str, text: str) -> dict[str, Any]:
    """The keyword arguments of the one TRL config call in ``text`` (the file ``path``)."""
    tree = _parsed(path, text)
    calls = [node for node in ast.walk(tree) if isinstance(node, ast.Call) and _class_of(node)]
    if not calls:
        raise UserError(
            f"{path} holds no call of a TRL config class ({', '.join(sorted(CLASSES))})",
            location=Location(path, 1, 1),
            hint="give a YAML, JSON or TOML config, or a Python file calling e.g. GRPOConfig(output_dir=...)",
        )
    calls.sort(key=lambda n: (n.lineno, n.col_offset))
    if len(calls) > 1:
        raise UserError(
            f"{path} calls a TRL config class {len(calls)} times: which one the runs read is not known",
            location=_at(path, calls[1]),
            hint="keep one GRPOConfig(...) call in the file (or give the config as YAML), then init again",
        )
    return _Reader(path, text).arguments(calls[0])


def command_of(path: str, text: str) -> str | None:
    """The ``trl`` command whose config class the file's one config call builds (``grpo``)."""
    calls = [node for node in ast.walk(_parsed(path, text)) if isinstance(node, ast.Call) and _class_of(node)]
    return trl_guess.command_of_class(_class_of(calls[0]) or "") if len(calls) == 1 else None


def _parsed(path: str, text: str) -> ast.Module:
    try:
        return ast.parse(text, filename=path)
    except SyntaxError as err:
        raise UserError(
            f"{path} is not Python that parses: {err.msg}",
            location=Location(path, err.lineno or 1, err.offset or 1),
            hint="fix the file, or give a YAML, JSON or TOML config",
        ) from None
    except (RecursionError, MemoryError):
        raise UserError(
            f"{path} is nested too deeply for Python's parser",
            location=Location(path),
            hint="give a YAML, JSON or TOML config",
        ) from None


def _class_of(call: ast.Call) -> str | None:
    func = call.func
    name = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else None
    return name if name in CLASSES else None


class _Reader:
    """The literal arguments of a call in ``text`` (the file ``path``)."""

    def __init__(self, path: str, text: str) -> None:
        self.path, self.text = path, text

    def arguments(self, call: ast.Call) -> dict[str, Any]:
        if call.args:
            raise UserError(
                f"{_class_of(call)}(...) is given a positional argument: which field it sets is not read",
                location=_at(self.path, call.args[0]),
                hint="name the field (output_dir=...), then init again",
            )
        data: dict[str, Any] = {}
        for kw in call.keywords:
            if kw.arg is None:
                raise UserError(
                    f"{_class_of(call)}(**...): the fields it unpacks are not known without running the file",
                    location=_at(self.path, kw),
                    hint="write each field as name=value in the call, then init again",
                )
            self.known(call, kw)
            data[kw.arg] = self.literal(kw.value, kw.arg)
        return data

    def known(self, call: ast.Call, kw: ast.keyword) -> None:
        """Refuse a keyword the call's class has no field for (read from the installed TRL)."""
        name = _class_of(call) or ""
        fields = trl_guess.config_class_fields(trl_guess.command_of_class(name) or "").names
        if not fields or kw.arg in fields:
            return
        close = difflib.get_close_matches(str(kw.arg), sorted(fields), n=1)
        raise UserError(
            f"{name} has no field `{kw.arg}`: Python raises TypeError at the call, before anything trains",
            location=_at(self.path, kw),
            key=kw.arg,
            hint=(f"did you mean `{close[0]}`? " if close else "")
            + f"fix the name in the call (TRL's {name} lists its fields), then init again",
        )

    def literal(self, node: ast.expr, key: str) -> Any:
        """The value of ``node`` where it is a literal a spec carries as the same type."""
        if isinstance(node, ast.Constant) and _carried(node.value):
            return node.value
        signed = _signed_number(node)
        if signed is not None:
            return signed
        if isinstance(node, (ast.List, ast.Tuple)):
            return [self.literal(item, f"{key}[{i}]") for i, item in enumerate(node.elts)]
        if isinstance(node, ast.Dict):
            return self.mapping(node, key)
        raise UserError(
            f"`{key}` is `{self.source(node)}`, not a literal: its value is known only by running the file",
            location=_at(self.path, node),
            key=key,
            hint=_HINT,
        )

    def mapping(self, node: ast.Dict, key: str) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for k, v in zip(node.keys, node.values):
            if not (isinstance(k, ast.Constant) and isinstance(k.value, str)):
                raise UserError(
                    f"`{key}` has a key that is no string: a spec's mapping keys are strings",
                    location=_at(self.path, k if k is not None else v),
                    key=key,
                    hint=_HINT,
                )
            out[k.value] = self.literal(v, f"{key}.{k.value}")
        return out

    def source(self, node: ast.expr) -> str:
        """The node's text as written (one line, at most 60 characters)."""
        text = " ".join((ast.get_source_segment(self.text, node) or type(node).__name__).split())
        return text if len(text) <= 60 else text[:57] + "..."


def _signed_number(node: ast.expr) -> int | float | None:
    """``-1e-5``, ``+3``: a sign before a number literal."""
    if not (isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd))):
        return None
    inner = node.operand
    value = inner.value if isinstance(inner, ast.Constant) else None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return -value if isinstance(node.op, ast.USub) else value


def _carried(value: object) -> bool:
    """None, a bool, an int, a float or a str: what YAML reads back as the same type."""
    return value is None or type(value) in (bool, int, float, str)


def _at(path: str, node: ast.AST) -> Location:
    return Location(path, getattr(node, "lineno", 1), getattr(node, "col_offset", 0) + 1)
