"""A stop asked of a run by whoever is not its supervisor (`sweepgen cancel`, a `sweepgen run` that
prunes or is interrupted): ``<run_dir>/.sweepgen-stop.json`` holds why, written before the run's
supervisor is signalled, so the end it records names the reason and not just the signal.

The file is advice to the supervisor; the signal is the request. A run that is started again has it
removed first (under the run's lock), so an old request never stops a new attempt.

A second stop signal to a supervisor that is already stopping its run is "now" (SIGKILL, no more
stop timeout) unless the request on file is a graceful one (``now`` false: `sweepgen cancel`, a
search's pruning, the first Ctrl-C of `sweepgen run`): such a request may be sent again by someone
who cannot know whether the first one arrived (a controller taking over from one that died), and
sending it twice must not cut the trainer's checkpoint save short.
"""

from __future__ import annotations

import json
from pathlib import Path

from sweepgen.fs import filenames, runfs
from sweepgen.run.core import advice

STOP_FILE = filenames.STOP_REQUEST
# the reason `sweepgen cancel` gives: a search controller never resumes a run stopped with it
CANCELLED_BY_COMMAND = f"cancelled by `sweepgen cancel`; {advice.RESUME.grid}"
# `sweepgen cancel --only RUN`'s: that run alone, its search goes on; a controller taking its trial
# over after its own died tells it failed (a whole-search cancel's runs it resumes)
CANCELLED_ALONE = f"cancelled by `sweepgen cancel` (--only: this run alone); {advice.RESUME.grid}"
_MAX_BYTES = 64 * 1024  # a reason is one line; anything larger is not ours


def ask(run_dir: Path, reason: str, *, now: bool = False) -> None:
    """Record why the run is about to be stopped, and whether at once (``now``: no stop timeout,
    also when it is already stopping). Raises OSError (a read-only run folder)."""
    from datetime import datetime, timezone  # noqa: PLC0415 - lazy: the supervisor imports this module at start

    at = datetime.now(timezone.utc).isoformat(timespec="milliseconds")
    record = {"reason": reason, "at": at, "now": now}
    runfs.write_atomic(run_dir / STOP_FILE, (json.dumps(record) + "\n").encode())


def reason(run_dir: Path) -> str | None:
    """The reason recorded by ``ask``; None when there is none or it cannot be used."""
    text = _recorded(run_dir).get("reason")
    return text.splitlines()[0] if isinstance(text, str) and text.strip() else None


def is_graceful(run_dir: Path) -> bool:
    """Whether the request on file is a graceful one, which a repeated signal does not hurry (no
    request, or one that cannot be read, is not: a second ``kill PID`` is "now", as it always was)."""
    return _recorded(run_dir).get("now") is False


def _recorded(run_dir: Path) -> dict[str, object]:
    from sweepgen.run.core import runfiles  # noqa: PLC0415 - lazy: read only once a stop came

    try:
        # bounded in depth too: one nested a thousand deep was a RecursionError in the supervisor
        data = runfiles.read_json(run_dir / STOP_FILE, limit=_MAX_BYTES)
    except (OSError, runfiles.RunFileError):
        return {}
    return data if isinstance(data, dict) else {}


def clear(run_dir: Path) -> None:
    runfs.unlink(run_dir / STOP_FILE)
