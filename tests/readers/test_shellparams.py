"""Bash parameter expansion, held against bash itself: every form the reader evaluates gives the
text bash gives for random values and patterns; a form whose input is not known keeps the input."""

from __future__ import annotations

import json
import subprocess

import pytest
from diff_support import BASH, bash_output, needs_bash
from fs_support import sweepgen
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sweepgen.readers.diff import diff
from sweepgen.readers.shell.shellconfig import read_shell
from sweepgen.readers.shell.shellwords import Partial, ansi_c, expand_quoted

# every form bash defines, on a scalar x, an array a, and a pattern p / replacement r spliced in
FORMS = (  # noqa: SIM905 - rows of forms read better than a column
    "${x};${x:-w d};${x-w};${u:-w};${u-w};${x:+y};${x+y};${u:+y};${#x};${x#P};${x##P};${x%P};${x%%P};"
    "${x/P/R};${x//P/R};${x/#P/R};${x/%P/R};${x/P};${x//P/&R};${x//P/\\&};${x^};${x^^};${x,};${x,,};"
    "${x~};${x~~};${x^^P};${x:1};${x:1:2};${x: -2};${x:(-3):2};${x:0:-1};${x@U};${x@L};${x@u};${x@Q};"
    "${!n};${#a[@]};${a[@]};${a[*]};${a[1]};${a[-1]};${a[@]#P};${a[@]%%P};${a[@]//P/R};${a[@]^^};"
    "${a[@]:1};${a[@]:1:1};${!a[@]};${e:-d};${e-d};${e:+y};${e+y};${#e};${e//P/R}"
).split(";")

text = st.text(alphabet="abAB/._- x", max_size=8)
pattern = st.sampled_from(
    ["a", "*", "?", "a*", "*a", "*/", "/*", "[ab]", "[!a]", "[[:upper:]]", ".", "b?", "\\*"]
)
replacement = st.sampled_from(["", "Z", "z/", "-"])


def _quote(value: str) -> str:
    return "'" + value.replace("'", "'\\''") + "'"


@needs_bash
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(x=text, a=st.lists(text, min_size=2, max_size=4), p=pattern, r=replacement)
def test_every_evaluated_form_is_what_bash_gives(x, a, p, r):
    forms = [f.replace("P", p).replace("R", r) for f in FORMS]
    variables = {"x": x, "a": list(a), "e": "", "n": "x"}
    prelude = f"x={_quote(x)}; a=({' '.join(map(_quote, a))}); e=; n=x; unset u\n"
    # one record per form (an array's words joined with blanks, as the reader joins them in
    # quotes); a form bash stops at (`${x:0:-1}` of an empty x) leaves its record empty
    script = "".join(f'printf "\\0"; printf "%s\\1" "{form}"\n' for form in forms) + 'printf "\\0"'
    records = bash_output(prelude + script)[1:-1]
    expected = [r[:-1].replace("\1", " ") if r.endswith("\1") else None for r in records]
    known = 0
    for form, want in zip(forms, expected, strict=True):
        got, ok = expand_quoted(form, dict(variables))
        if ok:
            known += 1
            assert got == want, form
        elif want is None:
            known += 1  # bash stops here: never a value
        else:
            assert isinstance(got, str)
    assert known >= len(forms) - 4  # extglob-free patterns and plain values: (nearly) all known


@pytest.mark.parametrize(
    "use",
    [
        '"${SAVE:-./ckpt/$NAME}"',
        '"${NAME// /_}"',
        "${MODEL:-m/$NAME}",
        '"${CKPT%/}$NAME"',
        '"${X:=$NAME}"',
        '"${U:+$NAME}"',
        '"${U-$NAME}"',
        '"${#NAME}"',
        '"${NAME^^}"',
        '"${NAME:1}"',
    ],
)
def test_a_change_to_any_input_of_an_expansion_is_a_change(use):
    a = read_shell(f"NAME=think_a\nX=\npython t.py --save {use}\n").data
    b = read_shell(f"NAME=thunk_bb\nX=\npython t.py --save {use}\n").data
    assert diff(a, b), use


