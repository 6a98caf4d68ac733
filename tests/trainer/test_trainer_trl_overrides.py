"""The TRL internals the trainer overrides or relies on, held to the source they were checked against.

docs/TRAINER.md ("Overrides of TRL internals") lists each with the reason no public argument reaches
it. A TRL release that changes one of them fails here, naming it, before a run trains with an
override written for other code; after re-reading the new source against our override, record its
digest below (and the version in docs/TRAINER.md).
"""

from __future__ import annotations

import hashlib
import importlib
import inspect
from pathlib import Path

import pytest

pytestmark = pytest.mark.train

TRL_VERSION = "1.16.0"
DOC = Path(__file__).resolve().parents[2] / "docs" / "TRAINER.md"

# sha256 of inspect.getsource() of each TRL function, as installed from trl==1.16.0
CHECKED = {
    "trl.trainer.grpo_trainer.GRPOTrainer._get_train_sampler": (
        "36497afb4d311dc9a80d914d27893fe075c5bbc7edde8586edfa60125e980799"
    ),
    "trl.trainer.grpo_trainer.GRPOTrainer.training_step": (
        "9e18632f7dd8e8d8f0ebbdcc4431feb1a9e3c037a02cf8c3aec38aa68ee58814"
    ),
    "trl.trainer.grpo_trainer.GRPOTrainer._generate_and_score_completions": (
        "1fa48922792dcd5c72da155cfe99db477771a7c61cde15519fe8c86d0cdc0b65"
    ),
    "trl.trainer.grpo_trainer.GRPOTrainer.compute_loss": (
        "a2d6ef8bd29c3e26be8d8b25fa03a298a7a7fa4a3abb851a52845bc16c0e54ce"
    ),
    # relied on, not overridden: one forward over the whole batch; [B, T] advantages taken as they are
    "trl.trainer.grpo_trainer.GRPOTrainer._compute_loss": (
        "80295546bbdbf6f711acce7f6e69b0100ab40aa8f23ed8052cc564ff024e3e40"
    ),
    # relied on by resume_sampler.py: the arguments it copies, and one randperm per pass
    "trl.trainer.utils.RepeatSampler.__init__": (
        "7898b11a3b9e9e07f4d43240092d839191ee2a7be2997704b3b0326a12fe65ff"
    ),
    "trl.trainer.utils.RepeatSampler.__iter__": (
        "d80412d80424bd645f7d74cdb8bdc1994c789d8ba03111ffe6eea20f789dea58"
    ),
}

# (our class, the TRL method it overrides); constructors are not listed: they only add arguments
OVERRIDES = {
    ("trainer.training.grpo.SweepgenGRPOTrainer", "_get_train_sampler"),
    ("trainer.training.grpo.SweepgenGRPOTrainer", "training_step"),
    ("trainer.training.grpo.SweepgenGRPOTrainer", "compute_loss"),
    ("trainer.routing.trainer.RoutedGRPOTrainer", "_generate_and_score_completions"),
    ("trainer.routing.trainer.RoutedGRPOTrainer", "compute_loss"),
    ("trainer.routing.trainer.RoutedGRPOTrainer", "training_step"),
    ("trainer.debate.trainer.DebateGRPOTrainer", "_generate_and_score_completions"),
}


def _resolve(dotted: str) -> object:
    """``module.Class.attr`` -> the object: the longest importable prefix, then attributes."""
    parts = dotted.split(".")
    for cut in range(len(parts) - 1, 0, -1):
        try:
            obj: object = importlib.import_module(".".join(parts[:cut]))
        except ModuleNotFoundError:
            continue
        for attr in parts[cut:]:
            obj = getattr(obj, attr)
        return obj
    raise AssertionError(f"{dotted} does not resolve")


def test_trl_is_the_version_the_overrides_were_checked_against():
    import trl

    assert trl.__version__ == TRL_VERSION


@pytest.mark.parametrize("name", sorted(CHECKED))
def test_each_trl_function_is_the_source_it_was_checked_against(name):
    source = inspect.getsource(_resolve(name))
    digest = hashlib.sha256(source.encode("utf-8")).hexdigest()
    assert digest == CHECKED[name], (
        f"TRL changed {name}: re-read it against the trainer's override (docs/TRAINER.md, "
        "Overrides of TRL internals), then record its new digest here"
    )


def test_no_trl_method_is_overridden_without_being_listed():
    from trl import GRPOTrainer

    found = set()
    for dotted in {cls for cls, _ in OVERRIDES}:
        cls = _resolve(dotted)
        for name, value in vars(cls).items():
            if name.startswith("__") or not callable(value):  # constructors and class attributes
                continue
            if any(name in vars(base) for base in GRPOTrainer.__mro__ if base is not object):
                found.add((dotted, name))
    assert found == OVERRIDES
    assert {f"trl.trainer.grpo_trainer.GRPOTrainer.{name}" for _, name in OVERRIDES} <= set(CHECKED)


def test_trainer_md_lists_every_override_and_the_trl_version():
    doc = DOC.read_text(encoding="utf-8")
    section = doc.split("## Overrides of TRL internals", 1)[1].split("\n## ", 1)[0]
    assert f"trl {TRL_VERSION}" in section
    for name in CHECKED:
        assert f"`{name.rsplit('.', 2)[-2]}.{name.rsplit('.', 1)[-1]}`" in section, name
