"""The ``search.prune`` block: ``min_steps`` has no default, except where nothing is pruned."""

from __future__ import annotations

import pytest
from pydantic import ValidationError
from spec_support import write_project

from sweepgen.compile.spec.model import load_spec
from sweepgen.compile.spec.sampling.search_block import SearchBlock
from sweepgen.errors import SpecError

AXES = {"training.lr": {"log_uniform": [1.0e-6, 1.0e-4]}}


def block(prune: dict) -> SearchBlock:
    return SearchBlock.model_validate({"n": 4, "metric": "score", "axes": AXES, "prune": prune})


@pytest.mark.parametrize("prune", [{"method": "asha"}, {"method": "median"}, {"method": "hyperband"}, {}])
def test_a_pruner_without_min_steps_is_refused(prune):
    with pytest.raises(ValidationError) as err:
        block(prune)
    (problem,) = err.value.errors()
    assert problem["type"] == "missing"
    assert problem["loc"] == ("prune", "min_steps")


@pytest.mark.parametrize("method", ["asha", "median", "hyperband"])
def test_the_named_min_steps_is_kept(method):
    prune = block({"method": method, "min_steps": 12})
    assert prune.prune is not None
    assert (prune.prune.method, prune.prune.min_steps, prune.prune.reduction) == (method, 12, 3)


def test_no_pruning_needs_no_min_steps():
    prune = block({"method": "none"})
    assert prune.prune is not None
    assert prune.prune.method == "none"


def test_a_spec_without_min_steps_names_the_key_and_its_line(project):
    body = """\
        search:
          n: 4
          metric: score
          axes: {training.lr: {log_uniform: [1.0e-6, 1.0e-4]}}
          prune: {method: asha, reduction: 3}
        """
    with pytest.raises(SpecError) as err:
        load_spec(str(write_project(project, body)))
    assert "missing required key `min_steps`" in err.value.message
    assert err.value.key == "search.prune.min_steps"
    assert str(err.value.location) == "specs/demo.yaml:12:10"


def test_a_lowered_metric_without_mode_is_refused_at_its_line(project):
    body = """\
        search:
          n: 4
          metric: eval_loss
          axes: {training.lr: {log_uniform: [1.0e-6, 1.0e-4]}}
        """
    with pytest.raises(SpecError) as err:
        load_spec(str(write_project(project, body)))
    assert "`metric: eval_loss` names something lowered, and `mode` is not given" in err.value.message
    assert "add `mode: min`" in err.value.message
    assert str(err.value.location).startswith("specs/demo.yaml:")
    assert "Traceback" not in err.value.message


@pytest.mark.parametrize(("metric", "mode"), [("eval_loss", "min"), ("eval_loss", "max"), ("score", None)])
def test_a_given_mode_or_a_raised_metric_is_taken_as_it_is(metric, mode):
    given = {"mode": mode} if mode else {}
    assert SearchBlock.model_validate({"n": 4, "metric": metric, "axes": AXES, **given}).mode == (
        mode or "max"
    )
