"""`sweepgen init --from CONFIG [--schema MODULE:CLASS]`: a starting spec and template that render
as written, from YAML, JSON or TOML; nothing overwritten, nothing left when the spec cannot render."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from sweepgen.cli import main

CONFIG_MODULE = """
from dataclasses import dataclass
from typing import Literal


@dataclass
class Cfg:
    output_dir: str
    seed: int = 0
    loss_type: Literal["grpo", "dapo"] = "dapo"
"""


def cli(*args: str):
    return CliRunner().invoke(main, list(args))


@pytest.fixture
def here(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "configs").mkdir()
    return tmp_path


def test_a_yaml_config_becomes_a_seed_grid_with_one_folder_per_run(here):
    (here / "configs/grpo.yaml").write_text("output_dir: out/x\ntraining: {seed: 7, lr: 0.1}\n")
    result = cli("init", "--from", "configs/grpo.yaml")
    assert result.exit_code == 0, result.output
    spec = (here / "specs/grpo.yaml").read_text()
    assert 'include: ["../configs/grpo.yaml"]' in spec and "training.seed: [7, 8, 9]" in spec
    assert cli("render", "specs/grpo.yaml").exit_code == 0
    assert sorted(p.name for p in (here / "generated/grpo").glob("*.yaml")) == [
        "seed7.yaml",
        "seed8.yaml",
        "seed9.yaml",
    ]
    assert "output_dir: runs/grpo/seed8" in (here / "generated/grpo/seed8.yaml").read_text()
    again = cli("init", "--from", "configs/grpo.yaml")
    assert again.exit_code == 2 and "never overwrites" in again.output


@pytest.mark.parametrize(
    ("logging", "noted"),
    [
        ('save_strategy: "no"\n', True),
        ('save_strategy: "no"\nreport_to: none\n', True),
        ('save_strategy: "no"\nreport_to: [tensorboard]\n', False),
        ("save_strategy: steps\n", False),  # the Trainer saves at the end: trainer_state.json
    ],
)
def test_a_trainer_config_that_keeps_no_metrics_file_is_noted_at_init(here, logging, noted):
    """`trl grpo` with `save_strategy: "no"` and TRL's default `report_to: none` prints its metrics
    and writes none: the first `report` finds nothing. init says so before anything runs."""
    (here / "configs/grpo.yaml").write_text("output_dir: out/x\nlearning_rate: 1.0e-6\n" + logging)
    result = cli("init", "--from", "configs/grpo.yaml")
    assert result.exit_code == 0, result.output
    assert ("keep no metrics file" in result.output) is noted, result.output


VERL = """trainer:
  project_name: p
  experiment_name: gsm8k
  default_local_dir: checkpoints/${trainer.project_name}/${trainer.experiment_name}
  seed: 1
actor: {lr: 1.0e-6}
"""


def test_a_nested_output_folder_gets_one_folder_per_run_and_the_run_command_asks_for_the_trainer(here):
    """verl's checkpoints go to trainer.default_local_dir, the same for every run in the config:
    the spec points it at each run's folder, and `run` (which refuses shared folders) accepts it."""
    (here / "configs/ppo.yaml").write_text(VERL)
    result = cli("init", "--from", "configs/ppo.yaml", "--grid", "actor.lr=1e-6,3e-6")
    assert result.exit_code == 0, result.output
    spec = (here / "specs/ppo.yaml").read_text()
    assert 'trainer.default_local_dir: "runs/{{ sweep.name }}/{{ variant.run_name }}"' in spec
    rendered = (here / "generated/ppo/lr3e-06.yaml").read_text()
    assert "default_local_dir: runs/ppo/lr3e-06" in rendered
    said = " ".join(result.output.split())
    assert "next: sweepgen run generated/ppo --command 'YOUR-TRAINER {config}'" in said
    assert "not the bundled trainer's" in said
    planned = cli("run", "generated/ppo", "--dry-run", "--command", "true {config}")
    assert planned.exit_code == 0, planned.output


def test_json_stays_json_and_toml_is_copied_in(here):
    (here / "configs/a.json").write_text(json.dumps({"seed": 1, "lr": 0.5}))
    assert cli("init", "--from", "configs/a.json").exit_code == 0
    assert cli("render", "specs/a.yaml").exit_code == 0
    assert json.loads((here / "generated/a/seed2.json").read_text()) == {"seed": 2, "lr": 0.5}
    assert "run_dir:" in (here / "specs/a.yaml").read_text()  # no output_dir in the config
    (here / "configs/b.toml").write_text('output_dir = "o"\nseed = 3\n[optim]\nlr = 0.1\n')
    assert cli("init", "--from", "configs/b.toml").exit_code == 0
    assert 'base: {"output_dir": "o", "seed": 3, "optim": {"lr": 0.1}}' in (here / "specs/b.yaml").read_text()
    assert cli("render", "specs/b.yaml").exit_code == 0


