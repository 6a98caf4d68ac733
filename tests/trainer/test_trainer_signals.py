"""Graceful stop of the trainer on SIGTERM/SIGINT/SIGUSR2 (trainer/training/signals.py).

The handler's rules as unit and property tests (no torch), the repeated-signal exit in a real
process, and the whole thing end to end with the real trainer: a run signalled after its first step
saves a checkpoint at the step it stopped on, writes no summary.json, exits 128+signum, and a re-run
resumes to metrics equal to an uninterrupted run's; through the Slurm node wrapper with SIGUSR2 sent
to the whole job (timed out, 140). The local executor's Ctrl-C path (cancelled, 143, one checkpoint)
runs with real runs in tests/run/test_run_bundled_trainer.py."""

from __future__ import annotations

import signal
import subprocess
import sys
import textwrap
import time
from types import SimpleNamespace

import pytest
from hypothesis import given
from hypothesis import strategies as st
from slurm_support import journal_ids
from trainer_support import read_jsonl, subprocess_env, tiny_dict, without_timing, write_config

from sweepgen_trainer.training import signals
from sweepgen_trainer.training.signals import GracefulStop, Stopped, cycle_steps


class FakeClock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


@pytest.mark.parametrize("sig, code", [(signal.SIGTERM, 143), (signal.SIGINT, 130), (signal.SIGUSR2, 140)])
def test_exit_code_is_128_plus_the_signal(sig, code):
    assert Stopped(sig, "x").exit_code == code


def test_signal_during_setup_raises_at_once():
    stop = GracefulStop()
    with pytest.raises(Stopped, match="SIGTERM before training started") as info:
        stop.handle(signal.SIGTERM, None)
    assert info.value.exit_code == 143 and stop.requested


def test_signal_during_training_only_records_it(capfd):
    stop = GracefulStop()
    stop.phase = "training"
    stop.handle(signal.SIGUSR2, None)
    assert stop.signum == signal.SIGUSR2
    assert "received SIGUSR2: stopping at the end of the current step" in capfd.readouterr().err


def test_repeat_within_the_window_is_the_same_request_a_later_one_exits(monkeypatch, capfd):
    exits = []

    def fake_exit(code):
        exits.append(code)
        raise SystemExit(code)  # os._exit never returns either

    monkeypatch.setattr(signals.os, "_exit", fake_exit)
    clock = FakeClock()
    stop = GracefulStop(clock=clock)
    stop.phase = "training"
    stop.handle(signal.SIGUSR2, None)  # Slurm's time-limit signal ...
    clock.now += 0.01
    stop.handle(signal.SIGTERM, None)  # ... and the node wrapper's SIGTERM for the same request
    assert exits == [] and stop.signum == signal.SIGUSR2
    assert "SIGTERM again: the same stop request" in capfd.readouterr().err
    clock.now += signals.REPEAT_WINDOW_S
    with pytest.raises(SystemExit):
        stop.handle(signal.SIGINT, None)
    assert exits == [130]
    assert "exiting at once" in capfd.readouterr().err


@given(
    events=st.lists(
        st.tuples(st.sampled_from(signals.STOP_SIGNALS), st.floats(min_value=0.0, max_value=5.0)),
        min_size=1,
        max_size=6,
    )
)
def test_any_signal_sequence_during_training(events):
    # Rule: the first signal is the request; later ones within the window are ignored; the first
    # one at or past the window exits at once with 128 + its number; nothing else ever exits.
    class Exited(BaseException):
        pass

    def fake_exit(code):
        raise Exited(code)

    clock = FakeClock()
    stop = GracefulStop(clock=clock)
    stop.phase = "training"
    exited = None
    real_exit, real_note = signals.os._exit, signals._note
    signals.os._exit = fake_exit
    signals._note = lambda text: None
    try:
        for sig, gap in events:
            clock.now += gap
            try:
                stop.handle(sig, None)
            except Exited as exc:
                exited = exc.args[0]
                break
    finally:
        signals.os._exit, signals._note = real_exit, real_note
    first_sig, times = events[0][0], []
    t = 100.0
    for _, gap in events:
        t += gap
        times.append(t)
    late = [
        (sig, at) for (sig, _), at in zip(events[1:], times[1:]) if at - times[0] >= signals.REPEAT_WINDOW_S
    ]
    assert stop.signum == first_sig
    assert exited == (128 + late[0][0] if late else None)


def test_handlers_installed_for_the_block_and_restored_after():
    before = {sig: signal.getsignal(sig) for sig in signals.STOP_SIGNALS}
    with GracefulStop() as stop:
        for sig in signals.STOP_SIGNALS:
            assert signal.getsignal(sig) == stop.handle
    assert {sig: signal.getsignal(sig) for sig in signals.STOP_SIGNALS} == before


