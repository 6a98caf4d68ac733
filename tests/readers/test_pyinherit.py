"""mmengine-style `_base_` resolution for `diff --resolve-bases`: merge order, `_delete_`,
`_base_.x` references and assignments, per-file name resolution, and loud errors."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from sweepgen.errors import ConfigError
from sweepgen.readers.python.pyast import Ref, read_python
from sweepgen.readers.python.pyinherit import load_with_bases

FASTER_RCNN = Path(__file__).resolve().parents[1] / "fixtures" / "pyconfigs" / "faster_rcnn"


def _files(tmp_path: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        (tmp_path / name).write_text(textwrap.dedent(text))
    return tmp_path


def test_mmdet_child_merges_into_its_four_bases():
    cfg = load_with_bases(FASTER_RCNN / "faster_rcnn_r101_fpn_1x_coco.py")
    assert "_base_" not in cfg
    backbone = cfg["model"]["backbone"]
    # the child's two keys replaced, everything else in the backbone inherited
    assert backbone["depth"] == 101 and backbone["frozen_stages"] == 1
    assert backbone["init_cfg"] == {"type": "Pretrained", "checkpoint": "torchvision://resnet101"}
    assert cfg["optim_wrapper"]["optimizer"]["lr"] == 0.02  # from schedule_1x
    assert cfg["default_hooks"]["logger"]["interval"] == 50  # from default_runtime
    # names resolved inside the base file that bound them
    assert cfg["train_dataloader"]["dataset"]["type"] == "CocoDataset"
    assert cfg["train_dataloader"]["dataset"]["pipeline"][2] == {
        "type": "Resize",
        "scale": (1333, 800),
        "keep_ratio": True,
    }
    assert cfg["test_evaluator"] == cfg["val_evaluator"]


def test_delete_replaces_and_base_attribute_assignment_writes_into_the_bases():
    cfg = load_with_bases(FASTER_RCNN / "faster_rcnn_r50_fpn_amp_1x_coco.py")
    assert cfg["optim_wrapper"] == {
        "type": "AmpOptimWrapper",
        "loss_scale": "dynamic",
        "optimizer": {"type": "SGD", "lr": 0.02, "momentum": 0.9, "weight_decay": 1e-4},
    }
    assert "_base_.optim_wrapper.type" not in cfg


def test_child_local_names_resolve_and_do_not_rewrite_what_bases_built(tmp_path):
    root = _files(
        tmp_path,
        {
            "base.py": """\
        data_root = 'data/coco/'
        train = dict(root=data_root, ann=data_root + 'a.json')
        """,
            "child.py": """\
        _base_ = 'base.py'
        data_root = 'data/lvis/'
        val = dict(root=data_root, copy=_base_.train.root)
        """,
        },
    )
    cfg = load_with_bases(root / "child.py")
    assert cfg["data_root"] == "data/lvis/"
    assert cfg["train"] == {"root": "data/coco/", "ann": "data/coco/a.json"}  # evaluated
    assert cfg["val"] == {"root": "data/lvis/", "copy": "data/coco/"}


def test_bases_merge_in_order_and_may_be_yaml(tmp_path):
    root = _files(tmp_path, {"a.yaml": "opt: {lr: 0.1, wd: 0.0}\n", "b.json": '{"seed": 1}'})
    (root / "c.py").write_text("_base_ = ['a.yaml', 'b.json']\nopt = dict(lr=0.2)\nseed = 2\n")
    assert load_with_bases(root / "c.py") == {"opt": {"lr": 0.2, "wd": 0.0}, "seed": 2}


def test_files_without_bases_are_returned_as_read(tmp_path):
    (tmp_path / "c.py").write_text("x = 1\ny = x\n")
    assert load_with_bases(tmp_path / "c.py") == {"x": 1, "y": 1}


def test_calls_are_values_never_merged_into(tmp_path):
    (tmp_path / "base.py").write_text("model = Model(depth=50)\n")
    (tmp_path / "c.py").write_text("_base_ = 'base.py'\nmodel = Model(width=2)\n")
    assert load_with_bases(tmp_path / "c.py")["model"] == {
        "call": "Model",
        "args": [],
        "kwargs": {"width": 2},
    }


@pytest.mark.parametrize(
    ("files", "message"),
    [
        (
            {"a.py": "x = 1\n", "b.py": "x = 2\n", "c.py": "_base_ = ['a.py', 'b.py']\n"},
            "defined by two bases",
        ),
        ({"c.py": "_base_ = 'missing.py'\n"}, "not found"),
        ({"c.py": "_base_ = 3\n"}, "must be a path or a list"),
        ({"a.py": "_base_ = 'c.py'\n", "c.py": "_base_ = 'a.py'\n"}, "inheritance cycle"),
        ({"a.py": "m = 1\n", "c.py": "_base_ = 'a.py'\nm = dict(x=1)\n"}, "`m` is a mapping in the child"),
        (
            {"a.py": "m = dict(x=1)\n", "c.py": "_base_ = 'a.py'\ny = _base_.m.z\n"},
            "`_base_.m.z` does not exist",
        ),
        ({"a.yaml": "[1, 2]\n", "c.py": "_base_ = 'a.yaml'\n"}, "is not a mapping"),
    ],
)
def test_inheritance_errors_are_loud(tmp_path, files, message):
    _files(tmp_path, files)
    with pytest.raises(ConfigError) as info:
        load_with_bases(tmp_path / "c.py")
    assert message in info.value.message
    assert info.value.location.path.endswith(".py")


def test_delete_with_a_scalar_base_replaces_it(tmp_path):
    (tmp_path / "a.py").write_text("m = 1\n")
    (tmp_path / "c.py").write_text("_base_ = 'a.py'\nm = dict(x=1, _delete_=True)\n")
    assert load_with_bases(tmp_path / "c.py") == {"m": {"x": 1}}


def test_name_resolution_follows_statement_order_and_scopes():
    cfg = read_python(
        "a = 1\nb = a\na = 2\nc = a\nimport os\nd = os\ne = undefined\n"
        "class K:\n    a = 3\n    f = a\n    class Inner:\n        g = a\n"
    ).data
    assert (cfg["b"], cfg["c"]) == (1, 2)
    assert cfg["d"] == Ref("os") and cfg["e"] == Ref("undefined")
    # a nested class body sees the module, not the enclosing class (as in Python)
    assert cfg["K"]["f"] == 3 and cfg["K"]["Inner"]["g"] == 2


def test_a_base_may_climb_inside_the_project_but_not_out_of_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    # no .git or pyproject.toml above: the project is the working directory holding the config
    (tmp_path / "outside.py").write_text("lr = 'secret'\n")
    project = tmp_path / "proj"
    (project / "configs" / "_base_").mkdir(parents=True)
    (project / "configs" / "a").mkdir()
    (project / "configs" / "_base_" / "m.py").write_text("depth = 50\n")
    (project / "configs" / "a" / "in.py").write_text("_base_ = ['../_base_/m.py']\n")
    (project / "configs" / "a" / "out.py").write_text("_base_ = ['../../../outside.py']\n")
    (project / "configs" / "a" / "link.py").symlink_to(tmp_path / "outside.py")
    (project / "configs" / "a" / "via_link.py").write_text("_base_ = ['link.py']\n")
    monkeypatch.chdir(project)
    assert load_with_bases("configs/a/in.py") == {"depth": 50}
    for name in ("out.py", "via_link.py"):
        with pytest.raises(ConfigError, match="leads outside the project"):
            load_with_bases(f"configs/a/{name}")


def test_a_base_listed_twice_at_every_level_ends_instead_of_reading_2_to_the_depth(tmp_path: Path):
    """`defaults: [b, b]` (or two imports of the same base) in each file of a chain of 40 files read
    2^40 files: a hang in CI. The files one side reads are counted and bounded."""
    (tmp_path / "pyproject.toml").write_text("")
    depth = 14  # 2^14 reads is past the bound, and still ends quickly on the code without it
    for i in range(depth):
        (tmp_path / f"y{i}.yaml").write_text(f"defaults:\n  - y{i + 1}\n  - y{i + 1}\n  - _self_\nx{i}: 1\n")
        (tmp_path / f"p{i}.py").write_text(f"from .p{i + 1} import *\nfrom .p{i + 1} import *\nx{i} = 1\n")
    (tmp_path / f"y{depth}.yaml").write_text("z: 1\n")
    (tmp_path / f"p{depth}.py").write_text("z = 1\n")
    for first in ("y0.yaml", "p0.py"):
        with pytest.raises(ConfigError, match="read more than 2,000 base files"):
            load_with_bases(tmp_path / first)
    (tmp_path / "y5.yaml").write_text("z: 1\n")  # 2^5 reads: fine
    assert load_with_bases(tmp_path / "y0.yaml")["x4"] == 1


_STAR_BASES = [
    ('__all__ = ["lr"]\nlr = 1\nbs = 2\n', "lr = 1\nbs = 2\n"),  # bs bound only without __all__
    ('__all__ = ["lr", "_x"]\n_x = 5\nlr = 1\n', '__all__ = ["lr", "_x"]\n_x = 6\nlr = 1\n'),  # listed
]


@pytest.mark.parametrize(("one", "two"), _STAR_BASES)
def test_a_star_import_binds_what_python_binds(tmp_path, one, two):
    # `from .base import *` binds the names `__all__` lists, else those without `_`: Python itself
    # (the oracle) imports both packages; before, `__all__` was ignored and both read as equal
    import importlib
    import sys

    from sweepgen.readers.compare import compare

    for pkg, base in (("star_one", one), ("star_two", two)):
        (tmp_path / pkg).mkdir()
        _files(tmp_path / pkg, {"__init__.py": "", "base.py": base, "child.py": "from .base import *\n"})
    sys.path.insert(0, str(tmp_path))
    try:
        bound = [vars(importlib.import_module(f"{pkg}.child")) for pkg in ("star_one", "star_two")]
    finally:
        sys.path.remove(str(tmp_path))
        for pkg in ("star_one", "star_two"):
            for name in [m for m in sys.modules if m.split(".")[0] == pkg]:
                del sys.modules[name]
    names = [{k: v for k, v in b.items() if not k.startswith("__")} for b in bound]
    assert names[0] != names[1]
    a, b = (str(tmp_path / pkg / "child.py") for pkg in ("star_one", "star_two"))
    assert compare(a, b, resolve_bases=True).changes


def test_a_star_import_in_read_base_binds_every_name_but_dunders(tmp_path):
    # mmengine's lazy import (Config._parse_lazy_import) copies every name of the base's config but
    # those starting with `__` into the child, `_x` too and `__all__` aside: `_x` edited is a change
    from sweepgen.readers.compare import compare

    child = "from mmengine.config import read_base\nwith read_base():\n    from .base import *\n"
    for folder, x in (("one", 5), ("two", 6)):
        (tmp_path / folder).mkdir()
        _files(tmp_path / folder, {"base.py": f"__all__ = ['lr']\n_x = {x}\nlr = 1\n", "child.py": child})
    assert load_with_bases(tmp_path / "one" / "child.py")["_x"] == 5
    changes = compare(
        str(tmp_path / "one" / "child.py"), str(tmp_path / "two" / "child.py"), resolve_bases=True
    )
    assert [change.dotted for change in changes.changes] == ["_x"]


def test_an_all_naming_what_the_base_does_not_bind_is_refused(tmp_path):
    _files(tmp_path, {"base.py": '__all__ = ["lr", "nope"]\nlr = 1\n', "child.py": "from .base import *\n"})
    with pytest.raises(ConfigError, match="__all__"):
        load_with_bases(tmp_path / "child.py")
