"""The bash reader (tree-sitter grammar): each wrong answer a review found, now right."""

from __future__ import annotations

import os
import subprocess

import pytest
from diff_support import bash_output, line_changes

from sweepgen.errors import UserError
from sweepgen.readers.compare import compare
from sweepgen.readers.diff import diff
from sweepgen.readers.model import NotEvaluated
from sweepgen.readers.shell.shellconfig import read_shell, read_shell_file
from sweepgen.readers.shell.shellwords import arithmetic


def _cmd(script: str, name: str) -> dict:
    return read_shell(script).data["commands"][name]


def test_an_exported_assignment_keeps_its_value():
    a = read_shell("LR=1e-5; export LR\n").data
    b = read_shell("LR=3e-4; export LR\n").data
    assert a["env"] == {"LR": "1e-5"} and b["env"] == {"LR": "3e-4"}
    assert [c.dotted for c in diff(a, b)] == ["env.LR"]


def test_hydra_overrides_are_keyed_by_name_not_position():
    a = _cmd("python3 -m verl.trainer.main_ppo a.x=1 b.y=2 c.z=3\n", "verl.trainer.main_ppo")
    b = _cmd("python3 -m verl.trainer.main_ppo a.x=1 +new.k=0 b.y=2 c.z=4\n", "verl.trainer.main_ppo")
    assert [c.dotted for c in diff(a, b)] == ["+new", "c.z"]
    assert _cmd("python t.py ++a.b=1 ~c.d\n", "t.py") == {
        "++a": {"b": 1},
        "~c": {"d": None},
        "@launcher": {"python": {}},
    }


def test_arrays_expand_where_used_and_redirections_are_not_arguments():
    script = 'ARGS=(--lr 1e-5\n  --steps 10)\npython t.py "${ARGS[@]}" &>> log\n'
    cfg = read_shell(script).data
    assert cfg["commands"] == {
        "t.py": {
            "--lr": 1e-5,
            "--steps": 10,
            "@argv order": ["--lr", "--steps"],  # a script reading sys.argv sees the order
            "@stdout": ">> log",
            "@stderr": ">> log",
            "@launcher": {"python": {}},
        }
    }
    assert cfg["vars"] == {}  # every use of ARGS was substituted: its value shows where it is used


def test_heredoc_read_into_a_variable_is_run_as_a_command():
    one = "read -r -d '' CMD <<EOF\npython t.py --a 1 \\\n  --b 2\nEOF\n$CMD\n"
    two = "read -r -d '' CMD <<EOF\npython t.py \\\n      --a 1 --b 2\nEOF\n$CMD\n"
    assert _cmd(one, "t.py") == {
        "--a": 1,
        "--b": 2,
        "@argv order": ["--a", "--b"],
        "@launcher": {"python": {}},
    }
    assert diff(read_shell(one).data, read_shell(two).data) == []


def test_a_heredoc_inside_command_substitution_is_read():
    cfg = read_shell("X=$(cat <<EOF\nhello\nEOF\n)\nexport X\n").data
    assert cfg["env"] == {"X": "hello"}


def test_everything_after_ray_double_dash_belongs_to_the_inner_program():
    cmd = _cmd(
        "ray job submit --address=http://h:8265 --no-wait -- python3 -m pkg.main a.b=1 --f v\n", "pkg.main"
    )
    assert cmd == {
        "a": {"b": 1},
        "--f": "v",
        "@launcher": {"ray job submit": {"--address": "http://h:8265", "--no-wait": True}, "python3": {}},
    }


def test_multi_value_flags_are_lists_and_repeated_flags_are_marked():
    assert _cmd("python t.py --range 0 1 --tag a --tag b --one=x\n", "t.py") == {
        "--range": [0, 1],
        "--tag": {"@repeated": ["a", "b"]},
        "--one": "x",
        "@argv order": ["--range", "--tag", "--tag", "--one"],
        "@launcher": {"python": {}},
    }
    # argparse reads them apart: `--a 1 --a 2` is 2 (or [1, 2] with action="append"), `--a 1 2`
    # is [1, 2] with nargs (else an error); so are a repeated override and a list one to Hydra
    assert not _equal("python t.py --a 1 --a 2\n", "python t.py --a 1 2\n")
    assert not _equal("python t.py a.b=1 a.b=2\n", "python t.py a.b=[1,2]\n")


def test_an_export_inside_if_is_conditional_with_its_condition():
    cfg = read_shell(
        'if [ -n "$X" ]; then\n  export A=1\nelse\n  export A=2\nfi\npython t.py --a "$A"\n'
    ).data
    assert cfg["env"]["A"] == [
        {"@value": "1", "@when": '[ -n "$X" ]'},
        {"@value": "2", "@when": '! ([ -n "$X" ])'},
    ]
    # never guessed from one branch; marked as the A the script made unknown, not the environment's
    assert cfg["commands"]["t.py"]["--a"] == NotEvaluated('"${A unknown #2}"')


def test_loops_and_case_mark_their_commands():
    cfg = read_shell("for s in 1 2; do python t.py --seed $s; done\ncase $M in a) python u.py;; esac\n").data
    assert cfg["commands"]["t.py"]["@when"] == "for s in 1 2"
    assert cfg["commands"]["u.py"]["@when"] == "case $M in a"


