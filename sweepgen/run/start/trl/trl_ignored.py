"""`trl` runs that differ only in a value their trainer ignores: refused before any run starts.

A sweep over ``num_train_epochs`` whose runs all set ``max_steps: 100`` trains every run 100 steps
(transformers' TrainingArguments: a positive ``max_steps`` overrides ``num_train_epochs``); a sweep
over ``lora_r`` without ``use_peft: true`` trains every run without LoRA (TRL's
``get_peft_config`` returns None, and no ``lora_*`` is read). The runs' names and the report compare
``num_train_epochs1`` with ``num_train_epochs3`` (a warmup under ``lr_scheduler_type: constant``
and the ``bnb_4bit_*`` options without ``load_in_4bit: true`` alike): one configuration, its
differences only seed noise, a wrong result that looks right. Judged on each run's rendered
config as `trl` reads it; an axis is refused only when the value that makes it ignored holds in
every run.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sweepgen.errors import ConfigError
from sweepgen.run.core.base import RunTask
from sweepgen.run.start import command_overrides
from sweepgen.run.start.config_where import key_location


@dataclass(frozen=True)
class _Ignored:
    """``keys`` are not read by the trainer where ``holds`` (a run's config) says so."""

    keys: frozenset[str]
    holds: Callable[[Mapping[str, Any]], bool]
    switch: str  # the key ``holds`` reads: set on the command line, TRL's parser takes that value
    why: str
    hint: str


def _positive_steps(config: Mapping[str, Any]) -> bool:
    steps = config.get("max_steps", -1)  # TrainingArguments' default: train num_train_epochs
    return isinstance(steps, int) and not isinstance(steps, bool) and steps > 0


_NO_WARMUP = ("constant", "reduce_lr_on_plateau", "greedy")
_RULES = (
    _Ignored(
        frozenset({"num_train_epochs"}),
        _positive_steps,
        "max_steps",
        "every run sets a positive max_steps, which overrides num_train_epochs (transformers' "
        "TrainingArguments): every run trains max_steps steps",
        "sweep over max_steps instead, or set max_steps: -1 so that the epochs count",
    ),
    _Ignored(
        frozenset(
            {
                "lora_r",
                "lora_alpha",
                "lora_dropout",
                "lora_target_modules",
                "lora_target_parameters",
                "lora_modules_to_save",
                "lora_task_type",
                "use_rslora",
                "use_dora",
            }
        ),
        lambda config: config.get("use_peft", False) is False,  # TRL's get_peft_config: `is False`
        "use_peft",
        "no run sets use_peft: true, and without it TRL trains no LoRA adapter (get_peft_config "
        "returns None): no lora_* value is read",
        "add use_peft: true to the config",
    ),
    _Ignored(
        frozenset({"warmup_steps", "warmup_ratio"}),
        # transformers' get_scheduler returns these before it reads the warmup
        lambda config: config.get("lr_scheduler_type") in _NO_WARMUP,
        "lr_scheduler_type",
        "every run's lr_scheduler_type (constant, reduce_lr_on_plateau or greedy) has no warmup "
        "(transformers' get_scheduler builds it before reading the warmup)",
        "use lr_scheduler_type: constant_with_warmup for a warmup, or drop the axis",
    ),
    _Ignored(
        frozenset({"bnb_4bit_quant_type", "use_bnb_nested_quant", "bnb_4bit_quant_storage"}),
        lambda config: config.get("load_in_4bit", False) is not True,  # TRL's get_quantization_config
        "load_in_4bit",
        "no run sets load_in_4bit: true, and TRL reads the bnb_4bit options only then "
        "(get_quantization_config)",
        "add load_in_4bit: true to the config",
    ),
)


def check(
    sweep_dir: Path,
    configs: Sequence[tuple[RunTask, Mapping[str, Any]]],
    on_command_line: frozenset[str] = frozenset(),
) -> None:
    """Exit 2 when the runs (each with its rendered config) differ in a key their trainer ignores
    in every one of them; a rule whose switch the command line sets (``--use_peft``) is not judged."""
    found = _ignored(configs, on_command_line)
    if found is None:
        return
    path, values, rule = found
    shown = ", ".join(sorted(values)[:3])
    raise ConfigError(
        f"the runs differ in `{path}` ({shown}), but {rule.why}: they would train alike while "
        "their names and the report compare them",
        location=key_location(sweep_dir, configs[0][0], path),
        key=path,
        hint=rule.hint,
    )


def _ignored(
    configs: Sequence[tuple[RunTask, Mapping[str, Any]]], on_command_line: frozenset[str]
) -> tuple[str, set[str], _Ignored] | None:
    """(the key, its values, the rule) of the first key the runs differ in that every run ignores."""
    rules = [r for r in _RULES if r.switch not in on_command_line]
    for path, values in command_overrides.varying([task for task, _ in configs]).items():
        rule = _rule_for(path, [config for _, config in configs], rules)
        if rule is not None:
            return path, values, rule
    return None


def _rule_for(path: str, configs: Sequence[Mapping[str, Any]], rules: Sequence[_Ignored]) -> _Ignored | None:
    """The rule under which every one of ``configs`` ignores ``path``, if any."""
    return next((r for r in rules if path in r.keys and all(map(r.holds, configs))), None)
