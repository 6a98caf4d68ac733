"""Shell state the reader tracks beside variables, held against bash itself: read-only variables,
`local` outside a function, `shopt -s lastpipe`, the positional parameters after `shift`/`set --`,
and an array element assigned quoted then expanded unquoted. Each pair below is one bash runs
differently (a stub `python` prints the words it gets and its environment): `sweepgen diff` must
never call the two equal."""

from __future__ import annotations

import functools
import subprocess

import pytest
from diff_support import BASH, STUB_ENV, bash_sees, changes, needs_bash
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sweepgen.readers.model import NotEvaluated
from sweepgen.readers.shell.shellconfig import read_shell

# the script gets two arguments, the first holding a blank
_bash_sees = functools.partial(bash_sees, args=("p q", "r"))


PAIRS = [
    # bash refuses to assign a read-only variable: `export X=2` (and `declare`, `local`, `X=2`,
    # `unset X`) leaves X=1, where without `readonly` X is 2
    ("readonly X=1\nexport X=2\npython t.py --x $X\n", "X=1\nexport X=2\npython t.py --x $X\n"),
    ("readonly X=1\nX=2\npython t.py --x $X\n", "X=1\nX=2\npython t.py --x $X\n"),
    ("declare -r X=1\ndeclare X=2\npython t.py --x $X\n", "declare X=1\ndeclare X=2\npython t.py --x $X\n"),
    ("X=1\nreadonly X\nX+=2\npython t.py --x $X\n", "X=1\nX+=2\npython t.py --x $X\n"),
    ("export X=1\nreadonly X\nunset X\npython t.py\n", "export X=1\nunset X\npython t.py\n"),
    # a refused assignment fails: under `set -e` it ends the script, so `readonly` itself shows
    (
        "set -e\nX=0\nreadonly X\nf() { local X=1; }\nf\npython t.py\n",
        "set -e\nX=0\nf() { local X=1; }\nf\npython t.py\n",
    ),
    # `local` outside a function is an error to bash: it binds nothing
    ("local N=8\npython t.py --n $N\n", "N=8\npython t.py --n $N\n"),
    # under lastpipe the last part of a pipeline runs in the script's shell: what it binds stays
    (
        "shopt -s lastpipe\nX=1\necho hi | X=2\npython t.py --x $X\n",
        "shopt -s lastpipe\nX=1\necho hi | X=3\npython t.py --x $X\n",
    ),
    (
        "shopt -s lastpipe\nX=1\necho hi | X=2\npython t.py --x $X\n",
        "shopt -s lastpipe\nX=1\necho hi | X=2\npython t.py --x 1\n",
    ),
    # a positional parameter read before a `shift` (or `set --`) is not the one read after it
    ("X=$1\nshift\npython t.py $X\n", "shift\nX=$1\npython t.py $X\n"),
    ("X=${2:-d}\nshift\npython t.py $X\n", "shift\nX=${2:-d}\npython t.py $X\n"),
    ("X=$1\nset -- a b\npython t.py $X\n", "set -- a b\nX=$1\npython t.py $X\n"),
    (
        "f() { local a=$1; shift; python t.py $a; }\nf p q\n",
        "f() { shift; local a=$1; python t.py $a; }\nf p q\n",
    ),
    ('A=("$@")\nshift\npython t.py ${A[@]}\n', 'shift\nA=("$@")\npython t.py ${A[@]}\n'),
    # a condition reads the variables as they are when it runs, not their last value
    (
        "X=1\nif [ $X = 1 ]; then python a.py; fi\nX=2\npython t.py --x $X\n",
        "X=2\nif [ $X = 1 ]; then python a.py; fi\nX=2\npython t.py --x $X\n",
    ),
    (
        "X=1\n[ $X = 1 ] && python a.py\nX=2\npython t.py $X\n",
        "X=2\n[ $X = 1 ] && python a.py\nX=2\npython t.py $X\n",
    ),
    (
        "N=1\nif (( N > 0 )); then python a.py; fi\nN=2\npython t.py $N\n",
        "N=0\nif (( N > 0 )); then python a.py; fi\nN=2\npython t.py $N\n",
    ),
    (
        "X=1\ncase $X in 1) python a.py;; esac\nX=2\npython t.py $X\n",
        "X=3\ncase $X in 1) python a.py;; esac\nX=2\npython t.py $X\n",
    ),
    (
        "X=1\nfor i in $X; do python a.py; done\nX=2\npython t.py $X\n",
        'X="1 2"\nfor i in $X; do python a.py; done\nX=2\npython t.py $X\n',
    ),
    (
        "f() { python a.py; }\nX=1\nif [ $X = 1 ]; then f; fi\nX=2\npython t.py $X\n",
        "f() { python a.py; }\nX=2\nif [ $X = 1 ]; then f; fi\nX=2\npython t.py $X\n",
    ),
    # so do `let` and a test alone (under `set -e` its status ends the script), bare names too
    ("X=1\nlet N=X+1\nX=5\npython t.py $X $N\n", "X=2\nlet N=X+1\nX=5\npython t.py $X $N\n"),
    ("set -e\nX=1\n[ $X = 1 ]\nX=5\npython t.py $X\n", "set -e\nX=2\n[ $X = 1 ]\nX=5\npython t.py $X\n"),
    (
        "set -e\nX=1\n[[ X -gt 0 ]]\nX=5\npython t.py $X\n",
        "set -e\nX=0\n[[ X -gt 0 ]]\nX=5\npython t.py $X\n",
    ),
    # what follows a `return`, `break` or `exit` never runs
    ("f() { X=2; return; }\nX=1\nf\npython t.py $X\n", "f() { return; X=2; }\nX=1\nf\npython t.py $X\n"),
    (
        "for i in 1 2; do X=$i; break; done\npython t.py $X\n",
        "for i in 1 2; do break; X=$i; done\npython t.py $X\n",
    ),
    ("(python a.py; exit; python b.py)\n", "(python a.py; python b.py; exit)\n"),
    ("X=1\npython t.py $X\nexec true\npython b.py\n", "X=1\npython t.py $X\ntrue\npython b.py\n"),
    # a variable the script made unknown is not the environment's; one exported, then unset, was
    # seen by the programs run meanwhile; an export before a program is not one after it
    ("read X <<< q\nY=${X:-d}\npython t.py $Y\n", "Y=${X:-d}\nread X <<< q\npython t.py $Y\n"),
    (
        "f() { python f.py $Y; }\nexport Y=3\nY=1\npython t.py\nunset Y\n",
        "f() { python f.py $Y; }\nexport Y=3\npython t.py\nunset Y\n",
    ),
    ("X=1\nexport X\npython t.py\nexport X\n", "X=1\npython t.py\nexport X\n"),
    ("X=1\nX=1\n((X++))\npython t.py $X\n", "X=1\n((X++))\nX=1\npython t.py $X\n"),
    # `$(...)` runs with the values bound then; `unset -f f` removes f: a later call runs nothing
    ("X=1\nY=$(echo $X)\npython t.py $Y\n", "Y=$(echo $X)\nX=1\npython t.py $Y\n"),
    ("f() { python f.py; }\nf\nunset -f f\n", "f() { python f.py; }\nunset -f f\nf\n"),
    # a construct kept as source reads its variables when it runs, as `declare -i` does
    ("X=1\nX=2\ndeclare -i N=X\npython t.py $N\n", "X=1\ndeclare -i N=X\nX=2\npython t.py $N\n"),
    # `|&` also pipes standard error (`2>&1 |`)
    ("ls /no/such/path |& cat\n", "ls /no/such/path | cat\n"),
    # a loop's head reads its input, and what `read` binds there is not the environment's
    (
        'X=1\nwhile read -r L; do Y=$L; done <<< "$X"\npython t.py "$Y"\n',
        'while read -r L; do Y=$L; done <<< "$X"\nX=1\npython t.py "$Y"\n',
    ),
    ("while read -r L; do python t.py; done <<< a\npython u.py $L\n", "python u.py $L\n"),
    # an element assigned quoted is split when the array is expanded unquoted: `$1` is "p q"
    ('A=(a "$1")\npython t.py "${A[@]}"\n', 'A=(a "$1")\npython t.py ${A[@]}\n'),
    ('A=("$1" b)\npython t.py "${A[0]}"\n', 'A=("$1" b)\npython t.py ${A[0]}\n'),
    # bash refuses the line (a syntax error the grammar reads): nothing from it on runs
    ("python t.py ;;\npython e.py\n", "python t.py\npython e.py\n"),
    ("if true; then fi\npython t.py\n", "python t.py\n"),
    ("bash -c 'python t.py ;;'\n", "bash -c 'python t.py'\n"),
    # ... not even what shares the line with it (bash parses the whole line first)
    ("python t.py\nif true; then fi; python u.py\n", "python t.py; python u.py\nif true; then fi\n"),
    # under `set -a` (allexport) every assignment is exported; `declare +x` takes the export away
    ("set -a\nX=1\nset +a\nY=2\npython t.py\n", "set -a\nX=1\nY=2\nset +a\npython t.py\n"),
    (
        "set -o allexport\nY=2\nset +o allexport\npython t.py\n",
        "set -o allexport\nset +o allexport\nY=2\npython t.py\n",
    ),
    ("export X=1\ndeclare +x X\npython t.py\n", "export X=1\npython t.py\n"),
    # ... and every function defined under it (BASH_FUNC_f%% in each child's environment)
    ("set -a\nf() { echo; }\nset +a\npython t.py\n", "f() { echo; }\nset -a\nset +a\npython t.py\n"),
    ("set -a\npython t.py\nf() { :; }\npython u.py\n", "set -a\nf() { :; }\npython t.py\npython u.py\n"),
    # `export -f f` exports f as defined then; before a definition bash refuses it
    ("export -f f\nf() { :; }\npython t.py\n", "f() { :; }\nexport -f f\npython t.py\n"),
    # a subshell, a pipeline's part and a background job set `set -a` and export for themselves only
    ("( set -a )\nX=1\npython t.py\n", "( set -a )\nexport X=1\npython t.py\n"),
    ("set -a | cat\nX=1\npython t.py\n", "set -a | cat\nexport X=1\npython t.py\n"),
    ("set -a &\nwait\nX=1\npython t.py\n", "set -a &\nwait\nexport X=1\npython t.py\n"),
    ("( export X=1 )\nX=2\npython t.py\n", "( export X=1 )\nexport X=2\npython t.py\n"),
    # what an expansion or a builtin assigns comes from running it: never the value bound before
    # (an exported one included) nor the environment's
    ("Y=${X:=q}\npython t.py $X\n", "python t.py $X\nY=${X:=q}\n"),
    ('Y="${X:=q}"\npython t.py $X\n', 'python t.py $X\nY="${X:=q}"\n'),
    ("Y=$((N+=1))\npython t.py $N\n", "python t.py $N\nY=$((N+=1))\n"),
    ('Y="$((N+=1))"\npython t.py $N\n', 'python t.py $N\nY="$((N+=1))"\n'),
    ("X=$((X+1))\nX=$((X+1))\npython t.py $X\n", "X=$((X+1))\npython t.py $X\nX=$((X+1))\n"),
    ("read X <<< 7\nexport X=1\npython t.py\n", "export X=1\nread X <<< 7\npython t.py\n"),
    # a word split or joined at the IFS the script set reads the values bound where it stands
    ("IFS=,\nX='a b'\npython t.py $X\n", "IFS=,\npython t.py $X\nX='a b'\n"),
    ('IFS=,\nA=(1 2)\npython t.py "${A[*]}"\n', 'IFS=,\npython t.py "${A[*]}"\nA=(1 2)\n'),
    ("IFS=,\nA=(1 2)\ncat <<E\n${A[*]}\nE\n", "IFS=,\ncat <<E\n${A[*]}\nE\nA=(1 2)\n"),
    # `trap CODE EXIT` runs CODE when the script ends, with the values bound then
    ("python t.py $X\ntrap 'python c.py $X' EXIT\nX=1\n", "python t.py $X\ntrap 'python c.py $X' 0\nX=2\n"),
    ("trap 'python c.py $X' EXIT\npython t.py $X\nX=1\n", "python t.py $X\nX=1\ntrap 'python c.py' EXIT\n"),
    # `! cmd` inverts cmd's status (`$?`, `&&`, `set -e` read it)
    ("! true\npython t.py $?\n", "true\npython t.py $?\n"),
    # a `~` after `:` in an assignment is the home folder, in the value a later `$P` reads too
    ("P=/x:~/bin\npython t.py $P\n", "P='/x:~/bin'\npython t.py $P\n"),
    ("P=$1:~/bin\npython t.py $P\n", "P=$1':~/bin'\npython t.py $P\n"),
    # a redirection written after a function's body is performed at every call
    ("f() { python t.py; } > log\nf\n", "f() { python t.py; }\nf\n"),
    ("X=1\nf() { cat; } <<EOF\n$X\nEOF\nX=2\nf\n", "X=1\nf() { cat; } <<EOF\n1\nEOF\nX=2\nf\n"),
    # `;&` runs the next clause too, `;;&` tests the next patterns too: an empty clause decides
    ('case $1 in "p q") ;& r) python t.py;; esac\n', 'case $1 in "p q") ;; r) python t.py;; esac\n'),
    (
        "case $1 in p*) python s.py;;& *q) python t.py;; esac\n",
        "case $1 in p*) python s.py;; *q) python t.py;; esac\n",
    ),
    # `builtin` and `command` run the builtin itself: it binds, unsets and evaluates as without them
    ("builtin export X=1\nX=2\npython t.py --x $X\n", "X=2\nbuiltin export X=1\npython t.py --x $X\n"),
    ("command -p export X=1\nX=2\npython t.py\n", "X=2\ncommand -p export X=1\npython t.py\n"),
    ("builtin declare X=1\nX=2\npython t.py $X\n", "X=2\nbuiltin declare X=1\npython t.py $X\n"),
    ("builtin typeset X=1\nX=2\npython t.py $X\n", "X=2\nbuiltin typeset X=1\npython t.py $X\n"),
    ("command unset X\nX=2\npython t.py $X\n", "X=2\ncommand unset X\npython t.py $X\n"),
    ("builtin eval X=1\nX=2\npython t.py $X\n", "X=2\nbuiltin eval X=1\npython t.py $X\n"),
    # bash refuses `A=2 cmd` of a read-only A: cmd runs without it
    ("A=2 python t.py\nreadonly A=2\necho\n", "readonly A=2\nA=2 python t.py\necho\n"),
    # an assignment with a redirection ends at the newline (the grammar joins it to the next line)
    ("X=2 2>&1\npython t.py $X\n", "X=2 python t.py $X 2>&1\n"),
    ("X=2 >log\npython t.py\n", "X=2 python t.py >log\n"),
    # a continuation inside a word joins it: `--x\\<newline>1` is the word `--x1`
    ("python t.py --x\\\n1\n", "python t.py --x 1\n"),
    ("python t.py a.b=\\\n1\n", "python t.py a.b= 1\n"),
    ("X=a\\\nb\npython t.py $X\n", "X=a b\npython t.py $X\n"),
    ("py\\\nthon t.py\n", "py thon t.py\n"),
    # a program a `bash -c` runs sees only what was exported before it (the stub exported to it)
    (
        "export -f python\nbash -c 'python t.py'\nexport A=0\necho\n",
        "export -f python\nexport A=0\nbash -c 'python t.py'\necho\n",
    ),
    (
        "export -f python\nbash -c 'python t.py $1' _ 1\ndeclare -x A=0\necho\n",
        "export -f python\ndeclare -x A=0\nbash -c 'python t.py $1' _ 1\necho\n",
    ),
    # a declaration word bash expands before reading it as NAME=VALUE: quoted, or computed
    ("export 'LR=1'\npython t.py\n", "export 'LR=2'\npython t.py\n"),
    ('f() { local "X=1"; python t.py "$X"; }\nf\n', 'f() { local "X=2"; python t.py "$X"; }\nf\n'),
    (
        'while read -r k v; do\n  export "$k=$v"\ndone <<EOF\nA 0\nEOF\npython t.py\n',
        'while read -r k v; do\n  export "$k=$v"\ndone <<EOF\nA 1\nEOF\npython t.py\n',
    ),
    ('N=A\nexport "$N=1"\npython t.py\n', 'N=B\nexport "$N=1"\npython t.py\n'),
    ('Y=1\nexport "$(echo Y)=2"\npython t.py $Y\n', "Y=1\npython t.py $Y\n"),
    ('declare -a "A=(1 2)"\npython t.py "${A[@]}"\n', "A='(1 2)'\npython t.py \"${A[@]}\"\n"),
    # a declaration without a value leaves the variable unset, never the empty word `X=` binds:
    # `${X-d}`, `${#X[@]}` and an export tell the two apart
    ("readonly X\npython t.py ${X-d}\n", "readonly X=\npython t.py ${X-d}\n"),
    ("declare X\npython t.py ${X-d}\n", "python t.py\n"),
    ("typeset X\npython t.py ${#X[@]}\n", "typeset X=\npython t.py ${#X[@]}\n"),
    ("readonly X\nexport X\npython t.py\n", "readonly X=\nexport X\npython t.py\n"),
    ("f() { local X; python t.py ${X-d}; }\nf\n", "f() { local X=; python t.py ${X-d}; }\nf\n"),
    ("f() { local X; export X; python t.py; }\nf\n", "f() { local X=; export X; python t.py; }\nf\n"),
    ("f() { declare X; python t.py ${#X[@]}; }\nf\n", "f() { declare X=; python t.py ${#X[@]}; }\nf\n"),
    # a command's `X=v` words are made left to right: `Y=$X` reads the X just before it
    ("X=1\nX=2 Y=$X python t.py\npython u.py $X\n", "X=1\nX=2 Y=1 python t.py\npython u.py $X\n"),
    (
        "f() { python t.py $Y; }\nX=1\nX=2 Y=$X f\npython u.py $X\n",
        "f() { python t.py $Y; }\nX=1\nX=2 Y=1 f\npython u.py $X\n",
    ),
    ("X=0\nX=1 Y=${X}0\npython t.py $Y $X\n", "X=0\nX=1 Y=00\npython t.py $Y $X\n"),
    # a here-document whose delimiter is quoted anywhere (`E\OF`, `E"O"F`) is not expanded
    ("X=1\nread -r -d '' V <<E\\OF\n$X\nEOF\npython t.py \"$V\"\n", "X=1\npython t.py 1\n"),
    # a redirection's target is one word: the words after it are the command's arguments
    ("python t.py 2> log --lr 1\n", "python t.py 2> log --lr 2\n"),
    ("python t.py 2>&1 --lr 1 | cat\n", "python t.py 2>&1 | cat\n"),
    ('X=1\npython t.py 2>> log "$X"\n', "X=1\npython t.py 2>> log\n"),
    ("{ python t.py; } > log x\n", "{ python t.py; } > log\n"),
    # a lone `-` before a redirection is a word (the grammar leaves it out): argv[0] of `python -`
    ("python - a 2>&1 <<EOF\nx\nEOF\n", "python a 2>&1 <<EOF\nx\nEOF\n"),
    ("python t.py - 2>&1\n", "python t.py 2>&1\n"),
    # a value held unexported while a program ran, exported later: that program never saw it
    ("P=1\npython t.py\nexport P=2\n", "export P=1\npython t.py\nexport P=2\n"),
    (
        "export PYTHONPATH=.:$PYTHONPATH\npython t.py\nexport PYTHONPATH=.:$PYTHONPATH\n",
        "PYTHONPATH=.:$PYTHONPATH\npython t.py\nexport PYTHONPATH=.:$PYTHONPATH\n",
    ),
    # `local -` gives the `set` options back when the body returns (not the `shopt` ones)
    ("f() { local -; set -f; }\nf\npython t.py *\n", "f() { set -f; }\nf\npython t.py *\n"),
    (
        "f() { local -; set -a; }\nf\nX=1\npython t.py\n",
        "f() { local -; set -a; }\nf\nexport X=1\npython t.py\n",
    ),
    # the rest of a here-document's line (the grammar puts it inside the redirection) runs
    ("cat <<EOF | python t.py --lr 1\nx\nEOF\n", "cat <<EOF | python t.py --lr 2\nx\nEOF\n"),
    ("python t.py <<EOF 2>&1 --x 1\nx\nEOF\n", "python t.py <<EOF 2>&1\nx\nEOF\n"),
    ("cat <<EOF >/dev/null && python t.py 1\nx\nEOF\n", "cat <<EOF >/dev/null && python t.py 2\nx\nEOF\n"),
    # `<<'EOF'1` is the delimiter `EOF1`: bash reads the rest of the script as the body
    ("cat > c.yaml <<'EOF'1\nlr: 1\nEOF\npython t.py\n", "cat > c.yaml <<'EOF'\nlr: 1\nEOF\npython t.py\n"),
    # under nullglob (failglob) a bracket matching no file is no word (an error): a Hydra list
    # written unquoted is not the quoted one
    ("shopt -s nullglob\npython t.py a=[x,y]\n", "shopt -s nullglob\npython t.py 'a=[x,y]'\n"),
    ("shopt -s failglob\npython t.py l=['a','b']\n", "shopt -s failglob\npython t.py \"l=['a','b']\"\n"),
    ("X=1\nread -r -d '' V <<E'OF'\n$X\nEOF\npython t.py \"$V\"\n", "X=1\npython t.py 1\n"),
]


