"""Foreign YAML: 1.1 by default (PyYAML/OmegaConf), 1.2 on request, differences listed as warnings,
anchors and merge keys, Hydra defaults as group -> option, specs always 1.2."""

from __future__ import annotations

import pytest
import yaml
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from sweepgen.cli import main
from sweepgen.errors import ConfigError, UserError
from sweepgen.readers.diff import diff
from sweepgen.readers.model import NotEvaluated
from sweepgen.readers.structured.yamlfile import read_yaml


def test_versions_and_the_warning_listing_what_they_read_differently():
    text = "use_amp: on\nsteps: 100_000\nlr: 1e-5\nname: x\n"
    old = read_yaml(text, "c.yaml", "1.1")
    new = read_yaml(text, "c.yaml", "1.2")
    assert old.data == {"use_amp": True, "steps": 100000, "lr": "1e-5", "name": "x"}
    assert new.data == {"use_amp": "on", "steps": "100_000", "lr": 1e-5, "name": "x"}
    assert [w.split(":")[1] for w in old.warnings] == ["1", "2", "3"]
    assert "'on' reads as True in YAML 1.1, 'on' in YAML 1.2" in old.warnings[0]


def test_anchors_and_merge_keys():
    data = read_yaml("a: &a {x: 1, y: 2}\nb:\n  <<: *a\n  y: 3\nc: *a\n", "c.yaml").data
    assert data == {"a": {"x": 1, "y": 2}, "b": {"x": 1, "y": 3}, "c": {"x": 1, "y": 2}}


_ANCHORS = {
    "*a": {"xx": 1, "yy": 2},
    "*b": {"yy": 3, "zz": 4},
    "*d": {"xx": 5},
    "*e": {"yy": 2},
    "{yy: 6}": {"yy": 6},
}
_ANCHORED = "a: &a {xx: 1, yy: 2}\nb: &b {yy: 3, zz: 4}\nd: &d {xx: 5}\ne: &e {yy: 2}\n"


def _clash(merges: list[list[str]], own: str) -> bool:
    seen: dict[str, int] = {}
    for name in (n for m in merges for n in m):
        for key, value in _ANCHORS[name].items():
            if seen.setdefault(key, value) != value and key not in own:
                return True
    return False


@settings(deadline=None, max_examples=200)
@given(
    merges=st.lists(
        st.lists(st.sampled_from(sorted(_ANCHORS)), min_size=1, max_size=3), min_size=1, max_size=3
    ),
    own=st.sampled_from(["", "  yy: 7\n"]),
)
def test_merge_keys_merge_as_pyyaml_merges_them_or_are_refused_where_its_versions_differ(merges, own):
    # PyYAML 6.0.3 keeps the first mapping of a `<<` list and the last of several `<<`; 6.0.4 the
    # last of both (the first for a one-letter key): where merged mappings disagree on a key the
    # mapping does not write, the file reads otherwise under each, so it is refused at the `<<`
    body = "".join(f"  <<: [{', '.join(m)}]\n" if len(m) > 1 else f"  <<: {m[0]}\n" for m in merges)
    text = f"{_ANCHORED}c:\n{body}{own}"
    if _clash(merges, own):
        with pytest.raises(UserError, match="merged mappings"):
            read_yaml(text, "c.yaml")
    else:
        assert read_yaml(text, "c.yaml").data == yaml.safe_load(text)  # the oracle: PyYAML itself


def test_duplicate_keys_are_still_errors():
    with pytest.raises(UserError) as info:
        read_yaml("a: 1\nb: 2\na: 3\n", "c.yaml")
    assert info.value.location is not None and info.value.location.line == 3


def test_hydra_defaults_compare_as_group_to_option():
    one = read_yaml("defaults:\n  - model: r50\n  - optim: sgd\n  - base\n  - _self_\n", "c.yaml").data
    assert one["defaults"] == {"model": "r50", "optim": "sgd", "base": "config", "_self_": "own keys"}
    # `_self_` not listed is last, as Hydra places it (where it stands is compared as `@order`)
    two = read_yaml("defaults:\n  - model: r50\n  - optim: sgd\n  - base\n", "c.yaml").data
    assert two == one and list(two["defaults"]) == list(one["defaults"])
    # a plain list of names is not recognisably Hydra's: kept in order
    assert read_yaml("defaults: [a, b]\n", "c.yaml").data == {"defaults": ["a", "b"]}


