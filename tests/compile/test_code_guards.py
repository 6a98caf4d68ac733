"""String options closed only under another field's value, or through a class the trainer builds
(code_guards): read from source, exactly as far as the code says and no further."""

from __future__ import annotations

import ast
import textwrap

from sweepgen.compile.schema.code_guards import Found, guarded

TRAINER = """\
    from ..generation.engine import Engine
    from ..generation.engine import Other as Renamed
    from otherpkg.engine import Engine as Foreign

    class Trainer:
        def __init__(self, args):
            self.aggregation = args.aggregation
            if self.use_engine:
                self.engine = Engine(model=None, mode=args.engine_mode, level=args.level)
            Renamed(kind=self.args.kind)
            Foreign(mode=args.foreign_mode)

        def advantages(self):
            if self.aggregation == "sum":
                if self.scale in ["group", "none"]:
                    pass
                elif self.scale == "batch":
                    pass
                else:
                    raise ValueError("scale")
                if self.beta > 0:
                    if self.deep not in ("a", "b"):
                        raise ValueError("only when beta > 0 too: never read")
            elif self.aggregation in ("mean", "max"):
                if self.norm not in ("l1", "l2"):
                    raise ValueError("norm")
            else:
                raise ValueError("aggregation")
    """
ENGINE = """\
    class Engine:
        def __init__(self, model, mode="a", level="x"):
            self.mode = mode
            self.level = level
            self.level = "changed"

        def start(self):
            if self.mode == "server":
                pass
            elif self.mode == "colocate":
                pass
            else:
                raise ValueError("mode")
            if self.level not in ("x", "y"):
                raise ValueError("level")

    class Other:
        def __init__(self, kind):
            self.kind = kind

        def go(self):
            if self.kind not in ("p", "q"):
                raise ValueError("kind")
    """
SOURCES = {"pkg.trainer.t": TRAINER, "pkg.generation.engine": ENGINE, "otherpkg.engine": ENGINE}


def _tree(module: str) -> ast.Module | None:
    source = SOURCES.get(module)
    return ast.parse(textwrap.dedent(source)) if source is not None else None


def _found() -> dict[str, Found]:
    return {f.field: f for f in guarded("pkg.trainer.t", _tree)}


def test_a_chain_in_a_switch_branch_holds_when_the_switch_has_that_branch_s_values():
    found = _found()
    assert found["scale"].values == ("batch", "group", "none")
    assert found["scale"].when == (("aggregation", ("sum",)),)
    assert found["norm"].values == ("l1", "l2") and found["norm"].when == (("aggregation", ("max", "mean")),)
    assert found["scale"].module == "pkg.trainer.t" and found["scale"].line == 20


def test_a_chain_under_a_deeper_condition_or_the_switch_itself_is_not_read():
    found = _found()
    assert "deep" not in found  # under `aggregation == "sum"` AND `beta > 0`, which is read no way
    assert "aggregation" not in found  # its own switch is code_chains' (unconditional) finding


def test_a_field_handed_to_a_built_class_is_closed_by_that_class_s_chains_under_the_call_s_condition():
    found = _found()
    assert found["engine_mode"].values == ("colocate", "server")
    assert found["engine_mode"].when == (("use_engine", (True,)),)
    assert found["engine_mode"].module == "pkg.generation.engine" and found["engine_mode"].line == 13
    assert found["kind"].values == ("p", "q") and found["kind"].when is None  # at the function's own level


def test_an_attribute_the_class_assigns_again_closes_nothing():
    assert "level" not in _found()  # `self.level = "changed"` too: the chain may not see the config's value


def test_a_module_that_cannot_be_read_closes_nothing():
    assert guarded("pkg.missing", _tree) == []


def test_a_class_of_another_package_is_never_looked_up():
    """Finding another package's source would import it (find_spec imports the parents)."""
    assert "foreign_mode" not in _found()


BOTH = """\
    class Trainer:
        def loss(self):
            if self.use_engine and self.correction:
                ratio = 1
                if self.mode in ["seq_mask", "seq_clip"]:
                    pass
                elif self.mode == "tok_mask":
                    pass
                else:
                    raise ValueError("mode")
            if self.kind == "vespo" and self.use_engine:
                if self.level not in ["tok_mask"]:
                    raise ValueError("level")
            if self.use_engine:
                if self.flavour == "sweet":
                    if self.topping not in ("nuts",):
                        raise ValueError("topping")
            if self.use_engine and self.beta > 0:
                if self.never not in ("x",):
                    raise ValueError("never: `beta > 0` is read no way")
            if self.use_engine or self.correction:
                if self.either not in ("x",):
                    raise ValueError("either: an `or` is not every part")
    """


def test_a_chain_under_a_condition_over_two_fields_holds_when_both_do():
    """GRPO's `vllm_importance_sampling_mode` raises only under `if self.use_vllm and
    self.vllm_importance_sampling_correction:`; a branch in a branch joins the two conditions."""
    SOURCES["pkg.trainer.both"] = BOTH
    found = {f.field: f for f in guarded("pkg.trainer.both", _tree)}
    assert found["mode"].values == ("seq_clip", "seq_mask", "tok_mask") and found["mode"].line == 10
    assert found["mode"].when == (("correction", (True,)), ("use_engine", (True,)))
    assert found["level"].when == (("kind", ("vespo",)), ("use_engine", (True,)))
    assert found["topping"].when == (("flavour", ("sweet",)), ("use_engine", (True,)))
    assert "never" not in found and "either" not in found