def test_schema_is_exported_and_a_config_it_refuses_leaves_nothing(here, monkeypatch):
    (here / "mycfg_init.py").write_text(CONFIG_MODULE)
    monkeypatch.syspath_prepend(str(here))
    (here / "configs/c.yaml").write_text("output_dir: o\nseed: 1\nloss_type: grpoo\n")
    bad = cli("init", "--from", "configs/c.yaml", "--schema", "mycfg_init:Cfg")
    assert bad.exit_code == 2 and "loss_type" in bad.output
    # worded for what the person gave: the config's line and the class, no variant, spec or
    # exported file they never saw
    assert bad.output.startswith("configs/c.yaml:3:12: error: configs/c.yaml does not fit mycfg_init:Cfg: ")
    assert "variant" not in bad.output and "schemas/" not in bad.output
    assert "give --schema the class the config is written for" in bad.output
    assert sorted(p.name for p in here.iterdir()) == ["configs", "mycfg_init.py"]  # nothing left
    (here / "configs/c.yaml").write_text("output_dir: o\nseed: 1\nloss_type: grpo\n")
    good = cli("init", "--from", "configs/c.yaml", "--schema", "mycfg_init:Cfg")
    assert good.exit_code == 0, good.output
    assert 'schema: "../schemas/cfg.json"' in (here / "specs/c.yaml").read_text()
    sys.modules.pop("mycfg_init", None)
    (here / "mycfg_init.py").unlink()  # the exported file is enough from now on
    assert cli("render", "specs/c.yaml").exit_code == 0


TRAINER_MODULE = """
from dataclasses import dataclass


@dataclass
class TrainerArgs:
    output_dir: str | None = None  # transformers: None means `trainer_output`, every run's
    beta: float = 0.04
    push_to_hub: bool = False
    hub_model_id: str | None = None  # transformers: None means the output folder's last part
"""


@pytest.mark.parametrize("config", ["beta: 0.0\n", "beta: 0.0\noutput_dir: null\n"])
def test_a_config_leaving_output_dir_to_its_schema_s_default_gets_one_folder_per_run(
    here, monkeypatch, config
):
    """`trl grpo` without `output_dir` writes every run to transformers' `trainer_output`: init set
    only the spec's run_dir, so the runs overwrote each other's checkpoints there and `report`
    found none of them in the run folders."""
    (here / "hfargs_init.py").write_text(TRAINER_MODULE)
    monkeypatch.syspath_prepend(str(here))
    (here / "configs/c.yaml").write_text(config)
    made = cli(
        "init", "--from", "configs/c.yaml", "--grid", "beta=0.0,0.04", "--schema", "hfargs_init:TrainerArgs"
    )
    assert made.exit_code == 0, made.output
    assert "run_dir:" not in (here / "specs/c.yaml").read_text()
    folders = {
        (here / f"generated/c/beta{b}.yaml").read_text().split("output_dir: ")[1].split()[0]
        for b in ("0.0", "0.04")
    }
    assert folders == {"runs/c/beta0.0", "runs/c/beta0.04"}
    sys.modules.pop("hfargs_init", None)


def test_a_run_pushed_to_the_hub_without_an_id_gets_the_sweep_in_its_repository_name(here, monkeypatch):
    """No `hub_model_id`: transformers names the repository after the run folder's last part
    (`beta0.0`), which the runs of every sweep share."""
    (here / "hfargs_init.py").write_text(TRAINER_MODULE)
    monkeypatch.syspath_prepend(str(here))
    (here / "configs/c.yaml").write_text("beta: 0.0\npush_to_hub: true\n")
    made = cli(
        "init", "--from", "configs/c.yaml", "--grid", "beta=0.0,0.04", "--schema", "hfargs_init:TrainerArgs"
    )
    assert made.exit_code == 0, made.output
    import yaml

    hubs = {
        p.stem: yaml.safe_load(p.read_text())["hub_model_id"] for p in (here / "generated/c").glob("*.yaml")
    }
    assert hubs == {"beta0.0": "c-beta0.0", "beta0.04": "c-beta0.04"}
    sys.modules.pop("hfargs_init", None)