@needs_bash
@pytest.mark.parametrize(("one", "two"), PAIRS)
def test_a_pair_bash_runs_apart_is_never_equal(one, two, tmp_path):
    assert _bash_sees(one, tmp_path) != _bash_sees(two, tmp_path)  # the oracle: a real change
    assert changes(one, two)


@needs_bash
@pytest.mark.parametrize(
    ("one", "two"),
    [
        # `X+=v` of a variable the script never set appends to the environment's X
        ('X+=abc\npython t.py "$X"\n', "python t.py abc\n"),
        # `declare X` / `readonly X` without a value keep the environment's X (never empty)
        ('readonly X\npython t.py "$X"\n', 'readonly X=\npython t.py "$X"\n'),
    ],
)
def test_what_the_environment_may_hold_is_never_taken_as_empty(one, two, tmp_path):
    assert _bash_sees(one, tmp_path, environment={"X": "e"}) != _bash_sees(
        two, tmp_path, environment={"X": "e"}
    )
    assert changes(one, two)


@needs_bash
def test_an_unset_variable_is_never_the_environments(tmp_path):
    # with X in the environment, `unset X` empties what the program gets
    one, two = "unset X\npython t.py $X\n", "python t.py $X\n"
    assert _bash_sees(one, tmp_path, environment={"X": "e"}) != _bash_sees(
        two, tmp_path, environment={"X": "e"}
    )
    assert changes(one, two)


