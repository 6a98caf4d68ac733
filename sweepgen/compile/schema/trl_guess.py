"""Which ``trl <command>`` a config given to ``init --from`` without ``--schema`` is written for, so
that init can name the schema that checks it (``schema: trl:grpo``) and the command that runs it.

Read from the installed TRL's source, never imported (sweepgen.formats.pysource): each command's
config class (``GRPOConfig``) and its script's own arguments (``reward_funcs``) hold the keys that
command alone has; transformers' ``TrainingArguments``, TRL's shared base and the classes every
script parses (``ModelConfig``, ``ScriptArguments``, ``DatasetMixtureConfig``) the keys any has. A
config is one command's when most of its keys are TRL's and some are that command's alone; the
commands fitting it as well are named too (a GRPO config is often an RLOO one). Nothing is guessed
where TRL is not installed here: ``--schema trl:<command>`` needs it anyway.
"""

from __future__ import annotations

import ast
import functools
from collections.abc import Iterable, Mapping
from typing import Any

from sweepgen.compile.schema.trl_cli import COMMANDS
from sweepgen.formats import pysource

# each command's config class, as trl/scripts/<command>.py's make_parser() names it
_CLASS = {
    "distillation": "DistillationConfig",
    "dpo": "DPOConfig",
    "grpo": "GRPOConfig",
    "kto": "KTOConfig",
    "reward": "RewardConfig",
    "rloo": "RLOOConfig",
    "sft": "SFTConfig",
}
# the classes every command parses (and the CLI's own keys: TrlParser's env, accelerate's options)
_SHARED = (
    ("transformers.training_args", "TrainingArguments"),
    ("trl.trainer.base_config", "_BaseConfig"),
    ("trl.trainer.model_config", "ModelConfig"),
    ("trl.scripts.utils", "ScriptArguments"),
    ("trl.scripts.utils", "DatasetMixtureConfig"),
)
_CLI_KEYS = frozenset({"env", "num_processes", "accelerate_config"})
_PREFERRED = ("grpo", "sft", "dpo", "rloo", "kto", "reward", "distillation")  # the first named of a tie


def commands_for(config: Mapping[str, Any]) -> tuple[list[str], list[str]]:
    """(the ``trl`` commands the config's top-level keys fit best, best first; the keys only those
    commands have); two empty lists when it reads as no TRL command's (or TRL is not installed)."""
    keys = {key for key in config if isinstance(key, str)}
    shared = _shared()
    fitting = _fitting(keys, shared) if shared else {}
    if not fitting:
        return [], []
    best = max(fitting.values())
    chosen = sorted((c for c, s in fitting.items() if s == best), key=_PREFERRED.index)
    return chosen, sorted(keys & _own(chosen[0]) - shared)


def _fitting(keys: set[str], shared: frozenset[str]) -> dict[str, tuple[int, int]]:
    """The commands that know most of ``keys`` and have some of them alone, with their _score."""
    scored = {c: _score(keys, shared, _own(c) - shared) for c in _CLASS if c in COMMANDS}
    return {c: s for c, s in scored.items() if s[1] and 2 * s[0] >= len(keys)}


def _score(keys: set[str], shared: frozenset[str], own: frozenset[str]) -> tuple[int, int]:
    """(how many keys the command knows, how many only it has)."""
    return len(keys & (shared | own)), len(keys & own)


@functools.cache
def _shared() -> frozenset[str]:
    """The keys every TRL command reads; empty when TRL is not installed here."""
    found = [_fields(module, cls) for module, cls in _SHARED]
    return frozenset().union(*found, _CLI_KEYS) if all(found) else frozenset()


@functools.cache
def _own(command: str) -> frozenset[str]:
    """The fields of the command's config class and of its script's own argument classes."""
    script = pysource.parsed(f"trl.scripts.{command}")
    classes = [n.name for n in script.body if isinstance(n, ast.ClassDef)] if script else []
    return _fields(f"trl.trainer.{command}_config", _CLASS[command]).union(
        *(_fields(f"trl.scripts.{command}", name) for name in classes)
    )


def _fields(module: str, cls: str) -> frozenset[str]:
    """The annotated fields ``cls`` declares in the installed ``module``'s source."""
    tree = pysource.parsed(module)
    body = (
        next((n.body for n in tree.body if isinstance(n, ast.ClassDef) and n.name == cls), []) if tree else []
    )
    return frozenset(_names(body))


def _names(body: Iterable[ast.stmt]) -> Iterable[str]:
    return (n.target.id for n in body if isinstance(n, ast.AnnAssign) and isinstance(n.target, ast.Name))
