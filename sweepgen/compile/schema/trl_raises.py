"""What TRL, transformers or PEFT refuse at a run's start that a config class's types do not say, as
JSON Schema: one place for the ``trl:<command>`` schemas (trl_cli), a class's export
(``sweepgen schema --export trl:GRPOConfig``) and a spec's ``schema: trl:GRPOConfig`` (validate).

Only a Hugging Face config class's fields mean this (from_hugging_face): a project's own dataclass
with a ``num_generations`` field is its own.
"""

from __future__ import annotations

import math
from collections.abc import Collection
from typing import Any

# the packages whose config classes (and their subclasses) these rules are about
_PACKAGES = frozenset({"trl", "transformers", "peft"})


def from_hugging_face(cls: type) -> bool:
    """Whether ``cls`` is (or subclasses) a config class of TRL, transformers or PEFT."""
    return any(str(getattr(c, "__module__", "")).partition(".")[0] in _PACKAGES for c in cls.__mro__)


def class_rules(cls: type, props: dict[str, Any]) -> list[dict[str, Any]]:
    """``refused`` for a Hugging Face class's ``props`` (its export); none for any other class."""
    return refused(props, lineage(cls)) if from_hugging_face(cls) else []


def lineage(*classes: type) -> frozenset[str]:
    """The names of the classes ``classes`` are (their bases too): a rule of one TRL class's
    ``__post_init__`` holds for its subclasses, which run it (``super().__post_init__()``)."""
    return frozenset(c.__name__ for cls in classes for c in cls.__mro__)


def validator_schema(cls: type, fields: Collection[str]) -> dict[str, Any] | None:
    """The rules for a Hugging Face class with ``fields``, as a schema a config is validated against
    besides its types; None for any other class, or when none applies."""
    if not from_hugging_face(cls):
        return None
    props: dict[str, Any] = {name: {} for name in fields}
    rules = refused(props, lineage(cls))
    held = {name: prop for name, prop in props.items() if prop}
    return {"type": "object", "properties": held, "allOf": rules} if held or rules else None


# ModelConfig's `lora_target_modules` as one string is PEFT's regular expression, which a module's
# whole name must match: "q_proj,v_proj" (a list written as a comma string) matches no module name
# (none holds a comma), and PEFT raises "Target modules ... not found" after the model is loaded
_COMMA_LIST = {
    "type": "string",
    "pattern": r"^\s*[A-Za-z0-9_.]+(\s*,\s*[A-Za-z0-9_.]+)+\s*$",
    "$comment": "a string is one regular expression to PEFT, and no module name holds a comma: "
    "write a list, e.g. [q_proj, v_proj]",
}
# ...and ModelConfig makes a one-item list its item (`[q_proj]` is "q_proj"): one layer's short name,
# which names a module inside a block (`model.layers.0.self_attn.q_proj`), matches no whole name.
# Only names that are never a model's top-level module are listed (`lm_head` alone is one, and taken)
_LAYER_NAMES = (
    "q_proj|k_proj|v_proj|o_proj|qkv_proj|gate_proj|up_proj|down_proj|gate_up_proj|c_attn|c_proj|c_fc|"
    "query_key_value|query|key|value|dense|dense_h_to_4h|dense_4h_to_h|fc1|fc2|out_proj|in_proj|"
    "w1|w2|w3|wq|wk|wv|wo|Wqkv|embed_tokens"
)
_ONE_LAYER = {"type": "string", "pattern": rf"^(?:{_LAYER_NAMES})$"}
_ONE_LAYER_NAME = {
    "anyOf": [_ONE_LAYER, {"type": "array", "minItems": 1, "maxItems": 1, "items": _ONE_LAYER}],
    "$comment": "TRL makes a one-item list its item, and PEFT reads one string as a regular expression "
    "a module's whole name must match (model.layers.0.self_attn.q_proj): a layer's short name alone "
    r"matches no module; write a pattern, e.g. ['.*\.q_proj'], or two names, e.g. [q_proj, v_proj]",
}
# transformers' TrainingArguments.__post_init__ (`_validate_args`): `load_best_model_at_end` needs
# the save strategy to be the eval strategy's (or "best"), each unset one at its default (eval "no",
# save "steps"); else every run fails at its start
_BEST_NEEDS = (
    "load_best_model_at_end needs save_strategy to match eval_strategy (unset: eval 'no', save "
    "'steps'), or 'best'"
)