def test_a_refused_assignment_keeps_the_value_and_shows_the_attempt():
    data = read_shell("readonly X=1\nexport X=2\npython t.py --x $X\n").data
    assert data["commands"]["t.py"]["--x"] == 1
    assert data["env"]["X"] == ["1", {"@readonly": "2"}]  # exported still, as bash does
    assert data["vars"]["@readonly"] == {"X": [""]}


def test_a_readonly_under_a_condition_leaves_later_values_unknown():
    args = read_shell('if [ -n "$A" ]; then readonly X=1; fi\nX=2\npython t.py $X\n').data
    assert isinstance(args["commands"]["t.py"]["@args"][0], NotEvaluated)


def test_a_local_readonly_is_not_taken_as_a_global_one():
    # after the body returns X is no longer read-only: taken as may-be, its later value unknown
    args = read_shell("f() { local -r X=1; }\nf\nX=2\npython t.py $X\n").data["commands"]["t.py"]["@args"]
    assert isinstance(args[0], NotEvaluated)


def test_lastpipe_set_under_a_condition_leaves_what_the_last_part_binds_unknown():
    script = 'if [ -n "$A" ]; then shopt -s lastpipe; fi\nX=1\necho hi | X=2\npython t.py $X\n'
    assert isinstance(read_shell(script).data["commands"]["t.py"]["@args"][0], NotEvaluated)
    assert read_shell("shopt -s lastpipe\nshopt -u lastpipe\nX=1\necho | X=2\npython t.py $X\n").data[
        "commands"
    ]["t.py"]["@args"] == [1]


