"""`trl` runs asking accelerate for more processes than the GPUs each run is given: refused before
any run starts (accelerate would train one process with a part of the batch, or crowd one GPU)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from run_support import make_config_sweep

from sweepgen.cli import main
from sweepgen.run.start.trl import trl_processes

TRL = "trl grpo --config {config}"
MULTI = "compute_environment: LOCAL_MACHINE\ndistributed_type: MULTI_GPU\nnum_processes: 4\n"


@pytest.fixture(autouse=True)
def _own_cache(tmp_path, monkeypatch):
    """accelerate's default config is the person's (in their cache): none unless a test writes one."""
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))


def _sweep(root: Path, extra: dict[str, Any], resources: dict[str, Any] | None = None) -> None:
    configs = {f"beta{b}": {"beta": b, "output_dir": f"runs/t/beta{b}", **extra} for b in (1, 2)}
    make_config_sweep(root, configs, sweep="t", values={n: {"beta": c["beta"]} for n, c in configs.items()})
    if resources is not None:
        lock_path = root / "generated/t/sweep.lock.json"
        lock = json.loads(lock_path.read_text())
        lock["resources"] = resources
        lock_path.write_text(json.dumps(lock))


def _run(*args: str):
    return CliRunner().invoke(main, ["run", "generated/t", "--dry-run", *args])


def test_more_processes_than_the_gpu_each_run_gets_is_refused(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)
    _sweep(tmp_path, {"num_processes": 2})
    result = _run("--command", TRL, "--gpus", "0,1", "--per-gpu", "1")
    assert result.exit_code == 2, result.output
    said = " ".join(result.output.split())
    line = Path("generated/t/beta1.yaml").read_text().splitlines().index("num_processes: 2") + 1
    assert f"generated/t/beta1.yaml:{line}:1:" in said and "(at `num_processes`)" in said
    assert "asks accelerate for 2 processes (num_processes) but each run is given 1 GPU(s)" in said
    assert "resources.gpus_per_run: 2" in said and "Traceback" not in said


@pytest.mark.parametrize(
    "command",
    ["accelerate launch --num_processes 2 -m trl.scripts.grpo --config {config}", TRL + " --num-processes=2"],
)
def test_processes_asked_for_on_the_command_line_are_named_there(tmp_path, monkeypatch, command):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)
    _sweep(tmp_path, {})
    result = _run("--command", command, "--gpus", "0,1")
    assert result.exit_code == 2, result.output
    said = " ".join(result.output.split())
    assert said.startswith("--command: error: run 'beta1' asks accelerate for 2 processes (--num")


@pytest.mark.parametrize("count", ["²", "9" * 5000, "two", ""])
def test_a_command_line_count_int_cannot_read_is_refused_with_the_flag(tmp_path, monkeypatch, count):
    """`str.isdigit` says yes to `²` and to 5,000 digits, which int() refuses: run ended in a
    traceback (exit 70)."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)
    _sweep(tmp_path, {"num_processes": 2})
    result = _run("--command", f"{TRL} --num_processes={count}", "--gpus", "0,1")
    assert result.exit_code == 2, result.output
    assert "--num_processes" in result.output and "is not a number of processes" in result.output


@pytest.mark.parametrize(
    ("extra", "args"),
    [
        ({"num_processes": 2}, ()),  # no --gpus: every run sees every GPU
        ({"num_processes": 1}, ("--gpus", "0,1")),
        ({"num_processes": 2}, ("--gpus", "0,1", "--command", "python train.py {config}")),  # not trl's
        ({}, ("--gpus", "0,1")),  # left to accelerate's own configuration, of which there is none
        ({"accelerate_config": "configs/acc.yaml"}, ("--gpus", "0,1")),  # no such file, no such preset
    ],
)
def test_runs_that_fit_their_gpus_or_are_not_judged_are_left_alone(tmp_path, monkeypatch, extra, args):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)
    _sweep(tmp_path, extra)
    command = () if "--command" in args else ("--command", TRL)
    result = _run(*command, *args)
    assert result.exit_code == 0, result.output


@pytest.mark.train  # TRL's presets, read from the installed package
def test_trl_s_presets_start_their_processes_unless_they_are_single_process():
    assert trl_processes.processes({"accelerate_config": "zero2"}) == (8, "accelerate_config: zero2")
    assert trl_processes.processes({"accelerate_config": "multi_gpu", "num_processes": 2}) == (
        2,
        "num_processes",
    )
    assert trl_processes.processes({"accelerate_config": "single_gpu"}) is None  # distributed_type NO
    assert trl_processes.processes({"accelerate_config": "no_such_preset"}) is None


