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
from typing import Any, NamedTuple

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


def commands_for(config: Mapping[str, Any], named: str = "") -> tuple[list[str], list[str]]:
    """(the ``trl`` commands the config's top-level keys fit best, best first: of those that fit as
    well, one the config's file ``named`` names, ``rloo.yaml``; the keys only the first has); two
    empty lists when it reads as no TRL command's (or TRL is not installed)."""
    keys = {key for key in config if isinstance(key, str)}
    shared = _shared()
    fitting = _fitting(keys, shared) if shared else {}
    if not fitting:
        return [], []
    best = max(fitting.values())
    chosen = sorted(
        (c for c, s in fitting.items() if s == best), key=lambda c: (c not in named, _PREFERRED.index(c))
    )
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
    return frozenset(_declared(module, cls))


def _declared(module: str, cls: str) -> dict[str, bool]:
    """Field -> whether its default is ``True``, of each field ``cls`` declares in ``module``'s source."""
    return {name: _true(value) for name, value in _annotated(_body(module, cls))}


def _body(module: str, cls: str) -> list[ast.stmt]:
    """The statements of class ``cls`` in the installed ``module``'s source; none where it is not."""
    tree = pysource.parsed(module)
    found = (n for n in getattr(tree, "body", []) if getattr(n, "name", None) == cls)
    return next((n.body for n in found if isinstance(n, ast.ClassDef)), [])


def _annotated(body: Iterable[ast.stmt]) -> Iterable[tuple[str, ast.expr | None]]:
    """(name, default) of each field a class body declares."""
    fields = (n for n in body if isinstance(n, ast.AnnAssign))
    return ((n.target.id, n.value) for n in fields if isinstance(n.target, ast.Name))


def _true(value: ast.expr | None) -> bool:
    """Whether a field's default (``= True``, ``field(default=True)``) is ``True``."""
    value = _default_of(value)
    return isinstance(value, ast.Constant) and value.value is True


def _default_of(value: ast.expr | None) -> ast.expr | None:
    """The default a field's value gives: itself, or ``field(default=X)``'s ``X`` (None: none)."""
    if isinstance(value, ast.Call):
        return next((k.value for k in value.keywords if k.arg == "default"), None)
    return value


def script_options(command: str) -> frozenset[str]:
    """The option strings the parser of ``trl/scripts/<command>.py`` takes (HfArgumentParser: each
    field's ``--name`` and ``--name-with-dashes``, ``--no_name`` and ``--no-name`` for a field whose
    default is true, ``-h``/``--help``), read from the installed source; empty where it cannot be
    read (TRL not installed here, or a command of no known class)."""
    if command not in _CLASS or not _shared():
        return frozenset()
    fields: dict[str, bool] = {}
    for module, cls in _parsed_by(command):  # base before derived: a redeclared field's own default
        fields.update(_declared(module, cls))
    return frozenset({"-h", "--help"}).union(*(_spellings(name, true) for name, true in fields.items()))


_NO_LITERAL = object()  # a default that is no literal (a factory, a name): not known without importing


class ScriptFields(NamedTuple):
    """What the parser of ``trl/scripts/<command>.py`` takes, read from the installed source."""

    names: frozenset[str]  # every field
    defaults: dict[str, Any]  # field -> its literal default (one that is no literal left out)
    classes: frozenset[str]  # the names of the classes it parses, bases too


def script_fields(command: str) -> ScriptFields:
    """The fields (a subclass's redeclared default over its base's) and classes of the parser of
    ``trl/scripts/<command>.py``; empty where its source cannot be read here."""
    if command not in _CLASS or not _shared():
        return ScriptFields(frozenset(), {}, frozenset())
    parsed = _parsed_by(command)
    fields = _defaults(parsed)
    known = {name: value for name, value in fields.items() if value is not _NO_LITERAL}
    return ScriptFields(frozenset(fields), known, frozenset(cls for _, cls in parsed))


def command_of_class(name: str) -> str | None:
    """The ``trl`` command whose config class is ``name`` (``GRPOConfig``: ``grpo``)."""
    return next((command for command, cls in _CLASS.items() if cls == name), None)


def config_class(command: str) -> str:
    """The name of ``trl <command>``'s config class (``GRPOConfig``); "" for no TRL command."""
    return _CLASS.get(command, "")


def config_class_fields(command: str) -> ScriptFields:
    """``script_fields`` of the command's config class alone (``GRPOConfig``: its own fields and
    its bases', TrainingArguments' too): what a person's own script parsing that class takes for
    sure (its other classes, ModelConfig's or ScriptArguments', are not known to be parsed)."""
    if command not in _CLASS or not _shared():
        return ScriptFields(frozenset(), {}, frozenset())
    parsed = [*_SHARED[:2], (f"trl.trainer.{command}_config", _CLASS[command])]
    fields = _defaults(parsed)
    known = {name: value for name, value in fields.items() if value is not _NO_LITERAL}
    return ScriptFields(frozenset(fields), known, frozenset(cls for _, cls in parsed))


def _defaults(parsed: Iterable[tuple[str, str]]) -> dict[str, Any]:
    """Field -> its literal default (_NO_LITERAL: none) of the classes ``parsed``, in their order."""
    fields: dict[str, Any] = {}
    for module, cls in parsed:
        fields.update((name, _literal(value)) for name, value in _annotated(_body(module, cls)))
    return fields


def _literal(value: ast.expr | None) -> Any:
    """A field's default (``= 3``, ``field(default="steps")``) where it is a literal."""
    value = _default_of(value)
    try:
        return _NO_LITERAL if value is None else ast.literal_eval(value)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return _NO_LITERAL


def _parsed_by(command: str) -> list[tuple[str, str]]:
    """(module, class) of each dataclass the command's script parses, each base before its subclass."""
    script = pysource.parsed(f"trl.scripts.{command}")
    own = [n.name for n in script.body if isinstance(n, ast.ClassDef)] if script else []
    chain = [*_SHARED, (f"trl.trainer.{command}_config", _CLASS[command])]
    return chain + [(f"trl.scripts.{command}", name) for name in own]


def _spellings(name: str, true: bool) -> set[str]:
    names = {name, *([f"no_{name}"] if true else [])}
    return {f"--{n}" for n in names} | {f"--{n.replace('_', '-')}" for n in names if "_" in n}