def test_positionals_after_a_known_shift_are_counted_and_options_are_no_new_list():
    one = "shift\nshift 2\nX=$1\npython t.py $X\n"
    two = "shift 3\nX=$1\npython t.py $X\n"
    assert changes(one, two) == ["commands.shift.@args", 'commands["shift #2"]']  # `$1` reads the same
    assert read_shell(two).data["commands"]["t.py"]["@args"][0].source == "${1 after shift 3}"
    # `set -euo pipefail` and `set +x` set options only: `$1` is still the script's
    for options in ("set -euo pipefail", "set +x", "set -o errexit"):
        data = read_shell(f"{options}\npython t.py $1\n").data
        assert data["commands"]["t.py"]["@args"][0].source == "$1"
    # a function reads its own arguments, and the caller's come back after it returns
    data = read_shell("f() { shift; python a.py $1; }\nf x y\npython t.py $1\n").data["commands"]
    assert data["a.py"]["@args"][0].source.startswith("${1 after shift 1}")
    assert data["t.py"]["@args"][0].source == "$1"


@needs_bash
@pytest.mark.parametrize(
    ("one", "two"),
    [
        ("#!/bin/bash -e\nfalse\npython t.py\n", "#!/bin/bash\nfalse\npython t.py\n"),
        ("#!/bin/bash\npython t.py\n", "# job\n#!/bin/bash\npython t.py\n"),
    ],
)
def test_the_shebang_is_the_program_that_runs_a_script(one, two, tmp_path):
    # sbatch (and `./job.sh`) run a script by its first line: `-e` stops at the first failure; a
    # `#!` below another line is a comment, and sbatch refuses a script without one
    seen = []
    for name, script in (("a.sh", one), ("b.sh", two)):
        first, rest = script.split("\n", 1)
        path = tmp_path / name
        path.write_text(f"{first}\n{STUB_ENV}{rest}")
        path.chmod(0o755)
        try:
            run = subprocess.run(
                [path], capture_output=True, text=True, check=False, cwd=tmp_path, timeout=60
            )
        except OSError as err:  # no `#!` first: the kernel runs nothing (sbatch refuses it too)
            seen.append(f"errno {err.errno}")
            continue
        seen.append(f"{run.stdout}rc={run.returncode}")
    assert seen[0] != seen[1]
    assert changes(one, two) == ["@shebang"]
    assert read_shell("#!  /bin/bash   -e \t\npython t.py\n").data["@shebang"] == "/bin/bash -e"


