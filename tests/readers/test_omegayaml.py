"""YAML read as OmegaConf reads it: scalars (through omegaconf when installed, its rules otherwise),
node interpolations resolved, resolver calls never, and Hydra / NeMo-RL `defaults:` composed."""

from __future__ import annotations

import math

import pytest
import yaml
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from sweepgen.cli import main
from sweepgen.readers.model import NotEvaluated
from sweepgen.readers.structured import omegayaml
from sweepgen.readers.structured.yamlfile import read_yaml

# What OmegaConf 2.3.0 reads for each plain scalar (`OmegaConf.create(f"v: {text}")`); the full lane,
# which carries the `diff` extra, checks this table against omegaconf itself.
OMEGACONF_READS = [
    ("1e-5", 1e-05), ("1.0e-5", 1e-05), ("1e5", 100000.0), ("-2E+3", -2000.0), ("1_000", 1000),
    ("0x1F", 31), ("0o17", "0o17"), ("017", 15), ("on", True), ("yes", True), ("No", False),
    ("true", True), ("null", None), ("~", None), ("2024-01-01", "2024-01-01"), ("12:30", 750),
    ("1:30:00.5", 5400.5), (".inf", math.inf), ("-.Inf", -math.inf), (".nan", math.nan), ("3.", 3.0),
    (".5", 0.5), ("+1", 1), ("1e-5x", "1e-5x"), ("v1.0", "v1.0"), ("0.1.2", "0.1.2"), ("1__0", 10),
    ("_1", "_1"),
]  # fmt: skip


def _builtin(text: str):
    tag = omegayaml._builtin_resolver().resolve(yaml.ScalarNode, text, (True, False))
    return omegayaml._CONSTRUCTOR.construct_object(yaml.ScalarNode(tag, text))


def _same(a, b) -> bool:
    return type(a) is type(b) and (a == b or (isinstance(a, float) and math.isnan(a) and math.isnan(b)))


@pytest.mark.parametrize("text, expected", OMEGACONF_READS)
def test_the_builtin_rules_read_scalars_as_omegaconf_does(text, expected):
    assert _same(_builtin(text), expected), (text, _builtin(text))


@pytest.mark.train  # the full lane installs the `diff` extra (omegaconf) with the others
@pytest.mark.parametrize("text, expected", OMEGACONF_READS)
def test_the_table_is_omegaconfs_reading_and_the_reader_uses_omegaconf(text, expected):
    from omegaconf import OmegaConf

    assert _same(OmegaConf.create(f"v: {text}")._get_node("v")._value(), expected)
    assert _same(omegayaml.plain_scalar_omegaconf(text), expected)
    assert type(omegayaml._resolver()).__name__ == "OmegaConfLoader"  # omegaconf's own loader


def test_omegaconf_reading_differs_from_pyyaml_where_it_says():
    assert _builtin("1e-5") == 1e-5 and yaml.safe_load("v: 1e-5")["v"] == "1e-5"
    assert _builtin("2024-01-01") == "2024-01-01"  # a date stays a string


def _read(text: str):
    return read_yaml(text, "c.yaml", "omegaconf")


def test_node_interpolations_resolve_absolute_relative_and_inside_strings():
    data = _read("a:\n  b: 3\n  c: ${.b}\nd: ${a.b}\ne: run_${a.b}_x\nf: ${a}\n").data
    assert data == {"a": {"b": 3, "c": 3}, "d": 3, "e": "run_3_x", "f": {"b": 3, "c": 3}}


def test_resolver_calls_missing_keys_and_cycles_stay_not_evaluated(monkeypatch):
    monkeypatch.setenv("HOME", "/home/someone")  # never read: oc.env is not called
    data = _read(
        "p: fp32\nh: ${oc.env:HOME}\nn: x_${oc.env:USER}_${p}\nm: ${missing}\nc1: ${c2}\nc2: ${c1}\n"
    ).data
    assert data["h"] == NotEvaluated("${oc.env:HOME}")
    assert data["n"] == NotEvaluated("x_${oc.env:USER}_fp32")  # the node reference beside it resolved
    assert data["m"] == NotEvaluated("${missing}")
    assert isinstance(data["c1"], NotEvaluated)


