"""`trl grpo` / `trl rloo` configs naming a reward function TRL cannot load: refused before any run
starts.

TRL's scripts take each name of ``reward_funcs`` from their own registry (``accuracy_reward``...)
or, holding a dot, as ``module.function`` imported from the working folder (the script puts it
first on ``sys.path``) or the run's environment. A misspelled name fails every run of the sweep
once trl is imported, after each started (and the failed runs then need ``--rerun-failed``).

Nothing is imported here: the registry's names are read from the installed script's source (judged
only where the command's program lives beside sweepgen's interpreter: one trl), and a
module the working folder holds (``my_rewards.py``, ``pkg/rewards.py``, a package's
``__init__.py``) is parsed, not run, for a top-level definition of the name. A module that no file
of the working folder holds is refused only when sweepgen's interpreter finds it nowhere and the
command's program lives beside that interpreter (one environment: else the run's own environment
may hold it). A module whose top level is not plain (``from x import *``, ``__getattr__``) is not
judged, nor one that may bind names it does not spell (``globals()``, ``setattr``, ``exec``).
"""

from __future__ import annotations

import ast
import difflib
import functools
import importlib.util
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from sweepgen.errors import ConfigError, Location, UserError
from sweepgen.formats import pysource
from sweepgen.fs.outtree import check_rel
from sweepgen.run.core.base import RunTask
from sweepgen.run.core.runfiles import read_bytes
from sweepgen.run.start import installed_source
from sweepgen.run.start.config_where import key_location

SCRIPTS = ("grpo", "rloo")  # TRL's scripts that read reward_funcs (and reward_model_name_or_path)
_REGISTRY = "reward_funcs_registry"  # the name of the dict each script's main() builds
_MAX_SOURCE_BYTES = 1 << 20


def judge(
    sweep_dir: Path,
    task: RunTask,
    config: Mapping[str, Any],
    script: str,
    command: Sequence[str],
    *,
    from_command: bool = False,
) -> None:
    """Exit 2 when the run's ``config`` (as the script reads it: ``from_command``, its
    ``reward_funcs`` given on the command line), run by TRL's ``script``, names a reward function
    TRL would not find."""
    funcs = config.get("reward_funcs")
    if script in SCRIPTS and isinstance(funcs, str) and funcs:
        raise _one_string(sweep_dir, task, funcs, script)
    if script not in SCRIPTS or not isinstance(funcs, list):
        return
    for index, name in enumerate(funcs):
        problem = _problem(name, script, command) if isinstance(name, str) else None
        if problem is not None:
            raise _refusal(sweep_dir, task, (name, index), script, problem, from_command=from_command)


def _refusal(
    sweep_dir: Path,
    task: RunTask,
    named: tuple[str, int],
    script: str,
    problem: tuple[str, str],
    *,
    from_command: bool,
) -> ConfigError:
    """The refusal of ``reward_funcs``' ``named`` (name, index): at its line, or on the command line."""
    (name, index), (why, hint) = named, problem
    return ConfigError(
        f"reward_funcs names {name!r}, which `trl {script}` cannot load: {why}",
        location=Location("--command")
        if from_command
        else key_location(sweep_dir, task, ("reward_funcs", index)),
        key=None if from_command else f"reward_funcs[{index}]",  # the command's: every run's
        hint=hint,
    )


def _one_string(sweep_dir: Path, task: RunTask, funcs: str, script: str) -> ConfigError:
    """``reward_funcs: accuracy_reward``: the script loops over it, one character a name."""
    return ConfigError(
        f"reward_funcs is one string, {funcs!r}: `trl {script}` loops over it as over a list, taking "
        f"each character for a reward function's name, and fails at the run's start on {funcs[0]!r}",
        location=key_location(sweep_dir, task, "reward_funcs"),
        key="reward_funcs",
        hint=f"write a list: `reward_funcs: [{funcs}]`",
    )


def _problem(name: str, script: str, command: Sequence[str]) -> tuple[str, str] | None:
    """(why, how to fix) when TRL would fail to load the reward function ``name``; None otherwise."""
    registry = _registry(script)  # None: trl is not installed here, its own names are not known
    if registry is not None and name in registry:
        return _needs_missing(name, command)
    if "." in name:
        module, function = name.rsplit(".", 1)
        return _not_importable(module, function, command)
    # another environment's trl may hold other names: its own registry is judged only here
    return (
        _not_trl_s(name, registry)
        if registry is not None and installed_source.same_environment(command)
        else None
    )