def _best_model_rules(eval_strategy: str | None, saves: list[str]) -> list[dict[str, Any]]:
    """With ``load_best_model_at_end: true`` and ``eval_strategy`` (None: unset, or its default
    "no"), ``save_strategy`` must be one of ``saves``; unset (its default "steps") where that is
    none of them, refused at ``load_best_model_at_end``'s line (no key to name)."""
    evals = {"enum": [eval_strategy]} if eval_strategy else {"not": {"enum": ["steps", "epoch"]}}
    when = {
        "properties": {"load_best_model_at_end": {"const": True}, "eval_strategy": evals},
        "required": ["load_best_model_at_end", *(["eval_strategy"] if eval_strategy else [])],
    }
    rules: list[dict[str, Any]] = [
        {"if": when, "then": {"properties": {"save_strategy": {"enum": saves, "$comment": _BEST_NEEDS}}}}
    ]
    if "steps" not in saves:
        unset = {**when, "not": {"required": ["save_strategy"]}}
        refused = {"not": {"const": True, "$comment": f"{_BEST_NEEDS}; save_strategy is unset"}}
        rules.append({"if": unset, "then": {"properties": {"load_best_model_at_end": refused}}})
    return rules


_BEST_MODEL = [
    *_best_model_rules("steps", ["steps", "best"]),
    *_best_model_rules("epoch", ["epoch", "best"]),
    *_best_model_rules(None, ["no", "best"]),
]
# GRPOConfig's and RLOOConfig's __post_init__ raise for these whatever the process count: both
# ways of sizing the generation batch set, or fewer than 2 completions a prompt (None fails too)
_GENERATION_KEYS = {"generation_batch_size", "steps_per_generation", "num_generations"}
_GENERATION: list[dict[str, Any]] = [
    {
        "if": {
            "properties": {
                "generation_batch_size": {"type": "integer"},
                "steps_per_generation": {"type": "integer"},
            },
            "required": ["generation_batch_size", "steps_per_generation"],
        },
        "then": {
            "properties": {
                "steps_per_generation": {
                    "not": {
                        "type": "integer",
                        "$comment": "TRL takes generation_batch_size or steps_per_generation, not both: "
                        "remove one",
                    }
                }
            }
        },
    },
    {
        "properties": {
            "num_generations": {
                "not": {
                    "anyOf": [{"type": "null"}, {"type": "integer", "maximum": 1}],
                    "$comment": "GRPO and RLOO compare at least 2 completions of each prompt",
                }
            }
        }
    },
]
_BEST_KEYS = {"load_best_model_at_end", "eval_strategy", "save_strategy"}
# SFTTrainer.__init__ (trl/trainer/sft_trainer.py, "When `padding_free=True` without packing,
# `max_length` is not enforced"): padding_free without packing raises once the model is loaded, unless
# max_length is null (unset: 1024). Its one exception, a vision dataset, is no way through: the same
# __init__ raises earlier for padding_free with any vision dataset ("Padding-free training is yet not
# supported for vision datasets"), with or without max_length, so the rule refuses nothing TRL runs,
# and its fix names `padding_free: false`, the one that serves both
_PADDING_FREE_KEYS = {"padding_free", "packing", "packing_strategy", "max_length"}
_PADDING_FREE: list[dict[str, Any]] = [
    {
        "if": {
            "properties": {
                "padding_free": {"const": True},
                "packing": {"not": {"const": True}},
                "max_length": {"not": {"type": "null"}},
            },
            "required": ["padding_free"],
        },
        "then": {
            "properties": {
                "padding_free": {
                    "not": {
                        "const": True,
                        "$comment": "TRL's SFTTrainer raises for padding_free without packing while "
                        "max_length is set (unset: 1024), as padding-free batches do not enforce it: "
                        "add `packing: true`, or `max_length: null` (a text dataset), or set "
                        "`padding_free: false` (TRL refuses padding_free for a vision dataset in any case)",
                    }
                }
            }
        },
    }
]


