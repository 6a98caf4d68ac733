"""What run/ uses of the compile pipeline, in one module: run/, its search and its report import
compile through here only (import-linter contract `run-compile-facade`), as the CLI goes through
``compile.api``.

The lock (its model, its file names, its digest) and where a run writes are loaded with this module:
they are small and every run command reads a lock. The rest, the spec model, the search block, the
pipeline that renders a search trial, is loaded on first use (PEP 562 ``__getattr__``): `status`
and `report` never load pydantic or jinja2 for a grid.
"""

from __future__ import annotations

from types import ModuleType
from typing import TYPE_CHECKING, Any

from sweepgen.compile.output.lockfile import lock, lock_digest
from sweepgen.compile.output.lockfile.lock import DECIDE_STATE_NAME, LOCK_NAME, RUN_STATE_NAME, Lock, LockFile
from sweepgen.compile.output.lockfile.lock_where import placed
from sweepgen.compile.output.rundir import YAML_SUFFIXES
from sweepgen.compile.spec.project import read_regular
from sweepgen.compile.spec.request import slurm_request, slurm_time
from sweepgen.compile.spec.request.shape_names import LAUNCHERS, SHAPE_KEYS
from sweepgen.compile.spec.variants.plain_value import PLAIN_HINT, plain

if TYPE_CHECKING:  # what the names loaded on use below are, for type checkers
    from sweepgen.compile import api
    from sweepgen.compile.output.lockfile.inputs import spec_digest
    from sweepgen.compile.output.pipeline import compile_expansion, lock_entries
    from sweepgen.compile.output.render import RenderedFile
    from sweepgen.compile.schema import trl_guess, trl_source_rules
    from sweepgen.compile.schema.trl_cli import COMMANDS as TRL_COMMANDS
    from sweepgen.compile.schema.validate import load_validator
    from sweepgen.compile.spec.model import Spec, load_spec
    from sweepgen.compile.spec.request.executor_resources import EXECUTOR_RESOURCES
    from sweepgen.compile.spec.sampling.search_block import SearchBlock
    from sweepgen.compile.spec.variants import trials
    from sweepgen.compile.spec.variants.context import sweep_view
    from sweepgen.compile.spec.variants.trials import trial_name

__all__ = [
    "DECIDE_STATE_NAME",
    "EXECUTOR_RESOURCES",
    "LAUNCHERS",
    "LOCK_NAME",
    "RUN_STATE_NAME",
    "YAML_SUFFIXES",
    "Lock",
    "LockFile",
    "PLAIN_HINT",
    "SHAPE_KEYS",
    "RenderedFile",
    "SearchBlock",
    "Spec",
    "TRL_COMMANDS",
    "api",
    "compile_expansion",
    "load_spec",
    "load_validator",
    "lock",
    "lock_digest",
    "lock_entries",
    "placed",
    "plain",
    "read_regular",
    "slurm_request",
    "slurm_time",
    "spec_digest",
    "sweep_view",
    "trial_name",
    "trials",
    "trl_guess",
    "trl_source_rules",
]


def __getattr__(name: str) -> Any:
    """The names loaded on first use, each from its room (real imports, so import-linter sees them)."""
    if name in ("trials", "trial_name", "SearchBlock", "Spec", "load_spec", "sweep_view"):
        return _spec(name)
    if name in ("compile_expansion", "lock_entries", "RenderedFile", "spec_digest"):
        return _output(name)
    if name == "EXECUTOR_RESOURCES":
        from sweepgen.compile.spec.request import executor_resources  # noqa: PLC0415 - loaded on use (pydantic)

        return executor_resources.EXECUTOR_RESOURCES
    if name == "load_validator":
        from sweepgen.compile.schema.validate import load_validator  # noqa: PLC0415 - loaded on use (pydantic)

        return load_validator
    if name == "TRL_COMMANDS":
        from sweepgen.compile.schema import trl_cli  # noqa: PLC0415 - loaded on use (pydantic)

        return trl_cli.COMMANDS
    if name == "trl_guess":
        from sweepgen.compile.schema import trl_guess  # noqa: PLC0415 - loaded on use: TRL's source, for `trl` runs

        return trl_guess
    if name == "trl_source_rules":
        from sweepgen.compile.schema import trl_source_rules  # noqa: PLC0415 - loaded on use: TRL's source, for `trl` runs

        return trl_source_rules
    if name == "api":
        from sweepgen.compile import api  # noqa: PLC0415 - loaded on use: the whole pipeline, for `list`

        return api
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _spec(name: str) -> Any:
    from sweepgen.compile.spec import model  # noqa: PLC0415 - loaded on use (pydantic)
    from sweepgen.compile.spec.sampling import search_block  # noqa: PLC0415 - loaded on use (pydantic)
    from sweepgen.compile.spec.variants import context  # noqa: PLC0415 - loaded on use (pydantic)
    from sweepgen.compile.spec.variants import trials as trials_module  # noqa: PLC0415 - as above

    found: dict[str, Any] = {
        "trials": trials_module,
        "trial_name": trials_module.trial_name,
        "SearchBlock": search_block.SearchBlock,
        "Spec": model.Spec,
        "load_spec": model.load_spec,
        "sweep_view": context.sweep_view,
    }
    return found[name]


def _output(name: str) -> Any:
    from sweepgen.compile.output import pipeline, render  # noqa: PLC0415 - loaded on use (jinja2)
    from sweepgen.compile.output.lockfile import inputs  # noqa: PLC0415 - loaded on use (jinja2)

    found: dict[str, ModuleType | Any] = {
        "compile_expansion": pipeline.compile_expansion,
        "lock_entries": pipeline.lock_entries,
        "RenderedFile": render.RenderedFile,
        "spec_digest": inputs.spec_digest,
    }
    return found[name]