def test_launchers_are_peeled_off():
    cmd = _cmd("srun --exclusive -N 2 torchrun --nproc_per_node 8 --standalone train.py --lr 1\n", "train.py")
    assert cmd["@launcher"] == {
        "srun": {"--exclusive": True, "--nodes": 2},
        "torchrun": {"--nproc-per-node": 8, "--standalone": True},
    }
    assert _cmd("accelerate launch --num_processes 4 -m trl.scripts.grpo --lr 1\n", "trl.scripts.grpo")[
        "@launcher"
    ] == {"accelerate launch": {"--num_processes": 4, "--module": True}}  # a module, not a file pkg.t
    assert _cmd("uv run --frozen python -u -m a.b --x 1\n", "a.b")["@launcher"] == {
        "uv run": {"--frozen": True},
        "python": {"-u": True},
    }
    inner = _cmd('bash -c "deepspeed --num_gpus 2 train.py --z 3"\n', "train.py")
    assert inner == {"--z": 3, "@launcher": {"bash": {}, "deepspeed": {"--num_gpus": 2}}}


@pytest.mark.parametrize("head", ["uv launch", "accelerate run", "uv pip", "accelerate config"])
def test_a_subcommand_that_is_no_launcher_is_read_as_a_program(head):
    """Only `accelerate launch` and `uv run` launch a script; another subcommand of the same program
    is a command of its own (it raised KeyError, a traceback in `sweepgen diff`)."""
    a = read_shell(f"{head} train.py --lr 1\n").data
    b = read_shell(f"{head} train.py --lr 2\n").data
    assert diff(a, b), (a, b)
    assert "@launcher" not in str(a)


def test_a_command_before_the_launcher_shifts_nothing():
    a = read_shell("python -m m --lr 1\n").data
    b = read_shell("python prep.py --x 1\npython -m m --lr 1\n").data
    assert [c.dotted for c in diff(a, b)] == ['commands["prep.py"]']


def test_defaults_of_script_variables_substitute_and_system_values_stay_not_evaluated():
    cfg = read_shell("M=2\nK=${M:-3}\nN=${N:-4}\npython t.py --k $K --n $N --home $HOME --at $(date)\n").data
    cmd = cfg["commands"]["t.py"]
    assert cmd["--k"] == 2  # M is the script's own: its value is known
    # N comes from the environment: 4 only where it is unset, so it is kept with its default
    assert cmd["--n"] == NotEvaluated("${N:-4}")
    assert cmd["--home"] == NotEvaluated("$HOME") and cmd["--at"] == NotEvaluated("$(date)")


def test_sbatch_directives_count_only_before_the_first_command():
    cfg = read_shell("#!/bin/bash\n#SBATCH --nodes=2 -p gpu\necho hi\n#SBATCH --mem=8G\n").data
    assert cfg["sbatch"] == {"--nodes": 2, "--partition": "gpu"}  # -p is --partition


def test_what_the_grammar_cannot_read_is_kept_as_source_with_a_warning():
    result = read_shell("python t.py --a 1\nif then fi fi (\n", "x.sh")
    assert result.warnings and "x.sh:" in result.warnings[0]
    opaque = [v for k, v in result.data["commands"].items() if k.startswith("(")]
    # bash refuses line 2 (`then` where a command starts), and the text holds it: never reached
    assert opaque and all(v["@when"] == "never reached (after a syntax error)" for v in opaque)
    assert all(isinstance(v["@source"], NotEvaluated) for v in opaque)


def test_nul_bytes_are_a_located_error():
    with pytest.raises(UserError) as info:
        read_shell("python t.py\necho \x00\n", "x.sh")
    assert str(info.value.location) == "x.sh:2:6"


def test_lines_are_known_for_commands_and_flags():
    result = read_shell("#!/bin/bash\n\npython t.py \\\n  --lr 1 \\\n  --b 2\n", "x.sh")
    assert result.lines[("commands", "t.py")] == 3
    assert result.line_of(("commands", "t.py", "--b")) == 5


def test_a_variable_exported_twice_keeps_both_values():
    # a command between the two exports saw the first: keeping only the last would hide a change
    a = read_shell("export LR=1\npython a.py\nexport LR=2\npython b.py\n").data
    b = read_shell("export LR=3\npython a.py\nexport LR=2\npython b.py\n").data
    assert a["env"] == {"LR": ["1", "2"], "@late": {"LR": ["after a.py"]}}
    assert [c.dotted for c in diff(a, b)] == ["env.LR[0]"]


def test_integer_arithmetic_over_known_values_is_computed_as_bash_does():
    cfg = read_shell(
        "p=2048\nr=4096\nlen=$(((p + r) * 3))\npython t.py --len $len --half $((7 / 2)) --neg $((-7 / 2)) "
        "--rem $((-7 % 3)) --x $((unknown + 1))\n"
    ).data
    cmd = cfg["commands"]["t.py"]
    assert (cmd["--len"], cmd["--half"], cmd["--neg"], cmd["--rem"]) == (18432, 3, -3, -1)
    assert cmd["--x"] == NotEvaluated("$((unknown + 1))")