def test_a_condition_shows_the_values_it_reads():
    data = read_shell("X=1\nif [ $X = 1 ]; then python a.py; fi\n").data
    assert data["commands"]["a.py"]["@when"] == "[ $X = 1 ] where X=1"
    # a long value is named by its digest, so a guard stays short
    when = read_shell(f"X={'a' * 500}\n[ $X ] && python a.py\n").data["commands"]["a.py"]["@when"]
    assert when.startswith("[ $X ] where X=<500 characters, sha256 ") and len(when) < 80


def test_what_follows_a_return_is_recorded_as_never_reached_and_binds_nothing():
    data = read_shell("f() { return; X=2; python a.py; }\nX=1\nf\npython t.py $X\n").data
    assert data["commands"]["t.py"]["@args"] == [1]
    assert data["commands"]["a.py"]["@when"] == "function f and never reached (after return)"
    # `exec` of a program replaces the shell; `exec > log` only redirects it
    exec_true = read_shell("exec true\npython b.py\n").data["commands"]["b.py"]["@when"]
    assert exec_true == "never reached (after exec)"
    assert "@when" not in read_shell("exec > log\npython b.py\n").data["commands"]["b.py"]
    # `return` outside a function and `break` outside a loop are errors bash goes past
    assert read_shell("return\nX=1\npython t.py $X\n").data["commands"]["t.py"]["@args"] == [1]
    assert read_shell("break\nX=1\npython t.py $X\n").data["commands"]["t.py"]["@args"] == [1]


