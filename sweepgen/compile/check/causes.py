"""Why a sweep's files are stale: which recorded input changed, in the words a person acts on.

``check`` compares the lock a render would write with the committed one. When they differ, the
difference is named by its cause (the input that changed, a schema package's version, sweepgen's
version) instead of shown as a JSON diff, so one edited template reads as one line.
"""

from __future__ import annotations

from typing import Any

from sweepgen.compile.output.lockfile.inputs import DYNAMIC
from sweepgen.compile.output.lockfile.lock import Lock

NOT_CHECKED = "has no recorded hash (an include computed at render time)"


def input_changes(recorded: Lock, now: dict[str, Any]) -> list[tuple[str, str]]:
    """``(input path, what happened)`` per input whose recorded hash differs from what a render now
    reads, sorted: ``("templates/t.j2", "changed")``, ``("", "schema module trl: trl==1.16.0 in the
    lock, trl==1.17.0 here")`` (no path: the cause is not a file)."""
    inputs_now: dict[str, str] = now.get("inputs", {})
    out: list[tuple[str, str]] = []
    for key in sorted(set(recorded.inputs) | set(inputs_now)):
        old, new = recorded.inputs.get(key), inputs_now.get(key)
        if old == new:
            continue
        if key.startswith("module:"):
            module = key.removeprefix("module:")
            out.append(("", f"schema module {module}: {_identity(old)} in the lock, {_identity(new)} here"))
        elif old is None:
            out.append((key, "is a new input"))
        elif new is None:
            out.append((key, "is no longer read"))
        elif DYNAMIC in (old, new):
            out.append((key, NOT_CHECKED))
        else:
            out.append((key, "changed"))
    return out


def lock_cause(recorded: Lock | None, now: dict[str, Any]) -> str:
    """Why the committed lock differs from the one a render writes now, in one phrase."""
    if recorded is None:
        return "the committed lock cannot be read"
    causes = [f"{path} {what}" if path else what for path, what in input_changes(recorded, now)]
    if recorded.sweepgen_version != now.get("sweepgen_version"):
        causes.append(
            f"rendered by sweepgen {recorded.sweepgen_version or '?'}, this is {now.get('sweepgen_version')}"
        )
    if not causes:
        causes.append("resolved configs or file hashes changed")
    return "; ".join(causes)


def _identity(value: str | None) -> str:
    if value is None:
        return "nothing"
    if value == DYNAMIC:
        return "not recorded (not imported)"
    if "==" in value:
        return value
    return f"source sha256 {value[:12]}"