@pytest.mark.parametrize("signs", [3000, 6000])
def test_arithmetic_nested_past_python_s_parser_is_not_evaluated(signs):
    """bash computes `$(( ----...1 ))` (bash itself is the oracle: 1); Python's parser ran out of
    its stack: a RecursionError (`diff` refused the whole script, "nested too deeply to read") or a
    MemoryError (`diff` said "out of memory ... the sweep is larger than this machine holds"). Now
    that expression alone is not evaluated, as one nested less deeply already was."""
    expr = "-" * signs + "1"
    assert bash_output(f"printf '%s\\0' $(( {expr} ))")[0] == "1"
    assert arithmetic(expr, {}) is None
    cmd = read_shell(f"python t.py --x $(( {expr} ))\n").data["commands"]["t.py"]
    assert isinstance(cmd["--x"], NotEvaluated)


def test_an_assignment_ends_the_sbatch_directives_too():
    cfg = read_shell("#!/bin/bash\n#SBATCH --nodes=2\nX=1\n#SBATCH --mem=8G\n").data
    assert cfg["sbatch"] == {"--nodes": 2}


@pytest.mark.parametrize(
    ("one", "two"),
    [
        ("declare X=ABC", "declare -l X=ABC"),  # -l lower-cases what is bound
        ("declare -A M=([a]=1)", "declare -Aq M=([a]=1)"),  # bash refuses -q: nothing is bound
        ("export X=1", "export X=1; export -n X"),  # -n takes the export away
        ("declare -i N=2*3", "declare -i N=2*4"),
    ],
)
def test_a_declare_option_that_changes_what_is_bound_is_never_equal(one, two):
    tail = '\npython t.py --x "$X" --m "${M[$K]}" --n "$N"\n'
    assert diff(read_shell(one + tail).data, read_shell(two + tail).data), (one, two)


def test_declare_options_that_bind_as_written_read_as_the_plain_forms():
    tail = '\npython t.py --x "$X" --a "${A[@]}"\n'
    plain = read_shell("export X=1\nA=(1 2)" + tail).data
    assert diff(read_shell("declare -x X=1\ndeclare -a A=(1 2)" + tail).data, plain) == []


def _equal(one: str, two: str) -> bool:
    return not diff(read_shell(one).data, read_shell(two).data)


def test_a_function_reads_the_variables_bound_when_it_is_called():
    # bash runs a function's body at each call: a variable set after the definition is the one read
    script = 'run() { python t.py --lr "$LR"; }\nLR={lr}\nrun\nLR=9\n'
    one, two = script.replace("{lr}", "1e-5"), script.replace("{lr}", "2e-5")
    assert _cmd(one, "t.py") == {"--lr": 1e-5, "@when": "function run", "@launcher": {"python": {}}}
    assert not _equal(one, two)
    later = "LR=1\nrun() { python t.py --lr $LR; }\nLR={lr}\nrun\n"
    assert _cmd(later.replace("{lr}", "3"), "t.py")["--lr"] == 3
    # called twice, it runs twice; a later definition replaces the earlier one, as in bash
    twice = read_shell("f() { python t.py --x 1; }\nf\nf\n").data["commands"]
    assert set(twice) == {"f", "f #2", "t.py", "t.py #2"}
    assert _equal("f() { python t.py --x 1; }\nf() { python t.py --x 2; }\nf\n",
                  "f() { python t.py --x 5; }\nf() { python t.py --x 2; }\nf\n")  # fmt: skip


def test_an_assignment_before_a_function_call_holds_while_its_body_runs():
    # bash runs the body with LR=2 and gives LR back its 1 after the call
    body = "run() { python t.py --lr $LR; }\nLR=1\necho $LR\nLR=2 run\npython e.py --lr $LR\n"
    assert _cmd(body, "t.py")["--lr"] == 2 and _cmd(body, "e.py")["--lr"] == 1
    assert not _equal(body, body.replace("--lr $LR; }", "--lr 1; }"))


def test_a_function_never_called_or_calling_itself_still_shows_its_body():
    assert not _equal("f() { python t.py --x 1; }\n", "f() { python t.py --x 2; }\n")
    assert not _equal("f() { python t.py --x 1; f; }\nf\n", "f() { python t.py --x 2; f; }\nf\n")


def test_a_call_before_the_definition_runs_nothing():
    # bash answers "command not found" for `run` on line 1: the body runs only where it is called
    body = "run() { python t.py --lr 1; }\n"
    assert not _equal("run\n" + body, body + "run\n")
    assert _cmd("run\n" + body, "t.py")["@when"] == "never called and function run"


def test_a_call_tree_too_large_to_walk_is_a_located_error():
    levels = "".join(f"f{i}() {{ f{i + 1}; f{i + 1}; }}\n" for i in range(20)) + "f20() { true; }\nf0\n"
    with pytest.raises(UserError, match="function calls"):
        read_shell(levels, "deep.sh")


