"""Flags a trainer's code turns off whatever the config says: ``if self.F: ...; self.F = False``.

TRL 1.16's DPOTrainer does this to ``padding_free`` ("temporarily unavailable after a refactor"):
``padding_free: true`` passes, the run logs a warning and pads, and a comparison of padding-free
against padded DPO compares two identical runs. Read from the trainer's source (never imported): an
``if`` over a field (``self.F``, ``args.F``, ``self.args.F``), at a function's own level, whose own
statements set ``self.F`` to ``False``. The finding goes when TRL brings the option back.
"""

from __future__ import annotations

import ast
import functools
from collections.abc import Iterable, Iterator
from typing import Any

from sweepgen.compile.schema.code_chains import field_of, function_bodies, unconditional_ifs
from sweepgen.formats import pysource


def turned_off(source: str | ast.AST) -> dict[str, int]:
    """Field -> the line where the code sets it back to False under ``if <field>:``."""
    tree = ast.parse(source) if isinstance(source, str) else source
    found = ((field_of(chain.test), chain.body) for chain in _own_level_ifs(tree))
    return {field: line for field, body in found if field and (line := _set_false(body, field))}


def _own_level_ifs(tree: ast.AST) -> Iterator[ast.If]:
    return (chain for body in function_bodies(tree) for chain in unconditional_ifs(body))


def _set_false(body: list[ast.stmt], field: str) -> int | None:
    """The line of a statement of ``body`` doing ``self.<field> = False``."""
    return next((s.lineno for s in body if isinstance(s, ast.Assign) and _false_to(s, field)), None)


def _false_to(stmt: ast.Assign, field: str) -> bool:
    value = stmt.value
    return (
        isinstance(value, ast.Constant)
        and value.value is False
        and any(field_of(t) == field for t in stmt.targets)
    )


def ignored_in(modules: Iterable[str]) -> dict[str, str]:
    """Field -> why, for the flags the trainers of ``modules`` (``trl.trainer.dpo_config`` ->
    ``trl.trainer.dpo_trainer``) turn off."""
    out: dict[str, str] = {}
    for module in modules:
        trainer = module[: -len("_config")] + "_trainer" if module.endswith("_config") else module
        for field, line in _in_module(trainer).items():
            where = f"{trainer.replace('.', '/')}.py:{line}"
            out.setdefault(field, f"{trainer.partition('.')[0]} turns {field} off whatever it is, {where}")
    return out


@functools.lru_cache(maxsize=32)
def _in_module(module: str) -> dict[str, int]:
    tree = pysource.parsed(module)
    return turned_off(tree) if tree is not None else {}


def refuse_true(props: dict[str, Any], modules: Iterable[str]) -> None:
    """Refuse ``true`` in each boolean property the trainers turn off, saying why."""
    for field, why in ignored_in(modules).items():
        if field in props:
            props[field]["not"] = {
                "const": True,
                "$comment": f"{why}: remove it (the run would not be {field})",
            }