def test_cli_reads_foreign_yaml_as_1_1_and_specs_as_1_2(tmp_path):
    a, b = tmp_path / "a.yaml", tmp_path / "b.yaml"
    a.write_text("use_amp: on\n")
    b.write_text('use_amp: "on"\n')
    run = CliRunner().invoke(main, ["diff", str(a), str(b)])
    assert run.exit_code == 1 and "use_amp: True (bool) -> 'on' (str)" in run.stdout
    assert "reads as True in YAML 1.1" in run.stderr
    assert CliRunner().invoke(main, ["diff", "--yaml", "1.2", str(a), str(b)]).stdout == "no differences\n"
    spec_a, spec_b = tmp_path / "s1.yaml", tmp_path / "s2.yaml"
    spec_a.write_text("sweepgen: 1\nflag: on\n")
    spec_b.write_text('sweepgen: 1\nflag: "on"\n')
    assert CliRunner().invoke(main, ["diff", str(spec_a), str(spec_b)]).stdout == "no differences\n"


@pytest.mark.parametrize("text", ["x: =\n", "x: [a, =]\n", "x: <<\n", "y: ${z}\nz: 1\nx: =\n"])
def test_a_plain_scalar_pyyaml_cannot_build_is_an_error_at_its_place(tmp_path, text):
    # YAML 1.1 types a plain `=` as !!value and `<<` as a merge key: PyYAML's safe_load and
    # OmegaConf raise there, so the trainer never starts; exit 2 at the scalar, never a traceback
    a, b = tmp_path / "a.yaml", tmp_path / "b.yaml"
    a.write_text(text)
    b.write_text("x: 1\n")
    run = CliRunner().invoke(main, ["diff", str(a), str(b)])
    line = text.count("\n")
    assert run.exit_code == 2 and f"a.yaml:{line}:" in run.stderr and "quote it" in run.stderr
    assert "Traceback" not in run.output


def test_a_plain_equals_sign_is_a_string_key_and_a_1_2_string():
    # PyYAML's flatten_mapping makes a `=` key a string; YAML 1.2 has no !!value at all
    assert read_yaml("=: 1\n", "c.yaml").data == {"=": 1}
    assert read_yaml("x: =\n", "c.yaml", "1.2").data == {"x": "="}


# `!!set`, `!!omap`, `!!pairs`, `!!binary` and `!!timestamp` are built as PyYAML builds them (they
# were compared by their text: a set's order, a binary's line breaks or a date's spelling read as
# changes); the loader is the oracle both ways
_TAGGED_PAIRS = [
    ("s: !!set {a, b}\n", "s: !!set {b, a}\n"),
    ("s: !!set {1, b}\n", 's: !!set {"1", b}\n'),
    ("x: &a foo\ns: !!set {*a : null}\n", "x: &a bar\ns: !!set {*a : null}\n"),
    ("s: !!omap [a: 1, b: 2]\n", "s: !!pairs [a: 1, b: 2]\n"),
    ("s: !!omap [a: 1, b: 2]\n", "s: !!omap [b: 2, a: 1]\n"),
    ("s: !!omap\n  - a: on\n", "s: !!omap [a: true]\n"),
    ("s: !!pairs [a: 1]\n", "s: !!pairs [a: 1.0]\n"),
    ("s: !!binary |\n  aGVs\n  bG8=\n", "s: !!binary aGVsbG8=\n"),
    ("s: !!binary aGVsbG8=\n", "s: !!binary aGVsbA==\n"),
    ("s: !!timestamp 2001-12-14t21:59:43.10-05:00\n", "s: 2001-12-14 21:59:43.10 -5\n"),
    ("s: 2001-12-14\n", "s: !!timestamp 2001-12-14\n"),
    ("s: !!timestamp 2001-12-14T21:59:43Z\n", "s: !!timestamp 2001-12-14T22:59:43+01:00\n"),
]


@pytest.mark.parametrize(("one", "two"), _TAGGED_PAIRS)
def test_standard_tags_are_read_as_pyyaml_builds_them(one, two):
    import yaml

    def loaded(text):  # the loader's values, type-strict, a datetime with its offset
        value = yaml.safe_load(text)["s"]
        offset = value.utcoffset() if hasattr(value, "utcoffset") else None
        return type(value), repr(sorted(value, key=repr) if isinstance(value, set) else value), offset

    changes = diff(read_yaml(one, "a.yaml").data, read_yaml(two, "b.yaml").data)
    assert (changes == []) == (loaded(one) == loaded(two))
    # OmegaConf builds none of them: kept as source there, compared as written
    kept = read_yaml(one, "a.yaml", "omegaconf").data["s"]
    assert isinstance(kept, (NotEvaluated, str))  # a plain date is a string to OmegaConf


