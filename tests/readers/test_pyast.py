"""The Python config reader: real-world style files parse to the data they spell, nothing is run,
and nothing a diff could need is dropped."""

from __future__ import annotations

import pprint
from pathlib import Path

import pytest
from fs_support import sweepgen
from hypothesis import given, settings
from hypothesis import strategies as st

from sweepgen.errors import ConfigError
from sweepgen.readers.diff import diff
from sweepgen.readers.python.pyast import CallData, NotEvaluated, Ref, read_python, read_python_file

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "pyconfigs"


def test_mmdet_base_model_is_nested_mappings_with_literal_values():
    cfg = read_python_file(FIXTURES / "_base_/models/faster_rcnn_r50_fpn.py").data
    backbone = cfg["model"]["backbone"]
    assert backbone["type"] == "ResNet" and backbone["depth"] == 50
    assert backbone["out_indices"] == (0, 1, 2, 3) and type(backbone["out_indices"]) is tuple
    assert backbone["norm_cfg"] == {"type": "BN", "requires_grad": True}
    assert cfg["model"]["data_preprocessor"]["mean"] == [123.675, 116.28, 103.53]
    rpn = cfg["model"]["train_cfg"]["rpn"]
    assert rpn["assigner"]["ignore_iof_thr"] == -1 and rpn["pos_weight"] == -1
    assert rpn["debug"] is False
    assert list(cfg) == ["model"]


def test_mmdet_inheritance_assignments_are_kept_as_written():
    child = read_python_file(FIXTURES / "faster_rcnn" / "faster_rcnn_r50_fpn_1x_coco.py").data
    assert child == {
        "_base_": [
            "../_base_/models/faster_rcnn_r50_fpn.py",
            "../_base_/datasets/coco_detection.py",
            "../_base_/schedules/schedule_1x.py",
            "../_base_/default_runtime.py",
        ]
    }
    r101 = read_python_file(FIXTURES / "faster_rcnn" / "faster_rcnn_r101_fpn_1x_coco.py").data
    assert r101["_base_"] == "./faster_rcnn_r50_fpn_1x_coco.py"
    assert r101["model"] == {
        "backbone": {
            "depth": 101,
            "init_cfg": {"type": "Pretrained", "checkpoint": "torchvision://resnet101"},
        }
    }


def test_mmdet_override_of_a_string_base_keeps_the_assignment_under_its_source_text():
    cfg = read_python_file(FIXTURES / "faster_rcnn" / "faster_rcnn_r50_fpn_amp_1x_coco.py").data
    # `_base_` is a string here, so `_base_.optim_wrapper.type = ...` cannot nest: it is kept whole
    assert cfg["_base_.optim_wrapper.type"] == "AmpOptimWrapper"
    assert cfg["optim_wrapper"]["_delete_"] is True
    assert cfg["optim_wrapper"]["optimizer"]["weight_decay"] == 1e-4


def test_mmdet_dataset_names_and_expressions_are_evaluated():
    # names bound earlier and string arithmetic on known values are evaluated
    cfg = read_python_file(FIXTURES / "_base_/datasets/coco_detection.py").data
    dataset = cfg["train_dataloader"]["dataset"]
    assert dataset["type"] == "CocoDataset" and type(dataset["type"]) is str
    assert cfg["backend_args"] is None
    assert cfg["val_evaluator"]["ann_file"] == "data/coco/annotations/instances_val2017.json"
    assert cfg["test_evaluator"] == cfg["val_evaluator"]
    assert cfg["test_pipeline"][3]["meta_keys"][0] == "img_id"


