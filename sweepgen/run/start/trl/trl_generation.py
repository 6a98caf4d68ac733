"""`trl grpo` / `trl rloo` runs whose generation batch does not hold whole groups of
``num_generations`` at the process count they start with: refused before any run starts.

GRPOConfig's (and RLOOConfig's) ``__post_init__`` sizes the generation batch as
``per_device_train_batch_size * num_processes * steps_per_generation`` (``steps_per_generation``
unset: ``gradient_accumulation_steps``), or checks a given ``generation_batch_size`` against
``per_device_train_batch_size * num_processes``, and raises unless it is a multiple of
``num_generations``: every run fails at its start. The process count is known here only where
`run` knows it: a count the command or the config asks accelerate for (trl_processes), one GPU a
run (accelerate starts one process for one GPU), or one process run here on a machine without a GPU
where nothing asks accelerate for more (trl_processes.one_process); otherwise nothing is judged.
Fields a config leaves unset take the installed classes' defaults, read from their source (never
imported), where the run's trl is the one installed here (installed_source.same_environment).
"""

from __future__ import annotations

import ast
import functools
from collections.abc import Collection, Mapping
from pathlib import Path
from typing import Any

from sweepgen.errors import ConfigError, Location
from sweepgen.formats import pysource
from sweepgen.run.core.base import RunTask
from sweepgen.run.start.config_where import key_location
from sweepgen.run.start.trl.trl_flags import PER_RUN

# the config class of each script, and where it and transformers' TrainingArguments are written
_CLASSES = {
    "grpo": ("trl.trainer.grpo_config", "GRPOConfig"),
    "rloo": ("trl.trainer.rloo_config", "RLOOConfig"),
}
_TRAINING_ARGS = ("transformers.training_args", "TrainingArguments")
_FIELDS = ("per_device_train_batch_size", "gradient_accumulation_steps", "num_generations")
_NAMED = (*_FIELDS, "generation_batch_size", "steps_per_generation")
# the eval batch: with an eval_strategy (do_eval then true), per_device_eval_batch_size x processes
# must hold whole groups of num_generations_eval (unset: num_generations)
_EVAL = ("per_device_eval_batch_size", "num_generations_eval", "eval_strategy")
READS = frozenset({*_NAMED, *_EVAL})  # of a run's config


def judge(
    sweep_dir: Path,
    task: RunTask,
    config: Mapping[str, Any],
    script: str,
    processes: int | None,
    *,
    defaults: bool,
    given: Collection[str] = (),
) -> None:
    """Exit 2 when the run's ``config`` (as the script reads it: the keys ``given`` on the command
    line over the config's), run by TRL's ``script`` in ``processes`` processes (None: not known),
    sizes a generation batch TRL refuses; fields it leaves unset take the installed classes'
    ``defaults`` (False: the run's trl is another's, nothing unset is judged)."""
    values = _values(config, script, defaults) if processes is not None and script in _CLASSES else None
    found = _refused_batch(config, values, processes) if values is not None and processes else None
    if found is not None:
        problem, said = found
        _refuse(
            sweep_dir, task, problem, said, _named_key(config, given), given, _train_hint(processes, given)
        )
    if processes and script in _CLASSES:
        _judge_eval(sweep_dir, task, config, processes, given, _eval_values(config, script, defaults))


def _judge_eval(
    sweep_dir: Path,
    task: RunTask,
    config: Mapping[str, Any],
    processes: int,
    given: Collection[str],
    held: tuple[int, int, str] | None,
) -> None:
    """The eval batch's refusal: ``held`` (_eval_values') at ``processes`` holds no whole groups."""
    if held is None or (held[0] * processes) % held[1] == 0:
        return
    key = next((k for k in _EVAL if k in given or k in config), _EVAL[0])
    said = f"per_device_eval_batch_size {held[0]} x {processes} process(es) = {held[0] * processes}"
    problem = f"the eval batch holds no whole groups of {held[1]} generations ({held[2]})"
    hint = (
        f"make per_device_eval_batch_size x {processes} process(es) a multiple of {held[1]}, or "
        "set num_generations_eval to a divisor of it"
    )
    _refuse(sweep_dir, task, problem, said, key, given, hint + _on_command_line(given))


def _train_hint(processes: int | None, given: Collection[str]) -> str:
    return (
        f"make the generation batch a multiple of num_generations at {processes} process(es): "
        "change per_device_train_batch_size, gradient_accumulation_steps or num_generations"
        + _on_command_line(given)
    )


def _refuse(
    sweep_dir: Path, task: RunTask, problem: str, said: str, key: str, given: Collection[str], hint: str
) -> None:
    raise ConfigError(
        f"run {task.name!r} would fail at its start: {problem} ({said}; GRPOConfig's and RLOOConfig's "
        "__post_init__ raise)",
        location=Location("--command") if key in given else key_location(sweep_dir, task, key),
        key=key,
        hint=hint,
    )