# GRPOConfig's and RLOOConfig's own __post_init__ (not SDFT's or another class's with the same
# generation keys): auto_find_batch_size would halve the batch on an out-of-memory error, breaking the
# whole prompt groups, so both refuse it at each run's start
_AUTO_FIND_BATCH: dict[str, Any] = {
    "properties": {
        "auto_find_batch_size": {
            "not": {
                "const": True,
                "$comment": "GRPO and RLOO refuse auto_find_batch_size (halving the batch on out-of-memory "
                "breaks the prompt groups): set it false and lower per_device_train_batch_size instead",
            }
        }
    }
}
# GRPOConfig's own __post_init__: completions go to the Hub only when they are logged
_HUB_REPO_NEEDS_LOG: dict[str, Any] = {
    "if": {
        "properties": {
            "log_completions_hub_repo": {"type": "string"},
            "log_completions": {"not": {"const": True}},
        },
        "required": ["log_completions_hub_repo"],
    },
    "then": {
        "properties": {
            "log_completions_hub_repo": {
                "not": {
                    "type": "string",
                    "$comment": "GRPO uploads completions only when log_completions is true (unset: false): "
                    "add `log_completions: true`, or remove log_completions_hub_repo",
                }
            }
        }
    },
}
# GRPOConfig's own __post_init__: a `*_truncate` importance-sampling mode clips from below or above;
# with both bounds null (clip_max's default is 3.0) and the correction on (its default) it raises
_TRUNCATE_NEEDS_A_BOUND: dict[str, Any] = {
    "if": {
        "properties": {
            "vllm_importance_sampling_mode": {"enum": ["token_truncate", "sequence_truncate"]},
            "vllm_importance_sampling_clip_max": {"type": "null"},
            "vllm_importance_sampling_clip_min": {"type": "null"},
            "vllm_importance_sampling_correction": {"not": {"const": False}},
        },
        "required": ["vllm_importance_sampling_mode", "vllm_importance_sampling_clip_max"],
    },
    "then": {
        "properties": {
            "vllm_importance_sampling_clip_max": {
                "not": {
                    "type": "null",
                    "$comment": "a *_truncate vllm_importance_sampling_mode needs "
                    "vllm_importance_sampling_clip_min or vllm_importance_sampling_clip_max set (GRPO "
                    "raises at each run's start): give clip_max a number (its default is 3.0)",
                }
            }
        }
    },
}
# class name -> (the keys its rules read, the rules): what that class's own __post_init__ raises
_CLASS_RULES: dict[str, tuple[frozenset[str], list[dict[str, Any]]]] = {
    "GRPOConfig": (
        frozenset({"log_completions_hub_repo", "log_completions", "vllm_importance_sampling_mode"}),
        [_HUB_REPO_NEEDS_LOG, _TRUNCATE_NEEDS_A_BOUND],
    ),
}
_GENERATION_CLASSES = frozenset({"GRPOConfig", "RLOOConfig"})


def _refuse(
    key: str,
    value: dict[str, Any],
    why: str,
    when: dict[str, Any] | None = None,
    *,
    unset_matches: bool = True,
) -> dict[str, Any]:
    """A rule refusing ``key``'s ``value`` (a schema) at its line, saying ``why``; ``when``: only
    where the other keys' values match it. ``unset_matches``: whether those keys' defaults match it
    (an unset key then counts; else the rule asks for them to be set)."""
    refused = {"properties": {key: {"not": {**value, "$comment": why}}}}
    if when is None:
        return refused
    required = [key, *(() if unset_matches else when)]
    return {"if": {"properties": {key: value, **when}, "required": required}, "then": refused}