# statements whose effect on later ones is state this reader tracks: read-only and exported
# variables, `local`, positionals and `shift`/`set --`, lastpipe, conditions, `return`/`break`,
# subshells and arrays; every program run is the stub, which prints what it gets
_STATEMENTS = [
    "X=1",
    "X=2",
    'X="a b"',
    "Y=$X",
    'Y="$1"',
    "readonly X",
    "export X",
    "export Y=3",
    "unset Y",
    "local X=4",
    "shift",
    "set -- c d",
    "shopt -s lastpipe",
    "echo | X=7",
    '[ "$X" = 1 ] && python a.py',
    'if [ "$X" = 2 ]; then Y=8; fi',
    "f",
    "f z",
    'python t.py "$X" $Y "$1"',
    "python t.py $X",
    "for i in $X; do python a.py $i; break; Y=9; done",
    "(X=3; python b.py $X)",
    'A=(a "$1"); python c.py ${A[@]}',
    "X+=z",
    "read X <<< q",
    ": ${Y:=9}",
    "Y=${X:-d}",
    "printf -v Y %s $X",
    'eval "Y=$X"',
    "export -n Y",
    "X=2 f",
    "false",
    "set -e",
    "exit",
    "declare -i X=2+3",
    "((X++))",
    "trap 'python trap.py $X' EXIT",
    "unset -f f",
    "Y=$(echo $X)",
    "case $X in 1) Y=c1;; *) Y=c2;; esac",
    "case $X in 1) ;& 2) python c.py $Y;;& *) Y=c3;; esac",
    "g() { python g.py $X; } > /dev/null; g",
    'python b.py <<< "$X"',
    "X=3 bash -c 'python b.py $X'",
    'set -- "$X" z',
    "true && X=and || X=or",
    "builtin export Y=3",
    "command unset X",
    "builtin eval 'Y=$X'",
    "command declare X=4",
    "bash -c 'python c.py'",
    "Y=5 2>&1",
    "X=7 python b.py",
    'export "Y=$X"',
    "export 'X=8'",
    'declare "$(echo Y)=9"',
]
_PRELUDE = 'f() { local X=5; python f.py "$X" "$1" $Y; return; X=6; }\n'