def _diff(tmp_path, a: str, b: str, *args: str, files: dict[str, str] | None = None):
    for name, text in {"a.yaml": a, "b.yaml": b, **(files or {})}.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    return CliRunner().invoke(main, ["diff", str(tmp_path / "a.yaml"), str(tmp_path / "b.yaml"), *args])


def test_omegaconf_is_the_default_when_either_file_uses_its_features(tmp_path):
    result = _diff(tmp_path, "eps: 1e-8\nd: 4\nx: ${d}\n", "eps: 1.0e-8\nd: 4\nx: 4\n")
    assert (result.exit_code, result.stdout) == (0, "no differences\n")
    assert "reads as 1e-08 in OmegaConf, '1e-8' in YAML 1.1" in result.stderr  # the warning stays
    quoted = _diff(tmp_path, "lr: 1e-5\nx: ${lr}\n", 'lr: "1e-5"\nx: ${lr}\n')
    assert quoted.exit_code == 1 and "lr: 1e-05 (float) -> '1e-5' (str)" in quoted.stdout


def test_plain_yaml_stays_pyyaml_unless_asked(tmp_path):
    assert _diff(tmp_path, "eps: 1e-8\n", "eps: 1.0e-8\n").exit_code == 1
    assert _diff(tmp_path, "eps: 1e-8\n", "eps: 1.0e-8\n", "--yaml", "omegaconf").exit_code == 0


HYDRA = {"model/small.yaml": "defaults:\n  - base\ndim: 256\n", "model/base.yaml": "layers: 4\n",
         "optim/adam.yaml": "lr: 1e-4\n", "root.yaml": "seed: 1\n"}  # fmt: skip


def test_hydra_group_and_file_defaults_are_composed_under_resolve_bases(tmp_path):
    a = "defaults:\n  - root\n  - model: small\n  - optim: adam\n  - _self_\nlr: ${optim.lr}\nseed: 2\n"
    b = "defaults:\n  - root\n  - model: small\n  - optim: adam\n  - _self_\nlr: 1.0e-4\nseed: 2\n"
    same = _diff(tmp_path, a, b, "--resolve-bases", files=HYDRA)
    assert (same.exit_code, same.stdout) == (0, "no differences\n")
    changed = _diff(tmp_path, a, b.replace("model: small", "model: base"), "--resolve-bases", files=HYDRA)
    assert changed.stdout == "model.dim: 256 -> <absent>\n1 change\n"


def test_nemo_rl_file_defaults_chain_and_a_missing_file(tmp_path):
    files = {"base.yaml": "x: 1\ny: {a: 1, b: 2}\n", "mid.yaml": "defaults: base.yaml\ny: {b: 3}\n"}
    result = _diff(
        tmp_path, "defaults: mid.yaml\nx: 5\n", "x: 5\ny: {a: 1, b: 3}\n", "--resolve-bases", files=files
    )
    assert (result.exit_code, result.stdout) == (0, "no differences\n")
    missing = _diff(tmp_path, "defaults: nope.yaml\n", "x: 1\n", "--resolve-bases")
    assert missing.exit_code == 2 and "`defaults:` entry `nope.yaml` not found" in missing.stderr
    assert "Traceback" not in missing.output


def test_hydras_own_groups_are_data_not_files(tmp_path):
    a = "defaults:\n  - override hydra/launcher: submitit_slurm\n  - _self_\nx: 1\n"
    result = _diff(tmp_path, a, a.replace("submitit_slurm", "basic"), "--resolve-bases")
    assert result.stdout == "hydra.@defaults.hydra/launcher: 'submitit_slurm' -> 'basic'\n1 change\n"


def test_references_doubling_at_every_level_are_bounded_and_kept_as_source():
    """`k0: ${k1}${k1}`, `k1: ${k2}${k2}`... is 2^depth steps and a 2^depth string: a pull request's
    config diffed in CI hung `diff`. Past the bounds a value stays its source."""
    depth = 20
    data = {f"k{i}": f"${{k{i + 1}}}${{k{i + 1}}}" for i in range(depth)}
    data[f"k{depth}"] = "x" * 10
    data["plain"] = "${k15}"
    out = omegayaml.resolve_interpolations(data, "bomb.yaml")
    assert isinstance(out["k0"], NotEvaluated) and out["k0"].source == "${k1}${k1}"
    assert out["k19"] == "x" * 20 and out["plain"] == "x" * 320  # small ones still resolve


