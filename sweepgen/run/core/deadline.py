"""An answer within a deadline: `status` asks an executor's scheduler (squeue, sacct) and must answer
from the run files alone when the scheduler hangs, so the question runs in a daemon thread."""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable
from typing import TypeVar, cast

_T = TypeVar("_T")


def within(seconds: float, ask: Callable[[], _T]) -> _T | None:
    """``ask()``'s answer, or None when it takes longer than ``seconds`` (it is left to finish in a
    daemon thread: a hung squeue must not hold `status`, nor its exit). Its exception is raised here."""
    box: queue.Queue[tuple[bool, object]] = queue.Queue()

    def work() -> None:
        try:
            box.put((True, ask()))
        except BaseException as err:  # noqa: BLE001 - handed to the caller's thread
            box.put((False, err))

    threading.Thread(target=work, daemon=True, name="sweepgen-executor-query").start()
    try:
        ok, value = box.get(timeout=seconds)
    except queue.Empty:
        return None
    if not ok:
        assert isinstance(value, BaseException)
        raise value
    return cast(_T, value)
