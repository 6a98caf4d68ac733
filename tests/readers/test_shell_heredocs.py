"""Here-documents and pipes read as bash reads them, held against bash itself: two here-documents
on one line, one before `;`, `}` or `|`, quoted delimiters, and what a pipe connects. Each pair
below is one bash runs differently (a stub `python` prints the words it gets and what it reads on
stdin): `sweepgen diff` must never call the two equal."""

from __future__ import annotations

import pytest
from diff_support import STUB_STDIN, bash_sees, changes, needs_bash
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sweepgen.readers.shell.shellconfig import read_shell

PAIRS = [
    # two here-documents on one line: bash reads both bodies after the line, the last is stdin
    ("cat <<A <<B\nx\nA\ny\nB\n", "cat <<A <<B\nx\nA\nz\nB\n"),
    # the first of two is not stdin, but bash expands it: a `$(cmd)` there runs, `${X:=v}` assigns
    ("cat <<A <<B\n${X:=1}\nA\n$X\nB\n", "cat <<A <<B\n${X:=2}\nA\n$X\nB\n"),
    (
        "python t.py <<A <<B\n$(echo 1 > f)\nA\n$(cat f)\nB\n",
        "python t.py <<A <<B\n$(echo 2 > f)\nA\n$(cat f)\nB\n",
    ),
    (
        "cat <<A <<B <<C\n$(echo 1 > f)\nA\nx\nB\n$(cat f)\nC\n",
        "cat <<A <<B <<C\n$(echo 2 > f)\nA\nx\nB\n$(cat f)\nC\n",
    ),
    ("read v <<A <<B\n$(echo 1 > f)\nA\nb\nB\ncat f\n", "read v <<A <<B\n$(echo 2 > f)\nA\nb\nB\ncat f\n"),
    # a `< file` a later here-document replaces is opened all the same: a missing one fails the command
    ("echo x > in1\ncat < in1 <<A\na\nA\n", "echo x > in1\ncat < in2 <<A\na\nA\n"),
    ("python t.py <<A; cat <<B\nx\nA\ny\nB\n", "python t.py <<A; cat <<B\nq\nA\ny\nB\n"),
    ("python t.py <<A && python t.py <<B\nx\nA\ny\nB\n", "python t.py <<A && python t.py <<B\nx\nA\nw\nB\n"),
    # a here-document inside a group (the grammar read the statement as an error, its body skipped)
    ("{ cat <<EOF; } > out\nhello\nEOF\ncat out\n", "{ cat <<EOF; } > out\nhellp\nEOF\ncat out\n"),
    # words after the delimiter (the grammar read them inside the here-document, as text)
    ("python t.py --a 1 <<EOF --b 2\nEOF\n", "python t.py --a 1 <<EOF --b 2\n# c\nEOF\n"),
    # the delimiter is a whole line: `\tEOF` is body where the delimiter is `EOF` (not `<<-`)
    (
        'X=$(cat <<"EOF"\n\tEOF\nEOF\n)\npython t.py "$X"\n',
        'X=$(cat <<"EOF"\n\tEOF\n# c\nEOF\n)\npython t.py "$X"\n',
    ),
    ('cat <<E"O"F\n$x\nEOF\n', "cat <<EOF\n$x\nEOF\n"),  # a quoted delimiter: the body as written
    # text past ASCII before and in the bodies (the scan's offsets are the grammar's bytes)
    ("echo é; cat <<A <<B\nxé\nA\nyü\nB\n", "echo é; cat <<A <<B\nxé\nA\nyö\nB\n"),
    # a pipe connects two programs: never the two run one after the other
    ("python t.py | python e.py\n", "python t.py; python e.py\n"),
    (
        "python t.py <<'END' | cat <<\"EOF\"\nEND\nx\nEOF\n",
        "python t.py <<'END'; cat <<\"EOF\"\nEND\nx\nEOF\n",
    ),
    # the redirections after a pipeline or list are its last command's
    ("echo a > in\necho b | python t.py < in\n", "echo a > in\necho b < in | python t.py\n"),
    ("echo a > in\npython e.py < in && python t.py\n", "echo a > in\npython e.py && python t.py < in\n"),
]

