"""`trl <command> --config` hands every key its dataclasses do not take to `accelerate launch` as
`--key str(value)`: the options read from accelerate's parser become schema properties that take
exactly what argparse then reads. A parser of our own stands in for accelerate's (no accelerate in
the core lane); the real one is tested in test_trl_cli_schema_real."""

from __future__ import annotations

import argparse

from sweepgen.compile.schema import jsonschema_subset
from sweepgen.compile.schema.accelerate_launch import _option


def str_to_bool(value: str) -> bool:  # accelerate's own name for its boolean parser
    return value.lower() in ("true", "1")


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser()
    p.add_argument("--num_processes", type=int)
    p.add_argument("--monitor_interval", type=float)
    p.add_argument("--gpu_ids")
    p.add_argument("--mixed_precision", type=str, choices=["no", "fp16", "bf16"])
    p.add_argument("--fsdp_version", type=str, choices=["1", "2"])
    p.add_argument("--megatron_lm_use_custom_fsdp", type=bool)
    p.add_argument("--fp8_pad_inner_dim", type=str_to_bool)
    p.add_argument("--multi_gpu", action="store_true")
    return p


def schema() -> dict:
    props = {}
    for action in parser()._actions:
        prop = _option(action)
        if prop is not None:
            props[action.dest] = prop
    return {"type": "object", "properties": props, "additionalProperties": False}


def ok(config: dict) -> bool:
    return jsonschema_subset.validate(config, schema()) == []


def test_the_options_a_config_key_can_set_take_what_argparse_reads_from_str_of_the_value():
    assert ok({"num_processes": 2, "monitor_interval": 0.5, "gpu_ids": "0,1", "mixed_precision": "bf16"})
    assert ok({"gpu_ids": 0, "fsdp_version": 2, "fp8_pad_inner_dim": False})  # "0", "2", "False"
    assert not ok({"num_processes": "two"})
    assert not ok({"num_processes": 2.5})
    assert not ok({"mixed_precision": "fp32"})


def test_a_switch_is_refused_and_a_type_bool_option_takes_only_true():
    """`--multi_gpu True` would make `True` the training script; `type=bool` reads "False" as true."""
    assert not ok({"multi_gpu": True})
    assert ok({"megatron_lm_use_custom_fsdp": True})
    assert not ok({"megatron_lm_use_custom_fsdp": False})
    assert "leave it out for false" in schema()["properties"]["megatron_lm_use_custom_fsdp"]["description"]
