"""``report_to`` naming a tracker transformers does not have, or whose library the runs' environment
lacks: refused before any run starts.

Every TRL config is a transformers ``TrainingArguments``: the trainer turns each ``report_to`` name
into its callback as it is built (``get_reporting_integration_callbacks``), raising "X is not
supported, only ... are supported" for a name it does not know, and each callback raises "...Callback
requires X to be installed" when its library is not there: each run fails at its start, after the
model loaded. The names are read from the installed transformers' source (``INTEGRATION_TO_CALLBACK``
in ``transformers/integrations/integration_utils.py``, never imported), and a library is looked up
as its ``is_*_available`` looks it up (``importlib.util.find_spec``), only where the command's program
is installed beside sweepgen (installed_source.same_environment). A tracker whose availability
depends on more than an installed module (neptune, kubeflow) is not judged for it. The package the
refusal says to install is the one the tracker's callback's own error names (``Run `pip install
azureml-sdk```), else the installed distribution holding the module (importlib.metadata): every
missing module of the tracker is named (dagshub needs mlflow too).
"""

from __future__ import annotations

import ast
import difflib
import importlib.util
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from sweepgen.errors import ConfigError, Location
from sweepgen.formats import pysource
from sweepgen.run.core.base import RunTask
from sweepgen.run.start import installed_source
from sweepgen.run.start.config_where import value_location

_MODULE = "transformers.integrations.integration_utils"
# each tracker's modules, every group needed, any module of a group (transformers 5's is_*_available)
_NEEDS: dict[str, tuple[tuple[str, ...], ...]] = {
    "azure_ml": (("azureml",),),
    "clearml": (("clearml",),),
    "codecarbon": (("codecarbon",),),
    "comet_ml": (("comet_ml",),),
    "dagshub": (("dagshub",), ("mlflow",)),
    "dvclive": (("dvclive",),),
    "flyte": (("flytekit",),),
    "mlflow": (("mlflow",),),
    "swanlab": (("swanlab",),),
    "tensorboard": (("tensorboard", "tensorboardX"),),
    "trackio": (("trackio",),),
    "wandb": (("wandb",),),
}

_PIP_INSTALL = re.compile(r"pip install ([A-Za-z0-9][A-Za-z0-9_.\-\[\]]*)")


def judge(
    sweep_dir: Path,
    task: RunTask,
    config: Mapping[str, Any],
    command: Sequence[str],
    flags: Mapping[str, str | None],
) -> None:
    """Exit 2 when a name of the run's ``report_to`` (the command line's over the config's) is no
    tracker of the installed transformers, or one whose library is not installed here."""
    from_command = flags.get("report_to") is not None
    names = _names(flags["report_to"] if from_command else config.get("report_to"))
    if not names or not installed_source.same_environment(command):
        return
    known = trackers()
    where = value_location(sweep_dir, task, "report_to", from_command)
    for name in names:
        problem = _unknown(name, known) or _missing(name)
        if problem is not None:
            raise _refusal(problem[0], where, problem[1])


def _unknown(name: str, known: frozenset[str]) -> tuple[str, str] | None:
    """What to say of a name the installed transformers has no tracker for (none known: not judged)."""
    if not known or name in known:
        return None
    close = difflib.get_close_matches(name, sorted(known), n=1)
    return (
        f"report_to names {name!r}, which transformers does not have (its trackers: "
        f'{", ".join(sorted(known))}): each run fails at its start ("{name} is not supported")',
        (f"did you mean {close[0]!r}? " if close else "") + "name a tracker transformers has, or `none`",
    )


def _missing(name: str) -> tuple[str, str] | None:
    """What to say of a tracker whose library is not installed here."""
    missing = [group[0] for group in _NEEDS.get(name, ()) if not any(map(_installed, group))]
    if not missing:
        return None
    install = ", ".join(_install(module) for module in missing)
    return (
        f"report_to names {name!r}, but {', '.join(missing)} is not installed in the runs' "
        "environment: transformers' callback for it raises at each run's start",
        f"install it ({install}), or drop {name!r} from report_to",
    )


def _install(module: str) -> str:
    package = pip_name(module)
    return f"`pip install {package}`" if package else f"the package that provides the `{module}` module"


def pip_name(module: str) -> str | None:
    """The package to install for the tracker ``module``: the one the installed transformers' callback
    for it says to install ("Run `pip install comet-ml`"), else the installed distribution holding
    the module (importlib.metadata); None where neither says."""
    owner = next((t for t, groups in _NEEDS.items() if groups[0][0] == module), None)
    said = _callback_pip().get(owner or "")
    if said is not None:
        return said
    import importlib.metadata  # noqa: PLC0415 - slow to import: only for a tracker found missing

    found = importlib.metadata.packages_distributions().get(module)
    return found[0] if found else None


def _callback_pip() -> dict[str, str]:
    """Each tracker's package, as its callback class's first "pip install X" in transformers' source
    names it."""
    tree = _source()
    said = {node.name: _first_pip(node) for node in tree.body if isinstance(node, ast.ClassDef)}
    return {tracker: pip for tracker, cls in _callbacks(tree) if (pip := said.get(cls))}


def _callbacks(tree: ast.Module) -> list[tuple[str, str]]:
    """``INTEGRATION_TO_CALLBACK``'s entries: each tracker and its callback class's name."""
    table = _table(tree)
    entries = zip(table.keys, table.values, strict=True) if isinstance(table, ast.Dict) else ()
    return [(_constant(k), v.id) for k, v in entries if _constant(k) and isinstance(v, ast.Name)]


def _constant(node: ast.expr | None) -> str:
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else ""


def _first_pip(node: ast.ClassDef) -> str | None:
    found = (_PIP_INSTALL.search(_constant(n)) for n in ast.walk(node) if isinstance(n, ast.Constant))
    return next((m.group(1) for m in found if m), None)


def _source() -> ast.Module:
    return pysource.parsed(_MODULE) or ast.Module(body=[], type_ignores=[])


def _names(value: Any) -> list[str]:
    """The tracker names a ``report_to`` value asks for (``all`` and ``none``: none to judge)."""
    names = [value] if isinstance(value, str) else value if isinstance(value, list) else []
    names = [n for n in names if isinstance(n, str)]
    return [] if names in (["all"], ["none"]) else names


def _installed(module: str) -> bool:
    return importlib.util.find_spec(module) is not None


def _refusal(message: str, where: Location, hint: str) -> ConfigError:
    refusal = ConfigError(message, location=where, key="report_to", hint=hint)
    refusal.reads = frozenset({"report_to"})
    return refusal


def trackers() -> frozenset[str]:
    """The keys of the installed transformers' ``INTEGRATION_TO_CALLBACK``, read from its source;
    empty where it is not there."""
    return _string_keys(_table(_source()))


def _table(tree: ast.Module) -> ast.expr | None:
    found = [node.value for node in tree.body if isinstance(node, ast.Assign) and _assigns_table(node)]
    return found[0] if found else None


def _string_keys(node: ast.expr | None) -> frozenset[str]:
    keys = node.keys if isinstance(node, ast.Dict) else []
    return frozenset(k.value for k in keys if isinstance(k, ast.Constant) and isinstance(k.value, str))


def _assigns_table(node: ast.Assign) -> bool:
    return any(isinstance(t, ast.Name) and t.id == "INTEGRATION_TO_CALLBACK" for t in node.targets)
