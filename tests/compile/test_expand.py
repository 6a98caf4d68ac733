"""Expansion: override rules, variants x grid x zip x ablation, names, and layer precedence."""

from __future__ import annotations

import pytest
from spec_support import write_project

from sweepgen.compile.api import load_and_expand, resolve_variant
from sweepgen.errors import SpecError


def expand(project, body, **kw):
    return load_and_expand(str(write_project(project, body, **kw)))


def test_dotted_key_replaces_and_mapping_merges(project):
    e = expand(
        project,
        """\
        variants:
          a:
            streamer.params: {gamma: 0.99}
            training: {seed: 7, +warmup: 5}
        """,
    )
    cfg = e.by_name("a").config
    assert cfg["streamer"]["params"] == {"gamma": 0.99}
    assert cfg["training"] == {"seed": 7, "lr": 3.0e-6, "group": 4, "warmup": 5}


def test_dotted_key_replaces_a_whole_mapping(project):
    e = expand(
        project,
        "variants:\n  a: {streamer: {params: {x: 1}}}\n  b: {streamer.params: {x: 1}}\n",
        base="base:\n  streamer: {params: {x: 0, y: 0}}\n",
    )
    assert e.by_name("a").config["streamer"]["params"] == {"x": 1, "y": 0}  # merge
    assert e.by_name("b").config["streamer"]["params"] == {"x": 1}  # replace


def test_add_and_delete(project):
    e = expand(project, "variants:\n  a:\n    +streamer.extra: 1\n    ~training.group: null\n")
    cfg = e.by_name("a").config
    assert cfg["streamer"]["extra"] == 1 and "group" not in cfg["training"]


def test_expansion_never_mutates_the_base_and_shares_unchanged_subtrees(project):
    e = expand(project, "variants:\n  a: {training.seed: 1}\n  b: {streamer.strategy: x}\n")
    base = e.spec.base
    assert base["training"]["seed"] == 42 and base["streamer"]["strategy"] == "identity"
    a, b = e.by_name("a").config, e.by_name("b").config
    assert a["streamer"] is base["streamer"] and b["training"] is base["training"]
    assert a["training"] is not base["training"]


@pytest.mark.parametrize(
    "override, message, hint",
    [
        ("training.sed: 1", "override path `training.sed` does not exist", "did you mean `training.seed`?"),
        ("trainig.seed: 1", "override parent path `trainig` does not exist", "did you mean `training`?"),
        ("+training.seed: 1", "adds a key that already exists", "drop the `+`"),
        ("+nope.x: 1", "parent path `nope` does not exist", ""),
        ("~training.seed: 0", "its value must be null", "~training.seed: null"),
        ("~training.sed: null", "`training.sed` does not exist", "training.seed"),
        ("training.seed.x: 1", "`training.seed` is a int, not a mapping", "override the parent"),
        ("training: {}", "merging an empty mapping", "~training: null"),
        ("training: {sed: 1}", "`training.sed` does not exist", "training.seed"),
        ("'training..seed': 1", "malformed override path", ""),
    ],
)
def test_override_errors(project, override, message, hint):
    with pytest.raises(SpecError) as err:
        expand(project, f"variants:\n  a:\n    {override}\n")
    assert message in err.value.message
    assert hint in (err.value.hint or "")
    assert str(err.value.location).startswith("specs/demo.yaml:10:")


def test_variants_cross_grid_cross_zip_cross_ablation_in_order(project):
    e = expand(
        project,
        """\
        variants:
          a: {}
          b: {streamer.strategy: coma}
        grid:
          training.seed: [1, 2]
        zip:
          training.lr: [0.1, 0.2]
          training.group: [4, 8]
        ablation:
          - {name: A1}
          - {name: A2, set: {+training.warmup: 5}}
        """,
    )
    names = [v.name for v in e.variants]
    assert len(names) == 2 * 2 * 2 * 2 == len(set(names))
    assert names[:4] == [
        "a_seed1_lr0.1_group4_A1",
        "a_seed1_lr0.1_group4_A2",
        "a_seed1_lr0.2_group8_A1",
        "a_seed1_lr0.2_group8_A2",
    ]
    v = e.by_name("b_seed2_lr0.2_group8_A2")
    assert v.config["training"] == {"seed": 2, "lr": 0.2, "group": 8, "warmup": 5}
    assert v.config["streamer"]["strategy"] == "coma"
    assert v.axes == {"training.seed": 2, "training.lr": 0.2, "training.group": 8}
    assert v.step == "A2"
    assert e.implicit == {"training.seed", "training.lr", "training.group", "training.warmup"}


def test_grid_labels_from_a_mapping(project):
    e = expand(project, "grid:\n  training.lr: {lo: 1.0e-6, hi: 1.0e-5}\n  training.seed: [7]\n")
    assert [v.name for v in e.variants] == ["lo_seed7", "hi_seed7"]
    assert e.by_name("hi_seed7").config["training"]["lr"] == 1.0e-5


def test_single_variant_is_named_base(project):
    assert [v.name for v in expand(project, "").variants] == ["base"]


def test_ablation_is_cumulative(project):
    e = expand(
        project,
        """\
        ablation:
          - {name: s1}
          - {name: s2, set: {training.lr: 0.5}}
          - {name: s3, set: {training.seed: 1}}
          - {name: s4, set: {training.lr: 0.9}}
        """,
    )
    cfgs = {v.name: v.config["training"] for v in e.variants}
    assert cfgs["s1"] == {"seed": 42, "lr": 3.0e-6, "group": 4}
    assert cfgs["s2"] == {"seed": 42, "lr": 0.5, "group": 4}
    assert cfgs["s3"] == {"seed": 1, "lr": 0.5, "group": 4}
    assert cfgs["s4"] == {"seed": 1, "lr": 0.9, "group": 4}
    assert e.by_name("s4").layers == {"training.lr": "ablation:s4", "training.seed": "ablation:s3"}


def test_later_layers_win_and_layers_are_remembered(project):
    """Precedence: base < named variant < grid < zip < ablation step."""
    e = expand(
        project,
        """\
        variants:
          v: {training.seed: 1, training.lr: 0.1, training.group: 2, streamer.rollouts: 2}
        grid:
          training.seed: [10]
        zip:
          training.lr: [0.2]
        ablation:
          - {name: s, set: {training.group: 8}}
        """,
    )
    v = e.variants[0]
    assert v.config["training"] == {"seed": 10, "lr": 0.2, "group": 8}
    assert v.config["streamer"]["rollouts"] == 2
    assert v.layers == {
        "training.seed": "grid",
        "training.lr": "zip",
        "training.group": "ablation:s",
        "streamer.rollouts": "variant:v",
    }
    assert v.overrides == {
        "training.seed": 10,
        "training.lr": 0.2,
        "training.group": 8,
        "streamer.rollouts": 2,
    }
    assert str(e.where("variant:v", "streamer.rollouts")).startswith("specs/demo.yaml:9:")
    assert str(e.where("base", "training.group")).startswith("specs/demo.yaml:6:")


def test_duplicate_names_are_rejected(project):
    with pytest.raises(SpecError) as err:
        expand(project, "grid:\n  training.seed: [1, 1]\n")
    assert "repeats" in err.value.message


def test_resolve_variant_and_a_helpful_unknown_name(project):
    spec = str(write_project(project, "variants:\n  coma: {streamer.strategy: coma}\n  identity: {}\n"))
    assert resolve_variant(spec, "coma")["streamer"]["strategy"] == "coma"
    with pytest.raises(SpecError) as err:
        resolve_variant(spec, "comma")
    assert "did you mean `coma`?" in err.value.hint