def _mutated(statements: list[str], edit: tuple[int, int, str]) -> list[str]:
    index, kind, new = edit
    index %= len(statements)
    if kind == 0:
        return [*statements[:index], new, *statements[index + 1 :]]
    if kind == 1:
        return [*statements[:index], *statements[index + 1 :]]
    if kind == 2:
        return [*statements[:index], new, *statements[index:]]
    after = min(index + 1, len(statements) - 1)
    swapped = list(statements)
    swapped[index], swapped[after] = swapped[after], swapped[index]
    return swapped


@needs_bash
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    statements=st.lists(st.sampled_from(_STATEMENTS), min_size=1, max_size=6),
    edit=st.tuples(st.integers(0, 5), st.integers(0, 3), st.sampled_from(_STATEMENTS)),
)
def test_property_an_edit_bash_runs_apart_is_never_equal(statements, edit, tmp_path):
    one = _PRELUDE + "\n".join(statements) + "\n"
    two = _PRELUDE + "\n".join(_mutated(statements, edit)) + "\n"
    # what the programs get, not the script's own exit status (not modelled: the last statement's)
    if _bash_sees(one, tmp_path).rsplit("rc=", 1)[0] != _bash_sees(two, tmp_path).rsplit("rc=", 1)[0]:
        assert changes(one, two), f"bash runs these apart, diff calls them equal:\n{one}---\n{two}"


def test_a_launcher_running_a_module_is_not_one_running_a_file():
    # `accelerate launch -m pkg.t` imports the module pkg.t; `accelerate launch pkg.t` runs a file
    for launcher, flag in (("accelerate launch", "-m"), ("deepspeed", "--module"), ("torchrun", "-m")):
        assert changes(f"{launcher} {flag} pkg.t --x 1\n", f"{launcher} pkg.t --x 1\n")
    assert changes("python t.py |& tee log\n", "python t.py 2>&1 | tee log\n") == []


# lines the bash grammar reads without an error node, some of which bash refuses (`bash -n`)
_GRAMMAR_LENIENT = [
    "python t.py ;;\npython e.py\n",
    "if true; then fi\npython t.py\n",
    "if true; then # only a comment\nfi\n",
    "while true; do done\n",
    "f() { }\nf\n",
    "if a; then :; elif b; then\nfi\n",
    "if a; then :; else\nfi\n",
    "python t.py\ndone\npython e.py\n",
    "if x; then :; fi; fi\n",
    "in\npython t.py\n",
    "f() { python t.py; }declare\nf\n",
    "f() {1 python t.py; }\nf\n",
    "{ { python t.py; }}\n",
    "{ python t.py; }#c\n",
    # and what bash accepts
    "{ python t.py; }>log\n{ python t.py; }|cat\nf(){ python t.py;}\nf\necho }x {y\n",
    "case a in a) ;& b) x;;& c) y;; esac\n",
    "x=1 done\n",
    "python done then fi\n",
    "echo ';;' \"fi\"\n",
    "cat <<E\nthen fi\n;;\nE\n",
    "f() { echo }; }\n",
    "! { python a.py; python b.py; }\n",
    "do_x() { :; }\ndo_x\n",
    "for x in a; do :; done\n",
]


@needs_bash
@pytest.mark.parametrize("script", _GRAMMAR_LENIENT)
def test_a_script_bash_refuses_shows_where(script):
    checked = subprocess.run([BASH, "-n"], input=script, capture_output=True, text=True, check=False)  # type: ignore[list-item]
    data = read_shell(script).data
    assert ("@syntax_error" in data) == (checked.returncode != 0), checked.stderr
    if checked.returncode:
        assert changes(script, "python t.py\n")  # never equal to a script bash runs


@needs_bash
def test_a_break_in_a_function_leaves_nothing_of_the_callers_loop(tmp_path):
    # bash 5 counts loops per function: the `break` fails ("only meaningful in a loop") and both
    # the body and the caller's loop go on
    script = "f() { break; python x.py; }\nfor i in 1 2; do\n  f\n  python t.py\ndone\n"
    assert _bash_sees(script, tmp_path).count("<x.py>") == 2
    commands = read_shell(script).data["commands"]
    assert commands["x.py"]["@when"] == "for i in 1 2 and function f"
    assert commands["t.py"]["@when"] == "for i in 1 2"