def test_bash_c_sees_its_environment_and_its_arguments():
    # the X=v before `bash -c` and the words after its code reach the inner program: both show
    for one, two in [
        ("LR=1 bash -c 'python t.py --lr $LR'\n", "LR=2 bash -c 'python t.py --lr $LR'\n"),
        ("srun bash -c 'python t.py --lr $1' _ 1\n", "srun bash -c 'python t.py --lr $1' _ 2\n"),
        ("LR=1 eval 'python t.py --lr $LR'\n", "LR=2 eval 'python t.py --lr $LR'\n"),
        ("bash -c 'exit $1' _ 1\n", "bash -c 'exit $1' _ 2\n"),
        ("bash -c 'export LR=1; python t.py'\n", "bash -c 'export LR=2; python t.py'\n"),
    ]:
        assert not _equal(one, two), one
    assert _cmd("LR=1 bash -c 'python t.py --lr $LR'\n", "t.py") == {
        "--lr": 1,
        "@env": {"LR": "1"},
        "@launcher": {"bash": {}, "python": {}},
    }
    # a variable the script does not export is not the inner shell's: it comes from the environment
    plain = _cmd("LR=1\nbash -c 'python t.py --lr $LR'\n", "t.py")["--lr"]
    assert isinstance(plain, NotEvaluated) and plain.source == "$LR"
    assert _cmd("export LR=1\nbash -c 'python t.py --lr $LR'\n", "t.py")["--lr"] == 1


_ARITH = ["2#101", "16#fF", "64#@_", "36#Zz", "2#2", "37#1", "7//2", "3 ** 2", "-7 / 2", "2 # 1", "1_000"]
# bash binds a sign tighter than `**` (Python looser) and wraps at 64 bits, also on the way
_ARITH += ["-2**2", "- 2 ** 2", "-(2)**2", "4*-2**2", "1 - -2**2", "2**62*4/8", "9223372036854775807*2/2"]
_ARITH += ["3000000000*4000000000", "2**63", "2**62", "(-2)**2", "2**3**2", "-(2**2)"]
# bash's constants: `0x` hex, a leading 0 octal (`08` refused); Python reads `1_0`, bash refuses it
_ARITH += ["0x10", "0X1f", "010", "00", "08", "0x1_0", "1+0x2*010", "0xffffffffffffffff", "1e3", "0b1"]


def test_arithmetic_is_bash_s_value_or_not_evaluated():
    # Python's parser read `2#101` as 2 (the rest a comment) and `7//2` as 3: bash reads 5 and refuses
    for expr in _ARITH:
        run = subprocess.run(["bash", "-c", f"echo $(({expr}))"], capture_output=True, text=True, check=False)
        ours = arithmetic(expr, {})
        assert ours is None or (run.returncode == 0 and ours == run.stdout.strip()), (expr, ours, run)
    assert arithmetic("2#101", {}) == "5" and arithmetic("16#fF", {}) == "255"
    assert not _equal("python t.py --n $((2#101))\n", "python t.py --n $((2#110))\n")
    assert not _equal("python t.py --n $((-2**2))\n", "python t.py --n -4\n")
    assert not _equal("python t.py --n $((2**62*4/8))\n", "python t.py --n 2305843009213693952\n")
    assert arithmetic("(-2)**2", {}) == "4" and arithmetic("2**62", {}) == str(2**62)


def test_arithmetic_reads_hex_and_octal_constants_as_bash_does():
    # `$((0x10))` was not evaluated (its `x10` read as a variable): a change against `$((16))`
    assert arithmetic("0x10", {}) == "16" and arithmetic("3*010", {}) == "24"
    assert _equal("python t.py --n $((0x10))\n", "python t.py --n $((16))\n")
    assert not _equal("python t.py --n $((010))\n", "python t.py --n $((10))\n")


_HEREDOCS = [
    "cat <<EOF\n  lr: 1\nEOF\n",  # the grammar starts the body at its first non-blank character
    "cat <<EOF\n\t  lr: 1\n  x\nEOF\n",
    "cat <<-EOF\n\t  lr: 1\n\tx\n\tEOF\n",
    "cat <<EOF\n\n\n  lr: 1\nEOF\n",
    "cat <<EOF\n  a  \n\nEOF\n",  # trailing blanks and blank lines are the program's input too
    "cat <<EOF\n   \nEOF\n",
    "X=1\ncat <<EOF\n  $X y\nEOF\n",
    "cat <<'EOF'\n  $a\nEOF\n",
]


@pytest.mark.parametrize("script", _HEREDOCS)
def test_a_here_document_is_the_text_bash_feeds(script):
    run = subprocess.run(["bash", "-c", script], capture_output=True, text=True, check=True)
    assert _cmd(script, "cat")["@stdin"] == run.stdout


def test_here_documents_bash_feeds_differently_are_never_equal():
    assert not _equal("cat <<EOF\n  x = 1\nEOF\n", "cat <<EOF\nx = 1\nEOF\n")
    assert not _equal("cat <<-EOF\n\tlr: 1\n\tEOF\n", "cat <<EOF\n\tlr: 1\nEOF\n")
    assert not _equal("cat <<EOF\na: 1\nEOF\n", "cat <<EOF\na: 1\n\nEOF\n")


def test_a_here_document_fed_to_a_loop_is_read_by_its_commands():
    loop = "while read lr; do python t.py --lr $lr; done <<EOF\n{}\nEOF\n"
    assert not _equal(loop.format("1e-5"), loop.format("2e-5"))
    assert _cmd(loop.format("1e-5"), "t.py")["@stdin"] == "1e-5\n"