def _eval_values(config: Mapping[str, Any], script: str, defaults: bool) -> tuple[int, int, str] | None:
    """(per_device_eval_batch_size, the eval group size, where that size comes from) of a run that
    evaluates (its eval_strategy, unset "no", not "no"); None where it does not, or one is not known."""
    names = (*_EVAL, "num_generations")
    value = {n: config.get(n, _default(script, n) if defaults else None) for n in names}
    source = "num_generations_eval" if value["num_generations_eval"] else "num_generations"
    found = (value["per_device_eval_batch_size"], value[source], source)
    evaluates = value["eval_strategy"] in ("steps", "epoch")  # PER_RUN (filled per run) is neither
    return found if evaluates and _count(found[0]) and _count(found[1]) else None


def _named_key(config: Mapping[str, Any], given: Collection[str]) -> str:
    """The key a refusal names: a size the command line gives, else the config's num_generations."""
    on_line = [k for k in _NAMED if k in given]
    return on_line[0] if on_line else "num_generations" if "num_generations" in config else _FIELDS[0]


def _on_command_line(given: Collection[str]) -> str:
    """Where the command line sizes the batch: TRL takes its values over the config's."""
    sized = sorted(READS.intersection(given))
    return f" (--command sets {', '.join(f'--{k}' for k in sized)}, over the config's)" if sized else ""


def _refused_batch(
    config: Mapping[str, Any], values: tuple[int, int, int], processes: int
) -> tuple[str, str] | None:
    """(what TRL refuses, how the batch was sized) of the generation batch at ``processes``."""
    batch, accumulation, groups = values
    given, steps = config.get("generation_batch_size"), config.get("steps_per_generation")
    if given is not None:  # both set, or not a count: the schema refuses it, whatever the count
        return _given(given, steps, batch, processes, groups)
    per = steps if isinstance(steps, int) and _count(steps) else accumulation
    size = batch * processes * per
    said = f"per_device_train_batch_size {batch} x {processes} process(es) x {per} steps = {size}"
    return _groups(size, groups, said)


def _given(given: Any, steps: Any, batch: int, processes: int, groups: int) -> tuple[str, str] | None:
    """The refusal of a ``generation_batch_size`` the config sets (None: the schema's to judge)."""
    if steps is not None or not isinstance(given, int) or not _count(given):
        return None
    said = f"generation_batch_size {given}, per_device_train_batch_size {batch} x {processes} process(es)"
    if given % (batch * processes):
        return f"the generation batch {given} is not a multiple of the global batch {batch * processes}", said
    return _groups(given, groups, said)


def _groups(size: int, groups: int, said: str) -> tuple[str, str] | None:
    if size % groups == 0:
        return None
    return f"the generation batch {size} holds no whole groups of num_generations {groups}", said


def _values(config: Mapping[str, Any], script: str, defaults: bool) -> tuple[int, int, int] | None:
    """(per_device_train_batch_size, gradient_accumulation_steps, num_generations) of the run:
    its config's, else the installed classes' defaults; None where one is not a count."""
    if any(config.get(name) is PER_RUN for name in READS):
        return None  # filled per run on the command line: not known here
    found = [config.get(name, _default(script, name) if defaults else None) for name in _FIELDS]
    return (found[0], found[1], found[2]) if all(_count(v) for v in found) else None


def _count(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value > 0


def _default(script: str, name: str) -> Any:
    """The default of field ``name`` of the script's config class, else of TrainingArguments."""
    for where in (_CLASSES[script], _TRAINING_ARGS):
        defaults = _class_defaults(*where)
        if name in defaults:
            return defaults[name]
    return None


@functools.cache
def _class_defaults(module: str, cls: str) -> dict[str, Any]:
    """``field: default`` of each ``field: T = field(default=CONSTANT)`` (or ``= CONSTANT``) of the
    class ``cls`` in the installed ``module``, read from its source."""
    parsed = pysource.parsed(module)
    body = (
        next((n.body for n in parsed.body if isinstance(n, ast.ClassDef) and n.name == cls), [])
        if parsed
        else []
    )
    return dict(d for d in map(_field_default, body) if d is not None)


def _field_default(node: ast.stmt) -> tuple[str, Any] | None:
    if not isinstance(node, ast.AnnAssign) or not isinstance(node.target, ast.Name):
        return None
    value = _default_of(node.value)
    return (node.target.id, value.value) if isinstance(value, ast.Constant) else None


def _default_of(value: ast.expr | None) -> ast.expr | None:
    """A field's default: ``field(default=X)``'s X, else the value itself."""
    if isinstance(value, ast.Call):
        return next((k.value for k in value.keywords if k.arg == "default"), None)
    return value
