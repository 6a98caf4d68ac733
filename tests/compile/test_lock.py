"""sweep.lock.json: the format other parts read (docs/ARCHITECTURE.md), deterministic bytes."""

from __future__ import annotations

import json
import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from sweepgen import __version__, paths
from sweepgen.compile import api
from sweepgen.compile.output.lockfile import lock
from sweepgen.compile.output.pipeline import compile_spec, sha256
from sweepgen.errors import UserError


def test_the_spec_is_recorded_by_its_parsed_content(grid_project):
    """A comment, a quote style or the order of the spec's sections changes no config: the lock stays
    the same bytes. A changed value changes the recorded hash."""
    spec = grid_project / "specs/grid.yaml"
    lock_path = grid_project / "generated/grid/sweep.lock.json"
    api.render(["specs/grid.yaml"])
    before = lock_path.read_bytes()
    text = spec.read_text()
    lines = text.splitlines(keepends=True)
    name_line = next(i for i, ln in enumerate(lines) if ln.startswith("name:"))
    moved = lines.pop(name_line)  # the `name:` section moved to the end, quoted, plus a comment
    reordered = "# a comment\n" + "".join(lines) + moved.replace("name: grid", "name: 'grid'")
    assert "name: 'grid'" in reordered
    spec.write_text(reordered)
    assert api.check(["specs/grid.yaml"]).problems == []
    api.render(["specs/grid.yaml"])
    assert lock_path.read_bytes() == before
    spec.write_text(reordered.replace("description: seeds x beta", "description: changed"))
    api.render(["specs/grid.yaml"])
    assert json.loads(lock_path.read_text())["spec_sha256"] != json.loads(before)["spec_sha256"]


def test_lock_has_the_documented_fields(grid_project):
    api.render(["specs/grid.yaml"])
    text = (grid_project / "generated/grid/sweep.lock.json").read_text()
    data = json.loads(text)
    assert text.endswith("}\n")
    assert list(data) == sorted(data)
    assert data["lock_version"] == 3 and data["sweepgen_version"] == __version__
    assert data["sweep"] == "grid" and data["spec"] == "specs/grid.yaml"
    assert re.fullmatch("[0-9a-f]{64}", data["spec_sha256"])
    assert data["inputs"] == {
        "specs/grid.yaml": data["spec_sha256"],
        "templates/config.yaml.j2": sha256((grid_project / "templates/config.yaml.j2").read_bytes()),
    }
    assert data["varying"] == ["grpo.beta", "seed"]
    assert data["resources"] == {
        "partition": "gpu_1",
        "gpus_per_run": 1,
        "cpus_per_run": None,
        "mem": "8G",
        "time": 30,
        "sbatch_extra": [],
    }
    assert data["base"]["grpo"] == {
        "beta": 0.04,
        "group_size": 4,
        "learning_rate": 1e-5,
        "tags": ["a", "yes"],
    }
    first = data["files"][0]
    # per file only what makes it different from the base
    assert set(first) == {"path", "variant", "run_name", "layers", "set", "run_dir", "sha256"}
    assert first["run_dir"] == "runs/grid/grpo_seed1_b0.02"  # the rendered file's output_dir
    assert first["path"] == "seed1_b0.02.yaml" and first["variant"] == "seed1_b0.02"
    assert first["run_name"] == "grpo_seed1_b0.02"
    assert first["set"]["grpo.beta"] == 0.02 and first["set"]["seed"] == 1
    assert data["layer_sets"][first["layers"]] == {"grpo.beta": "grid", "seed": "grid"}
    assert len(data["layer_sets"]) == 1  # every grid point shares one mapping, written once
    assert first["sha256"] == sha256((grid_project / "generated/grid/seed1_b0.02.yaml").read_bytes())
    model = lock.parse(text.encode(), "x")
    assert model.values(model.files[0]) == {"grpo.beta": 0.02, "seed": 1}
    assert model.config(model.files[0])["grpo"] == {
        "beta": 0.02,
        "group_size": 4,
        "learning_rate": 1e-5,
        "tags": ["a", "yes"],
    }


@pytest.mark.train  # specs/trl_grpo_cli.yaml is checked against TRL's GRPOConfig (the train extra)
def test_every_shipped_spec_rebuilds_each_resolved_config_from_its_lock(monkeypatch):
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    monkeypatch.chdir(root)
    specs = sorted(str(p.relative_to(root)) for p in (root / "specs").glob("*.yaml"))
    assert len(specs) >= 7
    for spec in specs:
        plan = compile_spec(spec)
        model = lock.parse(plan.lock_bytes, spec)
        assert [f.path for f in model.files] == [f.path for f in plan.files]
        for entry, rendered in zip(model.files, plan.files):
            assert model.config(entry) == rendered.variant.config, (spec, entry.path)
            assert entry.run_name == rendered.run_name and entry.sha256 == rendered.sha256