_EVAL_OFF = {"eval_strategy": {"not": {"enum": ["steps", "epoch"]}}}  # unset: "no"
_TRUE = {"const": True}
# transformers' _validate_args: a *_steps above 1 under its "steps" strategy must be whole (it casts it)
_NOT_WHOLE_ABOVE_1 = {"type": "number", "exclusiveMinimum": 1, "not": {"multipleOf": 1}}
# transformers' TrainingArguments._validate_args (5.x), for every TRL config class: what it raises
# for at each run's start whatever the machine, checked against the installed classes by the tests
_TRAINING_ARGS: list[tuple[frozenset[str], dict[str, Any]]] = [
    (
        frozenset({"fp16", "bf16"}),
        _refuse(
            "bf16",
            _TRUE,
            "transformers takes at most one of fp16 and bf16: set one false",
            {"fp16": _TRUE},
            unset_matches=False,  # fp16's default is false
        ),
    ),
    (
        frozenset({"fp16_full_eval", "bf16_full_eval"}),
        _refuse(
            "bf16_full_eval",
            _TRUE,
            "transformers takes at most one of fp16_full_eval and bf16_full_eval: set one false",
            {"fp16_full_eval": _TRUE},
            unset_matches=False,
        ),
    ),
    (
        frozenset({"lr_scheduler_type", "eval_strategy"}),
        _refuse(
            "lr_scheduler_type",
            {"enum": ["reduce_lr_on_plateau", "greedy"]},
            "this scheduler reads the evaluation loss: transformers requires an eval_strategy (steps or "
            "epoch; unset: no) for it",
            _EVAL_OFF,
        ),
    ),
    (
        frozenset({"warmup_steps"}),
        _refuse(
            "warmup_steps",
            {"type": "number", "exclusiveMaximum": 0},
            "transformers requires warmup_steps >= 0",
        ),
    ),
    (
        frozenset({"logging_steps", "logging_strategy"}),
        _refuse(
            "logging_steps",
            {"type": "number", "minimum": 0, "maximum": 0},
            "logging_strategy steps (its default) needs a logging_steps other than 0",
            {"logging_strategy": {"enum": ["steps"]}},
        ),
    ),
    *(
        (
            frozenset({f"{kind}_steps", f"{kind}_strategy"}),
            _refuse(
                f"{kind}_steps",
                _NOT_WHOLE_ABOVE_1,
                f"transformers requires {kind}_steps above 1 to be a whole number (2.0 is taken; one "
                f"below 1 is a fraction of the run's steps): write e.g. {kind}_steps: 2",
                {f"{kind}_strategy": {"enum": ["steps"]}},
                unset_matches=unset,  # logging's and saving's default strategy is "steps", eval's "no"
            ),
        )
        for kind, unset in (("logging", True), ("eval", False), ("save", True))
    ),
    (
        frozenset({"torch_empty_cache_steps"}),
        _refuse(
            "torch_empty_cache_steps",
            {"type": "integer", "maximum": 0},
            "transformers requires torch_empty_cache_steps to be a whole number above 0 (or null)",
        ),
    ),
    (
        frozenset({"dataloader_prefetch_factor", "dataloader_num_workers"}),
        _refuse(
            "dataloader_prefetch_factor",
            {"type": "integer"},
            "transformers takes dataloader_prefetch_factor only with dataloader_num_workers above 0 "
            "(unset: 0)",
            {"dataloader_num_workers": {"type": "integer", "minimum": 0, "maximum": 0}},
        ),
    ),
]


def refused(props: dict[str, Any], classes: Collection[str] = ()) -> list[dict[str, Any]]:
    """What TRL, transformers or PEFT refuse that the types do not say: ``lora_target_modules``'s
    forms (set on its property), the rules across fields the schema holds, and those of the
    ``__post_init__`` of the TRL classes named in ``classes`` (lineage: the classes and their bases)."""
    if "lora_target_modules" in props:
        props["lora_target_modules"]["not"] = _COMMA_LIST
        held = props["lora_target_modules"].setdefault("allOf", [])
        held.extend([] if {"not": _ONE_LAYER_NAME} in held else [{"not": _ONE_LAYER_NAME}])  # once
    best = _BEST_MODEL if set(props) >= _BEST_KEYS else []
    padding_free = _PADDING_FREE if set(props) >= _PADDING_FREE_KEYS else []
    generation = _GENERATION if set(props) >= _GENERATION_KEYS else []
    return [*best, *generation, *padding_free, *_of_classes(props, classes)]


def _of_classes(props: dict[str, Any], classes: Collection[str]) -> list[dict[str, Any]]:
    """The rules of the named classes' own ``__post_init__`` whose keys the schema holds."""
    auto_find = "auto_find_batch_size" in props and bool(_GENERATION_CLASSES & set(classes))
    rules = [_AUTO_FIND_BATCH] if auto_find else []
    if "TrainingArguments" in classes:
        rules += [rule for keys, rule in _TRAINING_ARGS if set(props) >= keys]
    for name in sorted(set(classes) & _CLASS_RULES.keys()):
        keys, held = _CLASS_RULES[name]
        rules += held if set(props) >= keys else []
    return rules