@pytest.mark.parametrize("kind", ["fifo", "device"])
def test_a_config_that_is_no_regular_file_is_refused_without_blocking(here, kind):
    # a FIFO nobody writes to blocks open() for ever, /dev/zero never ends: refused from their type
    path = here / "configs" / "x.yaml"
    os.mkfifo(path) if kind == "fifo" else path.symlink_to("/dev/zero")
    result = cli("init", "--from", "configs/x.yaml", "--name", "x")
    assert result.exit_code == 2, result.output
    assert "configs/x.yaml" in result.stderr and "not a regular file" in result.stderr
    assert not (here / "specs").exists()


@pytest.mark.parametrize(
    ("name", "content", "at", "says"),
    [
        ("top.json", b"[1, 2]\n", "1:1", "a mapping at the top"),
        ("d.toml", b"a = 1\n[t]\nwhen = 2024-01-01\n", "3:1", "`t.when` is a TOML date"),
        ("l.toml", b"seed = 1\nx = [1, 2024-01-01]\n", "2:1", "`x[1]` is a TOML date"),
        ("bad.toml", b"seed = 1\nb = [1,\nc = 2\n", "3:1", "not valid TOML: Invalid value"),
        ("open.toml", b"seed = 1\nb = [\n", "3:1", "not valid TOML"),
        ("bytes.toml", b"seed = 1\nname = '\xff'\n", "2:9", "not UTF-8 text: byte 0xff"),
    ],
)
def test_a_config_init_cannot_start_from_is_exit_2_at_its_line_and_column(here, name, content, at, says):
    (here / "configs" / name).write_bytes(content)
    result = cli("init", "--from", f"configs/{name}")
    assert result.exit_code == 2, result.output
    assert result.stderr.startswith(f"configs/{name}:{at}: error: ") and says in result.stderr, result.stderr
    assert "Traceback" not in result.output and not (here / "specs").exists()


@pytest.mark.parametrize("linked", ["specs", "templates"])
def test_a_committed_link_for_a_folder_init_writes_to_is_refused_and_nothing_is_written(
    here, tmp_path_factory, linked
):
    """A pull request's `specs` or `templates` link to a folder elsewhere: `init` writes nowhere
    through it, and leaves nothing behind in the project either."""
    elsewhere = tmp_path_factory.mktemp("elsewhere")
    (here / linked).symlink_to(elsewhere, target_is_directory=True)
    (here / "configs" / "grpo.yaml").write_text("output_dir: out\nseed: 1\nlearning_rate: 1.0e-6\n")
    result = cli("init", "--from", "configs/grpo.yaml")
    assert result.exit_code == 2, result.output
    assert result.stderr.startswith(f"{linked}: error: {linked} is a symbolic link"), result.stderr
    assert list(elsewhere.iterdir()) == []
    assert sorted(p.name for p in here.iterdir()) == sorted(["configs", linked])


@pytest.mark.parametrize(
    ("config", "name", "at"),
    [("grpo.yaml", "../evil", "--name"), ("my grpo.yaml", None, "configs/my grpo.yaml")],
)
def test_a_sweep_name_no_file_system_takes_is_refused_where_it_came_from(here, config, name, at):
    """Not at a line of a spec that was never written: at --name, or at the config it was taken from."""
    (here / "configs" / config).write_text("output_dir: out\nseed: 1\n")
    result = cli("init", "--from", f"configs/{config}", *(["--name", name] if name else []))
    assert result.exit_code == 2, result.output
    assert result.stderr.startswith(f"{at}: error: sweep name "), result.stderr
    assert "not filesystem-safe" in result.stderr
    assert ("give the sweep a name with --name" in result.stderr) == (name is None)
    assert sorted(p.name for p in here.iterdir()) == ["configs"]


def test_a_trl_config_class_refusing_a_trl_cli_file_points_to_the_command_schema():
    """`--schema trl:GRPOConfig` on a `trl grpo --config` file: model_name_or_path and the rest
    are TRL's script arguments and ModelConfig, which `trl:grpo` takes."""
    from sweepgen.compile import api
    from sweepgen.compile.schema.validate import SchemaMismatch
    from sweepgen.errors import Location

    refused = SchemaMismatch(
        "m", problems="`model_name_or_path`: key not allowed", location=Location("c.yaml", 1, 1)
    )
    err = api._unfit(refused, "c.yaml", "trl:GRPOConfig", "specs/c.yaml")
    assert err.message == "c.yaml does not fit trl:GRPOConfig: `model_name_or_path`: key not allowed"
    assert err.hint is not None and "--schema trl:grpo takes all of it" in err.hint
    assert str(err.location) == "c.yaml:1:1"
    for other in ("trl:ScriptArguments", "trl:grpo"):  # no command of that name; already the command's
        assert "trl:" not in str(api._unfit(refused, "c.yaml", other, "specs/c.yaml").hint)


