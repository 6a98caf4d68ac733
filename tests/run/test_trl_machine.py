"""What a TRL run started on this machine needs of it, judged before any run starts: a GPU for bf16
(TRL's default when fp16 is unset), and the local dataset folder its ``dataset_name`` names."""

from __future__ import annotations

import json
import os
import shlex
import sys
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from run_support import cached_hub_model, make_config_sweep

from sweepgen.cli import main
from sweepgen.run.start.trl import trl_precision

# TRL's script run by this interpreter: the run's environment is sweepgen's own
TRL = f"{shlex.quote(sys.executable)} -m trl.scripts.dpo --config {{config}}"


def _sweep(root: Path, extra: dict[str, Any]) -> None:
    configs = {f"beta{b}": {"beta": b, "output_dir": f"runs/t/beta{b}", **extra} for b in (1, 2)}
    make_config_sweep(root, configs, sweep="t", values={n: {"beta": c["beta"]} for n, c in configs.items()})


def _run(*args: str, command: str = TRL) -> tuple[int, str]:
    result = CliRunner().invoke(main, ["run", "generated/t", "--dry-run", "--command", command, *args])
    return result.exit_code, " ".join(result.output.split())


@pytest.fixture
def cpu_only(monkeypatch):
    monkeypatch.setattr(trl_precision, "no_accelerator", lambda: True)


@pytest.mark.parametrize(("extra", "said"), [({}, "bf16 is unset"), ({"bf16": True}, "bf16 is true")])
def test_bf16_on_a_machine_without_a_gpu_is_refused_before_any_run(
    tmp_path, monkeypatch, cpu_only, extra, said
):
    """TrainingArguments raises "Your setup doesn't support bf16/gpu" at each run's start."""
    monkeypatch.chdir(tmp_path)
    _sweep(tmp_path, extra)
    code, output = _run()
    assert code == 2, output
    assert said in output and "this machine has no GPU" in output and "bf16: false" in output
    assert "generated/t/beta1.yaml:" in output and "Traceback" not in output


@pytest.mark.parametrize(
    ("extra", "args", "command"),
    [
        ({"bf16": False}, (), TRL),
        ({"use_cpu": True}, (), TRL),
        ({"fp16": True, "use_cpu": True}, (), TRL),
        ({}, (), TRL + " --bf16 false"),  # the command line's flag is TRL's over the config
        ({"bf16": True}, (), TRL + " --use_cpu"),
        ({}, ("--executor", "slurm"), TRL),  # Slurm runs on other machines
    ],
)
def test_a_cpu_run_or_a_run_elsewhere_is_left_alone(tmp_path, monkeypatch, cpu_only, extra, args, command):
    monkeypatch.chdir(tmp_path)
    _sweep(tmp_path, extra)
    code, output = _run(*args, command=command)
    assert "no GPU" not in output and (code == 0 or args), output


def test_bf16_on_a_machine_with_a_gpu_is_left_alone(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    _sweep(tmp_path, {"bf16": True})
    code, output = _run()
    assert code == 0, output


@pytest.mark.parametrize(
    ("name", "close"),
    [
        ("data/prefs", "data/prefers"),  # its first part is a folder here: a local path, mistyped
        ("./data/prefs", "./data/prefers"),
        ("data/prefers/train/x", None),  # two `/`: never a Hub id
    ],
)
def test_a_local_dataset_folder_that_is_not_there_is_refused(tmp_path, monkeypatch, name, close):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "data" / "prefers").mkdir(parents=True)
    _sweep(tmp_path, {"bf16": False, "dataset_name": name})
    code, output = _run()
    assert code == 2, output
    assert f"dataset_name '{name}' is no folder of" in output and "Hub dataset id" in output
    assert "generated/t/beta1.yaml:" in output and "Traceback" not in output
    assert (f"did you mean '{close}'?" in output) == (close is not None)


@pytest.mark.parametrize(
    ("extra", "command", "refused"),
    [
        ({"model_name_or_path": "./models/qwne"}, TRL, True),  # a path, mistyped: never a Hub id
        ({"model_name_or_path": "./models/qwen"}, TRL, False),  # the folder is there
        ({"model_name_or_path": "Qwen/Qwen2-0.5B"}, TRL, False),  # a Hub id
        ({"model_name_or_path": "./models/qwen"}, TRL + " --model_name_or_path ./models/qwne", True),
    ],
)
def test_a_local_model_folder_that_is_not_there_is_refused(tmp_path, monkeypatch, extra, command, refused):
    """transformers' from_pretrained reads `./models/qwne` (no such folder) as a Hub id and refuses it
    ("Repo id must be in the form ...") at each run's start."""
    monkeypatch.chdir(tmp_path)
    for key in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE"):  # the Hub on: a Hub id is left to it
        monkeypatch.delenv(key)
    (tmp_path / "models" / "qwen").mkdir(parents=True)
    _sweep(tmp_path, {"bf16": False, **extra})
    code, output = _run(command=command)
    assert (code == 2) is refused, output
    if refused:
        assert "model_name_or_path './models/qwne' is no folder of" in output
        assert "did you mean './models/qwen'?" in output and "Traceback" not in output
        assert ("--command:" in output) is ("--model_name_or_path" in command)


def test_a_mixture_entry_naming_a_local_folder_that_is_not_there_is_refused(tmp_path, monkeypatch):
    """TRL's dataset mixture (`datasets:` in the config) hands each entry's path to load_dataset as it
    hands dataset_name: a mistyped folder there failed every run at its start, unjudged."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "data" / "prefers").mkdir(parents=True)
    mixture = [{"path": "data/prefers", "split": "train"}, {"path": "./data/prefs", "split": "train"}]
    _sweep(tmp_path, {"bf16": False, "datasets": mixture})
    code, output = _run()
    assert code == 2, output
    assert (
        "datasets[1].path './data/prefs' is no folder of" in output
        and "did you mean './data/prefers'?" in output
    )
    lines = Path("generated/t/beta1.yaml").read_text().splitlines()
    line = next(i for i, text in enumerate(lines, 1) if "./data/prefs" in text)
    assert f"generated/t/beta1.yaml:{line}:" in output and "Traceback" not in output


@pytest.mark.parametrize(
    ("extra", "command"),
    [
        ({"dataset_name": "data/prefers"}, TRL),  # the folder is there
        ({"dataset_name": "trl-lib/ultrafeedback_binarized"}, TRL),  # a Hub id: no folder trl-lib here
        ({"dataset_name": "json"}, TRL),  # a packaged loader
        ({"dataset_name": "data/prefs", "datasets": [{"path": "data/prefers"}]}, TRL),  # the mixture wins
        ({"dataset_name": "data/prefs"}, TRL + " --dataset_name data/prefers"),
    ],
)
def test_a_dataset_that_loads_is_left_alone(tmp_path, monkeypatch, extra, command):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "data" / "prefers").mkdir(parents=True)
    _sweep(tmp_path, {"bf16": False, **extra})
    code, output = _run(command=command)
    assert code == 0, output


def test_a_trl_of_another_environment_is_not_judged_for_bf16(tmp_path, monkeypatch, cpu_only):
    """Its transformers is not known here (installed_source.same_environment)."""
    monkeypatch.chdir(tmp_path)
    program = tmp_path / "other-env" / "bin" / "trl"
    program.parent.mkdir(parents=True)
    program.write_text("#!/bin/sh\nexit 0\n")
    program.chmod(0o755)
    _sweep(tmp_path, {})
    code, output = _run(command=f"{program} dpo --config {{config}}")
    assert code == 0, output


# the `trl` program installed beside this interpreter: its CLI's commands are read from its source
TRL_CLI = shlex.quote(str(Path(sys.executable).parent / "trl"))


@pytest.mark.train  # the installed TRL CLI's source is the oracle
@pytest.mark.parametrize(
    ("command", "close"), [("online_dpo", None), ("grop", "grpo"), ("rewards", "reward")]
)
def test_a_command_the_installed_trl_cli_does_not_have_is_refused_before_any_run(
    tmp_path, monkeypatch, command, close
):
    """`trl online_dpo` (an experimental trainer with no CLI command) failed in every run, at its start."""
    monkeypatch.chdir(tmp_path)
    _sweep(tmp_path, {"bf16": False})
    code, output = _run(command=f"{TRL_CLI} {command} --config {{config}}")
    assert code == 2, output
    assert f"runs `trl {command}`, but the installed trl has no such command" in output
    assert "dpo, env, grpo" in output and "Traceback" not in output
    assert (f"did you mean `trl {close}`?" in output) == (close is not None)


@pytest.mark.train  # as above
def test_a_command_the_trl_cli_has_is_left_alone(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    _sweep(tmp_path, {"bf16": False})
    code, output = _run(command=f"{TRL_CLI} dpo --config {{config}}")
    assert code == 0, output


_OFFLINE_KEYS = ("HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE", "TRANSFORMERS_OFFLINE")


@pytest.mark.parametrize(
    ("here", "env", "refused"),
    [
        ({"HF_HUB_OFFLINE": "1"}, {}, True),
        ({"TRANSFORMERS_OFFLINE": "1"}, {}, True),  # huggingface_hub reads it when HF_HUB_OFFLINE is unset
        ({"HF_HUB_OFFLINE": "0", "TRANSFORMERS_OFFLINE": "1"}, {}, False),  # ... and only then
        ({}, {"HF_DATASETS_OFFLINE": "1"}, True),  # datasets is imported after TrlParser applies env:
        # huggingface_hub is imported before: TRL's script run directly never sees this one
        ({}, {"HF_HUB_OFFLINE": "1"}, False),
        ({}, {}, False),
    ],
)
def test_a_hub_id_under_a_folder_of_that_name_is_judged_only_offline(
    tmp_path, monkeypatch, here, env, refused
):
    """`trl-lib/ultrafeedback_binarized` with a folder `trl-lib/` here (holding another dataset, no
    name close to it) is a Hub id while the Hub is on; offline, `load_dataset` cannot get it. Offline
    is what the run's libraries read (hf_cache.run_environ), not any key that says so."""
    monkeypatch.chdir(tmp_path)
    for key in _OFFLINE_KEYS:
        monkeypatch.delenv(key, raising=False)
    for key, value in here.items():
        monkeypatch.setenv(key, value)
    (tmp_path / "trl-lib" / "tldr").mkdir(parents=True)
    _sweep(tmp_path, {"bf16": False, "dataset_name": "trl-lib/ultrafeedback_binarized", "env": env})
    code, output = _run()
    assert code == (2 if refused else 0), output