@pytest.mark.parametrize(
    ("one", "two"),
    [
        # a literal `$` (quoted or escaped) beside a part kept as source is not that expansion
        ("python t.py --x '$A'$B\n", "python t.py --x $A$B\n"),
        ('python t.py --x "\\$A $B"\n', 'python t.py --x "$A $B"\n'),
        ("python t.py --x \\$A$B\n", "python t.py --x $A$B\n"),
        ("X='$A'$B\npython t.py --x \"$X\"\n", 'X=$A$B\npython t.py --x "$X"\n'),
        ('python t.py --x "${A:-\\$B}"\n', 'python t.py --x "${A:-$B}"\n'),
        ("cat > c.yaml <<EOF\nx: \\$A $B\nEOF\n", "cat > c.yaml <<EOF\nx: $A $B\nEOF\n"),
        # an unquoted `~` is the user's home, an unquoted pattern the files present
        ("python t.py --out ~/ckpt\n", "python t.py --out '~/ckpt'\n"),
        ("X=~/a\npython t.py --out $X\n", "X='~/a'\npython t.py --out $X\n"),
        ("python t.py --out ~/ckpt/$N\n", "python t.py --out '~/ckpt/'$N\n"),
        ("python t.py --files data/*.json\n", "python t.py --files 'data/*.json'\n"),
        ("python t.py --f $D/*.json\n", 'python t.py --f "$D/*.json"\n'),
        ("X='data/*.json'\npython t.py --f $X\n", "X='data/*.json'\npython t.py --f \"$X\"\n"),
        ('A=(data/*.json)\npython t.py "${A[@]}"\n', "A=('data/*.json')\npython t.py \"${A[@]}\"\n"),
        # an arithmetic expansion that assigns leaves its variable unknown
        ("N=2\necho $((N+=1))\npython t.py --m $N\n", "N=2\necho $((N+=1))\npython t.py --m 2\n"),
        # a quoted expansion not known is one word; unquoted, bash splits it and expands patterns
        ('python t.py --name "$1"\n', "python t.py --name $1\n"),
        ('python t.py --name "$(hostname)"\n', "python t.py --name $(hostname)\n"),
        ('X=$1\npython t.py --name "$X"\n', "X=$1\npython t.py --name $X\n"),
        ('python t.py --out="$HOME"/x\n', "python t.py --out=$HOME/x\n"),
        ('python t.py --out "${OUT:-a b}"\n', "python t.py --out ${OUT:-a b}\n"),
        ('python t.py --x \\"$1\\"\n', 'python t.py --x "$1"\n'),
    ],
)
def test_what_bash_expands_differently_is_never_equal(one, two):
    assert not _equal(one, two)


@pytest.mark.parametrize(
    ("one", "two"),
    [
        ("python t.py --out=~/ckpt\n", "python t.py --out='~/ckpt'\n"),  # `~` after `--out=`: literal
        ("python t.py a.b=~/y ~c.d\n", "python t.py 'a.b=~/y' '~c.d'\n"),  # Hydra keys, deletions
        ('X=data/*.json\npython t.py --f "$X"\n', "X='data/*.json'\npython t.py --f \"$X\"\n"),
        ("N=2\necho $((N<=1))\npython t.py --m $N\n", "N=2\necho $((N<=1))\npython t.py --m 2\n"),
        # an assignment never splits: quoting its value changes nothing
        ('X="$1"\npython t.py --n "$X"\n', 'X=$1\npython t.py --n "$X"\n'),
        ('X="$1" python t.py\n', "X=$1 python t.py\n"),
    ],
)
def test_what_bash_leaves_as_written_reads_the_same(one, two):
    assert _equal(one, two)


@pytest.mark.parametrize("takeaway", ["unset A", "unset -v A", "export -n A"])
def test_taking_an_export_away_after_a_program_ran_is_not_seen_by_it(takeaway):
    # t.py saw A=1 only where the variable is taken away after it
    assert not _equal(f"export A=1\n{takeaway}\npython t.py\n", f"export A=1\npython t.py\n{takeaway}\n")


def test_an_unset_variable_set_again_is_not_exported():
    assert not _equal(
        "export A=1\nunset A\nA=2\npython t.py\n", "export A=1\nunset A\nexport A=2\npython t.py\n"
    )


def test_an_export_after_a_program_is_not_seen_by_it():
    # `python t.py; export X=0` and `export X=0; python t.py` read the same final env, but t.py saw X
    # only in the second
    assert not _equal("python t.py\nexport X=0\n", "export X=0\npython t.py\n")
    assert not _equal("X=0\npython t.py\nexport X\n", "X=0\nexport X\npython t.py\n")
    # what no variable changes (echo, mkdir, set) does not make an export late
    assert _equal(
        "set -x\nmkdir -p out\nexport X=0\npython t.py\n", "export X=0\nset -x\nmkdir -p out\npython t.py\n"
    )