KEY = st.sampled_from(["a", "b", "c", "d"])
LEAF = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.floats(allow_nan=True),
    st.text(max_size=3),
    st.lists(st.integers(), max_size=2),
)
CONFIG = st.recursive(LEAF, lambda inner: st.dictionaries(KEY, inner, max_size=3), max_leaves=12).filter(
    lambda t: isinstance(t, dict)
)


@given(CONFIG, CONFIG)
def test_a_variant_rebuilds_from_the_base_plus_its_differences(base, variant):
    touched = tuple((k,) for k in set(base) | set(variant))
    entry = lock.entry_for(
        path="f.yaml",
        variant="v",
        run_name="v",
        sha256="0" * 64,
        layers={},
        config=variant,
        differing=sorted(paths.diff_at(base, variant, touched)),
    )
    data = _one_spec_lock(base, [entry])
    model = lock.parse(lock.dumps(data).encode(), "x")
    rebuilt = model.config(model.files[0])
    assert json.dumps(rebuilt, sort_keys=True) == json.dumps(variant, sort_keys=True)  # NaN-safe equality
    json.loads(lock.dumps(data), parse_constant=lambda c: pytest.fail(f"{c} is not JSON"))


@pytest.mark.parametrize(
    ("run_name", "run_dir", "config", "keys"),
    [
        ("v", None, {"x": 2, "y": {"z": 1}}, {"path", "variant", "sha256", "layers", "set"}),
        ("n", "runs/v", {"y": {}}, {"path", "variant", "sha256", "layers", "run_name", "run_dir", "deleted"}),
    ],
)
def test_a_typed_entry_is_written_once_and_read_back_as_itself(run_name, run_dir, config, keys):
    """``entry_for`` gives the reader's type; ``build`` writes it (defaults left out), ``parse`` reads
    the same entry back, and ``entry_line`` is its line in the written lock."""
    base = {"x": 1, "y": {"z": 1}}
    entry = lock.entry_for(
        path="v.yaml",
        variant="v",
        run_name=run_name,
        sha256="0" * 64,
        layers={"x": "grid"},
        config=config,
        differing=sorted(paths.diff_at(base, config, (("x",), ("y", "z")))),
        run_dir=run_dir,
    )
    assert isinstance(entry, lock.LockFile)
    data = _one_spec_lock(base, [entry])
    assert set(data["files"][0]) == keys
    text = lock.dumps(data)
    assert "    " + lock.entry_line(entry, 0) + "\n" in text
    assert lock.parse(text.encode(), "x").files == [entry]


def test_non_finite_floats_are_valid_json_and_read_back(tmp_path):
    import math

    data = _one_spec_lock({"x": math.inf, "y": [math.nan]}, [])
    text = lock.dumps(data)
    json.loads(text, parse_constant=lambda c: pytest.fail(f"{c} is not JSON"))
    model = lock.parse(text.encode(), "x")
    assert model.base["x"] == math.inf and math.isnan(model.base["y"][0])


def test_resources_are_null_when_absent(grid_project):
    assert compile_spec("specs/ladder.yaml").lock["resources"] is None


SCALAR = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=5),
)
TREE = st.recursive(
    SCALAR,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3),
    max_leaves=10,
)


@given(st.lists(st.dictionaries(st.text(max_size=4), TREE, max_size=4), max_size=3), TREE)
def test_dumps_is_json_sorted_with_one_file_per_line(files, extra):
    data = {"files": [{"config": c, "path": f"f{i}"} for i, c in enumerate(files)], "extra": extra}
    text = lock.dumps(data)
    assert json.loads(text) == data
    assert text.count("\n") == len(files) + 5  # {, extra, "files": [, entries, ], }
    for entry in data["files"]:  # byte-identical to json.dumps for every entry line
        assert json.dumps(entry, sort_keys=True, ensure_ascii=False) in text


def test_read_rejects_a_damaged_lock(tmp_path):
    (tmp_path / "sweep.lock.json").write_text("{ not json")
    with pytest.raises(UserError) as err:
        lock.read(str(tmp_path), "generated/x")
    assert str(err.value.location).startswith("generated/x/sweep.lock.json:1:")
    (tmp_path / "sweep.lock.json").write_text('{"lock_version": 99, "files": []}')
    with pytest.raises(UserError, match="unknown format"):
        lock.read(str(tmp_path), "generated/x")
    assert lock.read(str(tmp_path / "missing"), "x") is None


def test_read_rejects_a_lock_that_is_not_utf8(tmp_path):
    (tmp_path / "sweep.lock.json").write_bytes(b"\xff\xfe{}")
    with pytest.raises(UserError, match="not UTF-8"):
        lock.read(str(tmp_path), "generated/x")


def _one_spec_lock(base, files):
    """The lock of spec s.yaml (sweep s, no inputs, nothing varying) with ``base`` and ``files``."""
    return lock.build(
        sweep="s",
        spec="s.yaml",
        spec_sha256="",
        inputs={},
        varying=[],
        base=base,
        files=files,
        resources=None,
    )
