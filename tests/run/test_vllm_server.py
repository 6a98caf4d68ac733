"""Runs started together that name one vLLM server (TRL GRPO's `vllm_mode: server`): refused before
any of them starts, since the server holds one policy's weights and each run would generate from
the other's."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner
from run_support import make_config_sweep

from sweepgen.cli import main
from sweepgen.run.core.plan.tasks import load_sweep
from sweepgen.run.start import vllm_server

SERVER = {"use_vllm": True, "vllm_mode": "server"}


def _sweep(root: Path, extra: dict[str, dict[str, object]]) -> Path:
    configs = {
        f"beta{b}": {"beta": b, "output_dir": f"runs/t/beta{b}", **SERVER, **extra.get(f"beta{b}", {})}
        for b in (1, 2)
    }
    return make_config_sweep(
        root, configs, sweep="t", values={n: {"beta": c["beta"]} for n, c in configs.items()}
    )


def _run(*args: str):
    return CliRunner().invoke(main, ["run", "generated/t", "--command", "true {config}", "--dry-run", *args])


@pytest.mark.parametrize(
    "extra",
    [
        {},  # TRL's default address, 0.0.0.0:8000, for both
        {"beta1": {"vllm_server_host": "localhost"}},  # the same machine, spelled otherwise
        {"beta1": {"vllm_server_base_url": "http://127.0.0.1:8000/"}},  # a URL and a host and port
        {
            "beta1": {"vllm_server_base_url": "http://LOCALHOST:8000/"},
            "beta2": {"vllm_server_base_url": "http://localhost:8000"},
        },
    ],
)
def test_two_local_runs_at_once_on_one_vllm_server_are_refused(tmp_path, monkeypatch, extra):
    monkeypatch.chdir(tmp_path)
    _sweep(tmp_path, extra)
    result = _run("--jobs", "2")
    assert result.exit_code == 2, result.output
    assert "runs 'beta1' and 'beta2' would share the vLLM server" in result.output
    assert "generated/t/beta2.yaml:" in result.output and "--jobs 1" in result.output
    assert "Traceback" not in result.output and not (tmp_path / "runs").exists()


@pytest.mark.parametrize(
    ("extra", "args"),
    [
        ({}, ("--jobs", "1")),  # one at a time: each has the server to itself
        ({"beta2": {"vllm_server_port": 8001}}, ("--jobs", "2")),  # a server per run
        ({"beta1": {"vllm_mode": "colocate"}, "beta2": {"vllm_mode": "colocate"}}, ("--jobs", "2")),
        ({"beta1": {"use_vllm": False}}, ("--jobs", "2")),
    ],
)
def test_runs_one_at_a_time_on_their_own_servers_or_colocated_are_left_alone(
    tmp_path, monkeypatch, extra, args
):
    monkeypatch.chdir(tmp_path)
    _sweep(tmp_path, extra)
    result = _run(*args)
    assert result.exit_code == 0, result.output


def test_on_slurm_only_a_server_on_another_host_is_one_server(tmp_path, monkeypatch):
    """A loopback address on Slurm names a server on each job's own node."""
    monkeypatch.chdir(tmp_path)
    sweep_dir = _sweep(tmp_path, {})
    tasks = load_sweep(Path("generated/t"), command=("true", "{config}")).tasks
    vllm_server.check(Path("generated/t"), tasks, 2, "slurm")  # loopback: left alone
    shared = {"beta1": {"vllm_server_host": "10.0.0.5"}, "beta2": {"vllm_server_host": "10.0.0.5"}}
    _sweep(tmp_path, shared)
    tasks = load_sweep(Path("generated/t"), command=("true", "{config}")).tasks
    with pytest.raises(Exception, match="share the vLLM server http://10.0.0.5:8000") as err:
        vllm_server.check(Path("generated/t"), tasks, 2, "slurm")
    assert err.value.location.line == _line_of(sweep_dir / "beta2.yaml", "vllm_mode")
    vllm_server.check(Path("generated/t"), tasks, 1, "slurm")  # --jobs 1: one at a time