def test_a_subshell_or_pipeline_binds_nothing_after_it():
    assert not _equal("X=0\n( X=1 )\npython t.py --x $X\n", "X=1\npython t.py --x $X\n")
    assert not _equal("X=0\necho | X=1\npython t.py --x $X\n", "X=1\necho\npython t.py --x $X\n")
    assert _cmd("X=0\n( X=1; python t.py --x $X )\n", "t.py")["--x"] == 1  # inside, it is bound


@pytest.mark.parametrize(
    "state", ["cd /data", "export A=1", "source env.sh", "conda activate rl", "ulimit -n 4096"]
)
def test_what_a_subshell_changes_is_not_the_same_change_outside_it(state):
    # `( cd /data )` leaves e.py in the folder it was in; `cd /data` moves it
    assert not _equal(f"( {state} )\npython e.py\n", f"{state}\npython e.py\n")
    assert _cmd(f"( {state}; python t.py )\n", "t.py")["@when"] == "in a subshell ( )"


@pytest.mark.parametrize(
    ("one", "two"),
    [
        # blanks and `#` inside a value are the value: only the layout of code is not a difference
        ('python t.py --x "a  $1"\n', 'python t.py --x "a $1"\n'),
        ('X="$1 #a"\npython t.py --x "$X"\n', 'X="$1 #b"\npython t.py --x "$X"\n'),
        ("python t.py <<EOF\na  $1\nEOF\n", "python t.py <<EOF\na $1\nEOF\n"),
        ("python t.py <<EOF\n$1 # a\nEOF\n", "python t.py <<EOF\n$1 # b\nEOF\n"),
        ("python t.py --x \"$(cat 'a  b')\"\n", "python t.py --x \"$(cat 'a b')\"\n"),
        # CRLF line endings: bash passes `1\r`
        ("python t.py --lr 1\r\n", "python t.py --lr 1\n"),
    ],
)
def test_blanks_inside_values_are_part_of_them(one, two):
    assert not _equal(one, two)


def test_the_layout_of_unevaluated_code_is_still_no_difference():
    assert _equal('python t.py --x "$(cat a  b   # why\n)"\n', 'python t.py --x "$(cat a b\n)"\n')
    assert _equal("python t.py --x $(cat  a)\n", "python t.py --x $(cat a)\n")


def test_a_crlf_script_file_keeps_its_carriage_returns(tmp_path):
    from sweepgen.readers.shell.shellconfig import read_shell_file

    crlf, lf = tmp_path / "a.sh", tmp_path / "b.sh"
    crlf.write_bytes(b"python t.py --lr 1\r\n")
    lf.write_bytes(b"python t.py --lr 1\n")
    assert diff(read_shell_file(crlf).data, read_shell_file(lf).data)


@pytest.mark.parametrize(
    "other",
    [
        "python3 train.py --lr 1",
        "python3.11 train.py --lr 1",
        "/usr/bin/python train.py --lr 1",
        "./train.py --lr 1",
        "train.py --lr 1",
        "PY=python3; $PY train.py --lr 1",
    ],
)
def test_another_interpreter_is_a_change(other):
    """Each spelling may name another Python (another environment): never "no differences"."""
    assert not _equal("python train.py --lr 1\n", other + "\n"), other


@pytest.mark.parametrize(
    ("one", "two"),
    [
        ("python -m pkg.t", "python3 -m pkg.t"),
        ("python -u t.py", "python3 -u t.py"),
        ("srun python t.py", "srun python3 t.py"),
        ("torchrun --nproc_per_node 8 t.py", "python -m torch.distributed.run --nproc_per_node 8 t.py"),
        ("torchrun --nproc_per_node 8 t.py", "/opt/venv/bin/torchrun --nproc_per_node 8 t.py"),
        ("accelerate launch t.py", "/opt/venv/bin/accelerate launch t.py"),
    ],
)
def test_interpreter_and_launcher_paths_are_kept(one, two):
    assert not _equal(one + "\n", two + "\n"), (one, two)
    assert _equal(one + "\n", one.replace(" ", "  ") + "\n")  # layout alone is still no change


def test_another_shell_for_c_code_is_a_change():
    for one, two in [
        ("bash -c 'python t.py'\n", "sh -c 'python t.py'\n"),
        ("srun bash -c 'python t.py'\n", "srun /bin/bash -c 'python t.py'\n"),
        ("bash -c 'export X=1'\n", "sh -c 'export X=1'\n"),
    ]:
        assert not _equal(one, two), (one, two)


def test_local_shadows_until_the_function_returns():
    """bash undoes `local` (and `declare` in a function) at return, and `local X` is a new, empty X."""
    after = "LR=1\nrun() { %s; }\nrun\npython t.py --lr $LR\n"
    assert _cmd(after % "local LR=2", "t.py")["--lr"] == 1  # given back at return
    assert _cmd(after % "declare LR=2", "t.py")["--lr"] == 1
    assert isinstance(_cmd(after % "declare -g LR=2", "t.py")["--lr"], NotEvaluated)  # global
    assert isinstance(_cmd(after % "if c; then local LR=2; else LR=3; fi", "t.py")["--lr"], NotEvaluated)
    for one, two in [
        (after % "local LR=2", after % "LR=2"),
        ('X=5\nf() { local X; python t.py --x "$X"; }\nf\n', 'X=5\nf() { python t.py --x "$X"; }\nf\n'),
        ('X=5\nf() { declare X; python t.py --x "$X"; }\nf\n', 'X=5\nf() { python t.py --x "$X"; }\nf\n'),
        (
            'X=(a)\nf() { local -a X; X+=(b); }\nf\npython t.py --x "${X[@]}"\n',
            'X=(a)\nf() { X+=(b); }\nf\npython t.py --x "${X[@]}"\n',
        ),
    ]:
        assert not _equal(one, two), (one, two)