# a command's redirections are performed left to right: the last one to stdin is its stdin, and
# what an earlier one performed stays (a file opened, a `$(cmd)` run), whichever the grammar hangs
# on the command and which on the statement
_FILES = "echo 1 > in1\necho 2 > in2\n"
PAIRS += [
    ("python t.py <<<'one' <<A\nx\nA\n", "python t.py <<<'one' <<A\ny\nA\n"),
    (_FILES + "python t.py <<<'one' < in1\n", _FILES + "python t.py <<<'one' < in2\n"),
    (_FILES + "python t.py < in1 < in2\n", _FILES + "python t.py < in3 < in2\n"),
    (
        "python t.py <<<$(echo 1 > f) < /dev/null\ncat f\n",
        "python t.py <<<$(echo 2 > f) < /dev/null\ncat f\n",
    ),
    ("python t.py <<<$(echo 1 > f) <<<x\ncat f\n", "python t.py <<<$(echo 2 > f) <<<x\ncat f\n"),
    (
        _FILES + "python t.py <<A < in1\n$(echo 1 > f)\nA\ncat f\n",
        _FILES + "python t.py <<A < in1\n$(echo 2 > f)\nA\ncat f\n",
    ),
    # an output a later redirection replaces was opened all the same: the file is created (or
    # emptied); `ls` shows it
    ("python t.py > a > b\nls\n", "python t.py > c > b\nls\n"),
    ("python t.py 2> a 2> b\nls\n", "python t.py 2> c 2> b\nls\n"),
    ("python t.py > a 1>&2\nls\n", "python t.py 1>&2\nls\n"),
    ("{ python t.py > a; } > log\nls\n", "{ python t.py > a; } > log2\nls\n"),
    # a redirection with no command is performed all the same: the file created or emptied (it
    # read as nothing, "no differences")
    ("echo hi > log\n> log\ncat log\n", "echo hi > log\ncat log\n"),
    ("> made\nls\n", "ls\n"),
    (
        "echo hi > log\nif true; then >> log; fi\ncat log\n",
        "echo hi > log\nif true; then > log; fi\ncat log\n",
    ),
    # a group, loop or function with no command inside: bash performs its redirections all the same
    # (it read as nothing, "no differences")
    ("{ x=1; } > log\nls\n", "x=1\nls\n"),
    ("echo hi > log\n{ x=1; } >> log\ncat log\n", "echo hi > log\n{ x=1; } > log\ncat log\n"),
    ("for i in 1 2; do x=$i; done > log\nls\n", "for i in 1 2; do x=$i; done\nls\n"),
    ("while false; do :; done > log\nls\n", "while false; do :; done\nls\n"),
    ("( x=1 ) > log\nls\n", "( x=1 ) > log2\nls\n"),
    ("if true; then x=1; fi > log\nls\n", "if true; then x=1; fi\nls\n"),
    ("f() { x=1; } > log\nf\nls\n", "f() { x=1; }\nf\nls\n"),
]


@needs_bash
@pytest.mark.parametrize(("one", "two"), PAIRS)
def test_scripts_bash_runs_differently_are_never_equal(one, two, tmp_path):
    (tmp_path / "one").mkdir()
    (tmp_path / "two").mkdir()  # each in a folder of its own: what one creates, the other never sees
    assert bash_sees(one, tmp_path / "one", stub=STUB_STDIN) != bash_sees(
        two, tmp_path / "two", stub=STUB_STDIN
    )
    assert changes(one, two)


# (script, script, the one change): a compound statement's output redirection is opened once, for
# the whole group, whatever the commands inside redirect: it shows once (under the first command
# that replaces it), never as a change of each command inside
_GROUP_ONCE = [
    (
        "{ python a.py > x; python b.py > y; } > log\nls\n",
        "{ python a.py > x; python b.py; } > log\nls\n",
        'commands["b.py"].@stdout',
    ),
    (
        "for i in 1; do python a.py > x; python b.py > y; done > log\nls\n",
        "for i in 1; do python a.py > x; python b.py > z; done > log\nls\n",
        'commands["b.py"].@stdout',
    ),
    (
        "{ python a.py; python b.py; } > a > log\nls\n",
        "{ python a.py; python b.py > y; } > a > log\nls\n",
        'commands["b.py"].@stdout',
    ),
]


@needs_bash
@pytest.mark.parametrize(("one", "two", "change"), _GROUP_ONCE)
def test_a_groups_redirection_shows_once_not_under_each_command(one, two, change, tmp_path):
    (tmp_path / "one").mkdir()
    (tmp_path / "two").mkdir()
    # the oracle: bash creates the group's files in both (`ls`), the one command's output differs
    seen = [bash_sees(s, tmp_path / d, stub=STUB_STDIN).splitlines() for s, d in ((one, "one"), (two, "two"))]
    assert [line for line in seen[0] if "log" in line] == [line for line in seen[1] if "log" in line]
    assert changes(one, two) == [change]
    # and the group's file is still a change where it is written
    assert changes(one, one.replace("> log", "> log2"))