def test_finish_raises_unless_the_last_step_was_done():
    lines = []
    stop = GracefulStop(echo=lines.append)
    stop.finish(step=3, max_steps=10, checkpoint=None)  # no signal: nothing to do
    stop.phase = "training"
    stop.handle(signal.SIGTERM, None)
    with pytest.raises(Stopped, match="after step 3 of 10; saved ck/checkpoint-3; no summary.json"):
        stop.finish(step=3, max_steps=10, checkpoint="ck/checkpoint-3")
    with pytest.raises(Stopped, match="after step 0 of 10; no checkpoint was saved"):
        stop.finish(step=0, max_steps=10, checkpoint=None)
    stop.finish(step=10, max_steps=10, checkpoint="ck/checkpoint-10")  # complete: summary follows
    assert lines == ["# SIGTERM arrived during the last step: the run is complete"]


@pytest.mark.parametrize(
    "spg, iters, ga, expected", [(1, 1, 1, 1), (2, 1, 2, 1), (1, 3, 1, 3), (4, 2, 2, 4), (2, 1, 4, 1)]
)
def test_cycle_steps(spg, iters, ga, expected):
    args = SimpleNamespace(steps_per_generation=spg, num_iterations=iters, gradient_accumulation_steps=ga)
    assert cycle_steps(args) == expected


@pytest.mark.train
def test_callback_asks_transformers_to_log_save_and_stop_at_a_cycle_end():
    from transformers import TrainerControl, TrainerState

    lines = []
    stop = GracefulStop(echo=lines.append)
    callback = stop.callback(cycle_steps=2)
    state, control = TrainerState(max_steps=10), TrainerControl()
    callback.on_train_begin(None, state, control)
    assert stop.phase == "training"
    state.global_step = 3
    callback.on_step_end(None, state, control)  # no signal yet
    assert not (control.should_save or control.should_training_stop)
    stop.handle(signal.SIGTERM, None)
    callback.on_step_end(None, state, control)  # mid-cycle: one more step first
    assert not (control.should_save or control.should_training_stop)
    state.global_step = 4
    callback.on_step_end(None, state, control)
    assert control.should_log and control.should_save and control.should_training_stop
    assert lines == ["# SIGTERM: stopping after step 4/10, saving checkpoint-4"]
    last, last_control = TrainerState(max_steps=10, global_step=10), TrainerControl()
    callback.on_step_end(None, last, last_control)  # the final step: transformers' own rule
    assert not last_control.should_training_stop


def test_main_reports_a_stop_with_its_exit_code(monkeypatch, capsys, tmp_path):
    import sweepgen_trainer.run
    from sweepgen_trainer.__main__ import main

    def stopped(path, echo):
        raise Stopped(signal.SIGUSR2, "stopped by SIGUSR2 after step 2 of 9")

    monkeypatch.setattr(sweepgen_trainer.run, "run_config_file", stopped)
    assert main([str(tmp_path / "c.yaml")]) == 140
    err = capsys.readouterr().err
    assert "stopped by SIGUSR2 after step 2 of 9" in err and "Traceback" not in err


def test_a_later_second_signal_ends_a_real_process_at_once(tmp_path):
    # A stand-in for a save that takes long: the process sleeps, and only the second signal (past
    # the repeat window) may end it, with 128 + that signal and without running on.
    script = textwrap.dedent("""
        import os, signal, time
        from sweepgen_trainer.training.signals import GracefulStop
        with GracefulStop(repeat_window_s=0.2) as stop:
            stop.phase = "training"
            os.kill(os.getpid(), signal.SIGTERM)
            os.kill(os.getpid(), signal.SIGTERM)  # within the window: the same request
            print("still running", flush=True)
            time.sleep(0.5)
            os.kill(os.getpid(), signal.SIGUSR2)
            time.sleep(5)
            print("not reached", flush=True)
    """)
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 140
    assert "still running" in proc.stdout and "not reached" not in proc.stdout
    assert proc.stderr.count("received SIGTERM") == 2 and "SIGUSR2 while stopping" in proc.stderr


def _start_and_stop(path, cwd, env, sig):
    """Start the trainer, send ``sig`` as soon as it logs its first step, return (code, stdout, stderr)."""
    err_path = cwd / "stderr.txt"  # a file, not a pipe: a full pipe nobody reads would block the run
    with err_path.open("w") as err_file:
        proc = subprocess.Popen(
            [sys.executable, "-m", "sweepgen_trainer", str(path)],
            cwd=cwd,
            env=env,
            stdout=subprocess.PIPE,
            stderr=err_file,
            text=True,
        )
    seen = []
    deadline = time.monotonic() + 240
    for line in proc.stdout:
        seen.append(line)
        if line.startswith("step 1/") or time.monotonic() > deadline:
            break
    proc.send_signal(sig)
    out, _ = proc.communicate(timeout=240)
    return proc.returncode, "".join(seen) + out, err_path.read_text()