def test_an_indented_sbatch_line_is_a_comment():
    """sbatch matches `#SBATCH` at the start of a line only (strncmp on the line)."""
    indented = read_shell("#!/bin/bash\n  #SBATCH --nodes=4\n#SBATCH --time=1:00\npython t.py\n").data
    assert indented["sbatch"] == {"--time": "00:01:00"}  # 1 min 0 s, as `scontrol show job` prints it
    assert not _equal(
        "#!/bin/bash\n  #SBATCH --nodes=4\npython t.py\n", "#!/bin/bash\n#SBATCH --nodes=4\npython t.py\n"
    )


@pytest.mark.parametrize(
    ("one", "two"),
    [
        ("python t.py --x {a,b}", "python t.py --x '{a,b}'"),  # bash: --x a b
        ("python t.py a={x:1,y:2}", "python t.py 'a={x:1,y:2}'"),  # bash: a=x:1 a=y:2
        ("python t.py --x={a,b}", "python t.py '--x={a,b}'"),
        ("python t.py --x={a,b}", "python t.py --x {a,b}"),  # --x=a --x=b against --x a b
        ("python t.py --x a{1,2}", "python t.py --x 'a{1,2}'"),
    ],
)
def test_a_brace_expansion_is_never_its_quoted_spelling(one, two):
    assert not _equal(one + "\n", two + "\n"), (one, two)


def test_braces_bash_does_not_expand_stay_literal():
    assert _equal("python t.py --x x{a}y\n", "python t.py --x 'x{a}y'\n")  # no `,` or `..`
    assert _equal("X={a,b}\npython t.py --x $X\n", "X='{a,b}'\npython t.py --x $X\n")  # assignment


def test_a_script_that_sets_ifs_splits_otherwise():
    """With IFS=, bash splits `$X` at commas, not blanks: the expansion is kept as written."""
    for one, two in [
        ("IFS=,\nX='a b'\npython t.py --x $X\n", "IFS=,\npython t.py --x a b\n"),
        ("IFS=,\nX='a,b'\npython t.py --x $X\n", "IFS=,\npython t.py --x 'a,b'\n"),
        ("IFS=,\nX='a,b'\npython t.py --x $X\n", "IFS=,\nX='a,c'\npython t.py --x $X\n"),
    ]:
        assert not _equal(one, two), (one, two)
    assert _cmd("IFS=$' \\t\\n'\nX='a b'\npython t.py --x $X\n", "t.py")["--x"] == ["a", "b"]  # the default


@pytest.mark.parametrize(
    "joined",
    ['python t.py --x "${A[*]}"\n', 'python t.py --x "x=${A[*]}"\n', "cat <<EOF\n${A[*]}\nEOF\n"],
)
def test_words_joined_by_a_script_s_ifs_are_not_joined_by_blanks(joined):
    # bash joins `"${A[*]}"` (and `"$*"`) with the first character of IFS: a,b,c here
    script = "IFS=,\nA=(a b c)\n" + joined
    spelled = script.replace("${A[*]}", "a b c")
    assert read_shell(script).data["commands"] != read_shell(spelled).data["commands"]
    run = subprocess.run(
        ["bash", "-c", script.replace("python t.py --x", "echo")], capture_output=True, text=True
    )
    assert "a,b,c" in run.stdout


def test_a_variable_read_only_by_its_own_assignment_still_shows():
    """`PATH=/x:$PATH` changes what the commands after it run (PATH comes exported from the
    environment), though no command shows its value."""
    assert not _equal("PATH=/x:$PATH\npython t.py\n", "python t.py\n")
    assert not _equal("PATH=/x:$PATH\npython t.py\n", "PATH=/y:$PATH\npython t.py\n")


def test_a_script_that_is_not_utf8_is_an_error_at_its_first_bad_byte(tmp_path):
    path = tmp_path / "x.sh"
    path.write_bytes(b"python t.py\necho \xff\n")
    with pytest.raises(UserError) as info:
        read_shell_file(path)
    assert str(info.value.location) == f"{path}:2:6" and "0xff" in str(info.value)


def test_a_quoted_element_expanded_unquoted_never_yields_a_known_quote():
    # `"$1 x"` split by an unquoted `${A[@]}` is what `$1` holds, split, then `x`: bash drops the
    # quotes the element was assigned in, so no piece keeps one
    args = _cmd('A=("$1 x" b)\npython t.py ${A[@]}\n', "t.py")["@args"]
    assert isinstance(args[0], NotEvaluated) and args[0].source == "$1" and args[1:] == ["x", "b"]


