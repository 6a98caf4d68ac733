"""`Enum | str` fields the class casts to its enum (transformers' `eval_strategy`, `optim`, ...): a
schema takes only the enum's values, as the class does, in both routes (exported, dataclass)."""

from __future__ import annotations

import enum
from dataclasses import dataclass, field

import pytest
from schema_support import validators

from sweepgen.compile.schema import jsonschema_subset
from sweepgen.compile.schema.enum_cast import cast_fields


class Interval(enum.Enum):
    NO = "no"
    STEPS = "steps"
    EPOCH = "epoch"


@dataclass
class Base:
    """Casts as TrainingArguments does: unconditionally, at the `__post_init__`'s own level."""

    eval_strategy: Interval | str = "no"
    hub_strategy: Interval | str | None = None
    free: Interval | str = "no"  # never cast: any string is the class's

    def __post_init__(self) -> None:
        self.eval_strategy = Interval(self.eval_strategy)
        if self.free == "x":  # a cast that may not happen is no evidence
            self.free = Interval(self.free)


@dataclass
class Child(Base):
    """Inherits the casts; its own `__post_init__` casts another field."""

    log_strategy: Interval | str = "steps"

    def __post_init__(self) -> None:
        super().__post_init__()
        self.log_strategy = Interval(self.log_strategy)


def test_the_casts_are_read_from_the_post_init_of_the_class_and_its_bases():
    assert cast_fields(Child) == {"eval_strategy": Interval, "log_strategy": Interval}
    assert cast_fields(Base) == {"eval_strategy": Interval}


@pytest.mark.parametrize("route", [0, 1], ids=["exported", "dataclass"])
def test_a_string_the_class_casts_must_be_one_of_the_enum_s_values(route):
    check = validators(Child)[route]
    assert check({"eval_strategy": "steps", "log_strategy": "epoch"}) == []
    [(path, message)] = check({"eval_strategy": "step"})
    assert path == "eval_strategy" and "did you mean 'steps'" in message, message
    assert [p for p, _ in check({"log_strategy": "epochs"})] == ["log_strategy"]
    assert check({"free": "anything"}) == []  # no cast read: the annotation decides
    assert check({"hub_strategy": "anything"}) == []


@dataclass
class Sharded:
    """transformers' `fsdp`: a string, or a bare `--fsdp` (argparse's `const`) that turns it on."""

    fsdp: str | None = field(default=None, metadata={"nargs": "?", "const": True})
    name: str | None = None


@pytest.mark.parametrize("route", [0, 1], ids=["exported", "dataclass"])
def test_a_field_takes_the_const_its_metadata_hands_argparse(route):
    check = validators(Sharded)[route]
    assert check({"fsdp": True}) == [] and check({"fsdp": False}) == []
    assert check({"fsdp": "full_shard auto_wrap"}) == [] and check({"fsdp": None}) == []
    assert [p for p, _ in check({"fsdp": 3})] == ["fsdp"]
    assert [p for p, _ in check({"name": True})] == ["name"]


@pytest.mark.parametrize(("word", "meant"), [("yes", "true"), ("Off", "false")])
def test_a_yaml_1_1_boolean_word_is_told_to_be_written_as_a_boolean(word, meant):
    """`use_peft: yes` is True to TRL's PyYAML, the text "yes" to sweepgen's YAML 1.2: the refusal
    said only "expected boolean, got string"."""
    for schema in ({"type": "boolean"}, {"anyOf": [{"type": "boolean"}, {"type": "null"}]}):
        [(_, message)] = jsonschema_subset.validate(word, schema)
        assert f"`{word}` is text in YAML 1.2" in message and f"write {meant}" in message, message
    [(_, message)] = jsonschema_subset.validate("maybe", {"type": "boolean"})
    assert "YAML 1.2" not in message