@needs_bash
@pytest.mark.parametrize(
    "options",
    ["-a", "-ea", "-o allexport", "+o allexport", "-eo pipefail", "-o errexit -a", "-x -- -a", "+a"],
)
def test_allexport_is_read_as_bash_sets_it(options, tmp_path):
    script = f"set {options}\nX=1\npython t.py\n"
    exported = "X=1" in _bash_sees(script, tmp_path)
    data = read_shell(script).data
    assert ("X" in data["env"]) == exported and ("X" in data["vars"]) != exported


_PIECES = ["--x", "1", "a.b=2", "'q r'", '"s t"', "$X", "${X}y", "-", "p\\ q"]
_GAPS = [" ", "\\\n", " \\\n  ", "\\\n  ", "  \\\n"]


@needs_bash
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(parts=st.lists(st.tuples(st.sampled_from(_GAPS), st.sampled_from(_PIECES)), min_size=1, max_size=6))
def test_property_continuations_read_as_bash_joins_them(parts, tmp_path):
    # bash drops each backslash-newline before it splits words: the script reads as the one
    # written on one line, joins inside words included
    script = "X=v\npython t.py" + "".join(gap + piece for gap, piece in parts) + "\n"
    one_line = script.replace("\\\n", "")
    assert _bash_sees(script, tmp_path) == _bash_sees(one_line, tmp_path)  # the oracle
    assert changes(script, one_line) == []


# `$LINENO` is the line running now: the same statement one line lower gives the program another
# number (a line inserted above, a statement moved into a function called elsewhere)
LINENO_PAIRS = [
    ("python t.py --seed $LINENO\n", "\npython t.py --seed $LINENO\n"),
    ('X="$LINENO"\n\npython t.py $X\n', '\nX="$LINENO"\npython t.py $X\n'),
    ("f() {\n  python t.py $((LINENO * 2))\n}\nf\n", "f() { python t.py $((LINENO * 2)); }\n\nf\n"),
    ("python t.py --s \\\n  ${LINENO}\n", "\n\npython t.py --s \\\n  ${LINENO}\n"),
]


# a `$(...)`, `$((...))` or backquote kept as source inside double quotes or a here-document reads
# its variables where it runs, as unquoted: moving an assignment past it is a change
QUOTED_READS = [
    ('python t.py "$(( N * 2 + M ))"\nN=5\n', 'N=5\npython t.py "$(( N * 2 + M ))"\n'),
    ('N=4\npython t.py "x$(( N * 2 + M ))"\nN=5\n', 'N=4\nN=5\npython t.py "x$(( N * 2 + M ))"\n'),
    ('python t.py "$(echo $N)"\nN=5\n', 'N=5\npython t.py "$(echo $N)"\n'),
    ('python t.py "`echo $N`"\nN=5\n', 'N=5\npython t.py "`echo $N`"\n'),
    (
        'N=4\npython t.py "$(cat <<EOF\n$(( N + M ))\nEOF\n)"\nN=5\n',
        'N=5\npython t.py "$(cat <<EOF\n$(( N + M ))\nEOF\n)"\n',
    ),
    ('python t.py "$((LINENO))"\n', '\npython t.py "$((LINENO))"\n'),
    # ... and in a parameter expansion's operand, quoted or not
    ('X="${Y:-$(echo $N)}"\nN=2\npython t.py "$X"\n', 'N=2\nX="${Y:-$(echo $N)}"\npython t.py "$X"\n'),
    ("python t.py ${Y:-$(echo $N)}\nN=2\n", "N=2\npython t.py ${Y:-$(echo $N)}\n"),
]


@needs_bash
@pytest.mark.parametrize(("one", "two"), LINENO_PAIRS + QUOTED_READS)
def test_what_an_expansion_reads_where_it_runs_is_compared(one, two, tmp_path):
    assert _bash_sees(one, tmp_path) != _bash_sees(two, tmp_path)
    assert changes(one, two)
    # the same statements on the same lines, after a blank line became a comment: still equal
    assert changes(one, one.replace("\n\n", "\n# note\n")) == []


@pytest.mark.parametrize("delimiter", ["E\\OF", "\\EOF", "'EOF'", "E\\O\\F"])
def test_a_config_written_by_a_here_document_with_a_quoted_delimiter_is_as_written(delimiter):
    # bash expands no `$X` in the body where any part of the delimiter is quoted (the grammar
    # cannot read `E"O"F` or `E'OF'` at all: such a statement is compared as its text)
    script = f"X=1\ncat > c.yaml <<{delimiter}\nlr: $X\nEOF\npython t.py c.yaml\n"
    assert read_shell(script).data["commands"]["cat"]["@stdin"] == "lr: $X\n"


def test_a_lone_dash_before_a_redirection_is_a_word():
    # `kubectl apply -f - <<EOF` reads the manifest from the here-document: never `-f <<EOF`
    data = read_shell("kubectl apply -f - <<EOF\nkind: Job\nEOF\n").data
    assert data["commands"]["kubectl"]["-f"] == "-"
    assert "-" in read_shell("python - <<EOF\nprint(1)\nEOF\n").data["commands"]