def _line_of(path: Path, key: str) -> int:
    return next(i for i, line in enumerate(path.read_text().splitlines(), 1) if line.startswith(f"{key}:"))


@pytest.mark.parametrize("parallel", [2, 1])
def test_a_search_trial_on_the_vllm_server_of_a_running_trial_is_refused_before_it_runs(tmp_path, parallel):
    """Trials go at once up to `parallel`: the second on one server is told failed with the reason
    and never started; one at a time, each has the server to itself."""
    from search_support import RUN_ARGS, sweepgen, write_search_project

    base = {
        "x": 0.5,
        "y": 0.5,
        "steps": 3,
        "step_s": 0.01,
        "seed": 0,
        "noise": 0.0,
        "output_dir": None,
        **SERVER,
    }
    spec = write_search_project(tmp_path, {"n": 2, "parallel": parallel, "sampler": "random"}, base=base)
    assert sweepgen(tmp_path, "render", str(spec)).returncode == 0
    done = sweepgen(tmp_path, "run", "generated/fake_search", *RUN_ARGS)
    said = " ".join((done.stdout + done.stderr).split())
    assert "Traceback" not in said
    logs = list((tmp_path / "runs").glob("fake_search/*/run.log"))
    if parallel == 1:
        assert done.returncode == 0 and len(logs) == 2, said
        return
    assert "refused before it ran" in said or "refused (" in said, said
    assert "would share the vLLM server http://localhost:8000" in said, said
    assert len(logs) == 1  # the refused trial never started


def test_the_command_line_s_server_flags_are_every_run_s(tmp_path, monkeypatch):
    """`--use_vllm --vllm_mode server` on --command (TRL takes the command line over the config)
    gives every run TRL's default server: configs that never name one share it all the same."""
    monkeypatch.chdir(tmp_path)
    configs = {f"beta{b}": {"beta": b, "output_dir": f"runs/t/beta{b}"} for b in (1, 2)}
    make_config_sweep(
        tmp_path, configs, sweep="t", values={n: {"beta": c["beta"]} for n, c in configs.items()}
    )
    command = "true {config} --use_vllm --vllm_mode=server"
    result = CliRunner().invoke(
        main, ["run", "generated/t", "--command", command, "--dry-run", "--jobs", "2"]
    )
    said = " ".join(result.output.split())
    assert result.exit_code == 2, said
    assert "would share the vLLM server http://localhost:8000" in said
    assert "--command sets `--use_vllm --vllm_mode server` for every run" in said
    assert "Traceback" not in said


@pytest.mark.parametrize(
    ("flags", "shared"),
    [
        ({"vllm_server_host": "10.0.0.5"}, True),  # one host for every Slurm job: one server
        ({"vllm_server_host": "10.0.0.5", "vllm_server_port": "{name}"}, False),  # filled per run
        ({"vllm_mode": "colocate"}, False),  # each run its own engine
        ({"use_vllm": "false"}, False),
        ({}, False),  # loopback on Slurm: a server on each job's own node
    ],
)
def test_a_server_the_command_line_names_is_judged_as_each_run_s(tmp_path, monkeypatch, flags, shared):
    monkeypatch.chdir(tmp_path)
    _sweep(tmp_path, {})
    tasks = load_sweep(Path("generated/t"), command=("true", "{config}")).tasks
    on_line = vllm_server.on_command_line(flags)
    if not shared:
        vllm_server.check(Path("generated/t"), tasks, 2, "slurm", on_line)
        return
    with pytest.raises(Exception, match="share the vLLM server http://10.0.0.5:8000") as err:
        vllm_server.check(Path("generated/t"), tasks, 2, "slurm", on_line)
    assert "--command sets `--vllm_server_host 10.0.0.5`" in err.value.message
