"""``sweep.lock.json``: what ``render`` produced, so ``check``, ``run`` and ``report`` can trust it.

The format is fixed in docs/ARCHITECTURE.md. Keys are sorted and the file ends with a newline; each
file entry sits on its own line so a re-render shows as a readable git diff, and a 10,000-variant
lock is written with the C JSON encoder instead of the slow pretty printer.
"""

from __future__ import annotations

import json
import os
from typing import Any

from sweepgen import __version__
from sweepgen.errors import Location, UserError

LOCK_NAME = "sweep.lock.json"
LOCK_VERSION = 1


def build(
    *,
    sweep: str,
    spec: str,
    spec_sha256: str,
    templates: dict[str, str],
    varying: list[str],
    files: list[dict[str, Any]],
    resources: dict[str, Any] | None,
) -> dict[str, Any]:
    return {
        "lock_version": LOCK_VERSION,
        "sweepgen_version": __version__,
        "sweep": sweep,
        "spec": spec,
        "spec_sha256": spec_sha256,
        "templates": templates,
        "varying": varying,
        "resources": resources,
        "files": files,
    }


class _CachedJson:
    """``json.dumps(value, sort_keys=True, ensure_ascii=False)``, byte for byte, with mappings
    cached by identity: resolved configs share unchanged subtrees, so each is encoded once."""

    def __init__(self) -> None:
        self._cache: dict[int, tuple[Any, str]] = {}
        self._encode = json.JSONEncoder(sort_keys=True, ensure_ascii=False).encode

    def __call__(self, value: Any) -> str:
        if not isinstance(value, dict):
            return self._encode(value)
        hit = self._cache.get(id(value))
        if hit is not None:
            return hit[1]
        if not any(isinstance(v, dict) for v in value.values()) or not all(isinstance(k, str) for k in value):
            text = self._encode(value)  # a flat mapping: one call to the C encoder is fastest
        else:
            text = "{" + ", ".join(f"{self._encode(k)}: {self(value[k])}" for k in sorted(value)) + "}"
        self._cache[id(value)] = (value, text)
        return text


def dumps(lock: dict[str, Any]) -> str:
    encode = _CachedJson()
    keys = sorted(lock)
    lines = ["{"]
    for i, key in enumerate(keys):
        comma = "," if i < len(keys) - 1 else ""
        if key == "files":
            entries = lock["files"]
            lines.append('  "files": [')
            for j, entry in enumerate(entries):
                sep = "," if j < len(entries) - 1 else ""
                lines.append("    " + encode(entry) + sep)
            lines.append("  ]" + comma)
        else:
            lines.append(f"  {json.dumps(key)}: {encode(lock[key])}{comma}")
    lines.append("}")
    return "\n".join(lines) + "\n"


def read_bytes(path: str, *, folder_is_missing: bool = False) -> bytes | None:
    """A generated file's bytes, or None when it is not there.

    Also None when a parent on the path is a file (``NotADirectoryError``): an output that used to be
    the file ``x`` and is now ``x/c.yaml``. A folder where the file belongs is an error, or None with
    ``folder_is_missing`` (for ``sweepgen check``, which reports it instead).
    """
    try:
        with open(path, "rb") as fh:
            return fh.read()
    except (FileNotFoundError, NotADirectoryError):
        return None
    except IsADirectoryError:
        if folder_is_missing:
            return None
        raise UserError(
            f"{path} is a folder where sweepgen must write a file",
            location=Location(path),
            hint="move the folder away",
        ) from None


def read(sweep_dir: str, shown_dir: str) -> dict[str, Any] | None:
    """The lock in ``sweep_dir``, or None when there is none. A damaged lock is an error."""
    path = os.path.join(sweep_dir, LOCK_NAME)
    shown = f"{shown_dir}/{LOCK_NAME}"
    try:
        with open(path, encoding="utf-8") as fh:
            text = fh.read()
    except (FileNotFoundError, NotADirectoryError):
        return None
    except UnicodeDecodeError as err:
        raise UserError(
            f"lock file is not UTF-8 text (byte {err.start})",
            location=Location(shown),
            hint="it is written by `sweepgen render`; restore it from git",
        ) from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as err:
        raise UserError(
            f"lock file is not valid JSON: {err.msg}",
            location=Location(shown, err.lineno, err.colno),
            hint="it is written by `sweepgen render`; restore it from git",
        ) from None
    if (
        not isinstance(data, dict)
        or data.get("lock_version") != LOCK_VERSION
        or not isinstance(data.get("files"), list)
    ):
        raise UserError(
            f"lock file has an unknown format (lock_version {data.get('lock_version')!r})"
            if isinstance(data, dict)
            else "lock file is not a JSON object",
            location=Location(shown),
            hint="restore it from git, or render with a matching sweepgen",
        )
    for entry in data["files"]:
        if (
            not isinstance(entry, dict)
            or not isinstance(entry.get("path"), str)
            or not isinstance(entry.get("sha256"), str)
        ):
            raise UserError(
                "lock file has a malformed file entry", location=Location(shown), hint="restore it from git"
            )
    return data