def test_a_pairs_tag_on_a_mapping_is_refused_as_pyyaml_refuses_it():
    with pytest.raises(UserError, match="sequence of one-key mappings") as info:
        read_yaml("s: !!omap {a: 1}\n", "c.yaml")
    assert info.value.location is not None and info.value.location.line == 1


def test_a_second_document_is_said_so_not_called_a_syntax_error():
    """`a: 1\\n---\\nb: 2\\n` is valid YAML: "YAML syntax error: but found another document" sent the
    user to fix indentation and quotes."""
    with pytest.raises(ConfigError) as err:
        read_yaml("a: 1\n---\nb: 2\n", "m.yaml")
    assert err.value.message.startswith("the file holds a second YAML document (`---` here)")
    assert str(err.value.location) == "m.yaml:2:1" and "syntax" not in err.value.message


# libyaml (which sweepgen composes with) reads each of these; PyYAML's own loader, which
# yaml.safe_load and OmegaConf use, refuses it: the run would crash on the file
_PYYAML_REFUSES = [
    "lr: 1e-5\t# tuned\n",
    "lr:\t1e-5\n",
    "name: 'run'\t\n",
    "steps: [1,\t2]\n",
    "env: {url: http://h/x?a=1}\n",
    "tags: [a?b]\n",
    "- a\t\n",
]


@pytest.mark.parametrize("text", _PYYAML_REFUSES)
@pytest.mark.parametrize("version", ["1.1", "omegaconf"])
def test_a_file_pyyaml_refuses_is_refused_never_read_as_libyaml_reads_it(text, version):
    assert yaml.load(text, Loader=yaml.CSafeLoader) is not None
    with pytest.raises(yaml.YAMLError):
        yaml.safe_load(text)
    with pytest.raises(ConfigError, match="PyYAML cannot load this file") as err:
        read_yaml(text, "c.yaml", version)
    assert err.value.location is not None and err.value.location.line == 1


def test_diff_of_a_file_pyyaml_refuses_exits_2_at_the_tab(tmp_path):
    (tmp_path / "a.yaml").write_text("seed: 1\nlr: 1e-5\t# tuned\n")
    (tmp_path / "b.yaml").write_text("seed: 1\nlr: 1e-5\n")
    run = CliRunner().invoke(main, ["diff", str(tmp_path / "a.yaml"), str(tmp_path / "b.yaml")])
    assert run.exit_code == 2 and "a.yaml:2:9:" in run.stderr and "Traceback" not in run.stderr


@pytest.mark.parametrize("text", ['a: "x\ty"\n', "a: |\n  x\ty\n", "a: [1]  # ?\t\n", "a: 'x?'\n", "a: x?\n"])
def test_tabs_and_question_marks_pyyaml_reads_stay_read(text):
    assert read_yaml(text, "c.yaml").data == yaml.safe_load(text)


def test_yaml_12_is_not_held_to_pyyaml():
    assert read_yaml("lr:\t1\n", "c.yaml", "1.2").data == {"lr": 1}


@pytest.mark.parametrize(
    "text",
    ['{"a": 1, "b": {"c": [1, {"d": null}], "e": "x"}}', '[\n  {"k": 1},\n  [2, 3],\n  "s"\n]',
     '{\n  "a": {\n    "b": [\n      1,\n      2\n    ]\n  },\n  "\\u00e9\\n": {"\\"q\\"": 3}\n}',
     '"only"', "{}",
     '{"model": {"vocab": {"tok\\u0120x": 0, "a": 1}, "merges": ["a b", "c d"]}}'],
)  # fmt: skip
def test_json_lines_are_the_lines_the_yaml_reader_finds(text):
    """``json_lines`` finds each path's line from the node tree alone (no scalar typed: a 10 MB
    tokenizer.json took 36 s); the full YAML 1.2 reading is its oracle."""
    from sweepgen.readers.structured.yamlfile import json_lines

    assert json_lines(text, "t.json") == read_yaml(text, "t.json", "1.2").lines
