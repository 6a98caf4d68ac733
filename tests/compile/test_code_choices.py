"""String options closed by a trainer's code: the values its ``if``/``elif`` chain handles before the
``else: raise``, and nothing read from chains that do not raise or hold only under a condition."""

from __future__ import annotations

import textwrap

from hypothesis import given, settings
from hypothesis import strategies as st

from sweepgen.compile.schema import code_ignored
from sweepgen.compile.schema.code_chains import closed_choices, closed_items

FIELDS = {"loss_type", "mode", "level"}


def _closed(source: str) -> dict[str, tuple[str, ...]]:
    return {k: v.values for k, v in closed_choices(textwrap.dedent(source), FIELDS).items()}


def test_a_chain_whose_else_raises_closes_its_field_and_names_the_raise():
    source = """\
        class Trainer:
            def loss(self, x):
                y = 1
                if self.loss_type == "grpo":
                    y = 2
                elif self.loss_type in ["dapo", "dr_grpo"]:
                    y = 3
                else:
                    raise ValueError(f"Unknown loss type: {self.loss_type}")
                return y
        """
    found = closed_choices(textwrap.dedent(source), FIELDS)
    assert found["loss_type"].values == ("dapo", "dr_grpo", "grpo")
    assert found["loss_type"].line == 9


def test_not_in_then_raise_closes_args_fields_too():
    source = """\
        def prepare(args):
            if args.loss_type not in ("nll", "dft"):
                raise ValueError("Supported values are 'nll' and 'dft'")
        """
    assert _closed(source) == {"loss_type": ("dft", "nll")}


def test_chains_that_do_not_raise_or_hold_only_under_a_condition_close_nothing():
    source = """\
        class Trainer:
            def step(self):
                if self.mode == "server":
                    pass
                else:
                    self.colocate()
                if self.use_vllm:
                    if self.level not in ["token", "sequence"]:
                        raise ValueError("only with vllm")
                if self.loss_type == "a" and self.beta:
                    pass
                else:
                    raise ValueError("two conditions")
                if self.loss_type == "a":
                    pass
                elif self.mode == "b":
                    pass
                else:
                    raise ValueError("two fields")
                if self.model.loss_type == "a":
                    pass
                else:
                    raise ValueError("not the config's field")
        """
    assert _closed(source) == {}


def test_every_chain_of_a_field_adds_its_values_so_none_handled_is_refused():
    source = """\
        class Trainer:
            def loss(self):
                for _ in range(2):
                    if self.args.loss_type == "a":
                        pass
                    else:
                        raise ValueError()

            def normalise(self):
                with ctx():
                    if self.loss_type in ("b", "a"):
                        pass
                    else:
                        raise ValueError()
        """
    assert _closed(source) == {"loss_type": ("a", "b")}


@settings(deadline=None, max_examples=60)
@given(
    st.lists(
        st.lists(st.text("abcdef_", min_size=1, max_size=6), min_size=1, max_size=3), min_size=1, max_size=5
    )
)
def test_the_values_are_exactly_those_the_branches_compare(branches):
    tests = [
        f"self.loss_type == {b[0]!r}" if len(b) == 1 else f"self.loss_type in {tuple(b)!r}" for b in branches
    ]
    lines = ["def f(self):"]
    for i, test in enumerate(tests):
        lines += [f"    {'if' if i == 0 else 'elif'} {test}:", "        pass"]
    lines += ["    else:", "        raise ValueError()"]
    assert _closed("\n".join(lines)) == {"loss_type": tuple(sorted({v for b in branches for v in b}))}


def test_a_chain_over_a_loop_s_items_closes_the_list_field_the_loop_walks():
    """DPO's `loss_type` is a list its loss walks (`for loss_type, w in zip(self.loss_types, ...)`,
    stored as `self.loss_types = args.loss_type`): each item is closed; a loop under a condition,
    or a name bound twice, closes nothing."""
    source = """\
        class Trainer:
            def __init__(self, args):
                self.loss_types = args.loss_type
                self.levels = args.level
                self.levels = []

            def loss(self):
                for loss_type, weight in zip(self.loss_types, self.weights, strict=True):
                    if loss_type == "sigmoid":
                        pass
                    elif loss_type in ("hinge", "ipo"):
                        pass
                    else:
                        raise ValueError(loss_type)
                for i, mode in enumerate(self.args.mode):
                    if mode not in ["a", "b"]:
                        raise ValueError(mode)
                for level in self.levels:
                    if level != "x":
                        raise ValueError(level)
                if self.beta:
                    for mode in self.mode:
                        if mode == "c":
                            pass
                        else:
                            raise ValueError(mode)
        """
    found = closed_items(textwrap.dedent(source))
    assert {k: v.values for k, v in found.items()} == {
        "loss_type": ("hinge", "ipo", "sigmoid"),
        "mode": ("a", "b"),
    }
    assert found["loss_type"].line == 14
    assert closed_choices(textwrap.dedent(source), FIELDS) == {}  # the items, not the field itself


def test_a_flag_the_trainer_sets_back_to_false_under_its_own_if_is_found():
    """DPO's `if self.padding_free: warn; self.padding_free = False`: the flag is turned off; one set
    false under another condition, or set to another value, is not."""
    source = """\
        class Trainer:
            def __init__(self, args):
                self.padding_free = args.padding_free
                if self.padding_free:
                    logger.warning("unavailable")
                    self.padding_free = False
                if self.args.packing:
                    if self.beta:
                        self.packing = False
                if args.level:
                    self.level = True
        """
    assert code_ignored.turned_off(textwrap.dedent(source)) == {"padding_free": 6}