@pytest.mark.parametrize("use", ['"${SAVE:-./ckpt/$NAME}"', "${MODEL##*/}", "${P:1:$NAME}", "${!R}"])
def test_an_expansion_of_the_environment_keeps_the_script_s_inputs(use):
    a = read_shell(f"NAME=2\nR=MODEL\npython t.py --x {use}\n").data["commands"]["t.py"]
    b = read_shell(f"NAME=3\nR=OTHER\npython t.py --x {use}\n").data["commands"]["t.py"]
    if "NAME" in use or "!R" in use:
        assert diff(a, b), use
    else:
        assert diff(a, b) == []


def test_a_partly_known_parameter_is_shown_with_its_definition():
    one = read_shell('M=$1/org/model_a\npython t.py --name "${M##*/}"\n').data
    two = read_shell('M=$1/org/model_b\npython t.py --name "${M##*/}"\n').data
    assert diff(one, two)
    assert "where M=$1/org/model_a" in one["commands"]["t.py"]["--name"].source


def test_an_unevaluated_array_element_is_never_split_on_its_source():
    script = 'S=( $(seq 16 8 256) )\npython t.py --bs ${S[@]}\npython u.py --bs "${S[@]}"\n'
    commands = read_shell(script).data["commands"]
    assert commands["t.py"]["--bs"] == commands["u.py"]["--bs"]
    assert commands["t.py"]["--bs"].source == "$(seq 16 8 256)"


def test_unknown_expansion_text_is_partial():
    value, known = expand_quoted("${HOME:-/root}/x", {})
    assert not known and value == "${HOME:-/root}/x"
    assert isinstance(Partial(value), str)


@pytest.mark.parametrize(
    "use",
    ['"${X#$PFX}"', '"${X//_/$SEP}"', '"${X:0:$N}"', '"${A[$I]}"', "${M[small]}"],
)
def test_a_known_parameter_read_through_an_unknown_operand_keeps_its_value(use):
    # bash reads X, A and M here: a change to them is a change although the result is not known
    # (`${M[small]}` of `declare -A M` is an associative array's element, not modelled)
    def read(value: str) -> object:
        script = f"X=a_{value}\nA=(1 {value})\ndeclare -A M=([small]={value} [big]=2)\n"
        script += f"python t.py --x {use}\n"
        return read_shell(script).data["commands"]["t.py"]

    assert diff(read("b"), read("c")), use
    assert diff(read("b"), read("b")) == []


ANSI_BODIES = ["a\\eb", "\\E", "\\x4", "\\x41g", "\\u41x", "\\u00e9", "\\U1F600", "\\N{DIGIT ONE}", "\\q",
               "\\?", "\\\\", "\\101", "\\1010", "\\t\\n", "\\x", "\\u", "\\x7f"]  # fmt: skip


@needs_bash
@pytest.mark.parametrize("body", ANSI_BODIES)
def test_ansi_c_strings_decode_as_bash_decodes_them(body):
    """`$'...'` is bash's own escape set (`\\e` ESC, `\\x4` one digit, `\\N{..}` no escape), not
    Python's unicode_escape."""
    out = subprocess.run([BASH, "-c", f"printf '%s' $'{body}'"], capture_output=True, check=True)  # type: ignore[list-item]
    assert ansi_c(body) == out.stdout.decode()


def test_ansi_c_escapes_python_reads_otherwise_are_a_change():
    for one, two in [("$'\\e'", "'\\e'"), ("$'\\N{DIGIT ONE}'", "1"), ("$'\\cA'", "'\\cA'")]:
        a = read_shell(f"python t.py --x {one}\n").data
        b = read_shell(f"python t.py --x {two}\n").data
        assert diff(a, b), (one, two)


