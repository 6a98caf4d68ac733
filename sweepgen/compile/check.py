"""``check``: everything ``render`` validates, plus the state of the committed generated files.

Each spec is re-rendered in memory and compared byte for byte with ``generated/<name>/``:

- stale: the file still has the bytes the lock recorded, but the spec or template changed since;
- edited: the file's bytes are not what sweepgen wrote (hand edit);
- missing: the spec produces a file that is not there;
- orphan: a file in the sweep folder that the spec does not produce (or a sweep folder with no spec);
- lock: ``sweep.lock.json`` is missing or out of date.
"""

from __future__ import annotations

import difflib
import hashlib
import os
from dataclasses import dataclass
from typing import Any

from sweepgen.compile import lock
from sweepgen.compile.check_fast import Finding, fast_check, files_in
from sweepgen.compile.foreign import foreign_ok
from sweepgen.compile.pipeline import Plan, compile_spec
from sweepgen.compile.spec import display_path
from sweepgen.errors import SweepgenError

MAX_DIFF_LINES = 200  # per file: a diff is for reading, the full truth is one re-render away


@dataclass
class Problem:
    kind: str  # stale | edited | missing | orphan | lock | invalid
    path: str  # as the user reads it
    message: str
    line: int = 0
    col: int = 0
    diff: str = ""
    hint: str = ""

    def as_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "path": self.path,
            "line": self.line,
            "col": self.col,
            "message": self.message,
            "hint": self.hint,
            "diff": self.diff,
        }


@dataclass
class Report:
    problems: list[Problem]
    specs: int = 0
    files: int = 0

    @property
    def invalid(self) -> bool:
        return any(p.kind == "invalid" for p in self.problems)


def check(
    spec_paths: list[str], out_root: str = "generated", *, orphan_sweeps: bool = False, full: bool = False
) -> Report:
    """Check specs against ``out_root``. ``orphan_sweeps``: also flag sweep folders no spec owns.
    ``full``: render every spec again, even when its lock says nothing changed."""
    report = Report(problems=[], specs=len(spec_paths))
    owned: set[str] = set()
    for spec_path in spec_paths:
        try:
            fast = None if full else fast_check(spec_path, out_root)
            if fast is not None:
                name, shown, count, findings = fast
                owned.add(name)
                report.files += count
                report.problems.extend(_fast_problems(spec_path, out_root, shown, findings))
                continue
        except SweepgenError:
            pass  # decided below, by the full path, which reports the error with its location
        try:
            plan = compile_spec(spec_path, out_root)
        except SweepgenError as err:
            report.problems.append(_invalid(err, spec_path))
            continue
        owned.add(plan.spec.name)
        report.files += len(plan.files)
        try:
            report.problems.extend(check_plan(plan))
        except SweepgenError as err:
            report.problems.append(_invalid(err, spec_path))
    if orphan_sweeps and os.path.isdir(out_root):
        for name in sorted(os.listdir(out_root)):
            folder = os.path.join(out_root, name)
            if (
                os.path.isdir(folder)
                and name not in owned
                and not any(p.kind == "invalid" for p in report.problems)
            ):
                report.problems.append(
                    Problem(
                        "orphan",
                        display_path(folder),
                        f"sweep folder {name!r} belongs to no spec",
                        hint="its spec was removed or renamed; "
                        "delete the folder (`git rm -r`) or restore the spec",
                    )
                )
    return report


def _fast_problems(spec_path: str, out_root: str, shown: str, findings: list[Finding]) -> list[Problem]:
    edited = {variant: (path, data) for kind, path, variant, data in findings if kind == "edited"}
    rendered = (
        {f.path: f.data for f in compile_spec(spec_path, out_root, only=frozenset(edited)).files}
        if edited
        else {}
    )
    problems = []
    for kind, path, _, data in findings:
        where = f"{shown}/{path}"
        if kind == "missing":
            problems.append(_missing(where))
        elif kind == "orphan":
            problems.append(_orphan(where, recorded=False))
        else:
            assert data is not None  # an edited file was read
            line, diff = _diff(data, rendered[path], where)
            problems.append(_edited(where, line, diff))
    return problems


def _missing(where: str) -> Problem:
    return Problem(
        "missing", where, "the spec produces this file but it is not there", hint="run `sweepgen render`"
    )