def test_flink_sweep_is_a_call_tree_with_imports_as_references():
    cfg = read_python_file(FIXTURES / "flink_sweep_identity.py").data
    assert "__doc__" not in cfg  # a docstring is not data
    assert cfg["os"] == Ref("os")
    assert cfg["Sweep"] == Ref("post_training.experimental.comb_flink.configs.Sweep")
    assert cfg["HOME"] == NotEvaluated("os.environ['HOME']")
    assert cfg["RUN_CONFIG"].source.startswith("f'{HOME}/repos/")
    sweep = cfg["sweep"]
    assert sweep["call"] == "Sweep" and sweep["args"] == []
    assert sweep["kwargs"]["run_config"] == cfg["RUN_CONFIG"]
    config = sweep["kwargs"]["config"]
    assert config["call"] == "Config"
    trainer = config["kwargs"]["trainer"]["kwargs"]
    assert trainer["learning_rate"] == 3e-6 and trainer["kl_beta"] == 0.03
    assert config["kwargs"]["sampler"]["kwargs"]["dtype"] == Ref(
        "post_training.experimental.comb_flink.sweep_lib.DType.BF16"
    )  # through its import
    assert config["kwargs"]["eval_every"] == -1
    streamer = config["kwargs"]["debate_streamer"]["kwargs"]
    assert streamer["env_name_remap"] == {"math": "math_debate"}
    # a config is loaded as a module: the `__main__` block does not run, and is kept as its source
    # (run as a script, it would), the only statement so kept
    assert [s.source.splitlines()[0] for s in cfg["__statements__"]] == ["if __name__ == '__main__':"]


def test_flink_grid_comprehensions_lambdas_and_star_args_become_source_text():
    cfg = read_python_file(FIXTURES / "flink_grid_sweep.py").data
    assert cfg["SEEDS"] == [42, 123, 7] and cfg["BETAS"] == (0.01, 0.03, 0.1)
    assert cfg["base"]["kwargs"]["trainer"]["call"] == "TrainerConfig"
    # a comprehension over known values is evaluated
    assert [s["kwargs"]["name"] for s in cfg["sweeps"]][:2] == ["grpo_s42_b0.01", "grpo_s42_b0.03"]
    launcher = cfg["launcher"]
    assert launcher["call"] == "sweep_lib.Launcher"
    assert launcher["args"] == cfg["sweeps"]
    assert launcher["kwargs"]["on_failure"] == NotEvaluated("lambda job: job.retry(times=2)")


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("x = -1e-5", -1e-5),
        ("x = +3", 3),
        ("x = -(-2)", 2),
        ("x = f'abc' 'def'", "abcdef"),
        ("x = {1, 2}", {1, 2}),
        ("x = ()", ()),
        ("x = dict()", {}),
        ("x = dict(a=dict(b=[1, (2,)]))", {"a": {"b": [1, (2,)]}}),
        ("x = {'a': 1, 2: None}", {"a": 1, 2: None}),
        ("x = b'raw'", b"raw"),
        ("x = 1 + 2j", 1 + 2j),  # constant arithmetic is evaluated
        ("x = -True", NotEvaluated("-True")),
        ("x = ...", NotEvaluated("...")),
        ("x = f'{y}'", NotEvaluated("f'{y}'")),
        ("y = 3\nx = f'{y:03d}'", "003"),
        ("x = a[0]", NotEvaluated("a[0]")),
        ("a = [5]\nx = a[0] * 8", 40),
        ("x = f(1)(2)", CallData(call="f(1)", args=[2], kwargs={})),
        ("x = dict(a, b=1)", NotEvaluated("dict(a, b=1)")),
        ("a = {'c': 2}\nx = dict(a, b=1)", {"c": 2, "b": 1}),
        ("x = dict(**base, b=1)", NotEvaluated("dict(**base, b=1)")),
        ("x = {**base, 'b': 1}", NotEvaluated("{**base, 'b': 1}")),
        ("x = {k: 1}", NotEvaluated("{k: 1}")),
        ("x = {f(): 1}", NotEvaluated("{f(): 1}")),
        ("x = {-1: 'a', (1, -2): 'b'}", {-1: "a", (1, -2): "b"}),
        ("x = {[1]}", NotEvaluated("{[1]}")),
        ("x = [*a, 1]", NotEvaluated("[*a, 1]")),
        ("a = (0,)\nx = [*a, 1]", [0, 1]),
        ("x = 1 if a else 2", NotEvaluated("1 if a else 2")),
        ("a = 0\nx = 1 if a else 2", 2),
        ("x = [i * 2 for i in range(3) if i]", [2, 4]),
    ],
)
def test_expressions(source, expected):
    value = read_python(source).data["x"]
    assert value == expected
    assert diff(value, expected) == []  # type-strict too: a Ref is not its string


