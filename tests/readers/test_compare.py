"""`diff` as one function (sweepgen.readers.compare): how each side is read, the --allow gate and
the exit code are decided here, below the CLI, which only prints the Comparison."""

from __future__ import annotations

from pathlib import Path

import pytest

from sweepgen.readers.compare import compare


def _write(tmp_path: Path, name: str, text: str) -> str:
    path = tmp_path / name
    path.write_text(text)
    return str(path)


def test_the_allow_gate_decides_the_exit_code(tmp_path):
    a = _write(tmp_path, "a.yaml", "lr: 1\nseed: 42\n")
    b = _write(tmp_path, "b.yaml", "lr: 1\nseed: 7\n")
    assert compare(a, a).exit_code == 0 and compare(a, a).changes == []
    ungated = compare(a, b)  # no --allow: every change is refused, like diff(1)
    assert [c.dotted for c in ungated.changes] == ["seed"] and ungated.exit_code == 1
    gated = compare(a, b, allow=["seed"])
    assert gated.refused == set() and gated.exit_code == 0
    typo = compare(a, b, allow=["sed"])
    assert typo.unmatched == {"sed": ["seed"]} and typo.exit_code == 1


def test_yaml_is_read_as_its_program_reads_it(tmp_path):
    # PyYAML (YAML 1.1) reads `on` as True; a sweepgen spec is YAML 1.2, where it is a string
    plain = _write(tmp_path, "a.yaml", "flag: on\n")
    assert compare(plain, plain).first.data == {"flag": True}
    spec = _write(tmp_path, "s.yaml", "sweepgen: 1\nflag: on\n")
    assert compare(spec, spec).first.data == {"sweepgen": 1, "flag": "on"}
    # either side with an interpolation: both read as OmegaConf does (1e-5 a float, ${} resolved)
    omega = _write(tmp_path, "o.yaml", "lr: 1e-5\nalso: ${lr}\n")
    other = _write(tmp_path, "p.yaml", "lr: 1e-5\nalso: 1e-5\n")
    assert compare(omega, other).changes == []


def test_a_spec_variant_side_comes_from_the_variant_reader_handed_in(tmp_path):
    spec = _write(tmp_path, "s.yaml", "sweepgen: 1\n")
    asked: list[tuple[str, str]] = []

    def variant_config(path: str, name: str) -> dict[str, int]:
        asked.append((path, name))
        return {"seed": 1 if name == "one" else 2}

    result = compare(f"{spec}:one", f"{spec}:two", variant_config=variant_config)
    assert asked == [(spec, "one"), (spec, "two")]
    assert [(c.dotted, c.old, c.new) for c in result.changes] == [("seed", 1, 2)]


def test_scripts_that_run_the_same_commands_in_another_order_differ(tmp_path):
    # `cd /data` before the run gives it another working directory; an eval before the train reads
    # no checkpoint: the same commands in another order are another run
    for one, two in [
        ("cd /data\npython train.py --out ckpt\n", "python train.py --out ckpt\ncd /data\n"),
        ("python train.py\npython eval.py\n", "python eval.py\npython train.py\n"),
        (
            "X=1\npython a.py --x $X\nX=2\npython b.py --x $X\n",
            "X=1\npython b.py --x 2\npython a.py --x $X\n",
        ),
    ]:
        result = compare(_write(tmp_path, "a.sh", one), _write(tmp_path, "b.sh", two))
        assert {c.dotted for c in result.changes} == {"@order[0]", "@order[1]"}, (one, two)
        first = result.first
        assert first.line_of(("@order", 0)) == first.line_of(("commands", first.data["@order"][0])) > 0
    # a command inserted between them is that one change, never an order change too
    inserted = compare(
        _write(tmp_path, "a.sh", "python train.py\npython eval.py\n"),
        _write(tmp_path, "b.sh", "python train.py\nmkdir -p out\npython eval.py\n"),
    )
    assert [c.dotted for c in inserted.changes] == ["commands.mkdir"]


def test_a_command_run_in_the_background_is_another_run(tmp_path):
    # `python t.py &` runs beside what follows; a job script that ends without `wait` kills it
    fg = _write(tmp_path, "a.sh", "python t.py --x 1\nwait\n")
    bg = _write(tmp_path, "b.sh", "python t.py --x 1 &\nwait\n")
    assert [c.dotted for c in compare(fg, bg).changes] == ['commands["t.py"].@when']
    # what it binds is gone after it, as in a subshell
    bound = _write(tmp_path, "c.sh", "X=1 &\npython t.py --x $X\n")
    assert compare(bound, bound).first.data["commands"]["t.py"]["--x"].source == "$X"


