"""`sweepgen run DIR | head`: a closed standard output must not stop the experiment.

Every other command ends with exit 2 when its reader goes away (the output was cut short, and there
is nothing else to do). `run` is different: its output is a progress report of runs that go on for
hours, and `| head`, `| tee` killed, or a terminal closed under `nohup` used to raise EPIPE in the
middle of the sweep, which stopped it like a Ctrl-C (the live runs cancelled, the rest never
started). Under ``stdout_may_close`` the first EPIPE on standard output points it at /dev/null, says
so once on standard error, and the sweep goes on; `run` then exits with the sweep's own code.
"""

from __future__ import annotations

import contextlib
import errno
import os
import sys
from collections.abc import Iterator
from typing import Any, TextIO


class _Guarded:
    """A text stream that turns its first EPIPE into /dev/null (see the module's note)."""

    def __init__(self, inner: TextIO, note: str) -> None:
        self._inner = inner
        self._note = note
        self.closed_by_reader = False

    def __getattr__(self, name: str) -> Any:  # encoding, isatty, fileno, ... as the real stream's
        return getattr(self._inner, name)

    def _reader_gone(self) -> None:
        if not self.closed_by_reader:
            self.closed_by_reader = True
            with contextlib.suppress(OSError, ValueError):
                devnull = os.open(os.devnull, os.O_WRONLY)
                os.dup2(devnull, self._inner.fileno())
                os.close(devnull)
            with contextlib.suppress(OSError, ValueError):
                sys.stderr.write(self._note + "\n")
                sys.stderr.flush()

    def _guard(self, action: Any, *args: Any) -> Any:
        try:
            return action(*args)
        except OSError as err:
            if err.errno != errno.EPIPE:
                raise
            self._reader_gone()
            with contextlib.suppress(OSError, ValueError):  # now to /dev/null (or dropped)
                return action(*args)
            return None

    def write(self, text: str) -> int:
        written = self._guard(self._inner.write, text)
        return written if isinstance(written, int) else len(text)

    def flush(self) -> None:
        self._guard(self._inner.flush)


@contextlib.contextmanager
def stdout_may_close(note: str) -> Iterator[_Guarded]:
    """Within the block, ``sys.stdout`` survives its reader going away (``note`` said once on stderr)."""
    real = sys.stdout
    guarded = _Guarded(real, note)
    sys.stdout = guarded  # a TextIO in all but name (write, flush, the rest delegated)
    try:
        yield guarded
    finally:
        sys.stdout = real
