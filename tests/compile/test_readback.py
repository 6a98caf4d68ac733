"""A rendered file reads back as its kind, every key once (compile/output/verify/readback.py): a key a
template writes twice (the lock records one value, the trainer runs the last) or text the file's
reader refuses stops the render at the spec's `template:` line, naming the file, line and column;
every file its reader takes, written by that reader's own writer, passes."""

from __future__ import annotations

import json
import shutil
import string
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from sweepgen.cli import main
from sweepgen.compile.output.verify import readback


@pytest.mark.parametrize(
    "suffix, text, line, col, words",
    [
        (".yaml", "lr: 1\nbatch: 2\nlr: 5\n", 3, 1, "key 'lr' is written twice (first on line 1)"),
        (".yml", "opt:\n  lr: 1\n  lr: 2\n", 3, 3, "key 'lr' is written twice"),
        (".yaml", "a: {x: 1, x: 2}\n", 1, 11, "key 'x' is written twice"),
        (".yaml", "---\na: 1\n---\nb: 1\nb: 2\n", 5, 1, "key 'b' is written twice"),  # 2nd document
        (".yaml", "a: [1, 2\nb: 3\n", 2, 2, "YAML readers refuse it"),
        (".json", '{"lr": 1,}\n', 1, 10, "JSON readers refuse it"),
        (".json", '{"opt": {"lr": 1,\n "lr": 2}}\n', 2, 2, "key 'lr' is written twice"),
        (".toml", "lr = 1\nlr = 2\n", 2, 7, "TOML readers refuse it"),
        (".py", "config = dict(lr=1\n", 1, 14, "Python refuses it"),
        (".py", "config = dict(lr=1, lr=2)\n", 1, 21, "Python refuses it"),
        (".py", 'config = {"lr": 1, "bs": 2,\n "lr": 3}\n', 2, 2, "key 'lr' is written twice in one dict"),
        (".py", "x = {1: 'a', 1.0: 'b'}\n", 1, 14, "key 1.0 is written twice"),  # one key to Python
        (".sh", '#!/bin/bash\npython train.py --lr 1 "\n', 2, 1, "bash -n refuses it"),
        (".sbatch", "#!/bin/bash\nif true; then\n  srun python t.py\n", 4, 1, "bash -n refuses it"),
        (".sh", "#!/usr/bin/env -S bash -e\necho 'open\n", 2, 1, "bash -n refuses it"),
        (".sh", "#!/bin/sh\necho 'open\n", 2, 1, "bash -n refuses it"),
        (".sh", "echo 'open\n", 1, 1, "bash -n refuses it"),  # no #! line: run by sh or bash
        # an integer past Python's 4,300-digit conversion limit: a ValueError, not a decode error
        (".json", '{"a": 1,\n "big": ' + "9" * 5000 + "}\n", 2, 9, "Python's JSON reader refuses it"),
        (".toml", "a = 1\nbig = " + "9" * 4301 + "\n", 2, 7, "Python's TOML reader refuses it"),
    ],
)
def test_a_file_its_reader_refuses_or_a_key_twice_is_found_where_it_is(suffix, text, line, col, words):
    problem = readback.READERS[suffix](text)
    assert problem is not None
    assert problem[:2] == (line, col) and words in problem[2], problem


@pytest.mark.parametrize(
    "suffix, text",
    [
        (".yaml", "base: &b {lr: 1}\nrun:\n  <<: *b\n  lr: 2\n"),  # a merge key overrides: no repeat
        (".yaml", "a: {x: 1}\nb: {x: 1}\nlist: [{x: 1}, {x: 2}]\n"),  # one key in two mappings
        (".yaml", "1: int\n'1': str\n"),  # YAML reads these as two keys
        (
            ".yaml",
            "? [a, b]\n: 1\n? [a, b]\n: 2\n",
        ),  # complex keys: not compared (rare, no reader keeps them)
        (".json", '{"a": {"x": 1}, "b": {"x": 1}}'),
        (".py", "a = {'x': 1}\nb = {'x': 1}\nc = {x: 1, x: 2}\n"),  # a name's value is not known here
        (".sh", "#!/bin/bash\ncase $1 in a) echo a ;& b) echo b ;; esac\nx=$'a\\'b'\n"),
        (".sh", "#!/bin/bash\nshopt -s extglob\nrm -f !(keep).txt\n"),  # `bash -n` alone refuses it
        (".sh", "#!/usr/bin/env zsh\nfor f (*.txt) echo $f\n"),  # zsh's own syntax: not bash's to read
        (".txt", "anything at all {{\n"),  # a kind without a reader is not read
    ],
)
def test_what_its_reader_takes_passes(suffix, text):
    reader = readback.READERS.get(suffix)
    assert reader is None or reader(text) is None


def test_an_alias_bomb_is_read_in_linear_time():
    """Aliases are events, not copies: a billion-laughs file is a few hundred events."""
    lines = ["a0: &a0 [x, x, x, x, x, x, x, x, x, x]"]
    lines += [f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 10)}]" for i in range(1, 12)]
    assert readback.yaml_problem("\n".join(lines) + "\n") is None


_keys = st.text(string.ascii_lowercase + "_", min_size=1, max_size=6)
_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_keys, inner, max_size=4),
    max_leaves=12,
)
_configs = st.dictionaries(_keys, _values, min_size=1, max_size=6)