def test_a_negative_zero_is_a_change_in_every_format(tmp_path):
    # each loader reads `-0.0` as the negative zero, which a program prints and names apart
    for suffix, negative, positive in (
        ("yaml", "lr: -0.0\n", "lr: 0.0\n"),
        ("json", '{"lr": -0.0}', '{"lr": 0.0}'),
        ("toml", "lr = -0.0\n", "lr = 0.0\n"),
        ("py", "lr = -0.0\n", "lr = 0.0\n"),
        ("sh", "python t.py --lr -0.0 a.lr=-0.0\n", "python t.py --lr 0.0 a.lr=0.0\n"),
    ):
        a = _write(tmp_path, f"a.{suffix}", negative)
        b = _write(tmp_path, f"b.{suffix}", positive)
        assert len(compare(a, b).changes) == (2 if suffix == "sh" else 1), suffix
        assert compare(a, a).changes == []


def test_a_hydra_package_header_is_compared_where_the_file_is_not_composed(tmp_path):
    # Hydra places a group's option by its `# @package` header: `_global_` puts its keys at the root
    a = _write(tmp_path, "a.yaml", "# @package _global_\ntrainer:\n  epochs: 3\n")
    b = _write(tmp_path, "b.yaml", "trainer:\n  epochs: 3\n")
    c = _write(tmp_path, "c.yaml", "# fast runs\n# @package _global_\ntrainer:\n  epochs: 3\n")
    changes = compare(a, b).changes
    assert [(ch.dotted, ch.old) for ch in changes] == [("@package", "_global_")]
    assert compare(a, b).first.lines[("@package",)] == 1
    # after a plain comment Hydra reads no header: that line is a comment
    assert compare(b, c).changes == []


def test_a_call_inserted_before_identical_runs_is_an_insertion_not_a_reordering(tmp_path):
    head = "run() { python t.py --a $1; }\n"
    a = _write(tmp_path, "a.sh", head + "run 1\nrun 2\n")
    b = _write(tmp_path, "b.sh", head + "run 0\nrun 1\nrun 2\n")
    changes = compare(a, b).changes
    assert [c.kind for c in changes] == ["added", "added"]
    assert not any(c.dotted.startswith("@order") for c in changes)
    # the same runs swapped are still taken in another order
    c = _write(tmp_path, "c.sh", head + "run 2\nrun 1\n")
    assert any(ch.dotted.startswith("@order") for ch in compare(a, c).changes)
    d = _write(tmp_path, "d.sh", "python t.py --s 1\npython t.py --s 2\n")
    e = _write(tmp_path, "e.sh", "python t.py --s 2\npython t.py --s 1\n")
    assert compare(d, e).changes


# a child config naming its bases, by the way it names them
_CHILDREN = {
    "_base_": "_base_ = ['./base.py']\nx = 1\n",
    "read_base()": "from mmengine.config import read_base\nwith read_base():\n    from .base import *\n",
    "a relative import": "from .base import lr\nx = lr\n",
    "defaults": "defaults:\n  - base\n  - _self_\nx: 1\n",
}


@pytest.mark.parametrize("named", list(_CHILDREN))
def test_bases_not_followed_are_said_so(tmp_path, named):
    # without --resolve-bases two children alike are equal whatever their bases hold: never silently
    suffix = ".yaml" if named == "defaults" else ".py"
    for side, base in (("a", "lr{}1\n"), ("b", "lr{}2\n")):
        (tmp_path / side).mkdir()
        (tmp_path / side / f"c{suffix}").write_text(_CHILDREN[named])
        (tmp_path / side / f"base{suffix}").write_text(base.format(": " if suffix == ".yaml" else " = "))
    a, b = str(tmp_path / "a" / f"c{suffix}"), str(tmp_path / "b" / f"c{suffix}")
    result = compare(a, b)
    assert result.changes == []
    assert [w.split(": ")[0] for w in result.warnings] == [f"{a} names bases ({named}) that are not read"] + [
        f"{b} names bases ({named}) that are not read"
    ]
    assert not compare(a, b, resolve_bases=True).warnings