@pytest.mark.slurm  # the Slurm executor (submitit): its dry run only, no cluster
def test_a_slurm_job_of_one_gpu_is_refused_a_run_of_two_processes(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    _sweep(tmp_path, {"num_processes": 2}, resources={"time": 5, "gpus_per_run": 1})
    result = _run("--command", TRL, "--executor", "slurm")
    assert result.exit_code == 2, result.output
    assert "each run is given 1 GPU(s)" in " ".join(result.output.split())
    _sweep(tmp_path, {"num_processes": 2}, resources={"time": 5, "gpus_per_run": 2})
    assert _run("--command", TRL, "--executor", "slurm").exit_code == 0


def test_runs_of_as_many_gpus_as_processes_are_started(tmp_path, monkeypatch):
    """The fix the refusal gives: `resources.gpus_per_run: 2`, and --gpus hands each run two."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)
    _sweep(tmp_path, {"num_processes": 2}, resources={"gpus_per_run": 2})
    result = _run("--command", TRL, "--gpus", "0,1,2,3")
    assert result.exit_code == 0, result.output


@pytest.mark.train  # with trl installed, where a preset would be looked for
@pytest.mark.parametrize("name", ["zero2\x00", "../../../etc/zero2", "configs/acc.yaml", ""])
def test_an_accelerate_config_that_is_no_preset_name_is_never_opened(name):
    """A config's value is data: a path or a value with a NUL byte is not judged (it ended `run` in a
    traceback: `open` refuses a NUL byte)."""
    assert trl_processes.processes({"accelerate_config": name}) is None


def _write(path: str, text: str) -> None:
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    Path(path).write_text(text)


def test_a_project_accelerate_config_file_is_read_as_trl_reads_it(tmp_path, monkeypatch):
    """`accelerate_config: configs/acc.yaml` (a file where runs start) was not read: a multi-GPU file
    of 4 processes given one GPU a run passed."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)
    _write("configs/acc.yaml", MULTI)
    _sweep(tmp_path, {"accelerate_config": "configs/acc.yaml"})
    result = _run("--command", TRL, "--gpus", "0,1")
    assert result.exit_code == 2, result.output
    said = " ".join(result.output.split())
    assert "asks accelerate for 4 processes (accelerate_config: configs/acc.yaml)" in said
    assert "(at `accelerate_config`)" in said
    _write("configs/acc.yaml", MULTI.replace("MULTI_GPU", "'NO'"))  # one process, whatever its count
    single = _run("--command", TRL, "--gpus", "0,1")
    assert single.exit_code == 0, single.output


def test_the_command_s_config_file_and_accelerate_s_default_config_are_read(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)
    _sweep(tmp_path, {})
    _write("acc.yaml", MULTI)
    launched = "accelerate launch --config_file acc.yaml -m trl.scripts.grpo --config {config}"
    result = _run("--command", launched, "--gpus", "0,1")
    assert result.exit_code == 2, result.output
    assert " ".join(result.output.split()).startswith(
        "--command: error: run 'beta1' asks accelerate for 4 processes (--config_file acc.yaml)"
    )
    assert _run("--command", TRL, "--gpus", "0,1").exit_code == 0  # no default config yet
    _write(str(tmp_path / "hf" / "accelerate" / "default_config.yaml"), MULTI)  # `accelerate config`
    result = _run("--command", TRL, "--gpus", "0,1")
    assert result.exit_code == 2, result.output
    assert "(accelerate's default config_file " in " ".join(result.output.split())
    _sweep(tmp_path, {"num_processes": 1})  # the config's own count wins over the default's
    assert _run("--command", TRL, "--gpus", "0,1").exit_code == 0


def test_an_accelerate_config_through_a_link_or_outside_the_project_is_not_judged(tmp_path, monkeypatch):
    project = tmp_path / "p"
    project.mkdir()
    monkeypatch.chdir(project)
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)
    (tmp_path / "outside.yaml").write_text(MULTI)
    Path("link.yaml").symlink_to(tmp_path / "outside.yaml")
    for name in ("link.yaml", "../outside.yaml", str(tmp_path / "outside.yaml")):
        _sweep(project, {"accelerate_config": name})
        result = _run("--command", TRL, "--gpus", "0,1")
        assert result.exit_code == 0, (name, result.output)


