"""SIGTERM and SIGHUP as `sweepgen run` takes them: remembered while it loads and plans, an interrupt
(Ctrl-C's path: what it started is stopped and marked cancelled, exit 130) once it is where it can
stop what it started.

Python leaves both at their default action, which ends the process at once: a `run` that a job
scheduler or a closed terminal stopped while it read its sweep or planned ended with no word and
-15/-1 (143/129 to a shell), where docs/RUN.md promises 130; and raising the interrupt at any
point of that phase would land inside libraries that do not expect it (pydantic-core turns it into a
schema error, an internal error to us). So when sweepgen is the program (its console script or
``python -m sweepgen``), the CLI ``defer``s them before anything else loads: a signal is only
remembered. `run`'s loops take them with ``raising_interrupt``, which raises a remembered one at
its entry, before anything is started, and any later one at once; every other command gets the
handlers back (``give_back``) and a remembered signal delivered again, ending as it always did.
A signal the process was started ignoring (SIGHUP under `nohup`) stays ignored throughout.
Ctrl-C (SIGINT) is held the same way only until a command starts (``interrupt_back``): it then
raises KeyboardInterrupt there, as it does at any later moment, instead of a traceback from
whichever import it landed in.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading
from collections.abc import Iterator
from types import FrameType
from typing import Any, NoReturn

STOPS = (signal.SIGTERM, signal.SIGHUP)
_before: dict[int, Any] = {}  # each deferred signal's handler before ``defer``
_remembered: list[int] = []  # signals that came while deferred, not acted on yet
_ctrl_c: list[int] = []  # a Ctrl-C that came while the program loaded (``defer`` to ``interrupt_back``)


def is_program() -> bool:
    """Whether sweepgen is this process's program: its console script or `python -m sweepgen`
    (never a library caller, such as a test runner that imports the CLI)."""
    main = sys.modules.get("__main__")
    spec = getattr(main, "__spec__", None)
    if spec is not None:
        return bool(spec.name == "sweepgen.__main__")
    return os.path.basename(str(getattr(main, "__file__", "") or "")) == "sweepgen"


def listened() -> list[int]:
    """The stop signals this process acts on: those it was not started ignoring. `nohup sweepgen
    run` starts with SIGHUP ignored, so that closing the terminal stops nothing."""
    return [sig for sig in STOPS if signal.getsignal(sig) is not signal.SIG_IGN]


def defer() -> None:
    """Remember SIGTERM and SIGHUP from now on instead of dying of them (the program's first line)."""
    if _before or threading.current_thread() is not threading.main_thread():
        return
    for sig in listened():
        _before[sig] = signal.signal(sig, _remember)
    if signal.getsignal(signal.SIGINT) is signal.default_int_handler:
        signal.signal(signal.SIGINT, _remember_ctrl_c)


def interrupt_back() -> None:
    """Ctrl-C raises KeyboardInterrupt again, as Python's own handler does; one that came while the
    program loaded (a traceback from inside some import, before) is raised now, where the CLI says
    "interrupted" and exits 130. Called as a command starts, whichever command it is."""
    if signal.getsignal(signal.SIGINT) is _remember_ctrl_c:
        signal.signal(signal.SIGINT, signal.default_int_handler)
    if _ctrl_c:
        _ctrl_c.clear()
        raise KeyboardInterrupt


def give_back() -> None:
    """A command other than `run`: the handlers before ``defer``, a remembered signal delivered again."""
    for sig, handler in _before.items():
        signal.signal(sig, handler)
    _before.clear()
    while _remembered:
        os.kill(os.getpid(), _remembered.pop(0))


@contextlib.contextmanager
def raising_interrupt() -> Iterator[None]:
    """SIGTERM/SIGHUP raise KeyboardInterrupt inside the block, as Ctrl-C does; one remembered since
    ``defer`` is raised on entry, before the block starts anything."""
    previous = {sig: signal.signal(sig, _interrupt) for sig in listened()}
    try:
        if _remembered:
            _remembered.clear()
            raise KeyboardInterrupt
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def forget_handled_interrupt() -> None:
    """CPython records a KeyboardInterrupt that ended an ``exec`` of a string (dataclasses and
    namedtuple build their methods so, while modules load) as unhandled, and at exit kills a
    `python -m sweepgen` with SIGINT (-2) whatever exit code it chose. Every interrupt that reaches
    the CLI's end was handled (130 said); an ``exec`` that ends normally clears that record."""
    exec("None", {})  # a constant: run only to reset the record above


def _remember(signum: int, frame: FrameType | None) -> None:
    _remembered.append(signum)


def _remember_ctrl_c(signum: int, frame: FrameType | None) -> None:
    _ctrl_c.append(signum)


def _interrupt(signum: int, frame: FrameType | None) -> NoReturn:
    raise KeyboardInterrupt