def _needs_missing(name: str, command: Sequence[str]) -> tuple[str, str] | None:
    """(why, how to fix) where TRL's own reward ``name`` raises ImportError for a package the runs'
    environment (sweepgen's own: judged only there) lacks, as ``accuracy_reward`` does without
    math_verify, at the first reward, after the model loaded and generated; None otherwise."""
    package = _needed_package(name) if installed_source.same_environment(command) else None
    if package is None or importlib.util.find_spec(package) is not None:
        return None
    return (
        f"TRL's {name} needs the package {package!r}, which is not installed, and raises ImportError at "
        "the first reward, after the model loaded and generated",
        f"pip install {package} in the runs' environment, or name another reward function",
    )


@functools.cache
def _needed_package(name: str) -> str | None:
    """The package TRL's reward function ``name`` refuses to run without (``if not
    is_X_available(): raise ImportError``), read from trl/rewards' and trl/import_utils' source."""
    checks = _availability_checks(_reward_function(name))
    return next(filter(None, (_package_of(check) for check in checks)), None)


_REWARD_MODULES = ("accuracy_rewards", "format_rewards", "other_rewards")  # trl/rewards/*.py


def _reward_function(name: str) -> ast.FunctionDef | None:
    """``name``'s definition in the installed trl.rewards modules (none where it is not read)."""
    found = (_top_function(f"trl.rewards.{module}", name) for module in _REWARD_MODULES)
    return next(filter(None, found), None)


def _top_function(module: str, name: str) -> ast.FunctionDef | None:
    tree = pysource.parsed(module)
    defined = (n for n in getattr(tree, "body", []) if isinstance(n, ast.FunctionDef))
    return next((n for n in defined if n.name == name), None)


def _availability_checks(function: ast.FunctionDef | None) -> list[str]:
    """The ``is_X_available`` names whose falsehood raises ImportError in ``function``'s body."""
    ifs = [n for n in ast.walk(function) if isinstance(n, ast.If)] if function is not None else []
    return [check for check in map(_negated_check, ifs) if check is not None]


def _negated_check(node: ast.If) -> str | None:
    """``X`` of ``if not X(): raise ImportError(...)``; None for any other ``if``."""
    test = node.test
    call = test.operand if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not) else None
    name = call.func.id if isinstance(call, ast.Call) and isinstance(call.func, ast.Name) else None
    return name if name and _raises_import_error(node) else None


def _raises_import_error(node: ast.If) -> bool:
    raised = [n.exc for n in node.body if isinstance(n, ast.Raise)]
    return any(isinstance(e, ast.Call) and getattr(e.func, "id", None) == "ImportError" for e in raised)


def _package_of(check: str) -> str | None:
    """The package ``trl.import_utils.<check>`` asks for (``return _is_package_available("pkg")``)."""
    function = _top_function("trl.import_utils", check)
    calls = [n for n in ast.walk(function) if isinstance(n, ast.Call)] if function is not None else []
    return next(filter(None, map(_string_argument, calls)), None)


def _string_argument(call: ast.Call) -> str | None:
    first = call.args[0] if call.args else None
    value = first.value if isinstance(first, ast.Constant) else None
    return value if isinstance(value, str) and value.isidentifier() else None


def _not_trl_s(name: str, registry: frozenset[str]) -> tuple[str, str]:
    near = closest_key(name, registry)
    return (
        f"it is none of TRL's own ({', '.join(sorted(registry))}) and no import path",
        f"did you mean {near!r}?" if near else "write module.function for a function of your own",
    )


def _not_importable(module: str, function: str, command: Sequence[str]) -> tuple[str, str] | None:
    """(why, how to fix) when ``module.function`` is not found where TRL imports it from."""
    found = _local_module(module)
    if found is None:
        return _missing_module(module, command)
    defined = _top_level_names(found)
    if defined is None or function in defined:
        return None
    near = closest_key(function, defined)
    return (
        f"{found} defines no top-level `{function}`",
        f"did you mean `{module}.{near}`?" if near else f"define `{function}` in {found}",
    )


def _missing_module(module: str, command: Sequence[str]) -> tuple[str, str] | None:
    """The refusal of a module no file of the working folder holds, when the run's environment is
    sweepgen's own and it holds no such module either."""
    top = module.split(".", 1)[0]
    if not installed_source.same_environment(command) or importlib.util.find_spec(top) is not None:
        return None
    shown = module.replace(".", "/")
    return (
        f"no module `{module}`: no {shown}.py (or {shown}/__init__.py) in the working folder "
        f"{os.getcwd()}, where the runs start, and none installed",
        f"put {shown}.py in the folder you run `sweepgen run` from, or fix the module's name",
    )


