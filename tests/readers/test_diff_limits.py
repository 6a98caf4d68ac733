"""diff's costs are bounded in time: the Python evaluator refuses to build huge
values (kept not evaluated, as the Jinja sandbox refuses them), integers too long for `int()` are
compared as exact digits, and the shell reader is linear in script length."""

from __future__ import annotations

import time

import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from sweepgen.cli import main
from sweepgen.errors import ConfigError
from sweepgen.readers.model import BigInt, NotEvaluated
from sweepgen.readers.python.pyast import read_python
from sweepgen.readers.shell.shellconfig import read_shell


def _timed(fn):
    start = time.perf_counter()
    value = fn()
    return value, time.perf_counter() - start


@pytest.mark.parametrize(
    "expr",
    ["'%0*d' % (10**9, 1)", "'%0999999999d' % 1", "'%.999999999f' % 1.0", "'a' * 10**9", "f'{1:0999999999}'",
     "'{:>999999999}'.format(1)", "'x'.zfill(10**9)", "(1 << 60000) * (1 << 60000)", "9**9**9",
     "','.join(['a' * 999999] * 999)", "('a' * 10**6).replace('a', 'aa')"],
)  # fmt: skip
def test_python_values_past_a_bound_are_kept_as_source_quickly(expr):
    data, seconds = _timed(lambda: read_python(f"x = {expr}\n").data)
    # the bound keeps it to seconds where unbounded work took minutes; a loaded machine may be slow
    assert isinstance(data["x"], NotEvaluated) and seconds < 30


def test_repeated_squaring_stops_at_the_integer_bound():
    data, seconds = _timed(lambda: read_python("x = 10**1000\nfor i in range(60):\n    x = x * x\n").data)
    assert isinstance(data["x"], NotEvaluated) and seconds < 30


def test_values_within_the_bounds_are_still_computed():
    data = read_python("a = '%05d' % 42\nb = 'ab' * 3\nc = 2 ** 100\nd = f'{3.14159:.2f}'\n").data
    assert data == {"a": "00042", "b": "ababab", "c": 2**100, "d": "3.14"}


@pytest.mark.parametrize(
    "suffix, template", [(".json", '{{"n": {}}}'), (".toml", "n = {}\n"), (".yaml", "n: {}\n")]
)
def test_integers_too_long_for_int_are_compared_as_exact_digits(tmp_path, suffix, template):
    digits = "7" * 5000
    a, b, c = (tmp_path / f"{name}{suffix}" for name in "abc")
    a.write_text(template.format(digits))
    b.write_text(template.format(digits))
    c.write_text(template.format(digits[:-1] + "8"))
    runner = CliRunner()
    same = runner.invoke(main, ["diff", str(a), str(b)])
    assert (same.exit_code, same.stdout) == (0, "no differences\n")
    changed = runner.invoke(main, ["diff", str(a), str(c)])
    assert (
        changed.exit_code == 1 and changed.stdout.startswith("n: 777") and "Traceback" not in changed.output
    )


def test_big_int_keeps_its_sign_and_drops_leading_zeros():
    from sweepgen.readers.model import big_int

    assert big_int("-00" + "1" * 4001) == BigInt("-" + "1" * 4001)
    assert big_int("12") is None


SHAPES = {
    "flags": lambda n: "python t.py \\\n" + "".join(f"  --f{i} {i} \\\n" for i in range(n)) + "  --last 1\n",
    "commands": lambda n: "".join(f"echo line {i}\n" for i in range(n)),
    "appends": lambda n: "".join(f"A+=(--f{i} {i})\n" for i in range(n)) + "python t.py ${A[@]}\n",
    "arrays": lambda n: "A=(\n" + "".join(f"  --f{i} {i}\n" for i in range(n)) + ")\npython t.py ${A[@]}\n",
}


def _cpu_seconds(script):
    # this thread's CPU time, not the wall clock: a neighbour (the other xdist worker, CI's load)
    # stalls the wall clock of one reading by seconds but adds nothing to this thread's CPU time
    start = time.thread_time()
    read_shell(script, "s.sh")
    return time.thread_time() - start