def test_statements_bind_like_python_without_running_anything():
    cfg = read_python(
        "import a.b\nimport c.d as e\nfrom . import f\nfrom ..g import h as i\nfrom j import *\n"
        "x = y = 1\nm, n = 2, (3, 4)\np, q = pair()\n"
        "d = dict(a=dict(b=1))\nd['a']['b'] = 2\nd.a.c = 3\nd['z'] = 4\n"
        "lr: float = 0.1\nonly: int\ncount = 1\ncount += 2\n"
        "def helper(x):\n    return x\n"
        "print('hello')\n"
        "tmp = 5\ndel tmp\ndel d['z'], d.a.c, nothing\n"
    ).data
    assert cfg["a"] == Ref("a") and cfg["e"] == Ref("c.d")
    assert cfg["__imports__"] == [Ref("a.b")]
    assert cfg["f"] == Ref(".f") and cfg["i"] == Ref("..g.h")
    assert cfg["x"] == cfg["y"] == 1
    assert (cfg["m"], cfg["n"]) == (2, (3, 4))
    # names bound from what cannot be evaluated are not-evaluated nodes, never dropped
    assert cfg["p"] == cfg["q"] == NotEvaluated("p, q = pair()")
    assert cfg["d"] == {"a": {"b": 2}}
    assert cfg["lr"] == 0.1 and "only" not in cfg
    assert cfg["__annotations__"] == {"lr": Ref("float"), "only": Ref("int")}
    assert cfg["count"] == 3
    assert cfg["helper"] == NotEvaluated("def helper(x):\n    return x")
    assert "tmp" not in cfg
    assert cfg["__statements__"] == [
        NotEvaluated("from j import *"),
        NotEvaluated("print('hello')"),
        # kept with the value it deletes from (once per target it cannot follow)
        NotEvaluated("del d['z'], d.a.c, nothing where d={'a': {'b': 2}}"),
    ]


def test_importing_different_submodules_of_one_package_is_a_change():
    nn, optim = read_python("import torch.nn\n").data, read_python("import torch.optim\n").data
    assert nn["torch"] == optim["torch"] == Ref("torch")
    assert [c.dotted for c in diff(nn, optim)] == ["__imports__[0]"]
    assert diff(nn, read_python("import torch.nn\n").data) == []


def test_class_bodies_become_mappings_with_bases_and_decorators():
    cfg = read_python(
        "@dataclass(frozen=True)\nclass Train(Base, metaclass=Meta):\n"
        '    """Training knobs."""\n    lr: float = 3e-6\n    steps = 15\n'
        "    class Optim:\n        name = 'adamw'\n"
    ).data
    assert cfg["Train"] == {
        "__annotations__": {"lr": Ref("float")},
        "lr": 3e-6,
        "steps": 15,
        "Optim": {"name": "adamw"},
        "__bases__": [Ref("Base")],
        "__keywords__": {"metaclass": Ref("Meta")},
        "__decorators__": [{"call": "dataclass", "args": [], "kwargs": {"frozen": True}}],
    }


def test_a_reference_and_its_string_differ_in_a_diff():
    a = read_python("dtype = torch.bfloat16").data
    b = read_python("dtype = 'torch.bfloat16'").data
    (change,) = diff(a, b)
    assert (change.kind, change.old_type, change.new_type) == ("type_changed", "ref", "str")


def test_layout_and_quoting_are_not_differences():
    a = read_python("x = dict(a=[1,\n  2], b=f(  y ))\nz = {'k' : a+1}").data
    b = read_python('x = dict(a=[1, 2], b=f(y))  # comment\nz = {"k": a + 1}').data
    assert diff(a, b) == []


def test_the_file_is_never_executed(tmp_path):
    marker = tmp_path / "ran"
    cfg_file = tmp_path / "evil.py"
    cfg_file.write_text(f"import pathlib\npathlib.Path({str(marker)!r}).write_text('x')\nx = 1\n")
    assert read_python_file(cfg_file).data["x"] == 1
    assert not marker.exists()


def test_syntax_error_names_file_line_and_column(tmp_path):
    bad = tmp_path / "bad.py"
    bad.write_text("model = dict(\n    depth=50,\n    style='pytorch'\n    norm=1)\n")
    with pytest.raises(ConfigError) as info:
        read_python_file(bad)
    err = info.value
    assert err.location.path == str(bad) and err.location.line in (3, 4)
    assert err.location.col > 0
    assert "invalid Python syntax" in err.message