@pytest.mark.train
@pytest.mark.slow
# SIGTERM with one iteration per generation runs end to end (stop, checkpoint, messages, resume equal
# to an uninterrupted run) through `sweepgen run`'s Ctrl-C in tests/run/test_run_bundled_trainer.py
@pytest.mark.parametrize("sig, iterations", [(signal.SIGUSR2, 2)])
def test_signal_saves_a_checkpoint_and_the_rerun_equals_an_uninterrupted_run(
    tiny_cache, tmp_path, sig, iterations
):
    from sweepgen_trainer.config import RunConfig
    from sweepgen_trainer.run import run

    max_steps = 16
    data = tiny_dict(
        "runs/r",
        grpo={"max_steps": max_steps, "beta": 0.02, "num_iterations": iterations},
        logging={"save_steps": 1000},
    )
    path = write_config(tmp_path / "r.yaml", data)
    env = subprocess_env(tiny_cache)
    code, out, err = _start_and_stop(path, tmp_path, env, sig)
    run_dir = tmp_path / "runs" / "r"
    name = signal.Signals(sig).name
    assert code == 128 + sig, err[-3000:]
    assert not (run_dir / "summary.json").exists()
    # the only checkpoint is the one saved at the stop step (save_steps is far away), complete
    checkpoints = sorted(p.name for p in (run_dir / "checkpoints").glob("checkpoint-*"))
    assert len(checkpoints) == 1
    stop_step = int(checkpoints[0].removeprefix("checkpoint-"))
    assert 1 <= stop_step < max_steps and stop_step % iterations == 0  # a generation cycle's end
    # every step up to the stop is logged (steps that reuse a generation with reward_mean null)
    rows = read_jsonl(run_dir / "metrics.jsonl")
    assert [r["step"] for r in rows] == list(range(1, stop_step + 1))
    assert [r["step"] for r in rows if r["reward_mean"] is not None] == list(
        range(1, stop_step + 1, iterations)
    )
    assert (run_dir / "checkpoints" / checkpoints[0] / "trainer_state.json").is_file()
    assert f"received {name}: stopping at the end of the current step" in err
    assert f"# {name}: stopping after step {stop_step}/{max_steps}" in out
    assert f"stopped by {name} after step {stop_step} of {max_steps}" in err
    assert "Traceback" not in err

    done = subprocess.run(
        [sys.executable, "-m", "sweepgen_trainer", str(path)],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert f"# resuming from {run_dir.relative_to(tmp_path) / 'checkpoints' / checkpoints[0]}" in done.stdout
    run(RunConfig.model_validate({**data, "output_dir": str(tmp_path / "straight")}))
    resumed = read_jsonl(run_dir / "metrics.jsonl")
    straight = read_jsonl(tmp_path / "straight" / "metrics.jsonl")
    assert [r["step"] for r in resumed] == list(range(1, max_steps + 1))
    assert without_timing(resumed) == without_timing(straight)  # same per-step rewards, losses, ...


@pytest.mark.train
@pytest.mark.slow
def test_slurm_time_limit_signal_to_the_whole_job_saves_once_and_records_a_timeout(tiny_cache, tmp_path):
    # Slurm sends SIGUSR2 to the job: the node wrapper (the run's supervisor) passes it on to the
    # run's own process group as it came. One checkpoint, exit 140, "timed out".
    import os
    import pickle

    from sweepgen.run.core.base import LOG_FILE, TIMEOUT_REASON, RunState, RunStatus, read_status
    from sweepgen.run.slurm.task import NodeTask

    data = tiny_dict("runs/n", grpo={"max_steps": 30}, logging={"save_steps": 1000})
    path = write_config(tmp_path / "n.yaml", data)
    status = RunStatus(RunState.RUNNING, "slurm", ids=journal_ids(tmp_path / "runs", "n", "41"))
    node = NodeTask(
        name="n",
        argv=(sys.executable, "-m", "sweepgen_trainer", str(path)),
        cwd=str(tmp_path),
        run_dir="runs/n",
        status=status,
    )
    blob = tmp_path / "node.pkl"
    blob.write_bytes(pickle.dumps(node))
    code = (
        "import pickle; from sweepgen.run.slurm.task import run_on_node; "
        f"run_on_node(pickle.loads(open({str(blob)!r}, 'rb').read()))"
    )
    env = {**subprocess_env(tiny_cache), "SLURM_JOB_ID": "41"}
    proc = subprocess.Popen([sys.executable, "-c", code], env=env, start_new_session=True)
    run_dir, deadline = tmp_path / "runs" / "n", time.monotonic() + 240
    while "step 1/" not in ((run_dir / LOG_FILE).read_text() if (run_dir / LOG_FILE).exists() else ""):
        assert time.monotonic() < deadline and proc.poll() is None, "the run never logged a step"
        time.sleep(0.05)
    os.killpg(proc.pid, signal.SIGUSR2)
    assert proc.wait(timeout=120) == 140  # the wrapper exits with the run's code
    status = read_status(run_dir)
    assert (status.state, status.reason, status.exit_code) == (RunState.FAILED, TIMEOUT_REASON, 140)
    log = (run_dir / LOG_FILE).read_text()
    assert "received SIGUSR2: stopping" in log and "received SIGTERM" not in log
    assert "stopped by SIGUSR2 after step" in log and "exiting at once" not in log
    assert not (run_dir / "summary.json").exists()
    checkpoints = list((run_dir / "checkpoints").glob("checkpoint-*"))
    assert len(checkpoints) == 1 and (checkpoints[0] / "trainer_state.json").is_file()