SAME = [
    # spellings bash reads alike
    ("> log\nls\n", ": > log\nls\n"),
    ("{ cat <<EOF; } > out\nhello\nEOF\n", "cat <<EOF > out\nhello\nEOF\n"),
    ('cat <<E"O"F\n$x\nEOF\n', "cat <<'EOF'\n$x\nEOF\n"),
    ('cat <<"E"OF\n$x\nEOF\n', "cat <<\\EOF\n$x\nEOF\n"),
    ("python t.py <<A; cat <<B\nx\nA\ny\nB\n", "python t.py <<A\nx\nA\ncat <<B\ny\nB\n"),
    ("python t.py |& tee log\n", "python t.py 2>&1 | tee log\n"),
    # the first of two here-documents, text without an expansion: expanded and dropped, no change
    ("cat <<A <<B\nx\nA\ny\nB\n", "cat <<A <<B\nq\nA\ny\nB\n"),
    ("cat <<'A' <<B\n$(echo 1 > f)\nA\ny\nB\n", "cat <<'A' <<B\n$(echo 2 > f)\nA\ny\nB\n"),
    # a here-string a later here-document or `< f` replaces: its plain text is read by no one
    ("python t.py <<<'one' <<A\nx\nA\n", "python t.py <<<'two' <<A\nx\nA\n"),
    ("python t.py <<<one <<A\nx\nA\n", "python t.py <<A\nx\nA\n"),
    ("python t.py <<<'one' < /dev/null\n", "python t.py <<<'two' < /dev/null\n"),
    ("python t.py <<<'one' <<<'two'\n", "python t.py <<<'two'\n"),
    ("python t.py > a > a\nls\n", "python t.py > a\nls\n"),
    ("python t.py > log 2>&1\nls\n", "python t.py &> log\nls\n"),
    ("{ x=1; } > log\nls\n", ": > log\nx=1\nls\n"),
]


@needs_bash
@pytest.mark.parametrize(("one", "two"), SAME)
def test_spellings_bash_runs_alike_are_equal(one, two, tmp_path):
    assert bash_sees(one, tmp_path, stub=STUB_STDIN) == bash_sees(two, tmp_path, stub=STUB_STDIN)
    assert changes(one, two) == []


def test_a_here_document_after_a_pipe_is_its_last_commands_stdin():
    data = read_shell("echo a | cat <<EOF\nx\nEOF\n").data["commands"]
    assert data["cat"]["@stdin"] == "x\n" and data["echo"]["@stdout"] == "pipe"
    assert "@stdin" not in data["echo"]


_DELIMITERS = ["EOF", "'EOF'", '"EOF"', 'E"O"F', '"E"OF', "\\EOF", "END"]
_LINES = ["x", "$X", "\t  a", "", "EOF ", "\tEOF", "# c", "END", "\\$X"]
_FORMS = [
    "python t.py <<{0}",
    "cat <<{0} <<{1}",
    "python t.py <<{0}; cat <<{1}",
    "{{ python t.py <<{0}; }}",
    "python t.py <<{0} && cat <<{1}",
    "cat <<{0} | python t.py",
    "python t.py <<{0} --b 2",
    "python t.py <<{0} | cat <<{1}",
    "python t.py <<-{0}",
]


def _word(delimiter: str) -> str:
    return delimiter.replace('"', "").replace("'", "").replace("\\", "")


@st.composite
def _scripts(draw):
    form = draw(st.sampled_from(_FORMS))
    delimiters = [draw(st.sampled_from(_DELIMITERS)) for _ in range(2)]
    script = draw(st.sampled_from(["", "X=1\n", "export X=1\n"])) + form.format(*delimiters) + "\n"
    for index in (0, 1) if "{1}" in form else (0,):
        lines = draw(st.lists(st.sampled_from(_LINES), max_size=3))
        script += "".join(line + "\n" for line in lines) + _word(delimiters[index]) + "\n"
    return script + "python t.py --end\n"


@needs_bash
@settings(deadline=None, max_examples=60, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(one=_scripts(), two=_scripts())
def test_here_documents_bash_feeds_differently_are_never_equal(one, two, tmp_path):
    if bash_sees(one, tmp_path, stub=STUB_STDIN) != bash_sees(two, tmp_path, stub=STUB_STDIN):
        assert changes(one, two), (one, two)


_STDIN = ["<<<w", "<<<$(echo 1 > f)", "<<<$(echo 2 > f)", "< in1", "< in2", "< in3", "<<{}", "<<'{}'"]
_BODIES = ["x", "y", "$(echo 3 > f)", "$(echo 4 > f)"]


@st.composite
def _redirected(draw):
    """A command with two to four redirections of its stdin, each here-document's body after it."""
    line, bodies = "python t.py", ""
    for index in range(draw(st.integers(2, 4))):
        form = draw(st.sampled_from(_STDIN))
        if "{}" in form:
            delimiter = "ABCD"[index]
            line += " " + form.format(delimiter)
            bodies += draw(st.sampled_from(_BODIES)) + "\n" + delimiter + "\n"
        else:
            line += " " + form
    return "rm -f f\n" + _FILES + line + "\n" + bodies + "cat f\n"


@needs_bash
@settings(deadline=None, max_examples=40, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(one=_redirected(), two=_redirected())
def test_redirections_of_stdin_bash_performs_differently_are_never_equal(one, two, tmp_path):
    if bash_sees(one, tmp_path, stub=STUB_STDIN) != bash_sees(two, tmp_path, stub=STUB_STDIN):
        assert changes(one, two), (one, two)