def _changes(folder, a: str, b: str) -> dict[str, dict[str, object]]:
    """`sweepgen diff --format json` of two scripts, within a deadline far above what it takes (a
    fraction of a second): each change by its path."""
    (folder / "a.sh").write_text(a)
    (folder / "b.sh").write_text(b)
    done = sweepgen(folder, "diff", "--format", "json", "a.sh", "b.sh")
    assert done.returncode == 1, done.stderr
    return {c["path"]: c for c in json.loads(done.stdout)["changes"]}


@pytest.mark.parametrize(
    ("form", "length"),
    [
        ("${x%%P}", 4000),
        ("${x##P}", 4000),
        ("${x#P}", 4000),
        ("${x/#P/Z}", 4000),
        ("${x/%P/Z}", 4000),
        ("${x//P/Z}", 250),
    ],
)
def test_a_pattern_of_many_stars_is_matched_in_linear_time(tmp_path, form, length):
    """A config's pattern `*a*a*...*b` over a value of `a`s: Python's backtracking engine tries every
    way to split the value among the stars (hours at twelve stars), and the prefix and suffix forms
    try every end. The reader matches in linear time (RE2); none matches, so the value is unchanged."""
    value = "a" * length
    changes = _changes(tmp_path, f"x={value}\ny={form.replace('P', '*a' * 12 + '*b')}\n", f"x={value}\ny=\n")
    assert changes["vars.y"]["old"] == value


def test_a_long_brace_word_without_its_end_is_read_in_linear_time(tmp_path):
    """`--lr={,,,...` without its `}`: the check for a brace expansion bash did tried every split of
    the word (quadratic: 300,000 commas held `diff` for minutes). Kept as written."""
    word = "{" + "," * 300_000
    changes = _changes(tmp_path, f"python train.py --lr={word}\n", "python train.py --lr=1\n")
    assert changes['commands["train.py"].--lr']["old"] == word


def test_a_long_name_in_an_arithmetic_expansion_is_read_in_linear_time(tmp_path):
    """`$(( ZZZ... ))` of 200,000 letters: the search for the names it assigns read the rest of the
    name again from every place inside it (quadratic: hours). Kept as source, as any expansion
    the reader does not evaluate."""
    changes = _changes(tmp_path, f"y=$(( {'Z' * 200_000} ))\nN=1\n", "y=1\nN=1\n")
    assert set(changes) == {"vars.y"}


# quoted forms bash expands element by element: a word per element, never one joined word
_AT_FORMS = ['"${a[@]/#/--x=}"', '"${a[@]^^}"', '"x${a[@]}y"', '"${a[@]#a}"', '"${!a[@]}"']
_AT_FORMS += ['"${a[@]:1}"', '"${a[@]}"', '"${!a@}"']


def _commands(script: str) -> dict:
    return read_shell(script).data["commands"]


@needs_bash
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    a=st.lists(st.text(alphabet="ab", min_size=1, max_size=2), max_size=3),
    form=st.sampled_from(_AT_FORMS),
)
def test_a_quoted_array_expansion_is_the_words_bash_passes(a, form):
    prelude = f"a=({' '.join(map(_quote, a))})\n"
    argv = bash_output(prelude + f'printf "%s\\0" - {form}')[1:-1]
    read = _commands(f"{prelude}python t.py {form}\n")
    for words in (argv, [" ".join(argv)]):
        literal = _commands("python t.py " + " ".join(map(_quote, words)) + "\n")
        if not diff(read, literal):  # "no differences" only with what bash passes
            assert words == argv, (form, a)


