"""A ``trl <command>`` run (``trl grpo``, ``-m trl.scripts.grpo``) whose config breaks a rule TRL,
transformers or PEFT raise for at its start that the types do not say: refused before any run starts,
with or without ``schema: trl:<command>`` in the spec.

A spec naming the schema had these rules at `check` and `render` (compile.schema.trl_raises); a
schema-less sweep run by ``--command 'trl grpo --config {config}'`` was checked for its keys' names
alone, so ``generation_batch_size`` with ``steps_per_generation``, ``num_generations: 1``,
``save_steps: 2.5`` or ``fp16`` with ``bf16`` failed in every run once trl had loaded. The rules are
applied to each run's config as TRL's script reads it (the command line's values over the file's,
trl_flags), the command's fields and defaults read from the installed TRL's source, never imported;
judged only where the command's program is installed beside sweepgen (another environment's TRL may
be another release).
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from pathlib import Path
from typing import Any

from sweepgen.compile import run_api
from sweepgen.errors import ConfigError
from sweepgen.run.core.base import RunTask
from sweepgen.run.start import installed_source
from sweepgen.run.start.config_where import value_location


def judge(
    sweep_dir: Path,
    task: RunTask,
    config: Mapping[str, Any],
    script: str,
    command: Sequence[str],
    given: Collection[str],
    *,
    own: str | None = None,
) -> None:
    """Exit 2 at the first rule the run's ``config`` (``given``: the keys its command line sets)
    breaks, run by TRL's ``script``; ``own``: the word of a person's own script that parses the
    ``script``'s config class (trl_own_script): that class's rules alone."""
    if not installed_source.same_environment(command):
        return
    found = run_api.trl_source_rules.refusals(script, config, own=own is not None)
    if not found:
        return
    refusal = _refusal(sweep_dir, task, config, script, (*found[0], given))
    if own is not None:
        refusal.hint = (
            f"{run_api.trl_source_rules.config_class(script)}, which {own} parses, raises this at "
            "each run's start; fix the value in the spec and render again"
        )
    raise refusal


def _refusal(
    sweep_dir: Path,
    task: RunTask,
    config: Mapping[str, Any],
    script: str,
    broken: tuple[str, str, Collection[str]],
) -> ConfigError:
    """The refusal of the rule ``broken`` (its dotted path, why, the keys the command line gives)."""
    path, why, given = broken
    key = path.split(".", 1)[0]
    refusal = ConfigError(
        f"run {task.name!r}: {why}",
        location=value_location(sweep_dir, task, key, key in given),
        key=key,
        hint=f"TRL's `trl {script}` raises this at each run's start, after the model loads; fix the "
        f"value in the spec and render again (`schema: trl:{script}` in the spec says it at `check`)",
    )
    # the keys the rule read: its own, and those its words name (a search sampling none of them
    # would meet it in every trial)
    refusal.reads = frozenset({key, *(k for k in config if isinstance(k, str) and k in why)})
    return refusal
