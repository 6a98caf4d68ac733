"""Hypothesis round trips through every reader: a random nested mapping written as YAML,
JSON, TOML, Python assignments, an ml_collections get_config, a Hydra override command line and an
argparse command line reads back as that mapping; equivalent rewrites read back equal."""

from __future__ import annotations

import json
import keyword
import random
import shlex

import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from sweepgen.readers.diff import diff
from sweepgen.readers.python.pyast import read_python
from sweepgen.readers.shell.shellconfig import read_shell
from sweepgen.readers.structured.yamlfile import read_yaml

_RESERVED = {
    "get_config",
    "ml_collections",
    "config",
    "true",
    "false",
    "null",
    "none",
    "yes",
    "no",
    "on",
    "off",
}
_keys = st.from_regex(r"[a-z][a-z0-9_]{0,6}", fullmatch=True).filter(
    lambda k: not keyword.iskeyword(k) and k not in _RESERVED
)
_words = st.from_regex(r"[a-zA-Z][a-zA-Z_/]{0,8}", fullmatch=True).filter(
    lambda w: w.lower() not in _RESERVED and w.lower() not in ("y", "n", "nan", "inf")
)
_floats = st.floats(allow_nan=False, allow_infinity=False, width=64).filter(
    lambda f: f == 0 or abs(f) > 1e-300
)
_scalars = st.one_of(st.integers(-(10**12), 10**12), _floats, st.booleans(), _words)


def _tree(leaves: st.SearchStrategy, depth: int = 3) -> st.SearchStrategy:
    return st.recursive(
        st.dictionaries(_keys, leaves, min_size=1, max_size=4),
        lambda inner: st.dictionaries(_keys, leaves | inner, min_size=1, max_size=4),
        max_leaves=12,
    )


_mappings = _tree(_scalars | st.lists(st.integers(-100, 100), max_size=3))


def _same(a: object, b: object) -> bool:
    return diff(a, b) == []


# structured formats --------------------------------------------------------------------------------


@settings(max_examples=150, deadline=None)
@given(_mappings)
def test_yaml_round_trip(data):
    assert _same(read_yaml(yaml.safe_dump(data), "c.yaml").data, data)


@settings(max_examples=100, deadline=None)
@given(_mappings)
def test_json_round_trip(tmp_path_factory, data):
    from sweepgen.readers.structured.formats import read_json_file

    path = tmp_path_factory.mktemp("j") / "c.json"
    path.write_text(json.dumps(data))
    assert _same(read_json_file(path).data, data)


def _toml_value(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, str):
        return json.dumps(value)
    if isinstance(value, list):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    assert isinstance(value, dict)
    return "{" + ", ".join(f"{k} = {_toml_value(v)}" for k, v in value.items()) + "}"


@settings(max_examples=100, deadline=None)
@given(_mappings)
def test_toml_round_trip(tmp_path_factory, data):
    from sweepgen.readers.structured.formats import read_toml_file

    path = tmp_path_factory.mktemp("t") / "c.toml"
    path.write_text("".join(f"{k} = {_toml_value(v)}\n" for k, v in data.items()))
    assert _same(read_toml_file(path).data, data)


# Python --------------------------------------------------------------------------------------------


@settings(max_examples=150, deadline=None)
@given(_mappings, st.booleans())
def test_python_assignments_round_trip(data, docstring):
    source = ('"""A config."""\n' if docstring else "") + "".join(f"{k} = {v!r}\n" for k, v in data.items())
    assert _same(read_python(source).data, data)


def _ml_lines(prefix: str, data: dict, out: list[str]) -> None:
    for key, value in data.items():
        if isinstance(value, dict):
            out.append(f"  {prefix}.{key} = ml_collections.ConfigDict()")
            _ml_lines(f"{prefix}.{key}", value, out)
        else:
            out.append(f"  {prefix}.{key} = {value!r}")


@settings(max_examples=150, deadline=None)
@given(_mappings)
def test_ml_collections_get_config_round_trip(data):
    lines = ["import ml_collections", "", "def get_config():", '  """The config."""']
    lines.append("  config = ml_collections.ConfigDict()")
    _ml_lines("config", data, lines)
    lines.append("  return config")
    assert _same(read_python("\n".join(lines) + "\n").data, data)


# command lines -------------------------------------------------------------------------------------