@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_the_shell_reader_is_linear_in_script_length(shape):
    make = SHAPES[shape]
    small_script, large_script = make(2_000), make(16_000)

    def ratio():
        small = min(_cpu_seconds(small_script) for _ in range(3))
        large = min(_cpu_seconds(large_script) for _ in range(2))
        return large / max(small, 0.5 / 24), (small, large)

    # 8x the lines: a linear reader takes ~8x, measured 6-15x with cache effects on a loaded machine;
    # a quadratic one takes 64x (and took minutes at 10,000 lines): 24x is the geometric middle, and a
    # reading over it is taken again before failing (a quadratic reader is over it again)
    measured, seconds = ratio()
    if measured >= 24:
        measured, seconds = min((measured, seconds), ratio())
    assert measured < 24 and seconds[1] < 60, seconds


def test_sum_of_lists_is_linear_and_bounded():
    # Python's sum(lists, []) copies the growing list at every step: quadratic in the item count
    data, seconds = _timed(lambda: read_python("x = sum([[0] * 1000] * 5000, [])\n").data)
    assert isinstance(data["x"], NotEvaluated) and seconds < 30
    data, seconds = _timed(lambda: read_python("x = sum([[1, 2]] * 200000, [])\n").data)
    assert data["x"] == [1, 2] * 200000 and seconds < 30
    data = read_python("a = sum([(1,), (2,)], ())\nb = sum([1, 2.5])\nc = sum([[1], (2,)], [])\n").data
    assert data["a"] == (1, 2) and data["b"] == 3.5 and isinstance(data["c"], NotEvaluated)


@pytest.mark.parametrize(
    "use", ["len(c)", "str(c)", "f'{c}'", "c == d", "sorted(c)", "sum(c, [])", "[c] == [d]", "max(c)"]
)
def test_a_shared_list_is_never_walked_once_per_reference(use):
    # c holds a thousand references to b, b a thousand to a: a billion items when walked as a tree
    src = f"a = [0] * 1000\nb = [a] * 1000\nc = [b] * 1000\nd = [list(b)] * 1000\nx = {use}\n"
    data, seconds = _timed(lambda: read_python(src).data)
    assert isinstance(data["x"], NotEvaluated) and seconds < 30


