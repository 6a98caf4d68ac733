"""No import cycle between the trainer's sibling modules and subpackages (the factory
that picks the trainer class lives in sweepgen_trainer.run), and GRPOConfig and its arguments are built once
per run."""

from __future__ import annotations

import itertools

import grimp
import pytest
from trainer_support import tiny_dict

pytestmark = pytest.mark.train


def test_no_cycle_between_trainer_siblings():
    graph = grimp.build_graph("sweepgen_trainer", exclude_type_checking_imports=True)
    siblings = sorted(graph.find_children("sweepgen_trainer"))
    cycles = [
        (a, b)
        for a, b in itertools.combinations(siblings, 2)
        if graph.chain_exists(importer=a, imported=b, as_packages=True)
        and graph.chain_exists(importer=b, imported=a, as_packages=True)
    ]
    assert cycles == []
    # the factory is in run.py; grpo.py (the base class) depends on no part that subclasses it
    for part in ("sweepgen_trainer.routing", "sweepgen_trainer.debate", "sweepgen_trainer.run"):
        assert not graph.chain_exists(
            importer="sweepgen_trainer.training.grpo", imported=part, as_packages=True
        ), part


def test_grpo_arguments_and_config_are_built_once_per_run(tmp_path, tiny_cache, monkeypatch):
    import sweepgen_trainer.run as run_mod
    from sweepgen_trainer.config import RunConfig

    built: dict[str, list] = {"grpo_kwargs": [], "grpo_config_from": []}
    for name, calls in built.items():
        real = getattr(run_mod, name)

        def counting(*args, _real=real, _calls=calls, **kwargs):
            _calls.append(1)
            return _real(*args, **kwargs)

        monkeypatch.setattr(run_mod, name, counting)
    run_mod.run(RunConfig.model_validate(tiny_dict(tmp_path / "run", grpo={"max_steps": 1})))
    assert built == {"grpo_kwargs": [1], "grpo_config_from": [1]}