@pytest.mark.parametrize(
    ("written", "read"),
    [
        # OmegaConf's grammar (checked against omegaconf 2.3): backslashes right before `${` escape
        # it (an odd run) or themselves (an even run), half of them kept; others stay as written
        ("\\${a}", "${a}"),
        ("x\\${a}y", "x${a}y"),
        ("\\\\${a}", "\\1"),
        ("\\\\\\${a}", "\\${a}"),
        ("a\\\\b${a}", "a\\\\b1"),
        ("${a}\\", "1\\"),
        ("\\${a}_${b.c}", "${a}_z"),
    ],
)
def test_a_backslash_before_an_interpolation_is_omegaconf_s_escape(written, read):
    assert omegayaml.resolve_interpolations({"a": 1, "b": {"c": "z"}, "s": written}, "f")["s"] == read


def test_an_escaped_interpolation_is_never_equal_to_what_it_would_resolve_to(tmp_path):
    (tmp_path / "a.yaml").write_text("a: 1\nb: \\${a}\n")
    (tmp_path / "b.yaml").write_text("a: 1\nb: \\1\nc: ${a}\n")
    result = CliRunner().invoke(main, ["diff", str(tmp_path / "a.yaml"), str(tmp_path / "b.yaml")])
    assert result.exit_code == 1 and "b: '${a}' -> '\\\\1'" in result.output


# `oc.select` as omegaconf 2.3 evaluates it (the oracle, below): a key's value, or None where it
# names nothing (or `???`) and no default is given; a default is typed by OmegaConf's grammar, so
# where it would be taken the call stays not evaluated
_SELECTS = [
    (
        "a:\n  b: 1\nx: ${oc.select:a.b}\ny: ${oc.select:a.c}\nz: ${oc.select:a.b , 5}\n"
        "w: run_${oc.select:a.b,0}\n",
        "xyzw",
    ),
    ("a:\n  b: ???\nx: ${oc.select:a.b,3}\ny: ${oc.select:a.b}\nv: run_${oc.select:a.c}\n", "yv"),
    ("a:\n  b: 1\n  c: ${oc.select:.b,0}\n  d: ${oc.select:..x,7}\nx: 4\n", "a"),
    ("a:\n  b: ${c}\nc: 5\nx: ${oc.select:a.b,0}\ny: ${oc.select:a}\n", "xy"),
    ("l: [1, 2]\ny: ${oc.select:l.5,9}\nz: ${oc.select:l.1,9}\n", "z"),
    ("a:\n  b: null\nx: ${oc.select:a.b,3}\ny: ${oc.select:'a.b',3}\n", "x"),
    ("p: fp32\nx: ${oc.select:q,1}_${p}\n", "p"),
]
# ... and references written with brackets (`${l[1]}`, `${a[b]}`), the same references as with dots
_BRACKETS = [
    ("a:\n  b: [1, {c: 2}]\nx: ${a.b[1].c}\ny: ${a[b][0]}\nw: r_${a.b[0]}\n", "xyw"),
    ("a:\n  b: 1\n  c: ${.b}\n  d: ${..a[b]}\n", "a"),
    ("a:\n  b-c: 1\nx: ${a[b-c]}\n", "x"),
    # a node on the way that is itself an interpolation is resolved first
    ("a:\n  x: 1\nc: ${a}\nv: ${c.x}\nw: ${oc.select:c.x}\ny: ${oc.select:c.z,4}\n", "vw"),
    ("a: 'on'\nc: run_${a}\nd:\n  x: ${oc.select:c.x}\n", "d"),
]


@pytest.mark.parametrize(("text", "evaluated"), _SELECTS + _BRACKETS)
def test_oc_select_is_evaluated_as_omegaconf_does(text, evaluated):
    from omegaconf import OmegaConf

    expected = OmegaConf.to_container(OmegaConf.create(text), resolve=True)
    data = _read(text).data
    known = {k: v for k, v in data.items() if not isinstance(v, NotEvaluated)}
    assert set(known) >= set(evaluated)
    assert known == {k: expected[k] for k in known}
    assert all("${p}" not in str(v) for v in data.values())  # a reference beside it is resolved