def _local_module(module: str) -> str | None:
    """The file of the working folder that ``import module`` loads first (TRL puts the folder first
    on sys.path): ``a/b.py`` or ``a/b/__init__.py``; None when there is none (or it cannot be read
    as a project file: a link, a path leaving the folder)."""
    parts = module.split(".")
    if not all(part.isidentifier() for part in parts):
        return None
    stem = "/".join(parts)
    # a package before a module, as Python's finder
    return next((rel for rel in (f"{stem}/__init__.py", f"{stem}.py") if _project_file(rel)), None)


def _project_file(rel: str) -> bool:
    """Whether ``rel`` is a regular file of the working folder (inside it, not a link)."""
    try:
        check_rel(os.getcwd(), rel)
        return os.path.isfile(rel) and not os.path.islink(rel)
    except (OSError, ValueError, UserError):
        return False


def _top_level_names(rel: str) -> set[str] | None:
    """The names a module file binds at its top level; None when that cannot be told without
    running it (a star import, a module ``__getattr__``, a file that does not read or parse)."""
    tree = _parsed(rel)
    if tree is None or any(_star(node) for node in tree.body) or _binds_by_name(tree):
        return None
    names = {name for node in tree.body for name in _bound(node)}
    return None if "__getattr__" in names or "*" in names else names  # `*`: a star import in a block


def _parsed(rel: str) -> ast.Module | None:
    try:
        return ast.parse(read_bytes(Path(rel), limit=_MAX_SOURCE_BYTES) or b"", rel)
    except (OSError, ValueError, UserError, SyntaxError, RecursionError, MemoryError):  # MemoryError: the
        return None  # parser's stack (`x = ----...1`), never the machine's memory


_BINDS_BY_NAME = frozenset({"globals", "vars", "setattr", "exec", "locals"})


def _binds_by_name(tree: ast.Module) -> bool:
    """Whether the module may bind a name its statements do not spell (``globals()[n] = f``,
    ``setattr(sys.modules[__name__], n, f)``, ``exec``): its names cannot be told without running it."""
    return any(isinstance(n, ast.Name) and n.id in _BINDS_BY_NAME for n in ast.walk(tree))


def _star(node: ast.stmt) -> bool:
    return isinstance(node, ast.ImportFrom) and any(a.name == "*" for a in node.names)


def _bound(node: ast.stmt) -> set[str]:
    """The names a top-level statement binds (definitions, assignments, imports); those bound
    inside an ``if``/``try`` at the top level count too."""
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return {node.name}
    if isinstance(node, (ast.Import, ast.ImportFrom)):
        return {(a.asname or a.name).split(".", 1)[0] for a in node.names}
    if isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
        return _assigned(node)
    return {name for s in _inner(node) for name in _bound(s)}


def _assigned(node: ast.Assign | ast.AnnAssign | ast.AugAssign) -> set[str]:
    targets = node.targets if isinstance(node, ast.Assign) else [node.target]
    return {n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)}


def _inner(node: ast.stmt) -> list[ast.stmt]:
    """The statements of a compound statement's blocks (an ``if``'s, a ``try``'s and its handlers')."""
    inner = [s for field in ("body", "orelse", "finalbody") for s in getattr(node, field, [])]
    return inner + [s for handler in getattr(node, "handlers", []) for s in handler.body]


def closest_key(name: str, known: frozenset[str] | set[str]) -> str | None:
    """The known name ``name`` most likely misspells, if any is close."""
    near = difflib.get_close_matches(name, sorted(known), n=1, cutoff=0.75)
    return near[0] if near else None


@functools.cache
def _registry(script: str) -> frozenset[str] | None:
    """The names of TRL's own reward functions, read from the installed ``trl/scripts/SCRIPT.py``
    (the ``reward_funcs_registry = {...}`` its main() builds) without importing trl; None when trl
    is not installed here or the script holds no such dict."""
    tree = _script_tree(script)
    found = [n.value for n in ast.walk(tree) if isinstance(n, ast.Assign) and _is_registry(n)] if tree else []
    return frozenset(_string_keys(found[0])) if found else None


def _is_registry(node: ast.AST) -> bool:
    return (
        isinstance(node, ast.Assign)
        and isinstance(node.value, ast.Dict)
        and _REGISTRY in _names(node.targets)
    )


def _string_keys(mapping: ast.expr) -> list[str]:
    keys = mapping.keys if isinstance(mapping, ast.Dict) else []
    return [k.value for k in keys if isinstance(k, ast.Constant) and isinstance(k.value, str)]


def _names(targets: list[ast.expr]) -> set[str]:
    return {t.id for t in targets if isinstance(t, ast.Name)}


def _script_tree(script: str) -> ast.Module | None:
    """The parsed source of the installed ``trl/scripts/SCRIPT.py``, found without importing trl."""
    return pysource.parsed(f"trl.scripts.{script}")