@pytest.mark.parametrize(
    "text",
    [
        "num_processes: " + "9" * 5000 + "\n",  # past Python's 4,300 digits: int() raises ValueError
        "distributed_type: MULTI_GPU\nnum_processes: 4\nwhen: 2024-13-45\n",  # no such date
    ],
)
def test_an_accelerate_config_file_yaml_cannot_build_is_not_judged(tmp_path, monkeypatch, text):
    """PyYAML raises ValueError (not YAMLError) for these: `run` ended in a traceback (exit 70)."""
    monkeypatch.chdir(tmp_path)
    _write("acc.yaml", text)
    assert trl_processes.processes({"accelerate_config": "acc.yaml"}) is None


def test_an_accelerate_config_of_aliased_lists_is_never_written_out(tmp_path, monkeypatch):
    """A "billion laughs" `distributed_type` (each list nine aliases of the one before) was taken
    with str(): 9**8 items written out, 300 MB (9**10 from a 1 KiB file: 18 GB and a hang)."""
    import tracemalloc

    monkeypatch.chdir(tmp_path)
    lines = ['l0: &l0 ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    lines += [f"l{i}: &l{i} [{','.join([f'*l{i - 1}'] * 9)}]" for i in range(1, 8)]
    _write("acc.yaml", "\n".join([*lines, "num_processes: 4", "distributed_type: *l7", ""]))
    tracemalloc.start()
    try:
        assert trl_processes.processes({"accelerate_config": "acc.yaml"}) == (
            4,
            "accelerate_config: acc.yaml",
        )
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 16 << 20, peak


def test_an_accelerate_config_outside_the_project_is_not_even_looked_at(tmp_path, monkeypatch):
    """`../x.yaml` and absolute paths were stat()ed (an lstat before the path was checked)."""
    import os

    monkeypatch.chdir(tmp_path)
    looked: list[str] = []
    real = os.lstat
    monkeypatch.setattr(os, "lstat", lambda p, *a, **k: looked.append(str(p)) or real(p, *a, **k))
    for name in ("../outside.yaml", "/etc/passwd", "a/../../b.yaml"):
        assert trl_processes.processes({"accelerate_config": name}) is None
    assert looked == []


@pytest.mark.parametrize(
    "command",
    [
        "python -m trl.scripts.grpo --config {config}",
        "accelerate launch -m trl.scripts.grpo --config {config}",
    ],
)
def test_the_cli_s_launch_keys_are_not_read_where_the_script_runs_otherwise(tmp_path, monkeypatch, command):
    """Only TRL's CLI (`trl grpo`) hands a config's `num_processes` to accelerate; TRL's script run
    by python or `accelerate launch` leaves that key aside: one GPU a run is one process."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)
    _sweep(tmp_path, {"num_processes": 2, "accelerate_config": "multi_gpu"})
    result = _run("--command", command, "--gpus", "0,1", "--per-gpu", "1")
    assert result.exit_code == 0, result.output


# (launch's words, the count accelerate's own parser reads): after the training script every word
# is the script's (argparse.REMAINDER), and of two counts the last wins
LAUNCHES = [
    (["train.py", "--num_processes", "2"], None),
    (["--num_processes", "2", "train.py"], 2),
    (["-m", "trl.scripts.grpo", "--num_processes", "2"], None),
    (["--mixed_precision", "no", "train.py", "--num_processes", "2"], None),
    (["--multi_gpu", "--num-processes=4", "x.py"], 4),
    (["--num_processes", "2", "--num_processes", "3", "x.py"], 3),
    (["-mq", "pkg.train", "--num_processes", "8"], None),
    (
        [
            "--quiet",
            "--mixed_precision=bf16",
            "--num_processes",
            "2",
            "-m",
            "pkg.train",
            "--num_processes",
            "8",
        ],
        2,
    ),
]


@pytest.mark.parametrize(("words", "count"), LAUNCHES)
def test_the_launch_count_is_read_as_accelerate_reads_it_never_the_script_s(words, count):
    read = trl_processes.launch_counts(["accelerate", "launch", *words])[0]
    assert (read[0] if read else None) == count


@pytest.mark.train  # accelerate's own parser is the oracle
def test_the_launch_switches_and_counts_are_accelerate_s_own():
    from accelerate.commands.launch import launch_command_parser

    parser = launch_command_parser()
    switches = {s for a in parser._actions if a.option_strings and a.nargs == 0 for s in a.option_strings}
    assert switches == trl_processes.LAUNCH_SWITCHES
    for words, count in LAUNCHES:
        assert parser.parse_args(words).num_processes == count