def test_a_node_oc_select_reads_changed_is_a_change(tmp_path):
    # the selected key's value, not the call's text: the same call over another value differs
    result = _diff(tmp_path, "a:\n  b: 1\nx: ${oc.select:a.b,0}\n", "a:\n  b: 1\nx: ${oc.select:a.c,0}\n")
    assert result.exit_code == 1
    assert _read("a:\n  b: 1\nx: ${oc.select:a.b,0}\n").data["x"] == 1
    assert _read("x: ${oc.select:a.b,0}\n").data["x"] == NotEvaluated("${oc.select:a.b,0}")


_BLANKS_APART = [
    # OmegaConf's grammar drops blanks beside an argument's `,`, around the name and after the `:`
    ("x: ${oc.env:NOPE,1}\n", "x: ${oc.env:NOPE, 1}\n", True),
    ("x: ${oc.env:NOPE,1}\n", "x: '${ oc.env : NOPE , 1 }'\n", True),
    ("x: ${my.res:[1,2]}\n", "x: ${my.res:[1 , 2]}\n", True),
    # blanks inside an argument, in quotes, after an escaped comma or outside the call are the value's
    ("x: ${r:a b}\n", "x: ${r:a  b}\n", False),
    ("x: ${r:'a ',b}\n", "x: ${r:'a',b}\n", False),
    ("x: ${r:a\\, b}\n", "x: ${r:a\\,b}\n", False),
    ("x: a ${r:b}\n", "x: a  ${r:b}\n", False),
]


@pytest.mark.parametrize(("one", "two", "same"), _BLANKS_APART)
def test_blanks_omegaconf_drops_in_a_resolver_call_are_no_change(tmp_path, one, two, same):
    (tmp_path / "a.yaml").write_text(one)
    (tmp_path / "b.yaml").write_text(two)
    run = CliRunner().invoke(main, ["diff", str(tmp_path / "a.yaml"), str(tmp_path / "b.yaml")])
    assert run.exit_code == (0 if same else 1), run.output


_ARGUMENT = st.sampled_from(["a", "a b", "1", "'x '", '"y,z"', "[1,2]", "{k: 1}", "a\\,b", "${n}"])
_BLANK = st.sampled_from(["", " ", "  ", "\t"])


def _spelled(draw: st.DrawFn, arguments: list[str]) -> str:
    """A call of ``r`` on ``arguments``, with blanks drawn around each part."""
    spaced = [draw(_BLANK) + a + draw(_BLANK) for a in arguments]
    return "${" + draw(_BLANK) + "r" + draw(_BLANK) + ":" + ",".join(spaced) + "}"


@st.composite
def _two_calls(draw: st.DrawFn) -> tuple[str, str]:
    arguments = draw(st.lists(_ARGUMENT, min_size=1, max_size=3))
    other = draw(st.one_of(st.just(arguments), st.lists(_ARGUMENT, min_size=1, max_size=3)))
    return _spelled(draw, arguments), _spelled(draw, other)


@pytest.mark.train  # the full lane installs the `diff` extra (omegaconf) with the others
@settings(deadline=None, max_examples=300)
@given(calls=_two_calls())
def test_property_resolver_calls_read_alike_exactly_where_omegaconf_reads_them_alike(calls):
    from omegaconf import OmegaConf

    if not OmegaConf.has_resolver("r"):
        OmegaConf.register_new_resolver("r", lambda *a: repr(a))
    one, two = calls
    seen = [str(OmegaConf.create({"n": 5, "v": call}).v) for call in calls]
    assert (omegayaml._tight(one) == omegayaml._tight(two)) == (seen[0] == seen[1]), (one, two)


@pytest.mark.parametrize("empty", ["", "# only a comment\n", "~\n", "null\n", "---\n"])
def test_an_empty_document_is_an_empty_config_to_omegaconf_and_none_to_pyyaml(tmp_path, empty):
    # OmegaConf.load reads an empty or null document as {}; PyYAML's safe_load as None
    (tmp_path / "a.yaml").write_text(empty)
    (tmp_path / "b.yaml").write_text("{}\n")
    a, b = str(tmp_path / "a.yaml"), str(tmp_path / "b.yaml")
    assert CliRunner().invoke(main, ["diff", "--yaml", "omegaconf", a, b]).exit_code == 0
    pyyaml = CliRunner().invoke(main, ["diff", a, b])
    assert pyyaml.stdout == "(root): None (NoneType) -> {} (dict)\n1 change\n"