@pytest.mark.parametrize(
    ("source", "line", "col", "what"),
    [
        ("x = {\n  'a': 1,\n  'a': 2}\n", 3, 3, "duplicate key 'a'"),
        ("x = dict(a=1,\n         a=2)\n", 2, 10, "keyword argument `a` repeated"),
    ],
)
def test_duplicate_keys_are_errors_not_silent_overwrites(source, line, col, what):
    with pytest.raises(ConfigError) as info:
        read_python(source, "c.py")
    assert (info.value.location.line, info.value.location.col) == (line, col)
    assert what in info.value.message


def test_a_file_too_nested_for_python_s_parser_says_why():
    """100,000 unary minus signs: Python's parser gives up with a MemoryError that has no message,
    and the refusal read "cannot parse Python config: " and nothing more."""
    with pytest.raises(ConfigError) as info:
        read_python("a = " + "-" * 100_000 + "1\n", "c.py")
    assert info.value.message == "cannot parse Python config: nested too deeply for Python's parser"


@pytest.mark.parametrize(
    "deep",
    [
        "-" * 100_000 + "1",  # the parser's MemoryError
        "a." * 10_000 + "b",  # the parser's RecursionError
        "-" * 1_500 + "1",  # parsed, too deep for the evaluator
    ],
)
@pytest.mark.parametrize("as_bytes", [False, True])
def test_a_file_too_nested_to_read_names_the_statement(deep, as_bytes):
    """Neither Python's parser nor the evaluator says where it gave up: the refusal named the file
    alone, leaving the person to search a long config; it names the statement's line and column."""
    source = "a = 1\n\nif a:\n    # the deep one\n    b = " + deep + "\n    c = [1, 2, 3, 4]\n"
    with pytest.raises(ConfigError) as info:
        read_python(source.encode() if as_bytes else source, "c.py")
    assert (info.value.location.line, info.value.location.col) == (5, 5), info.value
    assert "split the statement" in (info.value.hint or "")


def test_unreadable_file_is_a_config_error(tmp_path):
    with pytest.raises(ConfigError, match="cannot read"):
        read_python_file(tmp_path / "missing.py")


def test_coding_cookie_is_honoured():
    source = "# -*- coding: latin-1 -*-\nname = 'caf\xe9'\n".encode("latin-1")
    assert read_python(source).data["name"] == "café"


@pytest.mark.parametrize(
    "name",
    ["_base_/models/faster_rcnn_r50_fpn.py", "_base_/datasets/coco_detection.py", "flink_sweep_identity.py"],
)
def test_reading_golden(golden, name, monkeypatch):
    # pprint shows the exact types: tuples, sets, and Refs unquoted (strings are quoted); the file is
    # named relative to the repository, so not-evaluated nodes print the same path on every machine
    monkeypatch.chdir(FIXTURES.parents[2])
    text = (
        pprint.pformat(
            read_python_file(FIXTURES.relative_to(FIXTURES.parents[2]) / name).data,
            sort_dicts=False,
            width=100,
        )
        + "\n"
    )
    golden(f"pyast/{Path(name).stem}.txt", text)


def test_item_and_attribute_assignments_write_into_literal_mappings():
    cfg = read_python(
        "model = dict(backbone=dict(depth=50))\nmodel['backbone']['depth'] = 101\nmodel.neck = dict(n=5)\n"
        "model.neck.n = 4\nsweep = Sweep(a=1)\nsweep.a = 2\n"
    ).data
    assert cfg["model"] == {"backbone": {"depth": 101}, "neck": {"n": 4}}
    # an attribute set on a call sets its keyword, as detectron2's LazyCall reads it
    assert cfg["sweep"] == CallData(call="Sweep", args=[], kwargs={"a": 2})


# property: any literal Python can spell reads back as exactly that value ----------------------------

_literal_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=8),
    st.binary(max_size=4),
)
_literals = st.recursive(
    _literal_scalars,
    lambda children: st.one_of(
        st.lists(children, max_size=3),
        st.lists(children, max_size=3).map(tuple),
        st.dictionaries(st.text(max_size=4) | st.integers() | st.tuples(st.integers()), children, max_size=3),
        st.sets(st.integers() | st.text(max_size=3), min_size=1, max_size=3),  # set() is a call
    ),
    max_leaves=10,
)


