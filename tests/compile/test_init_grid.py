"""`init --from CONFIG --grid PATH=V1,V2 --seeds N`: a one-line sweep, rendered, with the command
that runs it; a key the config does not have is refused with a did-you-mean and nothing is left."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from sweepgen.cli import main
from sweepgen.formats import yamlio

CONFIG = "model: tiny\nbeta: 0.04\nloss_type: grpo\nseed: 1\ntraining: {lr: 1.0e-5}\n"


@pytest.fixture
def here(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "cfg.yaml").write_text(CONFIG)
    return tmp_path


def init(*args: str):
    return CliRunner().invoke(main, ["init", "--from", "cfg.yaml", *args])


def test_grid_and_seeds_render_one_file_per_point_and_seed(here):
    done = init("--grid", "beta=0.0,0.04", "--grid", "loss_type=grpo,dr_grpo", "--seeds", "3")
    assert done.exit_code == 0, done.output
    spec = yamlio.loads((here / "specs/cfg.yaml").read_text(), "cfg").data
    assert list(spec["grid"]) == ["beta", "loss_type", "seed"]  # the seed last: groups differ there only
    assert spec["grid"]["seed"] == [1, 2, 3] and spec["grid"]["loss_type"] == ["grpo", "dr_grpo"]
    files = sorted(p.name for p in (here / "generated/cfg").glob("*.yaml"))
    # readable names: `-` between axes, `_` between a key and a text value, the seed part last
    assert len(files) == 2 * 2 * 3 and "beta0.04-loss_type_dr_grpo-seed3.yaml" in files
    assert spec["names"] == "readable"
    assert "next: sweepgen run generated/cfg" in done.stderr + done.stdout
    assert "no seeds" not in done.output
    assert CliRunner().invoke(main, ["check"]).exit_code == 0


def test_a_nested_key_and_typed_values(here):
    done = init("--grid", "training.lr=1.0e-5,3.0e-5")
    assert done.exit_code == 0, done.output
    spec = yamlio.loads((here / "specs/cfg.yaml").read_text(), "cfg").data
    assert spec["grid"] == {"training.lr": [1.0e-5, 3.0e-5]}  # numbers, not strings
    # one run a point: said, since `report` can then give no interval
    assert "note: one run per grid point, no seeds" in " ".join(done.output.split())
    assert "add --seeds 3" in done.output


def test_a_grid_over_the_seed_itself_is_not_told_to_add_seeds(here):
    done = init("--grid", "seed=1,2,3")
    assert done.exit_code == 0, done.output
    assert "no seeds" not in done.output


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (("--grid", "bta=0,1"), "did you mean `beta`?"),
        (("--grid", "beta"), "is not PATH=V1,V2"),
        (("--grid", "beta=0", "--grid", "beta=1"), "is given twice"),
        (("--grid", "seed=1,2", "--seeds", "2"), "--seeds and --grid on the seed"),
        (("--grid", "seed=1,1.5"), "--grid seed: the config's value is int (1), but '1.5' reads as float"),
        (("--grid", "beta=0.0,low"), "the config's value is float (0.04), but 'low' reads as str"),
    ],
)
def test_a_bad_axis_is_refused_and_nothing_is_left(here, args, said):
    done = init(*args)
    assert done.exit_code == 2, done.output
    assert said in done.stderr
    assert not (here / "specs").exists() and not (here / "generated").exists()


def test_grid_values_keep_the_type_of_the_config_s_value(here):
    """`shard: "001"` swept with `--grid shard=001,010` stays the strings "001" and "010" (YAML alone
    reads the numbers 1 and 10: a value silently changed); an int for a float key stays fine."""
    (here / "cfg.yaml").write_text(CONFIG + 'shard: "001"\nname: run\n')
    done = init("--grid", "shard=001,010", "--grid", "name=1,2", "--grid", "beta=0,1e-2")
    assert done.exit_code == 0, done.output
    spec = yamlio.loads((here / "specs/cfg.yaml").read_text(), "cfg").data
    assert spec["grid"] == {"shard": ["001", "010"], "name": ["1", "2"], "beta": [0, 0.01]}
    rendered = [yamlio.loads(p.read_text(), "f").data for p in (here / "generated/cfg").glob("*.yaml")]
    assert {r["shard"] for r in rendered} == {"001", "010"}


def test_seeds_need_a_seed_in_the_config(here):
    (here / "cfg.yaml").write_text("beta: 0.04\n")
    done = init("--seeds", "2")
    assert done.exit_code == 2 and "sets no seed" in done.stderr


def test_an_identical_schema_export_already_there_is_shared_a_different_one_refused(here, monkeypatch):
    from sweepgen.compile import api

    (here / "schemas").mkdir()
    (here / "schemas" / "s.json").write_text('{"type": "object"}\n')
    monkeypatch.setattr(api, "_export_schema", lambda ref: '{"type": "object"}\n')
    done = init("--schema", "mod:S")  # an earlier init's export: the same bytes
    assert done.exit_code == 0, done.output
    monkeypatch.setattr(api, "_export_schema", lambda ref: '{"type": "array"}\n')
    clash = init("--schema", "mod:S", "--name", "other")
    assert clash.exit_code == 2 and "schemas/s.json already exist" in clash.stderr


# a schema's top level as `schema --export` writes it: TRL leaves `seed` (42) and `epsilon_high`
# to their defaults in most configs
SCHEMA = (
    '{"type": "object", "properties": {"beta": {"type": "number", "default": 0.0}, "seed": {"type": '
    '"integer", "default": 42}, "epsilon_high": {"type": ["number", "null"], "default": null}}}\n'
)


@pytest.fixture
def schema(here: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from sweepgen.compile import api

    (here / "cfg.yaml").write_text("beta: 0.04\n")  # no seed, no epsilon_high: their defaults
    monkeypatch.setattr(api, "_export_schema", lambda ref: SCHEMA)


def test_with_a_schema_seeds_start_at_its_default_seed_and_a_default_key_is_swept(here, schema):
    done = init("--schema", "trl:grpo", "--grid", "epsilon_high=0.2,0.28", "--seeds", "2")
    assert done.exit_code == 0, done.output
    spec = yamlio.loads((here / "specs/cfg.yaml").read_text(), "cfg").data
    # `+`: keys the config leaves to the schema's default are added on purpose; seeds from 42, the
    # seed the config alone runs with
    assert spec["grid"] == {"+epsilon_high": [0.2, 0.28], "+seed": [42, 43]}
    files = sorted(p.name for p in (here / "generated/cfg").glob("*.yaml"))
    assert files[0] == "epsilon_high0.2-seed42.yaml" and len(files) == 4
    rendered = yamlio.loads((here / "generated/cfg" / files[-1]).read_text(), "out").data
    assert (rendered["seed"], rendered["epsilon_high"], rendered["beta"]) == (43, 0.28, 0.04)


def test_with_a_schema_a_typo_is_matched_against_its_keys_too(here, schema):
    done = init("--schema", "trl:grpo", "--grid", "epsilon_hihg=0.2")
    assert done.exit_code == 2 and "nor its schema" in done.stderr and "`epsilon_high`" in done.stderr
    assert not (here / "specs").exists()


# TRL's documented `trl grpo --config` file: no output_dir, beta left to TRL's default
TRL_DOCS_GRPO = (
    "model_name_or_path: Qwen/Qwen2.5-0.5B\ndataset_name: trl-lib/DeepMath-103K\n"
    "reward_funcs:\n  - accuracy_reward\n"
)


@pytest.mark.train  # the fields are read from the installed TRL's source
def test_without_a_schema_a_trl_configs_default_field_is_swept_and_each_run_gets_its_folder(here):
    """`init --from grpo_config.yaml --grid beta=0.0,0.04` (TRL's documented config, which sets
    neither beta nor output_dir) was refused ("the config has no such key") where `trl grpo --beta
    0.04` takes it; with --grid fixed by hand, the runs were then refused at `run` for sharing
    transformers' default output folder. Now beta is added as `+beta` and each run gets its own
    `+output_dir`, as with --schema trl:grpo; a typo is still refused."""
    (here / "cfg.yaml").write_text(TRL_DOCS_GRPO)
    done = init("--grid", "beta=0.0,0.04")
    assert done.exit_code == 0, done.output
    spec = yamlio.loads((here / "specs/cfg.yaml").read_text(), "cfg").data
    assert spec["grid"] == {"+beta": [0.0, 0.04]}
    assert spec["derived"] == {"+output_dir": "runs/{{ sweep.name }}/{{ variant.run_name }}"}
    rendered = yamlio.loads((here / "generated/cfg/beta0.04.yaml").read_text(), "out").data
    assert (rendered["beta"], rendered["output_dir"]) == (0.04, "runs/cfg/beta0.04")
    typo = init("--grid", "bta=0.0,0.04", "--name", "typo")
    assert typo.exit_code == 2 and "did you mean `beta`?" in typo.stderr, typo.output