def test_export_of_an_inherited_name_is_not_an_assignment_of_it(tmp_path):
    # `export LR` passes LR on only where the environment set it; `LR="$LR"` sets it (empty where
    # it was unset), so every child sees LR after `LR="$LR"; export LR` (bash itself says so)
    (tmp_path / "a.sh").write_text("export LR\npython t.py\n")
    (tmp_path / "b.sh").write_text('LR="$LR"\nexport LR\npython t.py\n')
    probe = "python() { env | grep -c ^LR=; }\n"
    seen = [
        subprocess.run(
            ["bash", "-c", probe + (tmp_path / name).read_text()],
            env={"PATH": os.environ["PATH"]},
            capture_output=True,
            text=True,
            check=False,
        ).stdout
        for name in ("a.sh", "b.sh")
    ]
    assert seen == ["0\n", "1\n"]  # the oracle: bash
    changes = compare(str(tmp_path / "a.sh"), str(tmp_path / "b.sh")).changes
    assert [c.dotted for c in changes] == ["env.LR"]


def test_a_sourced_file_with_other_contents_is_a_change(tmp_path):
    # `source ./env.sh` runs what env.sh holds: two scripts alike that source other contents differ
    for side, lr in (("a", "1"), ("b", "2")):
        (tmp_path / side).mkdir()
        (tmp_path / side / "run.sh").write_text("source ./env.sh\npython t.py --lr $LR\n")
        (tmp_path / side / "env.sh").write_text(f"LR={lr}\n")
    a, b = str(tmp_path / "a" / "run.sh"), str(tmp_path / "b" / "run.sh")
    assert [c.dotted for c in compare(a, b).changes] == ["commands.source.@file"]
    (tmp_path / "b" / "env.sh").write_text("LR=1\n")
    assert compare(a, b).changes == []
    (tmp_path / "b" / "env.sh").unlink()  # not found: said so, never a digest
    assert compare(a, b).second.data["commands"]["source"]["@file"].startswith("not read")
    (tmp_path / "a" / "run.sh").write_text("source ../b/run.sh\n")  # outside its project: never read
    assert compare(a, a).first.data["commands"]["source"]["@file"] == "not read (outside the project)"


_SOURCE_IDIOMS = [
    # two deep: run.sh sources env.sh, which sources common.sh (from bash's working directory)
    ("source ./env.sh\n", "env.sh", "source ./common.sh\n", "common.sh"),
    # a path built from the script's own folder, and the sourced file's `BASH_SOURCE` idiom
    ('source "$(dirname "$0")/env.sh"\n', "env.sh", ". $(dirname ${BASH_SOURCE})/common.sh\n", "common.sh"),
    (
        'DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)\nsource "${DIR}/cfg/env.sh"\n',
        "cfg/env.sh",
        'source "$(dirname "${BASH_SOURCE[0]}")/common.sh"  # shared\n',
        "cfg/common.sh",
    ),
]


@pytest.mark.parametrize(("head", "env", "env_text", "common"), _SOURCE_IDIOMS)
def test_a_sourced_chain_is_part_of_what_runs(tmp_path, head, env, env_text, common):
    # bash runs what every file of the chain holds: a value two files down is a change
    seen = []
    for side, lr in (("a", "1"), ("b", "2")):
        (tmp_path / side / "cfg").mkdir(parents=True)
        (tmp_path / side / "run.sh").write_text(head + "echo LR=$LR\n")
        (tmp_path / side / env).write_text(env_text)
        (tmp_path / side / common).write_text(f"LR={lr}\n")
        folder = tmp_path / side
        seen.append(subprocess.run(["bash", "run.sh"], cwd=folder, capture_output=True, text=True).stdout)
    assert seen == ["LR=1\n", "LR=2\n"]  # the oracle: bash
    a, b = str(tmp_path / "a" / "run.sh"), str(tmp_path / "b" / "run.sh")
    assert [c.dotted for c in compare(a, b).changes] == ["commands.source.@file"]
    (tmp_path / "b" / common).write_text("LR=1\n")
    assert compare(a, b).changes == []


def test_a_double_dash_the_program_is_given_is_a_change():
    # `--` reaches the program's argv: argparse drops it, fire and a script reading sys.argv do not
    plain = _cmd("python t.py x\n", "t.py")
    assert _cmd("python t.py -- x\n", "t.py") == {**plain, "--": True} != plain
    assert _cmd("python t.py --lr 1 --\n", "t.py") != _cmd("python t.py --lr 1\n", "t.py")
    # torchrun's own `--` (argparse, its own parser) is not given to the program
    assert _cmd("torchrun -- t.py --lr 1\n", "t.py") == _cmd("torchrun t.py --lr 1\n", "t.py")


@pytest.mark.parametrize(
    ("one", "two"),
    [("python t.py a -- b", "python t.py a b --"), ("python t.py a b -- c", "python t.py a -- b c")],
)
def test_a_double_dash_moved_among_positionals_is_a_change(one, two):
    # the program's argv differs (bash, the oracle, hands it the words in order); both held one
    # `--` and the same positionals, which read as "no differences"
    assert bash_output(f"printf '%s\\0' {one}") != bash_output(f"printf '%s\\0' {two}")
    assert line_changes(one, two) == ['commands["t.py"].--']