@settings(max_examples=200, deadline=None)
@given(_literals)
def test_property_literals_read_back_type_strictly(value):
    assert diff(read_python(f"x = {value!r}\n").data["x"], value) == []


def test_ml_collections_file_is_its_config_plus_its_other_functions():
    source = (
        "from ml_collections import config_dict\n"
        "def get_config():\n  c = config_dict.ConfigDict()\n  c.lr = 1e-3 * 3\n  return c\n"
    )
    assert read_python(source).data == {"lr": 1e-3 * 3}
    sweep = read_python(source + "def get_hyper(h):\n  return h.sweep('lr', [1, 2])\n").data
    assert sweep["@functions"]["get_hyper"] == NotEvaluated(
        "def get_hyper(h):\n    return h.sweep('lr', [1, 2])"
    )


def test_lazycall_configs_are_edited_through_their_keywords():
    cfg = read_python(
        "model = L(RetinaNet)(head=L(Head)(shapes=[ShapeSpec(channels=256)] * 2), anchor=1, extra=2)\n"
        "model.update(num_classes=91)\ndel model.anchor\n[model.pop(k) for k in ['extra']]\n"
    ).data
    kwargs = cfg["model"]["kwargs"]
    assert set(kwargs) == {"head", "num_classes"} and kwargs["num_classes"] == 91
    assert len(kwargs["head"]["kwargs"]["shapes"]) == 2
    assert "__statements__" not in cfg  # every statement was followed


def test_mmengine_merge_is_recursive_and_delete_replaces():
    cfg = read_python(
        "model = dict(backbone=dict(arch='large', depth=3), head=dict(type='A', loss=dict(w=1)))\n"
        "model.merge(dict(backbone=dict(arch='small'), head=dict(_delete_=True, type='B')))\n"
    ).data
    assert cfg["model"] == {"backbone": {"arch": "small", "depth": 3}, "head": {"type": "B"}}


def test_a_main_block_does_not_run_but_an_edit_there_is_a_change():
    data = read_python("x = 1\nif __name__ == '__main__':\n    x = 2\n").data
    assert data["x"] == 1
    # run as a script (`python train.py`) the block runs: its source is kept, with the values it
    # reads that change later, so `train(lr=1e-5)` -> `train(lr=2e-5)` or moving `lr = 2` past it
    # is a change; an edit before it shows once, where it is bound
    once = [read_python(f"lr = {v}\nif __name__ == '__main__':\n    print(lr)\n").data for v in (1, 2)]
    assert once[0]["__statements__"] == once[1]["__statements__"] and once[0]["lr"] != once[1]["lr"]
    main = "def train(lr): pass\nlr = 1\nif __name__ == '__main__':\n    train(lr={})\n"
    assert read_python(main.format("1e-5")).data != read_python(main.format("2e-5")).data
    moved = "lr = 1\nif __name__ == '__main__':\n    print(lr)\nlr = 2\n"
    assert (
        read_python(moved).data
        != read_python("lr = 1\nlr = 2\nif __name__ == '__main__':\n    print(lr)\n").data
    )
    # the branch that does not run is the one kept, either way round
    other = "if __name__ != '__main__':\n    x = 1\nelse:\n    x = {}\n"
    assert read_python(other.format(2)).data != read_python(other.format(3)).data


def test_augmented_and_self_referencing_assignment_on_containers_holding_references():
    source = (
        "from xtuner.engine.hooks import DatasetInfoHook, EvaluateChatHook\n"
        "import torch\n"
        "hooks = [dict(type=DatasetInfoHook, tokenizer='tok')]\n"
        "shared = hooks\n"
        "hooks += [dict(type=EvaluateChatHook, every_n_iters={n})]\n"
        "more = hooks + [dict(type=EvaluateChatHook, every_n_iters=2)]\n"
        "more = more + [torch.float16]\n"
        "opts = {{'dtype': torch.bfloat16}}\n"
        "opts |= {{'lr': {lr}}}\n"
        "pair = (torch.float16,) + (torch.bfloat16,)\n"
    )
    data = read_python(source.format(n=500, lr=1e-5)).data
    assert data["hooks"][1] == {"type": Ref("xtuner.engine.hooks.EvaluateChatHook"), "every_n_iters": 500}
    assert data["shared"] is data["hooks"]  # `+=` extends the list in place: every holder sees it
    assert len(data["more"]) == 4 and data["more"][-1] == Ref("torch.float16")
    assert data["opts"] == {"dtype": Ref("torch.bfloat16"), "lr": 1e-5}
    assert data["pair"] == (Ref("torch.float16"), Ref("torch.bfloat16"))
    other = read_python(source.format(n=200, lr=2e-5)).data
    assert sorted(c.dotted for c in diff(data, other)) == [
        "hooks[1].every_n_iters",
        "more[1].every_n_iters",
        "opts.lr",
        "shared[1].every_n_iters",
    ]
    edited = read_python(source.format(n=500, lr=1e-5).replace("'tok'", "'tok2'")).data
    assert "hooks[0].tokenizer" in [c.dotted for c in diff(data, edited)]