def _flat(data: dict, prefix: str = "") -> list[tuple[str, object]]:
    out: list[tuple[str, object]] = []
    for key, value in data.items():
        if isinstance(value, dict):
            out.extend(_flat(value, f"{prefix}{key}."))
        else:
            out.append((prefix + key, value))
    return out


def _hydra(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return f"'{value}'"
    if isinstance(value, list):
        return "[" + ",".join(repr(v) for v in value) + "]"
    return repr(value)


@settings(max_examples=150, deadline=None)
@given(_mappings, st.randoms(use_true_random=False), st.booleans())
def test_hydra_override_command_line_round_trip(data, rng, split):
    tokens = [shlex.quote(f"{path}={_hydra(value)}") for path, value in _flat(data)]
    rng.shuffle(tokens)  # override order does not matter between distinct keys
    joiner = " \\\n    " if split else " "
    script = "python3 -m verl.trainer.main_ppo" + joiner + joiner.join(tokens) + "\n"
    assert _same(
        read_shell(script).data["commands"]["verl.trainer.main_ppo"], {**data, "@launcher": {"python3": {}}}
    )


_flags = st.dictionaries(
    st.from_regex(r"--[a-z][a-z_]{0,7}", fullmatch=True),
    st.one_of(
        st.just(True),
        st.integers(-(10**9), 10**9),
        _floats,
        _words,
        st.lists(st.integers(0, 9) | _words, min_size=2, max_size=3),
    ),
    min_size=1,
    max_size=6,
).filter(
    # a flag that starts another may be argparse's abbreviation of it: their order is data
    # (`@flag order`, tests/readers/test_launcher_spelling.py), so those are not shuffled here
    lambda flags: not any(a != b and b.startswith(a) for a in flags for b in flags)
)


def _argv(flags: dict, rng: random.Random, equals: bool) -> list[str]:
    parts: list[str] = []
    items = list(flags.items())
    rng.shuffle(items)
    for name, value in items:
        if value is True:
            parts.append(name)
        elif isinstance(value, list):
            parts.extend([name, *(shlex.quote(str(v)) for v in value)])
        elif equals:
            parts.append(shlex.quote(f"{name}={value!r}" if isinstance(value, float) else f"{name}={value}"))
        else:
            parts.extend([name, shlex.quote(repr(value) if isinstance(value, float) else str(value))])
    return parts


@settings(max_examples=200, deadline=None)
@given(_flags, st.randoms(use_true_random=False), st.booleans(), st.booleans())
def test_argparse_command_line_round_trip(flags, rng, equals, split):
    joiner = " \\\n    " if split else " "
    script = "torchrun --nproc_per_node 8 train.py" + joiner + joiner.join(_argv(flags, rng, equals)) + "\n"
    command = read_shell(script).data["commands"]["train.py"]
    assert command.pop("@launcher") == {"torchrun": {"--nproc-per-node": 8}}
    order = command.pop("@argv order", list(flags))  # the flags in the order written: a script sees it
    assert sorted(order) == sorted(flags)
    assert _same(command, flags)


@settings(max_examples=150, deadline=None)
@given(_flags, st.randoms(use_true_random=False))
def test_equivalent_command_line_spellings_read_equal(flags, rng):
    """Reordered flags (to a program known to parse them: TRL's), `--f=v` vs `--f v`, `\\` line
    splits and re-indentation, `&>>` vs `>> f 2>&1`."""
    one = "python -m trl.scripts.sft " + " ".join(_argv(flags, rng, False)) + " &>> run.log\n"
    two = (
        "python -m trl.scripts.sft \\\n        "
        + " \\\n  ".join(_argv(flags, rng, True))
        + " >> run.log 2>&1\n"
    )
    assert _same(read_shell(one).data, read_shell(two).data)


@settings(max_examples=100, deadline=None)
@given(st.integers(1, 10**6), st.integers(1, 1000), st.booleans())
def test_constant_arithmetic_and_docstrings_read_equal(a, b, docstring):
    one = f"steps = {a * b}\nlr = {a / b!r}\nname = 'run_{a}'\n"
    two = ('"""Same, computed."""\n' if docstring else "") + (
        f"base = {a}\nsteps = base * {b}  # product\nlr = base / {b}\nname = f'run_{{base}}'\ndel base\n"
    )
    assert _same(read_python(one).data, read_python(two).data)
