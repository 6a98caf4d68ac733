"""String options closed by a trainer's code: the values its ``if``/``elif`` chain handles before the
``else: raise``, and nothing read from chains that do not raise or hold only under a condition."""

from __future__ import annotations

import textwrap

from hypothesis import given, settings
from hypothesis import strategies as st

from sweepgen.compile.schema.code_chains import closed_choices

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