def test_a_key_after_a_spread_overrides_it_as_python_does():
    # `{**BASE, "lr": 3}` is the usual way to derive a variant; only a key spelled twice is a mistake
    data = read_python("BASE = {'lr': 1, 'bs': 8}\nV = {**BASE, 'lr': 3}\nW = {'lr': 0, **BASE}\n").data
    assert data["V"] == {"lr": 3, "bs": 8} and list(data["V"]) == ["lr", "bs"]
    assert data["W"] == {"lr": 1, "bs": 8}
    with pytest.raises(ConfigError, match="duplicate key 'lr'"):
        read_python("V = {**{}, 'lr': 1, 'lr': 2}\n")


def test_normalised_source_drops_docstrings_and_leaves_the_tree_as_it_was():
    import ast

    from sweepgen.readers.python.pyvalues import normalised

    source = 'def f():\n    """doc"""\n    class C:\n        """more"""\n        x = 1\n    return 1\n'
    tree = ast.parse(source)
    before = ast.dump(tree)
    assert normalised(tree) == "def f():\n\n    class C:\n        x = 1\n    return 1"
    assert ast.dump(tree) == before
    lone = ast.parse('def g():\n    """only a docstring"""\n')
    assert '"""only a docstring"""' in normalised(lone)


@pytest.mark.parametrize(
    ("one", "two"),
    [
        ("max = min\na = max(1, 2)\n", "max = min\na = 2\n"),  # Python: 1
        ("str = repr\na = str('x')\n", "str = repr\na = 'x'\n"),  # Python: "'x'"
        ("dict = list\na = dict(x=1)\n", "dict = list\na = {'x': 1}\n"),  # Python: TypeError
        ("from lib import dict\na = dict(x=1)\n", "from lib import dict\na = {'x': 1}\n"),
        ("for max in [min]:\n    pass\na = max(1, 2)\n", "for max in [min]:\n    pass\na = 2\n"),
        (
            "def f(sorted=reversed):\n    return sorted([1, 2])\na = f()\n",
            "def f(sorted=reversed):\n    return sorted([1, 2])\na = [1, 2]\n",
        ),
        ("class len:\n    pass\nb = len('ab')\n", "class len:\n    pass\nb = 2\n"),
        ("if x:\n    len = max\nb = len('ab')\n", "if x:\n    len = max\nb = 2\n"),
        ("(len := max)\nb = len('ab')\n", "(len := max)\nb = 2\n"),
        (
            "from lib import deepcopy\nx = {'k': [1]}\na = deepcopy(x)\n",
            "from lib import deepcopy\nx = {'k': [1]}\na = {'k': [1]}\n",
        ),
    ],
)
def test_a_builtin_name_the_config_binds_is_not_the_builtin(one, two):
    assert diff(read_python(one).data, read_python(two).data), (one, two)


def test_copy_copy_is_shallow_and_deepcopy_deep():
    shallow = read_python("import copy\nx = {'k': [1]}\na = copy.copy(x)\na['k'].append(2)\n").data
    deep = read_python("import copy\nx = {'k': [1]}\na = copy.deepcopy(x)\na['k'].append(2)\n").data
    assert (shallow["x"], shallow["a"]) == ({"k": [1, 2]}, {"k": [1, 2]})  # the list stays shared
    assert (deep["x"], deep["a"]) == ({"k": [1]}, {"k": [1, 2]})
    # the builtins a config does not rebind are still evaluated
    assert read_python("a = max(1, 2)\nb = dict(x=len('ab'))\n").data == {"a": 2, "b": {"x": 2}}