# each format's limit, past which a file is refused from its size before it is parsed (a committed
# 34 MB Hydra base held `diff --resolve-bases` over 120 s; a 3.7 MB YAML 43 s)
@pytest.mark.parametrize(
    "name, line, limit",
    [("a.yaml", "k{}: v\n", "2.0 MiB"), ("a.toml", "k{} = 1\n", "2.0 MiB"), ("a.py", "k{} = 1\n", "2.0 MiB"),
     ("a.sh", "k{}=1\n", "1.0 MiB"), ("a.json", "{}", "32.0 MiB")],
)  # fmt: skip
def test_a_file_past_its_formats_limit_is_refused_unparsed(tmp_path, name, line, limit):
    """Valid files, each past its format's limit (the old reader parsed them for seconds a MiB)."""
    big, small = tmp_path / name, tmp_path / ("b" + name[1:])
    size = {"32.0 MiB": 33 << 20, "2.0 MiB": (2 << 20) + 10, "1.0 MiB": (1 << 20) + 10}[limit]
    if name.endswith(".json"):
        big.write_bytes(b"{" + b" " * size + b"}")
    else:
        big.write_text("".join(line.format(i) for i in range(size // len(line.format(0)))))
    small.write_text("{}" if name.endswith(".json") else line.format(0))
    result, seconds = _timed(lambda: CliRunner().invoke(main, ["diff", str(small), str(big)]))
    assert result.exit_code == 2 and "Traceback" not in result.output, result.output
    assert f"{big}: error: " in result.output and f"over diff's limit of {limit}" in result.output
    assert "--max-bytes" in result.output and seconds < 10


def test_max_bytes_is_the_limit_of_every_format(tmp_path):
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    a.write_text('{"k": "' + "x" * 3000 + '"}')
    b.write_text('{"k": 1}')
    refused = CliRunner().invoke(main, ["diff", "--max-bytes", "2K", str(a), str(b)])
    assert (
        refused.exit_code == 2
        and "is 3,009 bytes, over diff's limit of 2,048 bytes for every file" in refused.output
    )
    assert "--max-bytes 1M" in refused.output
    read = CliRunner().invoke(main, ["diff", "--max-bytes", "4K", str(a), str(b)])
    assert read.exit_code == 1 and read.stdout.startswith("k: "), read.output


def test_bases_share_the_diffs_budget_each_charged_once(tmp_path):
    """The files of one diff, its bases included, together hold at most twice the limit; a base both
    sides compose is charged once (and a YAML pair read again as OmegaConf does is not charged twice)."""
    (tmp_path / "pyproject.toml").write_text("")
    filler = "".join(f"k{i}: {i}\n" for i in range(300))  # ~2.7 KB
    for n in range(4):
        (tmp_path / f"base{n}.yaml").write_text(filler.replace("k", f"b{n}_"))
    (tmp_path / "a.yaml").write_text("defaults:\n  - base0\n  - base1\n  - _self_\nx: 1\n")
    (tmp_path / "b.yaml").write_text("defaults:\n  - base0\n  - base1\n  - _self_\nx: 2\n")
    (tmp_path / "c.yaml").write_text("defaults:\n  - base2\n  - base3\n  - _self_\nx: 2\n")
    args = ["diff", "--resolve-bases", "--max-bytes", "4K"]
    shared = CliRunner().invoke(main, [*args, str(tmp_path / "a.yaml"), str(tmp_path / "b.yaml")])
    assert shared.exit_code == 1 and shared.stdout == "x: 1 -> 2\n1 change\n", shared.output
    four = CliRunner().invoke(main, [*args, str(tmp_path / "a.yaml"), str(tmp_path / "c.yaml")])
    assert four.exit_code == 2 and "together more than twice diff's limit for one file" in four.output
    assert "base" in four.output and "Traceback" not in four.output


@pytest.mark.parametrize(
    "script",
    ['x="${a:-' * 20_000 + "v" + '}"' * 20_000, "if true; then " * 20_000 + "echo; " + "fi; " * 20_000],
)
def test_a_script_nested_thousands_deep_is_refused_at_once(script):
    """200 KB of `x="${a:-"${a:-...` or `if ...; then if ...` held `diff` over 100 s (each level
    looked up from the root, each bracket scanned to its end) before it ended as nested too deeply;
    now the tree's depth refuses it after the parse."""
    start = time.perf_counter()
    with pytest.raises(ConfigError, match="nested too deeply to read") as caught:
        read_shell(script + "\n", "deep.sh")
    assert time.perf_counter() - start < 20  # a loaded machine may be slow; unbounded it was minutes
    assert caught.value.location is not None and caught.value.location.line == 1


def _balanced_by_character(text: str, start: int, open_: str, close: str) -> int:
    """The scan ``balanced`` replaced (a Python loop over each character), as its oracle."""
    depth, i = 0, start
    while i < len(text):
        if text[i] == "\\":
            i += 2
            continue
        if text[i] == open_:
            depth += 1
        elif text[i] == close:
            depth -= 1
            if depth == 0:
                return i + 1
        i += 1
    return len(text)


@settings(deadline=None, max_examples=300)
@given(st.text(alphabet="(){}\\ab\n", max_size=40), st.integers(0, 40), st.sampled_from(["()", "{}"]))
def test_balanced_finds_what_the_character_loop_found(text, start, pair):
    """``balanced`` steps over plain characters with a regular expression (a 1 MiB script of nested
    `${a:-...}` lines took 44 s, now 13): the same index as the loop it replaced, escapes included."""
    from sweepgen.readers.shell.shellwords import balanced

    assert balanced(text, start, *pair) == _balanced_by_character(text, start, *pair)


def test_a_json_file_past_the_values_bound_is_refused_before_its_lines_are_looked_for(tmp_path, monkeypatch):
    """32 MiB of `1,` (16 million values, within the JSON byte limit) held `diff` past 150 s at
    8.7 GB: each value's line was looked for through YAML's node tree before the values bound
    refused the file. Now the bound comes first (20 s, 0.3 GB: the parse alone)."""
    from sweepgen.readers import configfile
    from sweepgen.readers.structured import formats

    def never(*_args, **_kwargs):
        raise AssertionError("the lines of a file past the values bound were looked for")

    monkeypatch.setattr(formats, "MAX_VALUES", 10, raising=False)
    monkeypatch.setattr(configfile, "MAX_VALUES", 10)
    monkeypatch.setattr(formats, "read_yaml", never)
    monkeypatch.setattr(formats, "json_lines", never, raising=False)
    (tmp_path / "a.json").write_text("[" + "1," * 20 + "1]")
    (tmp_path / "b.json").write_text("[1]")
    result = CliRunner().invoke(main, ["diff", str(tmp_path / "a.json"), str(tmp_path / "b.json")])
    assert result.exit_code == 2 and "expands to more than 10 values" in result.output, result.output