def test_a_missing_config_and_a_schema_file_are_told_what_init_takes(here):
    """`--from` is the user's own path (never "relative to the spec"); `--schema` takes a class."""
    result = cli("init", "--from", "configs/nope.yaml")
    assert result.exit_code == 2, result.output
    assert "config not found: configs/nope.yaml" in result.stderr
    assert "relative to the folder you run sweepgen in" in result.stderr and "the spec" not in result.stderr
    (here / "configs/c.yaml").write_text("output_dir: out\n")
    result = cli("init", "--from", "configs/c.yaml", "--schema", "schemas/c.json")
    assert result.exit_code == 2, result.output
    assert "--export" not in result.stderr and "trl:grpo" in result.stderr
    assert not (here / "specs").exists()


def test_a_grid_of_lists_is_refused_with_the_spec_s_way_to_write_it(here):
    """`--grid reward_weights=[1.0,0.2],[1.0,0.5]` split at its commas read as a YAML syntax error at
    "--grid:2:1"; it says what --grid takes and where lists go."""
    (here / "configs/c.yaml").write_text("output_dir: out\nreward_weights: [1.0, 0.2]\n")
    result = cli("init", "--from", "configs/c.yaml", "--grid", "reward_weights=[1.0,0.2],[1.0,0.5]")
    assert result.exit_code == 2, result.output
    assert "holds a list or mapping" in result.stderr and "YAML syntax" not in result.stderr
    assert "reward_weights: [[1.0, 0.2], [1.0, 0.5]]" in result.stderr
    assert not (here / "specs").exists()


def test_a_trl_run_name_becomes_each_run_s_own_name(here):
    """The HF Trainer names the W&B run after `run_name` (over the WANDB_NAME `run` gives): kept as
    the config's one value, every run of the sweep had that one name in W&B."""
    (here / "configs/grpo.yaml").write_text("output_dir: out/x\nrun_name: qwen-grpo\nbeta: 0.04\nseed: 1\n")
    result = cli("init", "--from", "configs/grpo.yaml", "--grid", "beta=0.0,0.04")
    assert result.exit_code == 0, result.output
    import yaml

    files = (here / "generated/grpo").glob("*.yaml")
    names = {p.stem: yaml.safe_load(p.read_text())["run_name"] for p in files}
    assert names == {"beta0.0": "beta0.0", "beta0.04": "beta0.04"}


def test_a_hub_repository_pushed_to_is_each_run_s_own(here):
    """`push_to_hub: true` with one `hub_model_id`: every run pushed its model over the others'."""
    config = "output_dir: out/x\npush_to_hub: true\nhub_model_id: me/qwen-grpo\nbeta: 0.04\n"
    (here / "configs/grpo.yaml").write_text(config)
    assert cli("init", "--from", "configs/grpo.yaml", "--grid", "beta=0.0,0.04").exit_code == 0
    import yaml

    files = (here / "generated/grpo").glob("*.yaml")
    hubs = {p.stem: yaml.safe_load(p.read_text())["hub_model_id"] for p in files}
    assert hubs == {"beta0.0": "me/qwen-grpo-beta0.0", "beta0.04": "me/qwen-grpo-beta0.04"}
    (here / "configs/local.yaml").write_text(config.replace("push_to_hub: true", "push_to_hub: false"))
    assert cli("init", "--from", "configs/local.yaml", "--name", "local").exit_code == 0
    assert "hub_model_id" not in (here / "specs/local.yaml").read_text()  # nothing pushed: left as is


TRL_GRPO = """model_name_or_path: Qwen/Qwen2-0.5B-Instruct
dataset_name: trl-lib/DeepMath-103K
reward_funcs: [accuracy_reward]
num_generations: 8
beta: 0.0
output_dir: out
"""
TRL_SFT = (
    "model_name_or_path: Qwen/Qwen2-0.5B\ndataset_name: trl-lib/Capybara\npacking: true\noutput_dir: out\n"
)


