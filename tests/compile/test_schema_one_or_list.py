"""A list field the class itself converts from one value (TRL's DPOConfig `loss_type: sigmoid`, its
ModelConfig `lora_target_modules: all-linear`) takes one value in both schema routes: the exported
JSON Schema and the dataclass validator. A list field the class does not convert still refuses one
value, and the refusal names every alternative in JSON's words."""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from schema_support import validators

from sweepgen.compile.schema import export, jsonschema_subset
from sweepgen.compile.schema.one_or_list import one_or_list_fields
from sweepgen.compile.schema.validate import _fix


@dataclass
class Losses:
    """Wraps one loss name in a list, as DPOConfig does."""

    loss_type: list[str] = field(default_factory=lambda: ["sigmoid"])
    weights: list[float] | None = None

    def __post_init__(self) -> None:
        if isinstance(self.loss_type, str):
            self.loss_type = [self.loss_type]


@dataclass
class Lora:
    """Unwraps a one-item list, as ModelConfig does for `lora_target_modules`."""

    target_modules: list[str] | None = None
    modules_to_save: list[str] | None = None

    def __post_init__(self) -> None:
        if hasattr(self.target_modules, "__len__") and len(self.target_modules) == 1:
            self.target_modules = self.target_modules[0]
        self.modules_to_save = self.modules_to_save[:1] if self.modules_to_save else None  # not a conversion


@dataclass
class Script(Losses):
    """Inherits the conversion; its own `reward_funcs` has none (a string would be read letter by letter)."""

    reward_funcs: list[str] | None = None

    def __post_init__(self) -> None:
        super().__post_init__()


def test_the_fields_a_class_converts_are_read_from_its_post_init_and_its_bases():
    assert one_or_list_fields(Losses) == {"loss_type"}
    assert one_or_list_fields(Lora) == {"target_modules"}
    assert one_or_list_fields(Script) == {"loss_type"}
    assert one_or_list_fields(Losses.__mro__[-1]) == set()


@pytest.mark.parametrize("route", [0, 1], ids=["exported", "dataclass"])
def test_one_value_or_a_list_is_taken_where_the_class_converts_it(route):
    check = validators(Script)[route]
    assert check({"loss_type": "ipo"}) == []
    assert check({"loss_type": ["ipo", "sft"]}) == []
    [(path, _)] = check({"reward_funcs": "accuracy_reward"})
    assert path == "reward_funcs"
    assert check({"reward_funcs": ["accuracy_reward"]}) == []
    lora = validators(Lora)[route]
    assert lora({"target_modules": "all-linear"}) == []
    assert lora({"target_modules": None}) == []
    assert [p for p, _ in lora({"modules_to_save": "lm_head"})] == ["modules_to_save"]


def test_a_refused_value_names_every_alternative_in_json_words():
    schema = export.export("tests:Script", Script)
    assert jsonschema_subset.validate({"reward_funcs": "accuracy_reward"}, schema) == [
        ("reward_funcs", "expected array of string or null, got string")
    ]
    assert jsonschema_subset.validate({"loss_type": [1, "ipo"]}, schema) == [
        ("loss_type", "expected array of string or string, got array of integer and string")
    ]
    assert jsonschema_subset.validate({"weights": 0.5}, schema) == [
        ("weights", "expected array of number or null, got number")
    ]


@settings(deadline=None)  # a loaded machine's pauses are not this property's subject
@given(
    st.one_of(st.text(), st.lists(st.text()), st.integers(), st.none(), st.lists(st.integers(), min_size=1))
)
def test_both_routes_agree_on_any_value(value):
    exported, dataclass_route = validators(Script)
    for key in ("loss_type", "reward_funcs"):
        assert (exported({key: value}) == []) == (dataclass_route({key: value}) == []), (key, value)


@pytest.mark.parametrize("route", [0, 1], ids=["exported", "dataclass"])
def test_a_string_where_a_list_is_wanted_is_told_to_write_a_list_in_both_routes(route):
    [(_, message)] = validators(Script)[route]({"reward_funcs": "accuracy_reward"})
    assert _fix(message, "accuracy_reward").startswith("write it as a list: [accuracy_reward]")
    [(_, message)] = validators(Script)[route]({"weights": 0.5})
    assert not _fix(message, 0.5).startswith("write it as a list")  # a number: no list of it suggested


@dataclass
class Scaled:
    """Maps booleans to its own words, as GRPOConfig does for `scale_rewards`."""

    scale_rewards: str = "group"
    loss_type: str = "dapo"

    def __post_init__(self) -> None:
        self.scale_rewards = {True: "group", False: "none"}.get(self.scale_rewards, self.scale_rewards)
        # not `.get(self.f, self.f)`: no mapping of the field's own
        self.loss_type = {"a": self.loss_type}.get(self.loss_type, "b")


def test_the_constants_a_class_maps_a_field_from_are_read_from_its_post_init():
    from sweepgen.compile.schema.one_or_list import mapped_fields

    assert mapped_fields(Scaled) == {"scale_rewards": (True, False)}
    assert one_or_list_fields(Scaled) == set()


@pytest.mark.parametrize("route", [0, 1], ids=["exported", "dataclass"])
def test_a_field_the_class_maps_from_booleans_takes_them_in_both_routes(route):
    check = validators(Scaled)[route]
    for value in (False, True, "batch"):
        assert check({"scale_rewards": value}) == [], value
    assert [p for p, _ in check({"scale_rewards": None})] == ["scale_rewards"]  # one problem, at its key
    assert [p for p, _ in check({"loss_type": True})] == ["loss_type"]  # no mapping of its own


@settings(deadline=None)  # a loaded machine's pauses are not this property's subject
@given(st.one_of(st.text(), st.booleans(), st.integers(), st.none(), st.floats(allow_nan=False)))
def test_both_routes_agree_on_a_mapped_field(value):
    exported, dataclass_route = validators(Scaled)
    config = {"scale_rewards": value}
    assert (exported(config) == []) == (dataclass_route(config) == []), value


def test_a_union_field_s_refusal_is_one_problem_at_its_own_key_in_the_dataclass_route():
    """pydantic names the union member it tried after the key (`target_modules.list[str]`), a path
    no config has: the problem is shown once, at the key's own line, with what each member wanted."""
    lora = validators(Lora)[1]
    [(path, message)] = lora({"target_modules": 5})
    assert path == "target_modules"
    assert "valid list" in message and "valid string" in message
    # the list member refuses the item, the string member the list: each at a path the config has
    paths = sorted(p for p, _ in lora({"target_modules": ["q_proj", 5]}))
    assert paths == ["target_modules", "target_modules.1"]