# What transformers and TRL raise at each run's start across two numbers, which JSON Schema cannot
# say: judged on the config with the class's defaults for the keys it leaves unset
_CLIP = ("vllm_importance_sampling_clip_min", "vllm_importance_sampling_clip_max")
_STEPS = ("save_steps", "eval_steps", "logging_steps")


def across_fields(config: dict[str, Any], defaults: dict[str, Any]) -> list[tuple[str, str]]:
    """(key, why) for each two-number rule ``config`` breaks, its unset keys at ``defaults`` (the
    class's fields and their defaults; a rule whose keys the class lacks is not judged)."""
    if not isinstance(config, dict):
        return []
    value = {**defaults, **config}.get
    found = [*_clip_order(config, value), *_eval_every(config, value), *_save_every_eval(config, value)]
    return found if set(defaults) else []


def _eval_every(config: dict[str, Any], value: Any) -> list[tuple[str, str]]:
    """TrainingArguments.__post_init__: eval_strategy steps with eval_steps unset (or 0) evaluates
    every logging_steps, which must then be above 0."""
    logging = value("logging_steps")
    if not _evaluates_by_logging(value) or not _number(logging) or logging > 0:
        return []
    key = "eval_steps" if "eval_steps" in config else "eval_strategy"
    why = (
        f"eval_strategy steps with eval_steps unset or 0 evaluates every logging_steps, here {logging}: "
        "transformers raises at each run's start; set eval_steps (e.g. 100)"
    )
    return [(key, why)]


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def _clip_order(config: dict[str, Any], value: Any) -> list[tuple[str, str]]:
    """GRPOConfig.__post_init__: clip_min must be below clip_max (the deprecated
    ``vllm_importance_sampling_cap``, when set, stands for clip_max)."""
    cap = value("vllm_importance_sampling_cap")
    low, high = value(_CLIP[0]), value(_CLIP[1]) if cap is None else cap
    if not (_number(low) and _number(high) and low >= high):
        return []
    key = _CLIP[0] if _CLIP[0] in config else _CLIP[1]
    return [
        (
            key,
            f"GRPO raises at each run's start: vllm_importance_sampling_clip_min ({low}) must be below "
            f"vllm_importance_sampling_clip_max ({high}, its default 3.0 when unset): lower clip_min, "
            "or raise clip_max",
        )
    ]


def _evaluates_by_logging(value: Any) -> bool:
    return value("eval_strategy") == "steps" and not value("eval_steps")


def _save_every_eval(config: dict[str, Any], value: Any) -> list[tuple[str, str]]:
    """TrainingArguments._validate_args: with load_best_model_at_end and both strategies "steps",
    save_steps must be a multiple of eval_steps (unset or 0: logging_steps), both whole or both
    fractions of the run."""
    best_by_steps = (value("load_best_model_at_end"), value("save_strategy"), value("eval_strategy"))
    save, every = value("save_steps"), value("eval_steps") or value("logging_steps")
    if best_by_steps != (True, "steps", "steps") or not _positive(save, every) or _multiple(save, every):
        return []
    key = "save_steps" if "save_steps" in config else "load_best_model_at_end"
    return [(key, _save_every_eval_why(save, every, from_logging=not value("eval_steps")))]


def _save_every_eval_why(save: float, every: float, *, from_logging: bool) -> str:
    return (
        f"load_best_model_at_end needs save_steps ({save}) to be a multiple of eval_steps ({every}"
        f"{', from logging_steps as eval_steps is unset' if from_logging else ''}); transformers raises "
        "at each run's start: make save_steps a multiple of eval_steps"
    )


def _positive(*values: Any) -> bool:
    return all(_number(v) and v > 0 for v in values)


def _multiple(save: float, every: float) -> bool:
    """As transformers decides: a round multiple, or both fractions of the run (below 1) whose
    millionths divide; a fraction mixed with a number of steps never is."""
    return save % every == 0 or (every < 1 and save < 1 and (save * 1_000_000) % (every * 1_000_000) == 0)