@settings(deadline=None, max_examples=200)
@given(config=_configs)
def test_what_each_readers_own_writer_writes_passes_and_a_repeated_top_key_is_found(config):
    as_yaml = yaml.safe_dump(config, sort_keys=False)
    as_json = json.dumps(config, indent=1)
    as_python = f"config = {config!r}\n"
    assert readback.yaml_problem(as_yaml) is None
    assert readback.json_problem(as_json) is None
    assert readback.python_problem(as_python) is None
    key = next(iter(config))
    repeated = f"{yaml.safe_dump({key: 'again'})}"
    found = readback.yaml_problem(as_yaml + repeated)
    assert found is not None and found[0] == as_yaml.count("\n") + 1 and repr(key) in found[2]
    found = readback.json_problem(as_json[:-1] + f", {json.dumps(key)}: 0}}")
    assert found is not None and repr(key) in found[2]


SPEC = """\
sweepgen: 1
name: s
template: ../templates/t.yaml.j2
output: "{{ variant.name }}.yaml"
base:
  lr: 1
grid:
  lr: [1, 2]
"""


def test_render_stops_at_the_template_line_and_writes_nothing(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "specs").mkdir()
    (tmp_path / "templates").mkdir()
    (tmp_path / "specs" / "s.yaml").write_text(SPEC)
    # the repeat only in one variant: every file is read, not a sample
    template = "lr: {{ config.lr }}\n{% if config.lr == 2 %}lr: 5\n{% endif %}"
    (tmp_path / "templates" / "t.yaml.j2").write_text(template)
    result = CliRunner().invoke(main, ["render", "specs/s.yaml"])
    assert result.exit_code == 2, result.output
    assert result.output.startswith(
        "specs/s.yaml:3:11: error: variant 'lr2': lr2.yaml line 3, column 1: key 'lr' is written twice"
    )
    assert not (tmp_path / "generated").exists()
    checked = CliRunner().invoke(main, ["check", "specs/s.yaml"])
    assert checked.exit_code != 0 and "written twice" in checked.output


@pytest.mark.skipif(shutil.which("bash") is None, reason="the shell check asks bash itself")
def test_bash_decides_where_the_grammar_and_bash_disagree(monkeypatch):
    """A script the grammar refuses but bash reads is taken: bash's verdict counts."""
    monkeypatch.setattr(readback, "_grammar_refuses", lambda tree: True)
    assert readback.shell_problem("#!/bin/bash\necho fine\n") is None
    assert readback.shell_problem("#!/bin/bash\nshopt -s extglob\nrm -f !(keep).txt\n") is None
    assert readback.shell_problem("#!/bin/bash\necho 'open\n") is not None


def test_every_committed_generated_file_reads_back():
    root = Path(__file__).resolve().parents[2] / "generated"
    checked = 0
    for path in sorted(root.rglob("*")):
        reader = readback.READERS.get(path.suffix)
        if reader is not None:
            assert reader(path.read_text()) is None, path
            checked += 1
    assert checked > 100


_TEMPLATES = {
    "yaml": (
        "# generated by sweepgen from s.yaml (variant {v})\na: {v}\nb:\n  - {v}\n  - x\nc: {{k: {v}}}\n",
        readback.yaml_problem,
    ),
    "python": (
        "# generated by sweepgen from s.yaml (variant {v})\n"
        "config = dict(a={v}, b=[{v}, 1])\nd = {{'k': {v}}}\n",
        readback.python_problem,
    ),
    "toml": (
        "# generated by sweepgen from s.yaml (variant {v})\na = {v}\n[t]\nb = [{v}]\n",
        readback.toml_problem,
    ),
}
# spellings a template may write bare: words, numbers, quotes, indicators, escapes, separators
_SPELLINGS = st.one_of(
    st.sampled_from(
        [
            "1",
            "-1",
            "1.5",
            "1e-05",
            "01",
            "1_0",
            "0x1",
            ".5",
            "-",
            "--",
            "~",
            "yes",
            "None",
            "True",
            "true",
            "'a'",
            '"a"',
            "'a''b'",
            '"a\\"b"',
            '"\\q"',
            "'x",
            '"',
            "a: b",
            "a #c",
            "[1",
            "]",
            "{",
            "}",
            ",",
            "&a",
            "*a",
            "!t",
            "|",
            ">",
            "%",
            "@",
            "`",
            "? x",
            "a\nb: 1",
            "'''",
            '"""',
            "b'x'",
            "f'{x}'",
        ]
    ),
    st.text(alphabet=string.printable, max_size=6),
)


@settings(deadline=None, max_examples=400)
@given(kind=st.sampled_from(sorted(_TEMPLATES)), one=_SPELLINGS, two=_SPELLINGS)
def test_files_of_one_shape_read_alike(kind, one, two):
    """The read-back reads one file per shape: two files of one shape must get one verdict."""
    from sweepgen.compile.output.verify import readback_shape

    template, reader = _TEMPLATES[kind]
    first, second = template.format(v=one), template.format(v=two)
    if readback_shape.shape(kind, first) == readback_shape.shape(kind, second):
        assert (reader(first) is None) == (reader(second) is None), (first, second)


def test_values_a_template_inserts_share_a_shape_keys_and_structure_do_not():
    from sweepgen.compile.output.verify import readback_shape

    written = {
        "yaml": "# generated by sweepgen from s.yaml (variant {v})\na: {v}\nb:\n  - {v}\n",
        "python": "config = dict(a={v}, b=[{v}, 1])\nd = {{'k': {v}}}\n",
        "toml": "a = {v}\n[t]\nb = {v}\n",
    }
    for kind, template in written.items():
        shapes = {readback_shape.shape(kind, template.format(v=v)) for v in ("1", "-2.5e-05", '"a b"', "'x'")}
        assert len(shapes) == 1, kind  # so a sweep of one template is read once, not per file
    yaml_shape = readback_shape.shape("yaml", "lr: 1\nbs: 2\n")
    assert readback_shape.shape("yaml", "lr: 1\nlr: 2\n") != yaml_shape
    assert readback_shape.shape("yaml", "lr: 1\nbs: [2\n") != yaml_shape