def _edited(where: str, line: int, diff: str) -> Problem:
    return Problem(
        "edited",
        where,
        "edited by hand: its content is not what sweepgen rendered",
        line=line,
        diff=diff,
        hint="move the change into the spec or template; generated files are overwritten",
    )


def _orphan(where: str, *, recorded: bool) -> Problem:
    if recorded:
        return Problem(
            "orphan",
            where,
            "generated earlier, but the spec no longer produces it",
            hint="run `sweepgen render` (it removes the file)",
        )
    return Problem(
        "orphan",
        where,
        "not produced by the spec and not generated by sweepgen",
        hint="generated folders hold only rendered files; move it elsewhere",
    )


def _invalid(err: SweepgenError, spec_path: str) -> Problem:
    loc = err.location
    return Problem(
        "invalid",
        loc.path if loc else display_path(spec_path),
        err.message,
        line=loc.line if loc else 0,
        col=loc.col if loc else 0,
        hint=err.hint or "",
    )


def check_plan(plan: Plan) -> list[Problem]:
    problems: list[Problem] = []
    shown = plan.shown_dir
    current_lock = _read(os.path.join(plan.sweep_dir, lock.LOCK_NAME))
    # an up-to-date lock need not be parsed (it can be tens of MB for a large sweep)
    old_format = False
    if current_lock == plan.lock_bytes:
        recorded = {e["path"]: e["sha256"] for e in plan.lock["files"]}
    else:
        previous = lock.read(plan.sweep_dir, shown)
        recorded = {f.path: f.sha256 for f in previous.files} if previous else {}
        old_format = previous is not None and previous.version < lock.LOCK_VERSION
    expected = {f.path: f.data for f in plan.files}
    for path, data in expected.items():
        where = f"{shown}/{path}"
        current = _read(os.path.join(plan.sweep_dir, path))
        if current is None:
            problems.append(_missing(where))
        elif current != data:
            line, diff = _diff(current, data, where)
            if recorded.get(path) == hashlib.sha256(current).hexdigest():
                problems.append(
                    Problem(
                        "stale",
                        where,
                        "out of date: the spec or template changed since it was rendered",
                        line=line,
                        diff=diff,
                        hint="run `sweepgen render` and commit",
                    )
                )
            else:
                problems.append(_edited(where, line, diff))
    foreign = [p for p in files_in(plan.sweep_dir) if p not in expected and p != lock.LOCK_NAME]
    allowed = foreign_ok(plan.sweep_dir, foreign)
    for path in foreign:
        if path not in allowed:
            problems.append(_orphan(f"{shown}/{path}", recorded=path in recorded))
    lock_path = f"{shown}/{lock.LOCK_NAME}"
    if old_format:
        problems.append(
            Problem(
                "lock",
                lock_path,
                "lock file is in the version-1 format (every resolved config in full)",
                hint="run `sweepgen render` once: it writes the compact version-2 lock; nothing else changes",
            )
        )
    elif current_lock is None:
        if expected:
            problems.append(Problem("lock", lock_path, "lock file is missing", hint="run `sweepgen render`"))
    elif current_lock != plan.lock_bytes:
        line, diff = _diff(current_lock, plan.lock_bytes, lock_path)
        problems.append(
            Problem(
                "lock",
                lock_path,
                "lock file is out of date (resolved configs, hashes or versions changed)",
                line=line,
                diff=diff,
                hint="run `sweepgen render` and commit",
            )
        )
    return problems


def _read(path: str) -> bytes | None:
    return lock.read_bytes(path, folder_is_missing=True)


def _diff(current: bytes, expected: bytes, where: str) -> tuple[int, str]:
    """First differing line (1-based, on disk) and a unified diff from disk to the rendered bytes."""
    old = current.decode("utf-8", errors="replace").splitlines(keepends=True)
    new = expected.decode("utf-8", errors="replace").splitlines(keepends=True)
    line = next((i + 1 for i, (a, b) in enumerate(zip(old, new)) if a != b), min(len(old), len(new)) + 1)
    lines = list(difflib.unified_diff(old, new, fromfile=f"{where} (on disk)", tofile=f"{where} (rendered)"))
    if len(lines) > MAX_DIFF_LINES:
        lines = lines[:MAX_DIFF_LINES] + [f"... ({len(lines) - MAX_DIFF_LINES} more diff lines)\n"]
    return line, "".join(line if line.endswith("\n") else line + "\n" for line in lines)
