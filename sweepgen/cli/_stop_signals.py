"""SIGTERM and SIGHUP from the CLI's first line: a `sweepgen run` stopped before its loops install
their handlers exits as an interrupted one does (130, "interrupted"), not killed by the signal.

Python leaves both signals at their default action, which ends the process at once: a `run` that
a job scheduler or a closed terminal stopped while it loaded its sweep or planned its runs ended
with no word and -15/-1 (143/129 to a shell), where docs/RUN.md promises 130. Nothing had started
then, but a caller cannot tell that from a kill. So, when sweepgen is the program (its console
script or ``python -m sweepgen``), importing the CLI first ``defer``s them: a signal that comes
while the rest of the CLI loads is remembered. The error funnel then ``take_over``s once it knows
the command: for `run` both signals raise KeyboardInterrupt (Ctrl-C's path, which stops what
`run` started and marks it cancelled) from there to the end, a remembered one at once; any other
command gets back the handlers it had, and a remembered signal is delivered again, so it ends as
it always did. Only stdlib here: it runs before click is imported.
"""

from __future__ import annotations

import os
import signal
import sys
import threading
from collections.abc import Callable
from types import FrameType
from typing import Any, NoReturn

STOPS = (signal.SIGTERM, signal.SIGHUP)
_before: dict[int, Any] = {}  # each signal's handler before ``defer`` (set only when deferred)
_remembered: list[int] = []  # signals that came while deferred


def is_program() -> bool:
    """Whether sweepgen is this process's program: its console script or `python -m sweepgen`
    (never a library caller, such as a test runner that imports the CLI)."""
    main = sys.modules.get("__main__")
    spec = getattr(main, "__spec__", None)
    if spec is not None:
        return bool(spec.name == "sweepgen.__main__")
    return os.path.basename(str(getattr(main, "__file__", "") or "")) == "sweepgen"


def defer() -> None:
    """Remember SIGTERM and SIGHUP until ``take_over``: called before anything else loads. A signal
    this process was started ignoring (SIGHUP under `nohup`) stays ignored."""
    if _before or threading.current_thread() is not threading.main_thread():
        return
    for sig in listened():
        _before[sig] = signal.signal(sig, _remember)


def listened() -> list[int]:
    """The stop signals this process acts on: those it was not told to ignore. `nohup sweepgen run`
    starts with SIGHUP ignored, so that closing the terminal stops nothing; it stays ignored."""
    return [sig for sig in STOPS if signal.getsignal(sig) is not signal.SIG_IGN]


def take_over(command: str | None) -> Callable[[], None]:
    """The command is known: `run` turns SIGTERM/SIGHUP into KeyboardInterrupt; any other command
    gets the handlers it had before ``defer`` (a remembered signal delivered again). Returns what
    puts the handlers back once the command has returned (then a signal is remembered again, when
    deferred, since only the exit is left)."""
    if threading.current_thread() is not threading.main_thread():
        return _nothing
    if command != "run":
        _give_back()
        return _nothing
    previous = {sig: signal.signal(sig, _interrupt) for sig in listened()}

    def restore() -> None:
        for sig, handler in previous.items():
            signal.signal(sig, handler)

    return restore


def raise_remembered() -> None:
    """A stop that came while the CLI loaded, raised as the interrupt it would have been since."""
    if _remembered:
        _remembered.clear()
        raise KeyboardInterrupt


def _give_back() -> None:
    for sig, handler in _before.items():
        signal.signal(sig, handler)
    _before.clear()
    while _remembered:
        os.kill(os.getpid(), _remembered.pop(0))


def _remember(signum: int, frame: FrameType | None) -> None:
    _remembered.append(signum)


def _interrupt(signum: int, frame: FrameType | None) -> NoReturn:
    raise KeyboardInterrupt


def _nothing() -> None:
    return None
