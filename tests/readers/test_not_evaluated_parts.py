"""A part the readers cannot evaluate is a leaf carrying its definition's source: it never absorbs
its neighbours, for shell arrays and variables and for Python branches."""

from __future__ import annotations

from sweepgen.readers.align import reconcile_argv_orders
from sweepgen.readers.diff import diff
from sweepgen.readers.model import NotEvaluated
from sweepgen.readers.python.pyast import read_python
from sweepgen.readers.shell.shellconfig import read_shell


def _changes(a: str, b: str) -> list[str]:
    old, new = read_shell(a).data, read_shell(b).data
    reconcile_argv_orders(old, new)  # as `compare` does: the order of the flags both sides give
    return [f"{c.dotted}: {c.old!r} -> {c.new!r}" for c in diff(old, new)]


MEGATRON = (
    "DATA_ARGS=( --data-path $DATA_PATH --split 949,50,1 )\npython pretrain_gpt.py --pp 16 ${DATA_ARGS[@]}\n"
)


def test_an_edit_beside_an_unknown_array_element_is_seen():
    b = MEGATRON.replace("949,50,1", "969,30,1")
    assert _changes(MEGATRON, b) == ["commands[\"pretrain_gpt.py\"].--split: '949,50,1' -> '969,30,1'"]
    cmd = read_shell(MEGATRON).data["commands"]["pretrain_gpt.py"]
    assert cmd["--data-path"] == NotEvaluated("$DATA_PATH") and cmd["--pp"] == 16


def test_a_variable_under_a_positional_keeps_its_definition():
    a = "X=$1/run_a\npython t.py --out $X\n"
    (change,) = diff(read_shell(a).data, read_shell(a.replace("run_a", "run_b")).data)
    assert change.dotted == 'commands["t.py"].--out'
    assert (change.old, change.new) == (NotEvaluated("$1/run_a"), NotEvaluated("$1/run_b"))


def test_inserting_one_flag_into_an_array_is_one_added_flag():
    a = "ARGS=( --a 1 --b 2 --c 3 )\npython t.py ${ARGS[@]}\necho $(hostname)\n"  # $(...): vars are shown
    b = a.replace("--a 1 ", "--a 1 --new 9 ")
    assert _changes(a, b) == [
        'commands["t.py"].--new: <absent> -> 9',
        "vars.ARGS.--new: <absent> -> 9",
    ]
    assert read_shell(a).data["vars"]["ARGS"] == {"--a": 1, "--b": 2, "--c": 3}


def test_an_unknown_array_is_its_own_part_not_a_flags_value():
    a = 'if [ -n "$X" ]; then A=( --x 1 ); fi\npython t.py --pp 16 ${A[@]} --tp 2\n'
    b = 'if [ -n "$X" ]; then A=( --x 1 ); fi\npython t.py ${A[@]} --tp 2 --pp 16\n'
    cmd = read_shell(a).data["commands"]["t.py"]
    # (marked as the array the script made unknown, never the environment's `${A[@]}`)
    assert cmd["--pp"] == 16 and cmd["${A[@] unknown #1}"] == NotEvaluated("${A[@] unknown #1}")
    # no flag's value; but the array may hold `--pp 8`, which wins after `--pp 16` and loses before
    order = "'--pp, ${A[@] unknown #1}, --tp' -> '${A[@] unknown #1}, --tp, --pp'"
    assert _changes(a, b) == [f'commands["t.py"]["@argv order"]: {order}']


def test_an_assignment_with_several_variables_is_an_assignment():
    cfg = read_shell("M=llama\nX=a/$M/$T/c.yaml\npython t.py --cfg $X\n").data
    assert "T/c.yaml" not in cfg["commands"]
    assert cfg["commands"]["t.py"]["--cfg"] == NotEvaluated("a/llama/${T}/c.yaml")


def test_appends_build_one_flag_mapping():
    a = "ARGS=( --a 1 )\nARGS+=( --b 2 )\nARGS+=( --c 3 )\necho $(date)\n"
    assert read_shell(a).data["vars"]["ARGS"] == {"--a": 1, "--b": 2, "--c": 3}


TRLX = (
    "import os\nfrom trlx.data.configs import TRLConfig, TrainConfig\n"
    "cfg = TRLConfig(train=TrainConfig(batch_size=8, lr=3e-5))\n"
    "if os.environ.get('X') == 'y':\n    cfg.train.batch_size = 1\nelse:\n    cfg.train.tags = ['prod']\n"
)


def test_a_branch_on_the_environment_keeps_the_values_before_it():
    kwargs = read_python(TRLX).data["cfg"]["kwargs"]["train"]["kwargs"]
    assert kwargs["lr"] == 3e-5
    assert kwargs["batch_size"] == {"@value": 8, "@when": {"os.environ.get('X') == 'y'": 1}}
    assert kwargs["tags"] == {"@when": {"not (os.environ.get('X') == 'y')": ["prod"]}}
    assert [
        c.dotted for c in diff(read_python(TRLX).data, read_python(TRLX.replace("3e-5", "1e-5")).data)
    ] == ["cfg.kwargs.train.kwargs.lr"]


def test_a_branch_body_or_condition_change_is_a_change():
    for edited in (TRLX.replace("batch_size = 1", "batch_size = 2"), TRLX.replace("'y'", "'z'")):
        assert diff(read_python(TRLX).data, read_python(edited).data)


def test_a_loop_over_unknown_items_keeps_the_values_before_and_after_it():
    source = "import sys\nc = {'a': 1, 'tags': []}\nfor t in sys.argv:\n    c['tags'].append(t)\nc['b'] = 2\n"
    c = read_python(source).data["c"]
    assert c["a"] == 1 and c["b"] == 2
    assert c["tags"] == {"@value": [], "@when": {"for t in sys.argv": [NotEvaluated("sys.argv")]}}