@pytest.mark.train  # the installed TRL's source is read (never imported)
@pytest.mark.parametrize(("config", "command"), [(TRL_GRPO, "grpo"), (TRL_SFT, "sft")], ids=["grpo", "sft"])
def test_a_trl_config_given_without_schema_is_told_its_command_and_schema(here, config, command):
    """A TRL user's `init --from grpo.yaml` named no schema: init said "YOUR-TRAINER", and `check`
    validated nothing TRL would refuse. The config's keys (reward_funcs, num_generations are GRPO's
    own) say which `trl` command reads it: init names it, and the schema that checks it."""
    (here / "configs/t.yaml").write_text(config)
    result = cli("init", "--from", "configs/t.yaml", "--grid", "model_name_or_path=a,b")
    assert result.exit_code == 0, result.output
    said = " ".join(result.output.split())
    assert f"this reads as a `trl {command}` config" in said and "its own keys: " in said, said
    assert f"Add `schema: trl:{command}` to specs/t.yaml (or run init with --schema trl:{command})" in said
    assert f"next: sweepgen run generated/t --command 'trl {command} --config {{config}}'" in said
    seeds = cli("init", "--from", "configs/t.yaml", "--name", "t2", "--seeds", "2")
    assert seeds.exit_code == 2, seeds.output
    assert f"with --schema trl:{command}, TRL's `seed` default is used" in " ".join(seeds.output.split())


@pytest.mark.train  # the installed TRL's source is read (never imported)
def test_a_config_two_trl_commands_fit_alike_takes_the_one_its_file_names(here):
    """GRPO's and RLOO's keys overlap: `rloo.yaml` of GRPO-and-RLOO keys is `trl rloo`'s."""
    (here / "configs/rloo.yaml").write_text(TRL_GRPO)
    result = cli("init", "--from", "configs/rloo.yaml", "--grid", "model_name_or_path=a,b")
    said = " ".join(result.output.split())
    assert "this reads as a `trl rloo` config (or `trl grpo`, whose keys it fits as well;" in said, said
    assert "--command 'trl rloo --config {config}'" in said


# TRL's GRPO quick start, in short: a script that builds its GRPOConfig in Python (read, never run)
_GRPO_SCRIPT = """import os
from trl import GRPOConfig, GRPOTrainer

training_args = GRPOConfig(
    output_dir="Qwen2-0.5B-GRPO",
    learning_rate=1e-5,
    logging_steps=10,
    reward_weights=(1.0, -0.5),
    model_init_kwargs={"torch_dtype": "bfloat16"},
    seed=42,
)
raise SystemExit(9)
"""


def test_a_python_file_s_grpo_config_call_starts_a_spec_from_its_literal_arguments(here):
    """`init --from train.py` was refused ("give a YAML, JSON or TOML config"): a TRL user's config
    is often a GRPOConfig(...) call in their script. Its literal keyword arguments are now the spec's
    base (read through ast, never run: the script would exit 9), a tuple as a list."""
    (here / "train.py").write_text(_GRPO_SCRIPT)
    result = cli("init", "--from", "train.py")
    assert result.exit_code == 0, result.output
    assert cli("render", "specs/train.yaml").exit_code == 0
    from sweepgen.formats import yamlio

    rendered = yamlio.loads((here / "generated/train/seed43.yaml").read_text(), "x").data
    assert rendered == {
        "output_dir": "runs/train/seed43",
        "learning_rate": 1e-5,
        "logging_steps": 10,
        "reward_weights": [1.0, -0.5],
        "model_init_kwargs": {"torch_dtype": "bfloat16"},
        "seed": 43,
    }


