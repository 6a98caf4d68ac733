"""`diff --resolve-bases` composes a Hydra `defaults:` list as hydra-core 1.3 does: its own
`compose` is the reference, over trees written for this test (package precedence, `_self_`,
`optional`, `override`, `_global_`, `_here_`, nested and absolute groups). Dev only: hydra-core
is in the dev extra, never a dependency of sweepgen."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import hydra  # hydra-core is in the dev extra: the reference is always there
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sweepgen.readers.python.pyinherit import read_with_bases

TREES: dict[str, dict[str, str]] = {
    # SkyRL-style: the entry's group@pkg wins over the file's `# @package` header
    "entry_package_beats_header": {
        "config.yaml": "defaults:\n  - optim@trainer.policy.optimizer_config: adam\n  - _self_\nseed: 1\n",
        "optim/adam.yaml": "# @package optimizer\nlr: 1.0e-6\nbetas: [0.9, 0.999]\n",
    },
    "header_is_absolute": {
        "config.yaml": "defaults:\n  - model: llama\n  - db: mysql\n",
        "model/llama.yaml": "defaults:\n  - encoder: big\n  - _self_\nlayers: 32\n",
        "model/encoder/big.yaml": "# @package enc_pkg\nwidth: 1024\n",
        "db/mysql.yaml": "# @package bar.baz\nhost: x\n",
    },
    "self_first_then_defaults_win": {
        "config.yaml": "defaults:\n  - _self_\n  - model: small\nmodel:\n  layers: 99\n  name: mine\n",
        "model/small.yaml": "layers: 2\n",
    },
    "self_last_when_absent": {
        "config.yaml": "defaults:\n  - model: small\nmodel:\n  layers: 99\n",
        "model/small.yaml": "layers: 2\nheads: 4\n",
    },
    "optional_missing_and_null": {
        "config.yaml": "defaults:\n  - optional extra: none_here\n  - logger: null\n  - model: small\n",
        "model/small.yaml": "layers: 2\n",
        "logger/wandb.yaml": "project: x\n",
    },
    "override_a_nested_group": {
        "config.yaml": (
            "defaults:\n  - model: llama\n  - override model/encoder: small\n  - _self_\ntop: 1\n"
        ),
        "model/llama.yaml": "defaults:\n  - encoder: big\n  - _self_\nlayers: 32\n",
        "model/encoder/big.yaml": "width: 1024\ndepth: 8\n",
        "model/encoder/small.yaml": "width: 8\n",
    },
    "global_and_here_and_relative_packages": {
        "config.yaml": "defaults:\n  - model: llama\n  - _self_\n",
        "model/llama.yaml": (
            "defaults:\n  - encoder@_here_: big\n  - /db@dbx: mysql\n  - /db: mysql\n"
            "  - encoder@_global_.gg: small\n  - encoder@e2: small\n  - _self_\nlayers: 32\n"
        ),
        "model/encoder/big.yaml": "width: 1024\n",
        "model/encoder/small.yaml": "width: 8\n",
        "db/mysql.yaml": "host: x\nport: 3306\n",
    },
    "global_header_in_a_group": {
        "config.yaml": "defaults:\n  - exp: fast\n  - _self_\ntrainer:\n  epochs: 1\n",
        "exp/fast.yaml": "# @package _global_\ntrainer:\n  epochs: 3\n  lr: 0.1\n",
    },
    # Hydra reads a header only from the `# @...` lines before any other line: a plain comment
    # ends it, and a later `# @package` line is a comment; the last of the header's wins
    "package_line_after_a_comment_is_no_header": {
        "config.yaml": "defaults:\n  - exp: fast\n  - db: mysql\n  - store: pg\n  - _self_\n",
        "exp/fast.yaml": "# fast experiment\n# @package _global_\ntrainer:\n  epochs: 3\n",
        "db/mysql.yaml": "host: x\n# @package _global_\nport: 1\n",
        "store/pg.yaml": "\n#  @package   a.b\n#@package c\n\nhost: y\n",
    },
    # an empty option file is an empty mapping at its package, never null
    "empty_option_files": {
        "config.yaml": "defaults:\n  - model: a\n  - trainer@p: b\n  - _self_\nlr: 2\n",
        "model/a.yaml": "",
        "trainer/b.yaml": "# @package pk\n",
    },
    # the primary config's own header places it, and the packages its list names below it
    "primary_header_places_the_config": {
        "config.yaml": "# @package run.cfg\ndefaults:\n  - m: a\n  - m@_here_.k: a\n  - _self_\nx: 1\n",
        "m/a.yaml": "l: 1\n",
    },
    # OmegaConf's merge: a `???` (quoted or not) never replaces a value already there, before or
    # after `_self_`; alone it stays missing
    "missing_never_replaces_a_value": {
        "config.yaml": (
            "defaults:\n  - model: small\n  - _self_\nmodel:\n  layers: ???\n  heads: '???'\n"
            "  tag: ???\n  sub: ???\n"
        ),
        "model/small.yaml": "layers: 2\nheads: 4\nsub:\n  k: 1\n",
    },
    "plain_config_and_interpolation": {
        "config.yaml": "defaults:\n  - base\n  - _self_\nlr: ${base_lr}\nname: run_${lr}\n",
        "base.yaml": "base_lr: 0.5\nlr: 0.1\n",
    },
}


def _write(root: Path, tree: dict[str, str]) -> Path:
    for name, text in tree.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    return root / "config.yaml"


def _hydra_compose(folder: Path) -> Any:
    from hydra import compose, initialize_config_dir
    from omegaconf import OmegaConf

    with initialize_config_dir(config_dir=str(folder), version_base="1.3"):
        cfg = compose(config_name="config")
    return OmegaConf.to_container(cfg, resolve=True)


@pytest.mark.parametrize("name", sorted(TREES))
def test_composition_is_hydra_s_own(tmp_path, name):
    config = _write(tmp_path, TREES[name])
    expected = _hydra_compose(tmp_path)
    ours = read_with_bases(config, yaml_version="omegaconf").data
    assert ours == expected
    assert list(ours) == list(expected)  # the same keys, in the order Hydra merges them


def test_an_override_of_a_group_no_entry_selects_is_refused(tmp_path):
    from sweepgen.errors import ConfigError

    config = _write(
        tmp_path, {"config.yaml": "defaults:\n  - override model: small\n", "model/small.yaml": "a: 1\n"}
    )
    with pytest.raises(ConfigError, match="matches no group"):
        read_with_bases(config, yaml_version="omegaconf")
    with pytest.raises(hydra.errors.ConfigCompositionException):
        _hydra_compose(tmp_path)


def test_a_group_selected_twice_with_other_options_is_refused(tmp_path):
    from sweepgen.errors import ConfigError

    config = _write(
        tmp_path,
        {
            "config.yaml": "defaults:\n  - data: b\n  - _self_\n",
            "data/b.yaml": "# @package _global_\ndefaults:\n  - /data: a\nseed: 1\n",
            "data/a.yaml": "z: 1\n",
        },
    )
    with pytest.raises(hydra.errors.ConfigCompositionException, match="Multiple values for data"):
        _hydra_compose(tmp_path)
    with pytest.raises(ConfigError, match="`data` selected twice"):
        read_with_bases(config, yaml_version="omegaconf")
    # the same option twice too: "appears more than once in the final defaults list"
    (tmp_path / "data/b.yaml").write_text("# @package _global_\ndefaults:\n  - /data: b\nseed: 1\n")
    (tmp_path / "config.yaml").write_text("defaults:\n  - data: a\n  - extra: x\n")
    (tmp_path / "extra").mkdir()
    (tmp_path / "extra/x.yaml").write_text("# @package _global_\ndefaults:\n  - /data: a\n")
    with pytest.raises(hydra.errors.ConfigCompositionException, match="more than once"):
        _hydra_compose(tmp_path)
    with pytest.raises(ConfigError, match="`data` selected twice"):
        read_with_bases(config, yaml_version="omegaconf")


def test_a_primary_header_without_a_defaults_list_shows_as_written(tmp_path):
    # nothing to compose: Hydra would place the file by it, a plain OmegaConf.load would not, so
    # it shows as `@package` (as without --resolve-bases), never dropped
    config = _write(tmp_path, {"config.yaml": "# @package foo\nx: 1\n"})
    assert read_with_bases(config, yaml_version="omegaconf").data == {"x": 1, "@package": "foo"}
    assert _hydra_compose(tmp_path) == {"foo": {"x": 1}}


# Hydra applies command-line overrides in order: where overrides of other prefixes touch one path,
# another order composes another config, so the launch lines are never equal
OVERRIDE_ORDERS = [
    (["a.b=1", "++a.b=2"], ["++a.b=2", "a.b=1"]),
    (["~a.b", "x=1", "++a.b=3"], ["++a.b=3", "x=1", "~a.b"]),
    (["++a={b:7}", "a.b=1"], ["a.b=1", "++a={b:7}"]),
]


@pytest.mark.parametrize(("one", "two"), OVERRIDE_ORDERS)
def test_overrides_touching_one_path_in_another_order_differ(tmp_path, one, two):
    from hydra import compose, initialize_config_dir
    from omegaconf import OmegaConf

    from sweepgen.readers.compare import compare

    _write(tmp_path, {"config.yaml": "a:\n  b: 0\n  c: 0\nx: 0\n"})
    with initialize_config_dir(config_dir=str(tmp_path), version_base="1.3"):
        composed = [OmegaConf.to_container(compose(config_name="config", overrides=o)) for o in (one, two)]
    assert composed[0] != composed[1]  # the oracle: Hydra composes two configs
    for name, overrides in (("a.sh", one), ("b.sh", two)):
        (tmp_path / name).write_text("python -m app.main " + " ".join(f"'{o}'" for o in overrides) + "\n")
    changes = compare(str(tmp_path / "a.sh"), str(tmp_path / "b.sh")).changes
    assert [c.dotted for c in changes] == ['commands["app.main"].@order']
    # overrides of paths apart keep no order: moving one is no change
    (tmp_path / "c.sh").write_text("python -m app.main a.c=1 +y=2 x=3\n")
    (tmp_path / "d.sh").write_text("python -m app.main x=3 +y=2 a.c=1\n")
    assert compare(str(tmp_path / "c.sh"), str(tmp_path / "d.sh")).changes == []


# trees hydra-core refuses to compose (a hypothesis-free fuzz of 2,000 random trees found them
# composed silently): each is an exit-2 error naming its file, never a config Hydra never builds
REFUSED: dict[str, tuple[dict[str, str], str]] = {
    # an override names the choice it changes with its package: `override model` is not `model@p`
    "override_without_the_package": (
        {"config.yaml": "defaults:\n  - model@p: a\n  - override model: b\n", "model/a.yaml": "x: 1\n"},
        "matches no group",
    ),
    # overrides come last (`_self_` may follow them)
    "override_before_an_entry": (
        {
            "config.yaml": "defaults:\n  - model: a\n  - override model: b\n  - data: c\n  - _self_\n",
            "model/a.yaml": "x: 1\n",
            "model/b.yaml": "x: 2\n",
            "data/c.yaml": "y: 1\n",
        },
        "comes before",
    ),
    # OmegaConf merges no mapping with a list, either way round
    "mapping_onto_a_list": (
        {
            "config.yaml": "defaults:\n  - _self_\n  - exp@_global_: a\nname: [1, 2]\n",
            "exp/a.yaml": "name:\n  k: 1\n",
        },
        "merges a mapping onto a list",
    ),
    "list_onto_a_mapping": (
        {"config.yaml": "defaults:\n  - base\n  - _self_\nlr: [1]\n", "base.yaml": "lr:\n  k: 1\n"},
        "merges a list onto a mapping",
    ),
}


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_a_tree_hydra_refuses_is_refused(tmp_path, name):
    from sweepgen.errors import ConfigError

    tree, message = REFUSED[name]
    config = _write(tmp_path, tree)
    with pytest.raises(hydra.errors.ConfigCompositionException):
        _hydra_compose(tmp_path)
    with pytest.raises(ConfigError, match=message):
        read_with_bases(config, yaml_version="omegaconf")
    # `override model@p` (and the override last) is what Hydra composes, and so does the reader
    if name == "override_without_the_package":
        (tmp_path / "model/b.yaml").write_text("x: 2\n")
        (tmp_path / "config.yaml").write_text("defaults:\n  - model@p: a\n  - override model@p: b\n")
        assert read_with_bases(config, yaml_version="omegaconf").data == _hydra_compose(tmp_path)


def _random_tree(rng: Any) -> dict[str, str]:
    """A Hydra tree of 1-3 groups: options with random headers and bodies, entries with random
    packages, `_self_` anywhere, an option's own nested defaults, an override, an optional entry."""
    from omegaconf import OmegaConf

    def body() -> str:
        keys = rng.sample(["lr", "bs", "n", "name"], rng.randint(1, 3))
        values = [1, 2, "a", 0.5, None, [1, 2], {"k": 1}, "???"]
        return OmegaConf.to_yaml(OmegaConf.create({k: rng.choice(values) for k in keys}))

    tree: dict[str, str] = {}
    entries = []
    for group in rng.sample(["model", "optim", "data"], rng.randint(1, 3)):
        for option in ("a", "b"):
            header = rng.choice(["", "# @package _global_\n", "# @package x.y\n"])
            nested = ""
            if rng.random() < 0.3:
                tree[f"{group}/sub/p.yaml"] = rng.choice(["", "# @package _global_\n"]) + body()
                nested = f"defaults:\n  - sub{rng.choice(['', '@_here_', '@z'])}: p\n  - _self_\n"
            tree[f"{group}/{option}.yaml"] = header + nested + body()
        package = rng.choice(["", "@x", "@_global_"])
        entries.append(f"{group}{package}: {rng.choice('ab')}")
        if rng.random() < 0.3:  # its package named, or not (Hydra then refuses it)
            entries.append(f"override {group}{rng.choice([package, ''])}: {rng.choice('ab')}")
    if rng.random() < 0.3:
        entries.insert(0, "optional extra: none")
    if rng.random() < 0.8:
        entries.sort(key=lambda entry: entry.startswith("override"))  # Hydra wants them last
    entries.insert(rng.randint(0, len(entries)), "_self_")
    tree["config.yaml"] = "defaults:\n" + "".join(f"  - {e}\n" for e in entries) + body()
    return tree