def test_a_hydra_defaults_list_in_another_order_is_a_change_where_not_composed(tmp_path):
    # Hydra merges the list in order, the later entry winning where two options write one key (an
    # option with a `_global_` header, `group@pkg` entries sharing a package): only composing tells
    # whether they do, so another order is a change, at the lines of the entries moved
    listed = "defaults:\n  - {}\n  - {}\n  - override /exp: fast\n  - _self_\ntrainer:\n  lr: 1\n"
    a = _write(tmp_path, "a.yaml", listed.format("model: llama", "optim@trainer: adam"))
    b = _write(tmp_path, "b.yaml", listed.format("optim@trainer: adam", "model: llama"))
    found = compare(a, b)
    assert [(c.dotted, c.old, c.new) for c in found.changes] == [
        ("defaults.@order", "model, optim@trainer, _self_", "optim@trainer, model, _self_")
    ]
    assert found.first.lines[("defaults", "@order")] == found.second.lines[("defaults", "@order")] == 2
    # one entry moved is one change; names holding the separator are listed, never joined alike
    e = _write(tmp_path, "e.yaml", "defaults:\n  - a: x\n  - b: y\n  - c: z\n")
    f = _write(tmp_path, "f.yaml", "defaults:\n  - c: z\n  - a: x\n  - b: y\n")
    assert [(c.dotted, c.new) for c in compare(e, f).changes] == [("defaults.@order", "c, a, b, _self_")]
    g = _write(tmp_path, "g.yaml", "defaults:\n  - a, b: x\n  - c: y\n")
    h = _write(tmp_path, "h.yaml", "defaults:\n  - c: y\n  - a, b: x\n")
    assert [c.dotted for c in compare(g, h).changes] == ["defaults.@order[0]", "defaults.@order[1]"]
    # an option changed in place, or a group inserted, is that change alone
    c = _write(tmp_path, "c.yaml", listed.format("model: qwen", "optim@trainer: adam"))
    assert [ch.dotted for ch in compare(a, c).changes] == ["defaults.model"]
    # ... also before `_self_` or a plain config name, whose places are compared as `@order` too
    inserted = listed.replace("  - _self_", "  - data: gsm8k\n  - base\n  - _self_")
    d = _write(tmp_path, "d.yaml", inserted.format("model: llama", "optim@trainer: adam"))
    assert [ch.dotted for ch in compare(a, d).changes] == ["defaults.base", "defaults.data"]
    moved = _write(
        tmp_path,
        "m.yaml",
        inserted.replace("  - _self_\n", "")
        .replace("defaults:\n", "defaults:\n  - _self_\n")
        .format("model: llama", "optim@trainer: adam"),
    )
    assert [ch.dotted for ch in compare(d, moved).changes] == ["defaults.@order"]


_SCALARS = [
    "1e-3",
    "'1e-3'",
    "0.001",
    "yes",
    "'yes'",
    "true",
    "on",
    "0o10",
    "'0o10'",
    "8",
    "010",
    "10",
    ".inf",
    "0x10",
]


def test_a_plain_yaml_scalar_two_readings_tell_apart_is_a_change(tmp_path):
    # a plain YAML file's consumer may read it as PyYAML (YAML 1.1: `yaml.safe_load`, TRL) or as
    # OmegaConf/ruamel (YAML 1.2 floats and octals): a pair either tells apart is a change; before,
    # `lr: 1e-3` against `lr: '1e-3'` (one string to PyYAML, a float to OmegaConf) was "no differences"
    import yaml
    from omegaconf import OmegaConf

    def readings(text: str) -> list[str]:
        pyyaml, omega = yaml.safe_load(text)["x"], OmegaConf.to_container(OmegaConf.create(text))["x"]
        return [f"{type(v).__name__}:{v!r}" for v in (pyyaml, omega)]

    for i, one in enumerate(_SCALARS):
        for two in _SCALARS[i + 1 :]:
            a = _write(tmp_path, "a.yaml", f"x: {one}\n")
            b = _write(tmp_path, "b.yaml", f"x: {two}\n")
            if readings(f"x: {one}\n") != readings(f"x: {two}\n"):
                assert compare(a, b).changes, (one, two)


_DECLARED = ["yes", "true", "on", "'on'", "017", "15", "0o17", "'0o17'", "1:30", "90"]


@pytest.mark.parametrize("directive", ["%YAML 1.2", "%YAML 1.1"])
def test_a_yaml_directive_names_a_reading_that_may_tell_a_pair_apart(tmp_path, directive):
    # A YAML 1.2 loader (ruamel.yaml) reads a document as its `%YAML` directive says; PyYAML reads
    # every one as 1.1. Before, `%YAML 1.2` files with `yes` against `true` (a string and a bool to
    # ruamel) were "no differences", and `%YAML 1.1` ones with `0o17` against `15` under --yaml 1.2.
    import warnings

    import ruamel.yaml  # in every test environment: check-jsonschema, a dev pin, needs it
    import yaml

    def ruamel_reads(text: str) -> str:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # its YAML 1.1 float without a dot
            value = ruamel.yaml.YAML(typ="safe", pure=True).load(text)["x"]
        return f"{type(value).__name__}:{value!r}"

    def pyyaml_reads(text: str) -> str:
        value = yaml.safe_load(text)["x"]
        return f"{type(value).__name__}:{value!r}"

    for i, one in enumerate(_DECLARED):
        for two in _DECLARED[i + 1 :]:
            texts = [f"{directive}\n---\nx: {value}\n" for value in (one, two)]
            a, b = _write(tmp_path, "a.yaml", texts[0]), _write(tmp_path, "b.yaml", texts[1])
            by_ruamel = ruamel_reads(texts[0]) != ruamel_reads(texts[1])
            if by_ruamel or pyyaml_reads(texts[0]) != pyyaml_reads(texts[1]):
                assert compare(a, b).changes, (directive, one, two)
            if by_ruamel:
                assert compare(a, b, yaml_version="1.2").changes, (directive, one, two)
