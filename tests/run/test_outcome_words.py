"""How a run's end is said: signals by name with their likely cause, a shell's 128+N, and the state
rule every recorder applies (outcome.py)."""

from __future__ import annotations

import signal

from hypothesis import given
from hypothesis import strategies as st

from sweepgen.run.core.outcome import exit_words, killed_by, run_outcome


def test_a_trainer_killed_by_sigkill_is_said_out_of_memory():
    assert killed_by(signal.SIGKILL) == "killed by SIGKILL (out of memory?)"
    assert exit_words(-signal.SIGSEGV) == "killed by SIGSEGV (a crash in native code?)"
    assert exit_words(-signal.SIGUSR1) == "killed by SIGUSR1"


def test_a_shells_128_plus_n_is_named_as_the_signal_it_reports():
    assert (
        exit_words(137)
        == "exit code 137 (128 + SIGKILL: its command was probably killed by SIGKILL (out of memory?))"
    )
    assert exit_words(3) == "exit code 3"


@given(st.integers(min_value=-64, max_value=255))
def test_every_exit_status_gets_one_line_naming_it(code):
    words = exit_words(code)
    assert "\n" not in words and words
    if code < 0:
        assert words.startswith("killed by ")
    else:
        assert words.startswith(f"exit code {code}")


def test_the_state_rule():
    assert run_outcome(0, finished=True) == ("finished", None)
    assert run_outcome(0, finished=False, done_file=None) == ("failed", "exited 0 after it was stopped")
    assert run_outcome(-9, finished=False, cancelled=True, cancel_reason="why") == ("cancelled", "why")
    assert run_outcome(-15, finished=False, timed_out=True, timeout_reason="late") == ("failed", "late")
    assert run_outcome(-9, finished=False) == ("failed", "killed by SIGKILL (out of memory?)")
