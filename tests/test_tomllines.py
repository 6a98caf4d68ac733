"""Where TOML keys are written: tables, arrays of tables, dotted and quoted keys, and the lines
of multi-line strings and arrays that only look like keys."""

from __future__ import annotations

import sys

import pytest

from sweepgen.formats.tomllines import error_place, key_place, toml_lines

if sys.version_info >= (3, 11):
    import tomllib
else:  # Python 3.10: the same parser as a package, as sweepgen itself reads TOML there
    import tomli as tomllib

TEXT = """# a trainer config
[model]
name = "Qwen/Qwen3-0.6B"
"quoted.key" = 1

[optim]
betas = [
  0.9,
  [1, 2],
]
text = \"\"\"
[not_a_table]
x = 1
\"\"\"
after = 2

[[sampling]]
temperature = 1.0
[[sampling]]
temperature = 0.7
inline = { a = 1 }
a.'b c'.d = 3
"""


def test_every_key_has_the_line_it_is_written_on():
    lines = toml_lines(TEXT)
    assert lines[("model",)] == 2 and lines[("model", "name")] == 3 and lines[("model", "quoted.key")] == 4
    assert lines[("optim", "betas")] == 7 and lines[("optim", "text")] == 11
    assert lines[("optim", "after")] == 15
    assert ("not_a_table",) not in lines and ("optim", "x") not in lines
    assert lines[("sampling", 0, "temperature")] == 18 and lines[("sampling", 1, "temperature")] == 20
    assert lines[("sampling", 1, "inline")] == 21 and lines[("sampling", 1, "a", "b c", "d")] == 22


def test_every_leaf_tomllib_reads_has_a_line_at_or_above_it():
    data = tomllib.loads(TEXT)
    lines = toml_lines(TEXT)

    def paths(value, prefix=()):
        if isinstance(value, dict):
            for key, sub in value.items():
                yield from paths(sub, (*prefix, key))
        elif isinstance(value, list) and value and all(isinstance(v, dict) for v in value):
            for index, sub in enumerate(value):
                yield from paths(sub, (*prefix, index))
        else:
            yield prefix

    for path in paths(data):
        assert any(path[:end] in lines for end in range(len(path), 0, -1)), path


def test_key_place_is_the_line_of_the_deepest_written_key_and_the_column_of_the_last():
    text = "[tool.sweepgen]\nspecs = ['a']\n  limits = {variants = 3}\n[other]\nx = 1\n"
    assert key_place(text, ("tool", "sweepgen", "specs")) == (2, 1)
    assert key_place(text, ("tool", "sweepgen", "limits", "variants")) == (3, 13)
    assert key_place(text, ("tool", "sweepgen", "limits")) == (3, 3)
    assert key_place(text, ("tool", "sweepgen", "missing")) == (1, 7)  # at `sweepgen`
    assert key_place(text, ("nowhere", "x")) == (0, 0)


def test_error_place_reads_tomllib_s_place_and_leaves_the_message():
    for text, place in (("a = 1\nb = [1,\nc = 2\n", (3, 1)), ("a = [\n", (2, 1)), ("a = 1\n[t\n", (2, 3))):
        with pytest.raises(tomllib.TOMLDecodeError) as err:
            tomllib.loads(text)
        message, line, col = error_place(str(err.value), text)
        assert (line, col) == place and "(at " not in message and message, (text, str(err.value))
    assert error_place("no place here", "x") == ("no place here", 0, 0)
