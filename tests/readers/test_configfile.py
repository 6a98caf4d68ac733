"""Loading configs for diff: chosen by suffix, YAML 1.1/1.2 rules, errors with file:line:col.
Shell scripts: tests/readers/test_shellconfig.py."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from sweepgen.errors import UserError
from sweepgen.readers.configfile import read_config
from sweepgen.readers.python.pyast import Ref

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "pyconfigs"


def load_config(ref: str, **options: object) -> object:
    """The data ``read_config`` read (``diff`` compares the data and places changes with the rest)."""
    return read_config(ref, **options).data  # type: ignore[arg-type]


def _write(tmp_path: Path, name: str, text: str) -> str:
    path = tmp_path / name
    path.write_text(textwrap.dedent(text))
    return str(path)


def test_yaml_1_2_rules_on_request(tmp_path):
    path = _write(tmp_path, "c.yaml", "lr: 1e-5\nflag: on\nanswer: no\nlabels: {1: cat}\n")
    assert load_config(path, yaml_version="1.2") == {
        "lr": 1e-5,
        "flag": "on",
        "answer": "no",
        "labels": {1: "cat"},
    }


def test_foreign_yaml_is_read_as_1_1_like_pyyaml_and_omegaconf(tmp_path):
    # the programs that consume these files read YAML 1.1 (`on` is True, 1e-5 a string)
    path = _write(tmp_path, "c.yaml", "lr: 1e-5\nflag: on\nanswer: no\nn: 100_000\nlabels: {1: cat}\n")
    assert load_config(path) == {
        "lr": "1e-5",
        "flag": True,
        "answer": False,
        "n": 100000,
        "labels": {1: "cat"},
    }


def test_yml_suffix_and_empty_document(tmp_path):
    assert load_config(_write(tmp_path, "c.yml", "")) is None


def test_yaml_duplicate_key_is_an_error_with_its_line(tmp_path):
    path = _write(tmp_path, "c.yaml", "a: 1\nb: 2\na: 3\n")
    with pytest.raises(UserError) as info:
        load_config(path)
    assert (info.value.location.path, info.value.location.line) == (path, 3)
    assert "duplicate key" in info.value.message


def test_yaml_syntax_error_has_line_and_column(tmp_path):
    path = _write(tmp_path, "c.yaml", "a:\n  b: [1, 2\nc: 3\n")
    with pytest.raises(UserError) as info:
        load_config(path)
    assert info.value.location.line >= 2 and info.value.location.col >= 1


def test_json(tmp_path):
    path = _write(tmp_path, "c.json", '{"a": {"b": [1, 2.0, true, null]}}')
    assert load_config(path) == {"a": {"b": [1, 2.0, True, None]}}


def test_json_syntax_error_has_line_and_column(tmp_path):
    path = _write(tmp_path, "c.json", '{\n  "a": 1,\n  "b": }\n')
    with pytest.raises(UserError) as info:
        load_config(path)
    assert (info.value.location.line, info.value.location.col) == (3, 8)


@pytest.mark.parametrize(
    ("text", "hint"),
    [
        ('{"zero_optimization": {"stage": 2}} // zero-2\n', "no comments"),
        ('{\n  "fp16": {"enabled": "auto"}, /* x */\n  "a": 1}\n', "no comments"),
        ('{"train_batch_size": "auto",}\n', "trailing comma"),
        ("[1, 2,]\n", "trailing comma"),
        ("{'a': 1}\n", "quotes are double"),
    ],
)
def test_json_syntax_errors_say_how_to_fix_them(tmp_path, text, hint):
    # jsonc/json5 as some DeepSpeed users write it: refused (json.load refuses it too), with the fix
    with pytest.raises(UserError) as info:
        load_config(_write(tmp_path, "ds.json", text))
    assert hint in (info.value.hint or "")


def test_json_duplicate_key_is_an_error(tmp_path):
    path = _write(tmp_path, "c.json", '{\n  "b": {"a": 1},\n  "c": 0, "a": 1,\n\t"a": 2}')
    with pytest.raises(UserError, match="duplicate key 'a'") as info:
        load_config(path)
    assert (info.value.location.line, info.value.location.col) == (4, 2)


def test_toml(tmp_path):
    path = _write(tmp_path, "c.toml", "[training]\nseed = 42\nlr = 3e-6\ntags = ['a']\n")
    assert load_config(path) == {"training": {"seed": 42, "lr": 3e-6, "tags": ["a"]}}


def test_toml_error_has_line_and_column(tmp_path):
    path = _write(tmp_path, "c.toml", "[training]\nseed = 42\nseed = 43\n")
    with pytest.raises(UserError) as info:
        load_config(path)
    assert info.value.location.line == 3 and info.value.location.col >= 1
    assert "invalid TOML" in info.value.message and "line 3" not in info.value.message


def test_python_goes_through_the_ast_reader():
    cfg = load_config(str(FIXTURES / "faster_rcnn" / "faster_rcnn_r101_fpn_1x_coco.py"))
    assert cfg["model"]["backbone"]["depth"] == 101


def test_unknown_suffix_is_refused_not_guessed(tmp_path):
    path = _write(tmp_path, "c.ini", "[a]\nb = 1\n")
    with pytest.raises(UserError) as info:
        load_config(path)
    assert ".yaml" in info.value.hint and ".sbatch" in info.value.hint


def test_missing_file_and_directory(tmp_path):
    with pytest.raises(UserError, match="no such file"):
        load_config(str(tmp_path / "nope.yaml"))
    with pytest.raises(UserError, match="not a regular file"):
        load_config(str(tmp_path))


def test_python_ref_is_loaded_as_ref():
    cfg = load_config(str(FIXTURES / "flink_sweep_identity.py"))
    assert type(cfg["sweep"]["kwargs"]["config"]["kwargs"]["sampler"]["kwargs"]["dtype"]) is Ref


@pytest.mark.parametrize(
    "call", ["dict(a=1, **base)", "Adam(a=1, **base)", "dict(**base, **dict(a=3))", "dict(**base, a=1)"]
)
def test_a_keyword_given_twice_through_a_spread_is_an_error(tmp_path, call):
    # Python raises TypeError (multiple values for keyword argument 'a'): the config never loads,
    # so it is never equal to one that reads `a=2`
    path = _write(tmp_path, "c.py", f"base = dict(a=2)\ncfg = {call}\n")
    with pytest.raises(UserError, match="keyword argument `a`") as info:
        load_config(path)
    assert info.value.location.line == 2


@pytest.mark.parametrize(
    "rebinder",
    [
        "from base import *",
        "exec('lr = 2')",
        "globals()['lr'] = 2",
        "globals().update(lr=2)",
        "vars().update(lr=2)",
        "setattr(sys.modules[__name__], 'lr', 2)",
        "if flag:\n    exec('lr = 2')",
    ],
)
def test_a_name_read_after_a_statement_that_may_rebind_it_is_not_its_earlier_value(tmp_path, rebinder):
    # the config reads lr=2 (or whatever base.py binds) on one side and 1 on the other
    head = f"import os, sys\nflag = os.environ.get('X')\nlr = 1\n{rebinder}\n"
    one = read_config(_write(tmp_path, "a.py", head + "cfg = dict(lr=lr)\n")).data
    two = read_config(_write(tmp_path, "b.py", head + "cfg = dict(lr=1)\n")).data
    assert one["cfg"] != two["cfg"]
    assert one["lr"] == 1  # where it is bound, its value still shows


def test_a_name_bound_after_a_star_import_is_its_value(tmp_path):
    data = read_config(_write(tmp_path, "a.py", "from base import *\nlr = 1\ncfg = dict(lr=lr)\n")).data
    assert data["cfg"] == {"lr": 1}