@pytest.mark.parametrize(
    ("source", "at", "says"),
    [
        (_GRPO_SCRIPT.replace("=1e-5", "=-(-1e-5)"), "6:19", "`learning_rate` is `-(-1e-5)`, not a literal"),
        (_GRPO_SCRIPT.replace('"Qwen2-0.5B-GRPO"', "os.environ['OUT']"), "5:16", "`output_dir` is"),
        (_GRPO_SCRIPT.replace("seed=42,", "**extra,"), "10:5", "GRPOConfig(**...)"),
        (_GRPO_SCRIPT.replace("GRPOConfig(", "GRPOConfig('o',"), "4:28", "a positional argument"),
        (_GRPO_SCRIPT.replace("(1.0, -0.5)", "{1.0}"), "8:20", "`reward_weights` is `{1.0}`"),
        (_GRPO_SCRIPT.replace('{"torch_dtype"', "{1"), "9:24", "a key that is no string"),
        (_GRPO_SCRIPT + "other = SFTConfig(output_dir='x')\n", "13:9", "calls a TRL config class 2 times"),
        ("import trl\n", "1:1", "holds no call of a TRL config class"),
        ("GRPOConfig(\n", "1:11", "not Python that parses"),
    ],
)
def test_a_python_config_call_init_cannot_read_is_exit_2_at_its_line_and_column(here, source, at, says):
    """What is not a literal (a name, an expression, **kwargs, a positional argument, a set) is never
    guessed: refused where it is written, as are a file with no or two config calls."""
    (here / "train.py").write_text(source)
    result = cli("init", "--from", "train.py")
    assert result.exit_code == 2, result.output
    assert result.stderr.startswith(f"train.py:{at}: error: ") and says in result.stderr, result.stderr
    assert "Traceback" not in result.output and not (here / "specs").exists()


@pytest.mark.train  # the oracle: TRL's own GRPOConfig and TrlParser
def test_the_spec_from_a_grpo_config_call_renders_what_trl_reads_as_that_call(here):
    """TrlParser reading the rendered run's YAML (`trl grpo --config`) builds the GRPOConfig the
    script's call builds, but for the run's own folder and seed."""
    from trl import GRPOConfig, TrlParser

    script = _GRPO_SCRIPT.replace("seed=42,", "seed=42, use_cpu=True, bf16=False,")  # a machine without a GPU
    (here / "train.py").write_text(script)
    assert cli("init", "--from", "train.py").exit_code == 0
    assert cli("render", "specs/train.yaml").exit_code == 0
    call = script[script.index("GRPOConfig(") : script.index("raise")]
    expected = eval(call, {"GRPOConfig": GRPOConfig}).to_dict()  # the test's own script
    expected["reward_weights"] = list(expected["reward_weights"])  # the call's tuple: a list in YAML
    (read,) = TrlParser((GRPOConfig,)).parse_args_and_config(["--config", "generated/train/seed42.yaml"])
    assert {**read.to_dict(), "output_dir": "Qwen2-0.5B-GRPO"} == expected


@pytest.mark.train  # the class's fields are read from the installed TRL's source; GRPOConfig is the oracle
@pytest.mark.parametrize("cls", ["GRPOConfig", "SFTConfig", "DPOConfig"])
def test_a_keyword_the_config_class_has_no_field_for_is_refused_as_python_refuses_the_call(here, cls):
    """`GRPOConfig(learning_rat=1e-5)` raises TypeError in the script; `init --from train.py`
    took it as a key, and `trl grpo` would refuse it only at `run` (or never, for a script of
    one's own). The class's fields read from TRL's source are exactly its dataclass fields."""
    import dataclasses

    import trl

    from sweepgen.compile.schema import trl_guess

    real = getattr(trl, cls)
    with pytest.raises(TypeError):
        real(output_dir="o", learning_rat=1e-5)
    command = trl_guess.command_of_class(cls) or ""
    assert trl_guess.config_class_fields(command).names == {
        f.name for f in dataclasses.fields(real) if f.init
    }
    (here / "train.py").write_text(
        f"from trl import {cls}\nargs = {cls}(\n    output_dir='o', learning_rat=1e-5\n)\n"
    )
    result = cli("init", "--from", "train.py")
    assert result.exit_code == 2, result.output
    assert result.stderr.startswith(f"train.py:3:21: error: {cls} has no field `learning_rat`"), result.stderr
    assert "did you mean `learning_rate`?" in result.stderr and not (here / "specs").exists()


def test_the_command_of_a_python_config_call_is_its_class_s_not_a_guess_from_its_keys(here):
    """`DPOConfig(learning_rate=1e-6, beta=0.1)`: its keys fit `trl grpo` as well, and init told
    to run it with `trl grpo` (or, TRL not installed here, with YOUR-TRAINER); the class says `dpo`."""
    (here / "train.py").write_text(
        "from trl import DPOConfig\nargs = DPOConfig(learning_rate=1e-6, beta=0.1)\n"
    )
    result = cli("init", "--from", "train.py")
    assert result.exit_code == 0, result.output
    said = " ".join(result.output.split())
    assert "note: train.py builds a `trl dpo` config. Add `schema: trl:dpo`" in said, said
    assert "next: sweepgen run generated/train --command 'trl dpo --config {config}'" in said, said