@settings(deadline=None, max_examples=60, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(rng=st.randoms(use_true_random=False))
def test_random_trees_compose_as_hydra_composes_them(tmp_path_factory, rng):
    from sweepgen.errors import ConfigError

    folder = tmp_path_factory.mktemp("tree")
    config = _write(folder, _random_tree(rng))
    try:
        expected = _hydra_compose(folder)
    except hydra.errors.ConfigCompositionException:
        with pytest.raises(ConfigError):  # what Hydra refuses is refused, never composed
            read_with_bases(config, yaml_version="omegaconf")
        return
    ours = read_with_bases(config, yaml_version="omegaconf").data
    assert ours == expected and list(ours) == list(expected)


@pytest.mark.parametrize("spread", ['"$@"', "${ARGS[@]}", '"${ARGS[@]}"'])
def test_overrides_after_a_spread_win_over_it(tmp_path, spread):
    from hydra import compose, initialize_config_dir
    from omegaconf import OmegaConf

    from sweepgen.readers.compare import compare

    # the script's own `a.b=1` before or after what the spread holds (here `a.b=2`): Hydra applies
    # overrides in order, so the two lines compose two configs, and are never equal
    _write(tmp_path, {"config.yaml": "a:\n  b: 0\n"})
    with initialize_config_dir(config_dir=str(tmp_path), version_base="1.3"):
        orders = (["a.b=1", "a.b=2"], ["a.b=2", "a.b=1"])
        composed = [OmegaConf.to_container(compose(config_name="config", overrides=o)) for o in orders]
    assert composed[0] != composed[1]
    (tmp_path / "a.sh").write_text(f"python -m app a.b=1 {spread}\n")
    (tmp_path / "b.sh").write_text(f"python -m app {spread} a.b=1\n")
    changes = compare(str(tmp_path / "a.sh"), str(tmp_path / "b.sh")).changes
    assert [c.path for c in changes] == [("commands", "app", "@overrides after")]
    # the usual line, its spread last: an override inserted before the spread is that one change
    (tmp_path / "c.sh").write_text(f"python -m app a.b=1 x=2 {spread}\n")
    changes = compare(str(tmp_path / "a.sh"), str(tmp_path / "c.sh")).changes
    assert [c.path for c in changes] == [("commands", "app", "x")]