def test_defaults_are_evaluated_once_where_the_def_runs():
    """Python evaluates a default when `def` runs, in the defining scope, and shares it between calls."""
    late = read_python("x = 1\ndef f(a=x, *, b=x):\n    return [a, b]\nx = 2\ny = f()\n").data
    assert late["y"] == [1, 1]
    shared = read_python("def f(a=[]):\n    a.append(1)\n    return a\nx = f()\ny = f()\n").data
    assert shared["x"] == shared["y"] == [1, 1]
    counted = read_python(
        "def g(d={}):\n    d['n'] = d.get('n', 0) + 1\n    return d['n']\na = g()\nb = g()\n"
    ).data
    assert (counted["a"], counted["b"]) == (1, 2)
    # a positional-only parameter given by keyword is a TypeError: never a value
    refused = read_python("def f(a, /, b=2):\n    return a + b\nx = f(a=1)\n").data
    assert isinstance(refused["x"], NotEvaluated)


def test_an_order_python_draws_per_run_is_never_a_value():
    """A set of strings iterates in the order of salted hashes (PYTHONHASHSEED): the running program
    may see `['b', 'a']` where this reader saw `['a', 'b']`, so the verdict depended on the reader's
    own seed. Such results stay not evaluated; an order no seed changes is still a value."""
    source = (
        "s = {'b', 'a', 'c'}\n"
        "a = list(s)\nb = ','.join(s)\nc = str(s)\nd = f'{s}'\ne = '%s' % (s,)\nf = []\nf.extend(s)\n"
        "g = sorted(s)\nh = len(s)\ni = list({3, 1, 2})\n"
    )
    data = read_python(source).data
    assert all(isinstance(data[k], NotEvaluated) for k in "abcde"), data
    assert NotEvaluated("f.extend(s)") in data["__statements__"]  # kept as source, never ordered
    assert (data["g"], data["h"], data["i"]) == (["a", "b", "c"], 3, [1, 2, 3])


@pytest.mark.parametrize(
    ("one", "two"),
    [
        # a call's record is no list: extending by it added its keys ('call', 'args', 'kwargs')
        ("a = [1]\na.extend(gen())\n", "a = [1]\na.extend(other())\n"),
        ("a = [1]\na.extend(gen())\n", "a = [1, 'call', 'args', 'kwargs']\n"),
        ("a = [1]\na.extend(ab)\n", "a = [1, 'a', 'b']\n"),  # a name is no string of letters
        ("a = {}\na.update(gen())\n", "a = {'call': 'gen', 'args': [], 'kwargs': {}}\n"),
        # a method not followed may change its receiver: what is read from it after is not known
        ("a = [3, 1]\na.sort(key=f)\nx = a[0]\n", "a = [3, 1]\na.sort(key=f)\nx = 3\n"),
        ("a = [1]\nb = a\na.frob()\nx = len(b)\n", "a = [1]\nb = a\na.frob()\nx = 1\n"),
    ],
)
def test_what_a_method_not_followed_does_is_never_guessed(one, two):
    assert diff(read_python(one).data, read_python(two).data), (one, two)


def test_a_dropped_call_not_followed_may_change_its_arguments():
    """`set_lr(cfg, 2)` is run for what it does: `cfg` read after it is not known."""
    one = read_python("cfg = {'lr': 1}\nset_lr(cfg, 2)\nx = cfg['lr']\n").data
    assert isinstance(one["x"], NotEvaluated) and one["cfg"] == {"lr": 1}
    assert diff(one, read_python("cfg = {'lr': 1}\nset_lr(cfg, 2)\nx = 1\n").data)


def test_a_percent_format_of_a_long_text_is_bounded_in_linear_time(tmp_path):
    """`('%(' * 500000) % {}`: the check that a `%` format stays within the size bound looked for
    the `)` of every `%(` again (quadratic: minutes for `diff`). It takes linear time; Python's own
    refusal keeps the value as source."""
    (tmp_path / "a.py").write_text("x = ('%(' * 500000) % {}\n")
    (tmp_path / "b.py").write_text("x = 1\n")
    done = sweepgen(tmp_path, "diff", "a.py", "b.py")
    assert done.returncode == 1 and "not evaluated at a.py:1" in done.stdout, done.stdout + done.stderr