@pytest.mark.train  # the installed TRL CLI: `trl dpo` applies env: in its own process, then launches
def test_under_the_trl_cli_the_configs_env_turns_the_hub_off(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    for key in _OFFLINE_KEYS:
        monkeypatch.delenv(key, raising=False)
    (tmp_path / "trl-lib" / "tldr").mkdir(parents=True)
    extra = {"dataset_name": "trl-lib/ultrafeedback_binarized", "env": {"HF_HUB_OFFLINE": True}}
    _sweep(tmp_path, {"bf16": False, **extra})
    code, output = _run(command=f"{TRL_CLI} dpo --config {{config}}")
    assert code == 2 and "dataset_name 'trl-lib/ultrafeedback_binarized' is no folder" in output, output


@pytest.mark.parametrize("name", ["../outside/prefs", "{outside}/prefs", "~/prefs", "link/prefs"])
def test_a_dataset_name_leading_out_of_the_working_folder_is_not_looked_at(tmp_path, monkeypatch, name):
    # the config is data a pull request may have written: nothing outside is listed for a hint
    # (a did-you-mean would print what an outside folder holds), so such a name is TRL's to load
    project, outside = tmp_path / "project", tmp_path / "outside"
    (outside / "prefers").mkdir(parents=True)
    project.mkdir()
    (project / "link").symlink_to(outside)
    monkeypatch.chdir(project)
    _sweep(project, {"bf16": False, "dataset_name": name.format(outside=outside)})
    code, output = _run()
    assert code == 0 and "is no folder of" not in output and "did you mean" not in output, output


def _cached_hub_dataset(cache: Path, name: str, config: str = "default") -> None:
    """A Hub dataset in `datasets`' cache as a load leaves it: <org>___<name>/<config>/<version>/<hash>/."""
    org, _, last = name.partition("/")
    folder = cache / f"{org}___{last}" / config / "0.0.0" / "0123abcd"
    folder.mkdir(parents=True)
    (folder / "dataset_info.json").write_text(json.dumps({"config_name": config}))


@pytest.mark.parametrize(
    ("cached", "refused"),
    [("trl-lib/my_prefs", False), ("trl-lib/other_prefs", True), (None, True)],
)
def test_offline_a_hub_id_in_datasets_cache_under_a_folder_of_its_org_is_accepted(
    tmp_path, monkeypatch, cached, refused
):
    """Offline, `load_dataset("trl-lib/my_prefs")` loads the copy in its cache, even with a folder
    `trl-lib/` here: accepted; one not in the cache is still refused."""
    project = tmp_path / "project"
    (project / "trl-lib" / "tldr").mkdir(parents=True)
    monkeypatch.chdir(project)
    monkeypatch.setenv("HF_DATASETS_CACHE", str(tmp_path / "cache"))
    (tmp_path / "cache").mkdir()
    if cached:
        _cached_hub_dataset(tmp_path / "cache", cached)
    _sweep(project, {"bf16": False, "dataset_name": "trl-lib/my_prefs", "env": {"HF_HUB_OFFLINE": "1"}})
    code, output = _run()
    assert code == (2 if refused else 0), output


@pytest.mark.train
def test_datasets_itself_loads_offline_what_the_cache_check_accepts(tmp_path):
    """The oracle: a dataset `datasets` cached (a JSON load's cache folder, under a Hub id's name)
    loads offline with a folder of its org in the working folder; the check agrees, and a name
    not in the cache fails in `datasets` as the check says."""
    import shutil
    import subprocess

    from sweepgen.run.start.trl import hf_cache

    project, cache = tmp_path / "project", tmp_path / "cache"
    (project / "trl-lib" / "tldr").mkdir(parents=True)
    (project / "d.jsonl").write_text('{"prompt": "a", "chosen": "b", "rejected": "c"}\n')
    env = {**os.environ, "HF_DATASETS_CACHE": str(cache), "HF_HUB_OFFLINE": "1"}
    build = "import datasets; datasets.load_dataset('json', data_files='d.jsonl')"
    subprocess.run([sys.executable, "-c", build], cwd=project, env=env, check=True, timeout=300)
    built = next((cache / "json").glob("*/*/*[!k]"))  # <config-id>/<version>/<hash>, not a .lock
    copy = cache / "trl-lib___my_prefs" / "default" / built.parts[-2] / built.parts[-1]
    shutil.copytree(built, copy)
    for arrow in copy.glob("json-*.arrow"):  # its tables are named after the dataset
        arrow.rename(copy / arrow.name.replace("json-", "my_prefs-", 1))
    load = "import datasets, sys; datasets.load_dataset(sys.argv[1])"
    for name, loads in (("trl-lib/my_prefs", True), ("trl-lib/other_prefs", False)):
        done = subprocess.run(
            [sys.executable, "-c", load, name],
            cwd=project,
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert (done.returncode == 0) == loads, done.stderr[-2000:]
        os.environ["HF_DATASETS_CACHE"], saved = str(cache), os.environ.get("HF_DATASETS_CACHE")
        try:
            assert hf_cache.has_dataset(name, {}) == loads
        finally:
            os.environ.pop("HF_DATASETS_CACHE") if saved is None else os.environ.update(
                HF_DATASETS_CACHE=saved
            )


# TRL's GRPO script run by this interpreter, and the same through `accelerate launch`
GRPO = f"{shlex.quote(sys.executable)} -m trl.scripts.grpo --config {{config}}"
_GROUPS_OF_3 = {"per_device_train_batch_size": 2, "gradient_accumulation_steps": 1, "num_generations": 3}


def _grpo_sweep(root: Path, extra: dict[str, Any]) -> None:
    configs = {
        f"lr{i}": {"learning_rate": lr, "bf16": False, "output_dir": f"runs/t/lr{i}", **_GROUPS_OF_3, **extra}
        for i, lr in enumerate((1e-5, 2e-5))
    }
    values = {n: {"learning_rate": c["learning_rate"]} for n, c in configs.items()}
    make_config_sweep(root, configs, sweep="t", values=values)


@pytest.mark.parametrize(
    "command", [GRPO, f"accelerate launch {GRPO.split(' ', 1)[1]}"], ids=["python", "accelerate launch"]
)
def test_a_generation_batch_of_no_whole_groups_on_one_cpu_process_is_refused_before_any_run(
    tmp_path, monkeypatch, cpu_only, command
):
    """batch 2 x 1 process x 1 step holds no whole group of 3: GRPOConfig's __post_init__ raises at
    each run's start. On a machine with no GPU, run here with nothing asking accelerate for more
    processes, a run starts one process (the count was "not known", so nothing was judged)."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))  # no accelerate default config of the person's
    _grpo_sweep(tmp_path, {})
    code, output = _run(command=command)  # `accelerate launch`: read from the command's tuple of words
    assert code == 2, output
    assert "holds no whole groups of num_generations 3" in output and "x 1 process(es)" in output
    assert "generated/t/lr0.yaml:" in output and "Traceback" not in output


_OWN = """from trl import GRPOConfig, ModelConfig, ScriptArguments, TrlParser

parser = TrlParser((ScriptArguments, GRPOConfig, ModelConfig))
"""


@pytest.mark.parametrize(
    ("source", "flags", "refused"),
    [
        (_OWN, "", True),
        (_OWN, "--num_generations 2", False),  # TrlParser: the command line's 2 over the config's 3
        (_OWN.replace("TrlParser", "HfArgumentParser"), "", True),
        (_OWN.replace("GRPOConfig", "SFTConfig"), "", False),  # SFT has no generation batch
        (_OWN.replace("TrlParser", "ArgumentParser"), "", False),  # not TRL's classes, parsed
    ],
)
def test_a_script_of_one_s_own_parsing_grpo_config_is_judged_as_trl_s(
    tmp_path, monkeypatch, cpu_only, source, flags, refused
):
    """`python train.py --config {config}`, a script parsing GRPOConfig (TRL's docs' pattern): its
    __post_init__ refuses the batch of no whole groups at each run's start. The script is read, never
    run (it would exit 9)."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    Path("train.py").write_text(source + "raise SystemExit(9)\n")
    _grpo_sweep(tmp_path, {})
    code, output = _run(command=f"{shlex.quote(sys.executable)} train.py --config {{config}} {flags}")
    assert (code == 2) is refused, output
    assert not refused or ("holds no whole groups of num_generations 3" in output and "lr0.yaml:" in output)


def _hostile_script(how: str, tmp_path: Path) -> str:
    """A train.py there but not to be read, as ``how`` makes it; the command's word for it."""
    path = Path("train.py")
    if how == "fifo":
        os.mkfifo(path)
    elif how == "huge":
        path.write_text(_OWN + "#" * (1 << 20) + "\n")
    elif how == "link out":
        (tmp_path.parent / f"{tmp_path.name}-outside.py").write_text(_OWN)
        path.symlink_to(tmp_path.parent / f"{tmp_path.name}-outside.py")
    elif how == "deep":  # the parser's stack: MemoryError, not a RecursionError
        path.write_text(_OWN + "x = " + "-" * 200_000 + "1\n")
    elif how == "not utf-8":
        path.write_bytes(_OWN.encode() + b"# caf\xe9\n")
    return "train.py"


@pytest.mark.parametrize("how", ["fifo", "huge", "link out", "deep", "not utf-8"])
def test_a_script_of_one_s_own_that_cannot_be_read_is_said_not_judged(tmp_path, monkeypatch, cpu_only, how):
    """A train.py that is a FIFO, past 1 MiB, a link out of the project, nested too deeply for
    Python's parser, or not UTF-8 is never waited on, followed or run, and no traceback: the runs
    start unjudged, and the warning says the script was not read and why (before, nothing was said:
    the runs of a GRPOConfig no TRL start accepts went ahead as if checked; the deep script's
    MemoryError refused every run as "out of memory ... the sweep is larger than this machine holds")."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    word = _hostile_script(how, tmp_path)
    _grpo_sweep(tmp_path, {})
    code, output = _run(command=f"{shlex.quote(sys.executable)} {word} --config {{config}}")
    assert code == 0 and "Traceback" not in output, output
    assert f"warning: {word}: not read (" in output and "was not checked before the runs" in output, output


def test_a_reward_module_nested_past_python_s_parser_is_not_judged(tmp_path, monkeypatch):
    """reward_funcs naming a project module: its names are read from its syntax tree. One nested
    past Python's parser (`x = ----1`) raised the parser's MemoryError, which the CLI says as "out
    of memory ... the sweep is larger than this machine holds"; now its names are not known (not
    judged), as for any file that does not parse."""
    from sweepgen.run.start.trl import trl_rewards

    monkeypatch.chdir(tmp_path)
    Path("rewards.py").write_text("def r(completions, **kw):\n    return []\nx = " + "-" * 200_000 + "1\n")
    assert trl_rewards._top_level_names("rewards.py") is None


def test_a_script_named_with_a_dot_folder_is_judged(tmp_path, monkeypatch, cpu_only):
    """`python ./train.py`: the same project file as train.py (before, ``./`` made it a path leaving
    the folder: never read, the batch of no whole groups not refused)."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    Path("train.py").write_text(_OWN + "raise SystemExit(9)\n")
    _grpo_sweep(tmp_path, {})
    code, output = _run(command=f"{shlex.quote(sys.executable)} ./train.py --config {{config}}")
    assert code == 2 and "holds no whole groups of num_generations 3" in output, output


_ARGV = """from trl import GRPOConfig, ScriptArguments
from transformers import HfArgumentParser

script_args, training_args = HfArgumentParser((ScriptArguments, GRPOConfig)).parse_args_into_dataclasses()
"""


@pytest.mark.parametrize(
    ("flags", "refused"),
    [
        ("--num_generations 2", False),  # the command line's 2, never the rendered config's 3
        ("--num_generations 3 --dataset_name mine --reward_funcs r.py", True),  # its own options: not judged
    ],
)
def test_a_script_parsing_its_command_line_alone_is_judged_by_its_command_line(
    tmp_path, monkeypatch, cpu_only, flags, refused
):
    """HfArgumentParser.parse_args_into_dataclasses with no YAML file: the values the run reads are
    its command line's over the class's defaults; the rendered config (num_generations 3) is read by
    no one (the script takes it as an option of its own), so judging it refused a run TRL would start."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    Path("train.py").write_text(_ARGV + "raise SystemExit(9)\n")
    _grpo_sweep(tmp_path, {})
    base = (
        "--output_dir {run_dir} --bf16 false --per_device_train_batch_size 2 --gradient_accumulation_steps 1"
    )
    base += " --sweep_config {config}"
    code, output = _run(command=f"{shlex.quote(sys.executable)} train.py {base} {flags}")
    assert (code == 2) is refused, output
    assert not refused or "holds no whole groups of num_generations 3" in output


@pytest.mark.parametrize(
    ("extra", "command", "why"),
    [
        ({}, GRPO.replace(" -m trl", " -m accelerate.commands.launch --multi_cpu -m trl"), "launcher"),
        ({}, f"accelerate launch --multi_cpu {GRPO.split(' ', 1)[1]}", "several processes asked for"),
        ({}, f"accelerate launch --config_file x.yaml {GRPO.split(' ', 1)[1]}", "a launch config decides"),
        ({"per_device_train_batch_size": 3}, GRPO, "whole groups at one process"),
    ],
)
def test_a_cpu_run_whose_process_count_is_not_one_or_whose_batch_holds_groups_is_not_refused(
    tmp_path, monkeypatch, cpu_only, extra, command, why
):
    monkeypatch.chdir(tmp_path)
    _grpo_sweep(tmp_path, extra)
    code, output = _run(command=command)
    assert "num_generations" not in output, why
    assert code == 0, (why, output)


@pytest.mark.parametrize("extra", [{"accelerate_config": "multi_gpu"}, {"num_processes": 2}])
def test_the_cli_s_launch_keys_ask_nothing_of_a_script_run_by_python(tmp_path, monkeypatch, cpu_only, extra):
    """`python -m trl.scripts.grpo` parses its config leaving the keys no dataclass has aside: only
    TRL's CLI (`trl grpo`) hands `accelerate_config` and `num_processes` to accelerate. The run is
    one process, whose batch of 2 holds no group of 3 (judged at 8 or 2 processes, or not at all)."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    _grpo_sweep(tmp_path, extra)
    code, output = _run(command=GRPO)
    assert code == 2, output
    assert "holds no whole groups of num_generations 3" in output and "x 1 process(es)" in output


def test_a_dataset_folder_the_command_line_names_is_judged(tmp_path, monkeypatch):
    """`--dataset_name ./data/prefs` on the command line is TRL's over the config's: the folder it
    names is the one each run loads."""
    monkeypatch.chdir(tmp_path)
    Path("data/prefers").mkdir(parents=True)
    _sweep(tmp_path, {"dataset_name": "./data/prefers", "bf16": False})
    code, output = _run(command=TRL + " --dataset_name ./data/prefs")
    assert code == 2, output
    assert "dataset_name './data/prefs' is no folder of" in output and "--command:" in output
    assert "did you mean './data/prefers'?" in output and "Traceback" not in output
    code, output = _run(command=TRL + " --dataset-name=./data/prefers")
    assert code == 0, output


def test_a_gpu_machine_leaves_the_count_to_accelerate(tmp_path, monkeypatch):
    """Without the cpu_only fixture the machine is taken for a GPU one (conftest): accelerate starts
    a process a GPU there, which `run` does not know without --gpus: not judged."""
    monkeypatch.chdir(tmp_path)
    _grpo_sweep(tmp_path, {})
    code, output = _run(command=GRPO)
    assert code == 0, output


def test_an_accelerate_default_config_in_the_cache_leaves_the_count_to_it(tmp_path, monkeypatch, cpu_only):
    monkeypatch.chdir(tmp_path)
    cache = tmp_path / "hf"
    (cache / "accelerate").mkdir(parents=True)
    (cache / "accelerate" / "default_config.yaml").write_text("distributed_type: 'NO'\nnum_processes: 1\n")
    monkeypatch.setenv("HF_HOME", str(cache))
    _grpo_sweep(tmp_path, {})
    code, output = _run(command=GRPO)
    assert code == 0, output


@pytest.mark.train
def test_trl_itself_refuses_the_generation_batch_judged_at_one_process(tmp_path):
    """The oracle: TRL 1.16's GRPOConfig, built in one process on this machine without a GPU, raises
    for the batch the test above refuses, and takes a batch of whole groups."""
    from trl import GRPOConfig

    common = {"output_dir": str(tmp_path), "bf16": False, "report_to": []}
    with pytest.raises(ValueError, match="divisible by the number of generations|must be divisible"):
        GRPOConfig(**common, **_GROUPS_OF_3)
    GRPOConfig(**common, **{**_GROUPS_OF_3, "per_device_train_batch_size": 3})


@pytest.mark.train  # huggingface_hub (beside TRL, never in the light core) reads its own cache
@pytest.mark.parametrize(
    ("offline", "cached", "extra", "refused"),
    [
        ({"HF_HUB_OFFLINE": "1"}, None, {}, True),
        ({"TRANSFORMERS_OFFLINE": "1"}, None, {}, True),
        ({"HF_HUB_OFFLINE": "1"}, "main", {}, False),
        ({"HF_HUB_OFFLINE": "1"}, "main", {"model_revision": "v2"}, True),  # another revision: not cached
        ({"HF_HUB_OFFLINE": "1"}, "v2", {"model_revision": "v2"}, False),
        ({}, None, {}, False),  # online: transformers downloads it
        ({}, None, {"env": {"HF_HUB_OFFLINE": "1"}}, False),  # TRL's script reads it too late
    ],
)
def test_offline_a_hub_model_not_in_huggingface_hubs_cache_is_refused_before_any_run(
    tmp_path, monkeypatch, offline, cached, extra, refused
):
    """`model_name_or_path: Qwen/Qwen2.5-0.5B` with the Hub off and no copy in the cache failed at each
    run's start, after trl's import; now refused where it is written, nothing asked of the network."""
    monkeypatch.chdir(tmp_path)
    for key in _OFFLINE_KEYS:
        monkeypatch.delenv(key)
    for key, value in offline.items():
        monkeypatch.setenv(key, value)
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hub"))
    if cached:
        cached_hub_model(tmp_path / "hub", "Qwen/Qwen2.5-0.5B", cached)
    _sweep(tmp_path, {"bf16": False, "model_name_or_path": "Qwen/Qwen2.5-0.5B", **extra})
    code, output = _run()
    assert code == (2 if refused else 0), output
    if refused:
        assert (
            "generated/t/beta1.yaml:" in output
            and "model_name_or_path 'Qwen/Qwen2.5-0.5B' is a Hub model id" in output
        )
        assert "hf download Qwen/Qwen2.5-0.5B" in output and "Traceback" not in output


_ASK_TRL = """
import sys
from trl.scripts.grpo import make_parser
sys.argv = ["grpo", "--config", "c.yaml"]
args = make_parser().parse_args_and_config()
import datasets.config, huggingface_hub.constants
from transformers.trainer_utils import get_last_checkpoint
print(repr(args[1].resume_from_checkpoint), get_last_checkpoint("o"), get_last_checkpoint("p"))
print(huggingface_hub.constants.is_offline_mode(), datasets.config.HF_HUB_OFFLINE)
from transformers import AutoConfig
for name in ("org/cached", "org/missing"):
    try:
        AutoConfig.from_pretrained(name, local_files_only=True)  # as offline: the cache alone
        print(name, "loads")
    except OSError:
        print(name, "fails")
"""


@pytest.mark.train  # TRL's own script and transformers are the oracles
def test_trl_and_transformers_read_offline_and_the_cache_as_the_checks_say(tmp_path, monkeypatch):
    """One process of TRL 1.16's GRPO script run directly: its config's ``env: {HF_HUB_OFFLINE: 1}``
    applied by its own TrlParser reaches neither huggingface_hub nor datasets (hf_cache.run_environ);
    then transformers loads from the cache what the model check accepts, and fails where it refuses."""
    import subprocess

    from sweepgen.run.start.trl import hf_cache, trl_resume

    config = {"env": {"HF_HUB_OFFLINE": 1}, "output_dir": "o", "bf16": False, "use_cpu": True}
    (tmp_path / "c.yaml").write_text(json.dumps({**config, "resume_from_checkpoint": True}))
    cached_hub_model(tmp_path / "hub", "org/cached")
    (tmp_path / "o").mkdir()  # no checkpoint in it; p/ has one (and a folder that is none)
    for folder in ("checkpoint-2", "checkpoint-10", "checkpoint-x"):
        (tmp_path / "p" / folder).mkdir(parents=True)
    for key in _OFFLINE_KEYS:
        monkeypatch.delenv(key)
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hub"))
    done = subprocess.run(
        [sys.executable, "-c", _ASK_TRL],
        cwd=tmp_path,
        env=dict(os.environ),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    hub, datasets = hf_cache.run_environ(config, cli=False)
    said = [f"{hf_cache.hub_offline(hub)} {hf_cache.datasets_offline(hub, datasets)}"]
    said += [
        f"{n} {'loads' if hf_cache.has_model(n, 'main', {}) else 'fails'}"
        for n in ("org/cached", "org/missing")
    ]
    assert done.stdout.splitlines()[-3:] == said == ["False False", "org/cached loads", "org/missing fails"]
    # TrlParser keeps `true` a bool: the Trainer resumes from output_dir's last checkpoint-N, or raises
    assert done.stdout.splitlines()[-4] == "True None p/checkpoint-10"
    monkeypatch.chdir(tmp_path)
    assert trl_resume._last_missing("o") is not None and trl_resume._last_missing("p") is None


@pytest.mark.parametrize("command", ["trl env", "trl env --config {config}", "/venv/bin/trl vllm-serve"])
def test_a_trl_command_that_trains_nothing_is_no_run(tmp_path, monkeypatch, command):
    """`trl env` (no {config}) was refused only as "--command must contain {config}"; with one, each
    run failed at its start: now it says what `trl env` is, and which command runs the sweep."""
    monkeypatch.chdir(tmp_path)
    _sweep(tmp_path, {"bf16": False})
    code, output = _run(command=command)
    assert code == 2 and "trains nothing and reads no config, so it cannot be a run" in output, output
    assert "--command:" in output and "--command 'trl grpo --config {config}'" in output
    assert "Traceback" not in output


@pytest.mark.parametrize(
    ("extra", "flags", "installed", "where"),
    [
        ({"use_vllm": True}, "", False, "generated/t/lr0.yaml:"),
        ({}, " --use_vllm", False, "--command:"),  # a bare --use_vllm is true (HfArgumentParser)
        ({"use_vllm": True}, " --use_vllm false", False, None),  # the command line's over the config's
        ({"use_vllm": True}, "", True, None),
    ],
)
def test_use_vllm_without_vllm_installed_is_refused_before_any_run(
    tmp_path, monkeypatch, cpu_only, extra, flags, installed, where
):
    """GRPO with `use_vllm` on a machine without vLLM: TRL raises "vLLM is not available and
    `use_vllm` is set to True" in every run, after the model loaded; now refused where it is set."""
    from sweepgen.run.start.trl import trl_vllm

    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(trl_vllm, "vllm_installed", lambda: installed)
    _grpo_sweep(tmp_path, {"num_generations": 2, **extra})
    code, output = _run(command=GRPO + flags)
    assert code == (0 if where is None else 2), output
    if where is not None:
        assert f"{where}" in output and "use_vllm is true but vLLM is not installed" in output
        assert "this machine has no GPU, which vLLM needs: drop use_vllm" in output


@pytest.mark.train  # TRL's own source is the oracle (read, not imported: importing it costs 40 s)
def test_trl_looks_vllm_up_and_raises_as_the_check_says():
    import importlib.util

    from sweepgen.run.start.trl import trl_vllm

    trl = Path(importlib.util.find_spec("trl").origin).parent
    lookup = (trl / "import_utils.py").read_text()
    assert '_is_package_available("vllm", return_version=True)' in lookup  # an installed vllm, as find_spec
    for raiser in (trl / "generation" / "vllm_generation.py", trl / "trainer" / "distillation_trainer.py"):
        source = raiser.read_text()
        assert "if not is_vllm_available():" in source and "`use_vllm` is set to True" in source
    assert trl_vllm.vllm_installed() is (importlib.util.find_spec("vllm") is not None) is False


@pytest.mark.train  # the installed transformers' source names its trackers
@pytest.mark.parametrize(
    ("extra", "flags", "said"),
    [
        ({"report_to": "wandbb"}, "", "report_to names 'wandbb', which transformers does not have"),
        (
            {"report_to": ["tensorboard", "mlflow"]},
            "",
            "report_to names 'mlflow', but mlflow is not installed",
        ),
        ({}, " --report_to comet_ml", "report_to names 'comet_ml', but comet_ml is not installed"),
        ({"report_to": ["wandb", "tensorboard"]}, "", None),  # both installed in the full lane
        ({"report_to": "all"}, "", None),
    ],
)
def test_a_report_to_tracker_transformers_cannot_start_is_refused_before_any_run(
    tmp_path, monkeypatch, extra, flags, said
):
    """`report_to: mlflow` without mlflow (or a misspelled tracker) failed every run at its start,
    after the model loaded: transformers builds each tracker's callback as the trainer is built."""
    monkeypatch.chdir(tmp_path)
    _grpo_sweep(tmp_path, {"num_generations": 2, **extra})
    code, output = _run(command=GRPO + flags)
    assert code == (0 if said is None else 2), output
    if said is not None:
        assert said in output and ("--command:" in output) == bool(flags), output
        assert "Traceback" not in output


@pytest.mark.train  # as above
def test_the_trackers_judged_are_transformers_own():
    from sweepgen.run.start.trl import trl_report_to

    known = trl_report_to.trackers()
    assert "wandb" in known and "tensorboard" in known
    assert known - set(trl_report_to._NEEDS) == {"neptune", "kubeflow"}  # not judged: more than a module


@pytest.mark.parametrize(("checkpoints", "refused"), [(False, True), (True, False)])
def test_resuming_where_there_is_no_checkpoint_is_refused_before_any_run(
    tmp_path, monkeypatch, checkpoints, refused
):
    """`resume_from_checkpoint: true` on a sweep's first start: transformers found no checkpoint-N
    in output_dir and raised in every run, after the model loaded."""
    from sweepgen.run.start.trl import trl_resume

    monkeypatch.chdir(tmp_path)
    for beta in (1, 2) if checkpoints else ():
        (tmp_path / "runs" / "t" / f"beta{beta}" / "checkpoint-5").mkdir(parents=True)
    _sweep(tmp_path, {"bf16": False, "resume_from_checkpoint": True})
    code, output = _run()
    assert code == (2 if refused else 0), output
    if refused:
        assert (
            "generated/t/beta1.yaml:" in output and "resume_from_checkpoint is true, but output_dir" in output
        )
    (tmp_path / "ckpt").mkdir()
    assert "no trainer_state.json" in trl_resume._folder_missing("ckpt")  # a folder: transformers reads it
    (tmp_path / "ckpt" / "trainer_state.json").write_text("{}")
    assert trl_resume._folder_missing("ckpt") is None and trl_resume._folder_missing("../elsewhere") is None


@pytest.mark.parametrize("resume", [True, None])
def test_an_output_dir_too_large_to_list_is_said_not_checked(tmp_path, monkeypatch, resume):
    """An output_dir past MAX_LISTED entries is never listed whole: `resume_from_checkpoint: true`
    was then taken as resumable, and a run starting over beside an earlier attempt's checkpoints
    was not warned of, both in silence. Each says now what was not checked, at output_dir."""
    from sweepgen.run.start.trl import trl_resume

    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(trl_resume, "MAX_LISTED", 3)
    for n in range(5):
        (tmp_path / "runs" / "t" / "beta1" / f"f{n}").mkdir(parents=True)
    (tmp_path / "runs" / "t" / "beta2" / "checkpoint-1").mkdir(parents=True)  # listed: resumable
    _sweep(tmp_path, {"bf16": False} if resume is None else {"bf16": False, "resume_from_checkpoint": resume})
    code, output = _run()
    assert code == 0, output
    assert "output_dir 'runs/t/beta1' holds more than 3 entries (never listed whole)" in output, output
    assert ("resume from" if resume else "an earlier attempt's checkpoints") in output, output
    assert "'runs/t/beta2' holds more" not in output  # listed: nothing of this to say


def test_an_output_dir_linked_out_of_the_working_folder_is_never_looked_in(tmp_path, monkeypatch):
    """output_dir `o`, a link to a folder outside (a pull request's `o -> ~`): the working folder's
    check resolved the folders above it alone, so `o` itself was listed and its checkpoint-N
    folders' names said in the started-over warning. Nothing there is looked at now."""
    from sweepgen.run.start.trl import trl_resume

    (tmp_path / "outside" / "checkpoint-3").mkdir(parents=True)
    (tmp_path / "outside" / "checkpoint-3" / "trainer_state.json").write_text("{}")
    (tmp_path / "w").mkdir()
    (tmp_path / "w" / "o").symlink_to(tmp_path / "outside")
    monkeypatch.chdir(tmp_path / "w")
    listed = []
    real = trl_resume.runfs.first_names
    monkeypatch.setattr(trl_resume.runfs, "first_names", lambda f, n: listed.append(f) or real(f, n))
    assert trl_resume.started_over({"output_dir": "o"}, {}) is None
    assert trl_resume._last_missing("o") is None and listed == []
    assert trl_resume._folder_missing("o/checkpoint-3") is None  # not looked at: no refusal either


def test_a_dataset_folder_linked_out_of_the_working_folder_is_never_read(tmp_path, monkeypatch):
    """dataset_name `data`, itself a link to a folder outside: only the folders above it were
    resolved, so its README.md (outside) was read and its configs named in the refusal. Not
    judged now."""
    from sweepgen.run.start.trl import trl_dataset, trl_dataset_config

    (tmp_path / "outside").mkdir()
    card = "---\nconfigs:\n- config_name: secretname\n  data_files: a.jsonl\n---\n"
    (tmp_path / "outside" / "README.md").write_text(card)
    (tmp_path / "w").mkdir()
    (tmp_path / "w" / "data").symlink_to(tmp_path / "outside")
    monkeypatch.chdir(tmp_path / "w")
    assert not trl_dataset.inside_here("data") and trl_dataset.inside_here("data/../x")
    assert trl_dataset_config._configs_of("data", "other") is None


def test_an_output_dir_of_too_many_entries_is_never_listed_whole(tmp_path, monkeypatch):
    """resume_from_checkpoint's checks listed output_dir whole (and stat'ed each checkpoint-N in
    it): past MAX_LISTED entries it is not judged now, never listed to its end."""
    from sweepgen.run.start.trl import trl_resume

    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(trl_resume, "MAX_LISTED", 3, raising=False)  # absent before: listed whole
    (tmp_path / "o" / "checkpoint-2").mkdir(parents=True)
    (tmp_path / "o" / "checkpoint-2" / "trainer_state.json").write_text("{}")
    assert trl_resume._last_checkpoint("o") == os.path.join("o", "checkpoint-2")
    for name in ("a", "b", "c"):
        (tmp_path / "o" / name).write_text("")
    assert trl_resume._last_checkpoint("o") is None and trl_resume._last_missing("o") is None


@pytest.mark.parametrize(("flags", "refused"), [("", False), (" --dataset_config other", True)])
def test_the_command_lines_dataset_config_is_the_one_looked_for_in_the_cache(
    tmp_path, monkeypatch, flags, refused
):
    """Offline, `--dataset_config other` over the config's `main`: `load_dataset` looks for `other`,
    which the cache has not; the check looked for the config's `main` and let every run fail."""
    project = tmp_path / "project"
    (project / "trl-lib" / "tldr").mkdir(parents=True)
    monkeypatch.chdir(project)
    monkeypatch.setenv("HF_DATASETS_CACHE", str(tmp_path / "cache"))
    _cached_hub_dataset(tmp_path / "cache", "trl-lib/my_prefs", "main")
    _sweep(project, {"bf16": False, "dataset_name": "trl-lib/my_prefs", "dataset_config": "main"})
    code, output = _run(command=TRL + flags)
    assert code == (2 if refused else 0), output


@pytest.mark.parametrize("cached", [False, True])
def test_a_light_install_still_judges_an_offline_hub_model_in_the_cache(tmp_path, monkeypatch, cached):
    """sweepgen without huggingface_hub (a light install; the runs' own Python has it) passed an
    offline Hub model missing from the cache silently; now the cache's layout is read without it."""
    monkeypatch.setitem(sys.modules, "huggingface_hub", None)  # `import huggingface_hub` fails
    monkeypatch.chdir(tmp_path)
    for key in _OFFLINE_KEYS:
        monkeypatch.delenv(key, raising=False)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hub"))
    if cached:
        cached_hub_model(tmp_path / "hub", "Qwen/Qwen2.5-0.5B")
    _sweep(tmp_path, {"bf16": False, "model_name_or_path": "Qwen/Qwen2.5-0.5B"})
    code, output = _run()
    assert code == (0 if cached else 2), output
    if not cached:
        assert "model_name_or_path 'Qwen/Qwen2.5-0.5B' is a Hub model id" in output, output


@pytest.mark.train  # huggingface_hub, the oracle, is installed beside TRL only
def test_the_cache_read_without_huggingface_hub_answers_as_huggingface_hub(tmp_path):
    """hf_cache.cached_file (a light install's reader) agrees with try_to_load_from_cache."""
    from huggingface_hub import try_to_load_from_cache

    from sweepgen.run.start.trl import hf_cache

    cached_hub_model(tmp_path, "org/model")
    cached_hub_model(tmp_path, "org/model", "v2")
    cached_hub_model(tmp_path, "solo")
    sha = "0123456789abcdef0123456789abcdef01234567"
    (tmp_path / "models--org--bare" / "snapshots" / sha).mkdir(parents=True)  # no config.json
    cases = [("org/model", r) for r in ("main", "v2", "v3", sha, "0" * 40)]
    cases += [("solo", "main"), ("org/other", "main"), ("org/bare", sha)]
    for name, revision in cases:
        theirs = try_to_load_from_cache(name, "config.json", cache_dir=str(tmp_path), revision=revision)
        ours = hf_cache.cached_file(str(tmp_path), name, revision, "config.json")
        assert ours == (theirs if isinstance(theirs, str) else None), (name, revision)


@pytest.mark.train  # transformers' own callbacks are the oracle
def test_the_install_hint_names_the_package_transformers_callback_asks_for(monkeypatch):
    """`report_to: azure_ml` without azureml said `pip install azureml` (no such package; transformers
    says `pip install azureml-sdk`): each tracker judged, its library hidden, names in the refusal's
    hint the package its callback's own error names (tensorboard's names none: the installed
    distribution holding the module, as importlib.metadata knows it)."""
    import importlib.metadata
    import importlib.util
    import re

    from transformers.integrations import integration_utils

    from sweepgen.run.start.trl import trl_report_to

    real = importlib.util.find_spec
    for name, needs in trl_report_to._NEEDS.items():
        modules = {m for group in needs for m in group}
        monkeypatch.setattr(
            importlib.util, "find_spec", lambda m, *a, _h=modules: None if m in _h else real(m, *a)
        )
        with pytest.raises((RuntimeError, ImportError)) as raised:
            integration_utils.INTEGRATION_TO_CALLBACK[name]()
        problem = trl_report_to._missing(name)
        assert problem is not None, name
        asked = re.search(r"pip install ([\w.\-\[\]]+)", str(raised.value))
        if asked is None:  # tensorboard: "Either update your PyTorch version or install tensorboardX"
            asked_for = importlib.metadata.packages_distributions()[needs[0][0]][0]
        else:
            asked_for = asked.group(1).split(">=")[0]
        assert f"`pip install {asked_for}`" in problem[1], (name, problem[1], str(raised.value))


def _slurm_sweep(root: Path, extra: dict[str, Any]) -> None:
    """The sweep of _sweep, with the `resources:` block the Slurm executor needs."""
    _sweep(root, extra)
    lock = root / "generated" / "t" / "sweep.lock.json"
    lock.write_text(json.dumps({**json.loads(lock.read_text()), "resources": {"time": "00:10:00"}}))


@pytest.mark.parametrize(
    ("extra", "said"),
    [
        ({"dataset_name": "./data/prefs"}, "error: dataset_name './data/prefs' is no folder of"),
        ({"model_name_or_path": "./models/qwne"}, "error: model_name_or_path './models/qwne' is no folder"),
        ({"resume_from_checkpoint": True}, "error: resume_from_checkpoint is true, but output_dir"),
        (
            {"model_name_or_path": "Qwen/Qwen2.5-0.5B"},
            "warning: generated/t/beta1.yaml:4:1: model_name_or_path 'Qwen/Qwen2.5-0.5B' is a Hub model id",
        ),
        (
            {"dataset_name": "data/prefs"},
            "warning: generated/t/beta1.yaml:4:1: dataset_name 'data/prefs' is no",
        ),
    ],
)
def test_a_slurm_sweep_is_judged_for_its_working_folder_and_warned_of_the_nodes_cache(
    tmp_path, monkeypatch, extra, said
):
    """A Slurm sweep's runs start in the working folder (the job's cwd), shared with the nodes: a
    missing dataset or model folder and a resume with no checkpoint failed each run on its node,
    judged only for local runs; now refused. Offline, a Hub model or dataset this machine's cache
    lacks passed silently: the nodes' cache is not known here, so it is said not checked (once)."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "data").mkdir()  # `data/prefs`: a Hub id by its spelling, offline not in the cache
    for key in _OFFLINE_KEYS:
        monkeypatch.delenv(key, raising=False)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hub"))
    monkeypatch.setenv("HF_DATASETS_CACHE", str(tmp_path / "datasets"))
    _slurm_sweep(tmp_path, {"bf16": False, **extra})
    code, output = _run("--executor", "slurm")
    assert said in output and "Traceback" not in output, output
    if said.startswith("error"):
        assert code == 2, output
    else:  # the light lane has no submitit: the dry run is refused for it after the warning
        assert code == 0 or "needs submitit" in output, output
        assert output.count("warning:") == 1 and "Slurm nodes' cache was not checked" in output, output


def _card(*names: str, marked: str | None = None) -> str:
    """A dataset folder's README.md listing the configs ``names`` (``marked``: `default: true`)."""
    entries = "".join(
        f"- config_name: {n}\n  data_files: a.jsonl\n" + ("  default: true\n" if n == marked else "")
        for n in names
    )
    return f"---\nconfigs:\n{entries}---\n# data\n"


_CARDS = {
    "plain": None,  # no README.md: the one config `default`
    "no_configs": "---\nlicense: mit\n---\n# data\n",
    "two": _card("first", "second"),
    "one": _card("only"),
    "marked": _card("first", "second", marked="second"),
    "named_default": _card("default", "first"),
}


def _dataset_folders(root: Path) -> None:
    for folder, card in _CARDS.items():
        (root / "data" / folder).mkdir(parents=True)
        (root / "data" / folder / "a.jsonl").write_text('{"prompt": "a", "completion": "b"}\n')
        if card is not None:
            (root / "data" / folder / "README.md").write_text(card)


@pytest.mark.train  # datasets, the oracle, is installed beside TRL only
def test_the_configs_of_a_dataset_folder_are_the_ones_datasets_loads(tmp_path, monkeypatch):
    """Each folder and name: refused by the check exactly where datasets' own builder raises."""
    import datasets

    from sweepgen.run.start.trl import trl_dataset_config

    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HF_DATASETS_CACHE", str(tmp_path / "cache"))
    _dataset_folders(tmp_path)
    for folder in _CARDS:
        for name in (None, "default", "first", "second", "only", "nope"):
            try:
                datasets.load_dataset_builder(f"./data/{folder}", name=name)
                loads = True
            except ValueError:
                loads = False
            configs = trl_dataset_config.folder_configs(f"./data/{folder}")
            assert configs is not None
            assert (trl_dataset_config._problem(name, *configs) is None) == loads, (folder, name)


def test_a_dataset_card_that_is_a_fifo_or_too_large_is_not_judged_never_waited_on(tmp_path):
    """A README.md a pull request made a FIFO (or a file past the input limit) in a dataset folder:
    the card reads as "does not read" (not judged, datasets says why at the run), never a `run`
    that waits forever on an open of a pipe nobody writes."""
    import os

    from sweepgen.run.start.trl import trl_dataset_config

    fifo, large, plain = (tmp_path / name for name in ("fifo", "large", "plain"))
    for folder in (fifo, large, plain):
        folder.mkdir()
    os.mkfifo(fifo / "README.md")
    with open(large / "README.md", "wb") as fh:
        fh.truncate((16 << 20) + 1)
    (plain / "README.md").write_text("---\nconfigs:\n- config_name: en\n---\n")
    assert trl_dataset_config.folder_configs(str(fifo)) is None
    assert trl_dataset_config.folder_configs(str(large)) is None
    assert trl_dataset_config.folder_configs(str(plain)) == (["en"], None)
    assert trl_dataset_config.folder_configs(str(tmp_path / "none")) == (["default"], "default")


@pytest.mark.parametrize(
    ("extra", "flags", "said"),
    [
        ({"dataset_name": "./data/two", "dataset_config": "thrid"}, "", "generated/t/beta1.yaml:"),
        ({"dataset_name": "./data/two"}, " --dataset_config thrid", "--command:"),
        ({"dataset_name": "./data/plain", "dataset_config": "en"}, "", "its configs: default"),
        ({"dataset_name": "./data/two"}, "", "marks none default"),
        ({"datasets": [{"path": "./data/one", "name": "first"}]}, "", "datasets[0].name is 'first'"),
        ({"dataset_name": "./data/two", "dataset_config": "second"}, "", None),
        ({"dataset_name": "./data/plain"}, "", None),
        ({"dataset_name": "./data/one"}, "", None),
    ],
)
def test_a_dataset_config_the_local_folder_does_not_have_is_refused_before_any_run(
    tmp_path, monkeypatch, extra, flags, said
):
    """`--dataset_config en` with a local folder of data files: `datasets` knows only the configs its
    README.md lists (else `default`) and raised at each run's start ("BuilderConfig 'en' not
    found"), after the model loaded; now refused where it is written."""
    monkeypatch.chdir(tmp_path)
    _dataset_folders(tmp_path)
    _sweep(tmp_path, {"bf16": False, **extra})
    code, output = _run(command=TRL + flags)
    assert code == (0 if said is None else 2), output
    if said is not None:
        assert said in output and "`datasets.load_dataset` raises" in output and "Traceback" not in output, (
            output
        )


SFT = f"{shlex.quote(sys.executable)} -m trl.scripts.sft --config {{config}}"


@pytest.mark.parametrize(
    ("value", "flags", "said"),
    [
        ("templates/chta.jinja", "", "is no file here"),  # mistyped: TRL takes it for a Hub id
        ("templates/chat.txt", "", "ends in neither .jinja nor .j2"),  # read as a tokenizer folder
        ("./tok", "", "is no folder here and cannot be a Hub id"),
        (None, " --chat_template_path templates/chta.jinja", "--command:"),
        ("templates/chat.jinja", "", None),
        ("templates", "", None),  # a folder: a tokenizer's, cloned
        ("Qwen/Qwen2.5-0.5B-Instruct", "", None),  # a Hub id: left to transformers
    ],
)
def test_a_chat_template_path_trl_cannot_read_is_refused_before_any_run(
    tmp_path, monkeypatch, value, flags, said
):
    """`trl sft --chat_template_path templates/chta.jinja`: TRL reads a template only from a file
    ending in .jinja or .j2 and loads anything else as a tokenizer, which failed at each run's start
    after the model loaded; now refused where it is written."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "templates").mkdir()
    (tmp_path / "templates" / "chat.jinja").write_text("{{ messages }}")
    (tmp_path / "templates" / "chat.txt").write_text("{{ messages }}")
    extra = {} if value is None else {"chat_template_path": value}
    configs = {
        f"lr{i}": {"learning_rate": lr, "bf16": False, "output_dir": f"runs/t/lr{i}", **extra}
        for i, lr in ((1, 1e-5), (2, 2e-5))
    }
    make_config_sweep(
        tmp_path,
        configs,
        sweep="t",
        values={n: {"learning_rate": c["learning_rate"]} for n, c in configs.items()},
    )
    code, output = _run(command=SFT + flags)
    assert code == (0 if said is None else 2), output
    if said is not None:
        assert said in output and "AutoTokenizer.from_pretrained" in output and "Traceback" not in output, (
            output
        )


def test_a_slurm_search_trial_says_the_check_not_made_and_starts(tmp_path, monkeypatch):
    """A search's trials on Slurm meet the same judgment: an offline Hub model this machine's cache
    lacks is said not checked through the note the controller hands in (it tells it once), and the
    trial starts (no refusal): never a silent pass, never a refusal of what the nodes may hold."""
    from sweepgen.run.core.plan.tasks import load_sweep, parse_command
    from sweepgen.run.start.trl import trl_start

    monkeypatch.chdir(tmp_path)
    for key in _OFFLINE_KEYS:
        monkeypatch.delenv(key, raising=False)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hub"))
    _sweep(tmp_path, {"bf16": False, "model_name_or_path": "Qwen/Qwen2.5-0.5B"})
    argv = parse_command(TRL)
    tasks = load_sweep(Path("generated/t"), command=argv).tasks
    said: list[str] = []
    for trial in ([tasks[0]], [tasks[1]]):
        assert (
            trl_start.trial_refusal(Path("generated/t"), argv, [], trial, 1, "slurm", [], None, said.append)
            is None
        )
    assert len(said) == 2 and all("Slurm nodes' cache was not checked" in line for line in said), said
    assert said[0].startswith("warning: generated/t/beta1.yaml:4:1: model_name_or_path")
    # the controller tells it once, though each trial's line names its own file
    from types import SimpleNamespace

    from sweepgen.run.search.controller import SearchController

    controller = SimpleNamespace(warned=set(), events=[])
    for line in said:
        SearchController._warn_once(controller, line)  # type: ignore[arg-type]
    assert controller.events == said[:1]


# TRL 1.16's own sft.py, in short: what a person's script copied from TRL's docs does with the fields
_OWN_SFT = """from datasets import load_dataset
from trl import ModelConfig, ScriptArguments, SFTConfig, SFTTrainer, TrlParser

parser = TrlParser((ScriptArguments, SFTConfig, ModelConfig))
script_args, training_args, model_args = parser.parse_args_and_config()
dataset = load_dataset(script_args.dataset_name, name=script_args.dataset_config)
trainer = SFTTrainer(model=model_args.model_name_or_path, args=training_args, train_dataset=dataset["train"])
trainer.train(resume_from_checkpoint=training_args.resume_from_checkpoint)
"""
# the same script handing nothing on where sweepgen sees it: a name copied first, no resume
_OWN_SFT_UNSEEN = """from datasets import load_dataset
from trl import ModelConfig, ScriptArguments, SFTConfig, TrlParser
from transformers import Trainer

parser = TrlParser((ScriptArguments, SFTConfig, ModelConfig))
script_args, training_args, model_args = parser.parse_args_and_config()
name = script_args.dataset_name
dataset = load_dataset(name)
model = model_args.model_name_or_path
Trainer(model=model, args=training_args, train_dataset=dataset["train"]).train()
"""


@pytest.mark.parametrize(
    ("extra", "flags", "said"),
    [
        ({"dataset_name": "./data/prefs"}, "", "dataset_name './data/prefs' is no folder of"),
        ({"dataset_name": "./data/prefers"}, "--dataset_name ./data/prefs", "dataset_name './data/prefs'"),
        ({"dataset_name": "./data/prefers", "dataset_config": "nope"}, "", "dataset_config is 'nope'"),
        ({"model_name_or_path": "./models/qwne"}, "", "model_name_or_path './models/qwne' is no folder"),
        ({"resume_from_checkpoint": True}, "", "holds no checkpoint-N folder"),
        ({"chat_template_path": "chat.jinja"}, "", "chat_template_path 'chat.jinja' is no file here"),
    ],
)
def test_a_script_of_one_s_own_handing_fields_on_as_trl_s_scripts_is_judged_as_they_are(
    tmp_path, monkeypatch, extra, flags, said
):
    """A script built as TRL's sft.py (TrlParser((ScriptArguments, SFTConfig, ModelConfig)), then
    load_dataset, SFTTrainer(model=...), train(resume_from_checkpoint=...)) fails at each run's start
    where TRL's sft.py would: the same checks refuse its values (the command line's over the config's)."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "data" / "prefers").mkdir(parents=True)
    Path("train.py").write_text(_OWN_SFT + "raise SystemExit(9)\n")
    _sweep(tmp_path, {"bf16": False, **extra})
    code, output = _run(command=f"{shlex.quote(sys.executable)} train.py --config {{config}} {flags}")
    assert code == 2, output
    assert said in output and "Traceback" not in output
    assert ("--command" in output) is bool(flags) and (bool(flags) or "generated/t/beta1.yaml:" in output)


def test_a_script_of_one_s_own_not_seen_handing_fields_on_says_them_not_checked(tmp_path, monkeypatch):
    """transformers' Trainer.train() resumes from nothing unless told (it reads no args.
    resume_from_checkpoint), and a name copied to a variable first is not followed: nothing is
    refused that the script would run, and the fields are named as not checked, never passed in silence."""
    monkeypatch.chdir(tmp_path)
    Path("train.py").write_text(_OWN_SFT_UNSEEN + "raise SystemExit(9)\n")
    extra = {"dataset_name": "./data/prefs", "resume_from_checkpoint": True, "reward_funcs": ["r.f"]}
    _sweep(tmp_path, {"bf16": False, **extra})
    code, output = _run(command=f"{shlex.quote(sys.executable)} train.py --config {{config}}")
    assert code == 0, output
    said = (
        "warning: train.py: not checked before the runs: dataset_name, resume_from_checkpoint, reward_funcs"
    )
    assert said in output
    assert output.count("not checked before the runs") == 1


@pytest.mark.parametrize(
    ("extra", "flags", "installed", "where"),
    [
        ({"use_liger_kernel": True}, "", False, "generated/t/beta1.yaml:"),
        ({}, " --use_liger_kernel", False, "--command:"),  # a bare flag is true (HfArgumentParser)
        ({"use_liger_kernel": True}, " --use_liger_kernel false", False, None),  # the command line's wins
        ({"use_liger_kernel": True}, "", True, None),
        ({"use_liger_kernel": False}, "", False, None),
    ],
)
def test_use_liger_kernel_without_liger_installed_is_refused_before_any_run(
    tmp_path, monkeypatch, extra, flags, installed, where
):
    """transformers' Trainer raises "liger-kernel >= 0.3.0 is not available" when training starts,
    after the model and dataset loaded, in every run of every TRL command (here `dpo`)."""
    from sweepgen.run.start.trl import trl_liger

    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(trl_liger, "liger_installed", lambda: installed)
    _sweep(tmp_path, {"bf16": False, **extra})
    code, output = _run(command=TRL + flags)
    assert code == (0 if where is None else 2), output
    if where is not None:
        assert where in output and "use_liger_kernel is true but liger-kernel is not installed" in output
        assert "Traceback" not in output


@pytest.mark.train  # transformers' own source is the oracle (read, not imported)
def test_transformers_looks_liger_up_and_raises_as_the_check_says():
    import importlib.util

    from sweepgen.run.start.trl import trl_liger

    transformers = Path(importlib.util.find_spec("transformers").origin).parent
    lookup = (transformers / "utils" / "import_utils.py").read_text()
    assert '_is_package_available("liger_kernel", return_version=True)' in lookup
    source = (transformers / "integrations" / "liger.py").read_text()
    assert (
        "if not is_liger_kernel_available():" in source and "liger-kernel >= 0.3.0 is not available" in source
    )
    assert "apply_liger_kernel(self.model" in (transformers / "trainer.py").read_text()
    assert trl_liger.liger_installed() is (importlib.util.find_spec("liger_kernel") is not None) is False


@pytest.mark.parametrize(
    ("extra", "warned"),
    [({}, True), ({"resume_from_checkpoint": True}, False), ({"resume_from_checkpoint": False}, True)],
)
def test_a_trl_run_started_again_beside_its_checkpoints_without_resuming_is_warned(
    tmp_path, monkeypatch, extra, warned
):
    """`run --rerun-failed` of a `trl dpo` run killed at step 3: TRL's script resumes only from what
    resume_from_checkpoint names, so unset it trains from step 0 again and saves over checkpoint-3,
    in silence; now a warning names the checkpoint and the setting that resumes from it."""
    monkeypatch.chdir(tmp_path)
    _sweep(tmp_path, {"bf16": False, **extra})
    for run in ("beta1", "beta2"):
        (tmp_path / "runs" / "t" / run / "checkpoint-3").mkdir(parents=True)
        (tmp_path / "runs" / "t" / run / "checkpoint-3" / "trainer_state.json").write_text("{}")
    (tmp_path / "runs" / "t" / "beta1" / "checkpoint-5").mkdir()  # no trainer state: no checkpoint
    code, output = _run()
    assert code == 0, output
    said = "generated/t/beta1.yaml:2:1: runs/t/beta1/checkpoint-3 was left by an earlier attempt"
    assert (said in output) is warned and output.count("resume_from_checkpoint is unset") == 2 * warned


@pytest.mark.parametrize(
    ("extra", "resumed"),
    [
        ({}, True),
        ({"resume_from_checkpoint": False}, True),
        ({"resume_from_checkpoint": True}, False),
        ({"save_only_model": True}, False),  # weights alone: no optimizer or schedule to resume
    ],
)
def test_a_trl_run_rerun_after_a_failed_attempt_resumes_from_its_newest_complete_checkpoint(
    tmp_path, monkeypatch, extra, resumed
):
    """`run --rerun-failed` of a `trl dpo` run killed after checkpoint-3 was warned about and
    trained from step 0 again, saving over checkpoint-3. Now it resumes as a TRL user restarts it:
    `--resume_from_checkpoint runs/t/beta1/checkpoint-3` (checkpoint-5, without trainer_state.json,
    is no complete checkpoint; transformers writes that file last); a run never attempted is still
    only warned, and a config that resumes by itself is left as it says."""
    from sweepgen.run.core.base import RunState, RunStatus, write_status
    from sweepgen.run.local.liveness import this_host

    monkeypatch.chdir(tmp_path)
    _sweep(tmp_path, {"bf16": False, **extra})
    for run in ("beta1", "beta2"):
        (tmp_path / "runs" / "t" / run / "checkpoint-3").mkdir(parents=True)
        (tmp_path / "runs" / "t" / run / "checkpoint-3" / "trainer_state.json").write_text("{}")
    (tmp_path / "runs" / "t" / "beta1" / "checkpoint-5").mkdir()  # killed while saving it
    killed = RunStatus(RunState.FAILED, "local", exit_code=-9, ids={"host": this_host()})
    write_status(tmp_path / "runs" / "t" / "beta1", killed)
    code, output = _run("--rerun-failed")
    assert code == 0, output
    resume = "--resume_from_checkpoint runs/t/beta1/checkpoint-3 > runs/t/beta1/"
    assert (resume in output) is resumed, output
    said = "beta1: resuming from runs/t/beta1/checkpoint-3, the newest complete checkpoint of attempt 1"
    assert (said in output) is resumed
    assert "--resume_from_checkpoint runs/t/beta2" not in output  # a first start: warned only
    warned = 0 if any(extra.values()) else 1  # resumes by itself, or keeps weights alone
    assert output.count("resume_from_checkpoint is unset") == warned
    model_only = "runs/t/beta1/checkpoint-3 was left by an earlier attempt, but save_only_model is true"
    assert (model_only in output) is ("save_only_model" in extra), output


@pytest.mark.parametrize(
    ("source", "resumed"),
    [
        (_OWN_SFT, True),  # TrlParser, and train(resume_from_checkpoint=training_args....)
        (_OWN_SFT_UNSEEN, False),  # train() alone: transformers never resumes; not seen to take it
        (_OWN_SFT.replace("parser.parse_args_and_config()", 'parser.parse_yaml_file("c.yaml")'), False),
    ],
)
def test_a_script_of_one_s_own_handing_resume_on_as_trl_s_resumes_when_rerun(
    tmp_path, monkeypatch, source, resumed
):
    """`python train.py --config {config}` parsing SFTConfig with TrlParser and handing
    resume_from_checkpoint to trainer.train as TRL's scripts do: `run --rerun-failed` after a failed
    attempt trained from step 0 again, saving over checkpoint-3 (only TRL's own scripts were
    resumed). Now resumed as they are; a script not seen to take the flag (its train() alone, or a
    parser reading the file alone) is left as it is."""
    from sweepgen.run.core.base import RunState, RunStatus, write_status
    from sweepgen.run.local.liveness import this_host

    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    Path("train.py").write_text(source + "raise SystemExit(9)\n")
    _sweep(tmp_path, {"bf16": False})
    (tmp_path / "runs" / "t" / "beta1" / "checkpoint-3").mkdir(parents=True)
    (tmp_path / "runs" / "t" / "beta1" / "checkpoint-3" / "trainer_state.json").write_text("{}")
    write_status(
        tmp_path / "runs" / "t" / "beta1",
        RunStatus(RunState.FAILED, "local", exit_code=-9, ids={"host": this_host()}),
    )
    code, output = _run(
        "--rerun-failed", command=f"{shlex.quote(sys.executable)} train.py --config {{config}}"
    )
    assert code == 0, output
    assert ("--resume_from_checkpoint runs/t/beta1/checkpoint-3 > runs/t/beta1/" in output) is resumed, output
    said = "beta1: resuming from runs/t/beta1/checkpoint-3, the newest complete checkpoint of attempt 1"
    assert (said in output) is resumed, output


@pytest.mark.parametrize("previous", [True, False])
def test_a_trl_search_trial_started_again_after_a_lost_attempt_resumes_as_a_grid_run_does(
    tmp_path, monkeypatch, previous
):
    """A search trial's `trl grpo` run lost with its controller (or cancelled) was started again by
    the next `run` from step 0, saving over its checkpoints: only a grid's runs went through
    trl_start.resumed. Now the controller's start adds `--resume_from_checkpoint` of the newest
    complete checkpoint as a grid's does; a trial's first start is left alone."""
    from types import SimpleNamespace

    from sweepgen.run.core.base import RunState, RunStatus, RunTask, write_status
    from sweepgen.run.local.liveness import this_host
    from sweepgen.run.search.controller import SearchController, _LiveTrial

    monkeypatch.chdir(tmp_path)
    _sweep(tmp_path, {"bf16": False})
    run = tmp_path / "runs" / "t" / "beta1"
    for step in (2, 4):
        (run / f"checkpoint-{step}").mkdir(parents=True)
    (run / "checkpoint-2" / "trainer_state.json").write_text("{}")  # checkpoint-4: cut while saving
    if previous:
        lost = RunStatus(RunState.RUNNING, "local", attempt=1, ids={"host": this_host(), "pid": 2**22 + 1})
        write_status(run, lost)
    command = shlex.split(TRL)
    argv = tuple(w.replace("{config}", "generated/t/beta1.yaml") for w in command)
    task = RunTask("beta1", "beta1", Path("generated/t/beta1.yaml"), Path("runs/t/beta1"), argv)
    started: list[RunTask] = []
    executor = SimpleNamespace(start=lambda tasks, planned: started.extend(tasks))
    controller = SimpleNamespace(
        sweep_dir=Path("generated/t"),
        renderer=SimpleNamespace(command=tuple(command)),
        events=[],
        _started_by=lambda: executor,
    )
    SearchController._launch(controller, _LiveTrial(trial=None, tasks=[task]), [task])  # type: ignore[arg-type]
    resume = ("--resume_from_checkpoint", "runs/t/beta1/checkpoint-2")
    assert (started[0].argv[-2:] == resume) is previous, started
    said = "beta1: resuming from runs/t/beta1/checkpoint-2, the newest complete checkpoint of attempt 1"
    assert controller.events == (
        [f"{said} (--resume_from_checkpoint runs/t/beta1/checkpoint-2 added to its command)"]
        if previous
        else []
    )


def test_paths_outside_the_working_folder_are_said_not_checked(tmp_path, monkeypatch):
    """A dataset named by an absolute path and a model folder that is a link out of the working
    folder are not looked at (a pull request's link must not make `run` read a private folder): the
    start checks passed them in silence. Now one warning per key says what was not checked; a Hub id
    and a folder inside say nothing."""
    (tmp_path / "outside").mkdir()
    (tmp_path / "w").mkdir()
    (tmp_path / "w" / "m").symlink_to(tmp_path / "outside")
    monkeypatch.chdir(tmp_path / "w")
    _sweep(tmp_path / "w", {"bf16": False, "dataset_name": str(tmp_path / "gone"), "model_name_or_path": "m"})
    code, output = _run()
    assert code == 0, output
    assert output.count("dataset_name lies outside the folder you run `sweepgen run` in") == 1, output
    assert output.count("model_name_or_path lies outside") == 1, output
    assert "warning: generated/t/beta1.yaml:" in output, output

    from sweepgen.run.start.trl import trl_outside

    (tmp_path / "w" / "inside").mkdir()
    assert not any(map(trl_outside.outside, ("Qwen/Qwen2.5-0.5B", "inside", "inside/../inside", "gsm8k")))
    assert all(map(trl_outside.outside, ("~/d", "../d", "/srv/d", "m", "m/sub")))


@pytest.mark.train  # accelerate's own launcher is the oracle; TRL's presets are read from the package
@pytest.mark.parametrize(
    ("extra", "command", "refused"),
    [
        ({"accelerate_config": "zero2"}, f"{TRL_CLI} grpo --config {{config}}", True),
        ({}, f"{TRL_CLI} grpo --config {{config}} --accelerate_config zero3", True),
        ({"accelerate_config": "multi_gpu"}, f"{TRL_CLI} grpo --config {{config}}", False),
        ({"accelerate_config": "zero2"}, TRL, False),  # TRL's script run directly: no accelerate launch
    ],
)
def test_a_deepspeed_accelerate_config_without_deepspeed_is_refused(
    tmp_path, monkeypatch, extra, command, refused
):
    """`accelerate_config: zero2` (TRL's documented way to scale up) where deepspeed is not installed:
    `accelerate launch` raised "DeepSpeed is not installed" at every run's start."""
    import importlib.util

    import trl
    from accelerate.commands.launch import launch_command, launch_command_parser

    assert importlib.util.find_spec("deepspeed") is None  # this environment, as the test expects it
    preset = Path(trl.__file__).parent / "accelerate_configs" / "zero2.yaml"
    with pytest.raises(ImportError, match="DeepSpeed is not installed"):
        launch_command(launch_command_parser().parse_args(["--config_file", str(preset), "x.py"]))
    monkeypatch.chdir(tmp_path)
    _sweep(tmp_path, {"bf16": False, **extra})
    code, output = _run(command=command)
    assert code == (2 if refused else 0), output
    assert ("is a DeepSpeed config, but deepspeed is not installed" in output) is refused, output