@needs_bash
@pytest.mark.parametrize(
    "assignments",
    ["a=(x y)\na=z", "a=(x y)\na+=z", "a=(x y)\nexport a=z", "a=(x)\na=z", "a=(x y z)\na+=(w)\na+=v"],
)
def test_a_word_assigned_to_an_array_sets_its_first_element(assignments):
    argv = bash_output(f'{assignments}\nprintf "%s\\0" - "${{a[@]}}"')[1:-1]
    read = _commands(f'{assignments}\npython t.py "${{a[@]}}"\n')
    assert read == _commands("python t.py " + " ".join(map(_quote, argv)) + "\n")
    assert read != _commands(f"python t.py {_quote(argv[0])}\n") or len(argv) == 1


def test_local_makes_a_new_variable_not_an_element():
    read = _commands('a=(x y)\nf() { local a=z; python t.py "${a[@]}"; }\nf\n')
    assert read["t.py"]["@args"] != ["z", "y"]


@needs_bash
@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("declare -i A=5\nA+=2", "declare -i A=5\nA=2"),  # 7 and 2
        ("declare -i A\nA=2+3", "declare -i A\nA=2"),
        ("typeset -i A=1\nA+=1", "typeset -i A=1\nA=1"),
        ("A=1\ndeclare -i A\nA+=1", "A=1\ndeclare -i A\nA=1"),
        ("declare -u A\nA=x", "declare -u A\nA=y"),
        ("A=1\ndeclare -n R=A\nR=2", "A=1\ndeclare -n R=A\nR=1"),  # through the reference: A is 2
    ],
)
def test_an_assignment_declare_transforms_is_never_read_as_its_word(old, new):
    def argv(assignments: str) -> list[str]:
        return bash_output(f'{assignments}\nprintf "%s\\0" - "$A"')[1:-1]

    assert argv(old) != argv(new)  # bash itself tells them apart
    assert diff(_commands(f"{old}\npython t.py $A\n"), _commands(f"{new}\npython t.py $A\n"))


@needs_bash
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    value=st.sampled_from(["b", "b c", " b", "b\tc", "", "a b c", "x=y z"]),
    word=st.sampled_from(
        ["--f=$X", "--f=${X}", "pre$X", "$X/post", "--f=${A[0]}", "--f=${A[@]}", "--f=${X:-d}"]
    ),
)
def test_an_unquoted_expansion_glued_to_text_is_the_words_bash_passes(value, word):
    prelude = f"X={_quote(value)}\nA=({_quote(value)} z)\n"
    argv = bash_output(prelude + f'printf "%s\\0" - {word}')[1:-1]
    read = _commands(f"{prelude}python t.py {word}\n")["t.py"]
    for words in (argv, [" ".join(argv)]):
        literal = _commands("python t.py " + " ".join(map(_quote, words)) + "\n")["t.py"]
        if not diff(read, literal):  # "no differences" only with what bash passes
            assert words == argv, (word, value)


@needs_bash
def test_a_negative_index_of_a_plain_variable_is_not_its_value():
    # bash: "bad array subscript", the word is empty; never the variable's own value
    argv = bash_output('X=9\nprintf "%s\\0" - "${X[-1]}" 2>/dev/null')[1:-1]
    assert argv != ["9"]
    read = _commands('X=9\npython t.py "${X[-1]}"\n')
    assert read != _commands("python t.py 9\n") and read != _commands("python t.py ''\n")
    assert _commands('X=(9)\npython t.py "${X[-1]}"\n') == _commands("python t.py 9\n")  # an array's


@needs_bash
@pytest.mark.parametrize("unset", ["unset 'A[0]'", 'unset "A[1]"', "unset -v 'A[0]'", 'N=A\nunset "$N"'])
def test_unsetting_an_element_or_a_computed_name_is_never_skipped(unset):
    prelude = f"A=(a b)\n{unset}"
    argv = bash_output(f'{prelude}\nprintf "%s\\0" - "${{A[@]}}"')[1:-1]
    assert argv != ["a", "b"]
    read = _commands(f'{prelude}\npython t.py "${{A[@]}}"\n')
    assert read != _commands(f"{prelude}\npython t.py a b\n")
