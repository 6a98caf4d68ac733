"""``check``: everything ``render`` validates, plus the state of the committed generated files.

Each spec is re-rendered in memory and compared byte for byte with ``generated/<name>/``:

- stale: the file still has the bytes the lock recorded, but the spec or template changed since;
- edited: the file's bytes are not what sweepgen wrote (hand edit);
- missing: the spec produces a file that is not there;
- orphan: a file in the sweep folder that the spec does not produce (or a sweep folder with no spec);
- lock: ``sweep.lock.json`` is missing or out of date;
- unsafe: a symlink, FIFO, device or socket inside the sweep folder (never opened, read or followed),
  or a file or folder where the other belongs;
- interrupted: the journal or temp files of a render that did not finish (the next render finishes it).
"""

from __future__ import annotations

import difflib
import hashlib
import os
from dataclasses import dataclass
from typing import Any

from sweepgen import settings
from sweepgen.compile.check.causes import input_changes, lock_cause
from sweepgen.compile.check.fast import Trust, Verdict, trusted
from sweepgen.compile.check.foreign import foreign_ok
from sweepgen.compile.output.lockfile import lock, lock_digest
from sweepgen.compile.output.pipeline import Plan, compile_spec
from sweepgen.compile.output.write.journal import JOURNAL_NAME, Recorded, read_recorded
from sweepgen.compile.spec.model import Spec, display_path
from sweepgen.errors import SweepgenError
from sweepgen.fs.outtree import OutputTree
from sweepgen.fs.safefs import TEMP_NAME, UnsafePath, kind_of, unsafe_hint

MAX_DIFF_LINES = 200  # per file: a diff is for reading, the full truth is one re-render away


@dataclass
class Problem:
    kind: str  # changed | stale | edited | missing | orphan | lock | unsafe | interrupted | invalid
    path: str  # as the user reads it
    message: str
    line: int = 0
    col: int = 0
    diff: str = ""
    hint: str = ""
    # one of the files a cause line already accounts for ("templates/t.j2 changed: 19 files
    # stale"): shown with --diff/-v, and always in JSON
    detail: bool = False

    def as_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "detail": self.detail,
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
        _check_spec(spec_path, out_root, full, owned, report)
    if orphan_sweeps and os.path.isdir(out_root):
        _orphan_sweeps(out_root, owned, report)
    return report


def _check_spec(spec_path: str, out_root: str, full: bool, owned: set[str], report: Report) -> None:
    """One spec's problems and files counted into ``report``; its sweep folder added to ``owned``."""
    trust = Trust(None, None) if full else trusted(spec_path, out_root)
    verdict = trust.verdict
    if verdict is not None:
        _check_trusted(spec_path, out_root, trust.spec, verdict, owned, report)
        return
    try:
        plan = compile_spec(spec_path, out_root, loaded=trust.spec)
    except SweepgenError as err:
        report.problems.append(_invalid(err, spec_path))
        return
    owned.add(plan.spec.name)
    report.files += len(plan.files)
    try:
        report.problems.extend(_check_plan(plan))
    except SweepgenError as err:
        report.problems.append(_invalid(err, spec_path))


def _check_trusted(
    spec_path: str, out_root: str, spec: Spec | None, verdict: Verdict, owned: set[str], report: Report
) -> None:
    """``_check_spec`` for a spec whose lock proves its inputs unchanged."""
    owned.add(verdict.name)
    report.files += len(verdict.lock.files)
    try:
        report.problems.extend(_fast_problems(spec_path, out_root, spec, verdict))
    except SweepgenError as err:
        report.problems.append(_invalid(err, spec_path))


def _orphan_sweeps(out_root: str, owned: set[str], report: Report) -> None:
    """Sweep folders no spec owns (orphans), and anything unsafe in the output root."""
    for name in sorted(set(os.listdir(out_root)) - owned):
        folder = os.path.join(out_root, name)
        kind = kind_of(os.lstat(folder).st_mode)
        if kind not in ("file", "folder"):
            report.problems.append(_unsafe_problem(display_path(folder), kind))
        elif kind == "folder" and not report.invalid:
            report.problems.append(
                Problem(
                    "orphan",
                    display_path(folder),
                    f"sweep folder {name!r} belongs to no spec",
                    hint="its spec was removed or renamed; "
                    "delete the folder (`git rm -r`) or restore the spec",
                )
            )


def _fast_problems(spec_path: str, out_root: str, spec: Spec | None, verdict: Verdict) -> list[Problem]:
    """Problems of a spec whose inputs all still match its lock: only edited files are rendered."""
    edited = {variant for kind, _, variant, _ in verdict.findings if kind == "edited"}
    rendered = _rendered(spec_path, out_root, spec, edited)
    problems = []
    for kind, path, _, data in verdict.findings:
        where = f"{verdict.shown}/{path}"
        if kind == "missing":
            problems.append(_missing(where))
        elif kind == "orphan":
            problems.append(_orphan(where, recorded=False))
        else:
            assert data is not None  # an edited file was read
            line, diff = _diff(data, rendered[path], where)
            problems.append(_edited(where, line, diff))
    return problems


def _rendered(spec_path: str, out_root: str, spec: Spec | None, variants: set[str]) -> dict[str, bytes]:
    """The files of ``variants``, rendered again (nothing is rendered for no variant)."""
    if not variants:
        return {}
    plan = compile_spec(spec_path, out_root, only=frozenset(variants), loaded=spec)
    return {f.path: f.content() for f in plan.files}


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


def _unsafe_problem(where: str, kind: str, what: str = "inside a generated folder") -> Problem:
    return Problem(
        "unsafe", where, f"a {kind} {what}; sweepgen never reads or follows it", hint=unsafe_hint(kind)
    )


def _check_plan(plan: Plan) -> list[Problem]:
    parent, name = os.path.split(plan.sweep_dir)
    try:
        tree = OutputTree.open(parent, name, plan.shown_dir, create=False)
    except UnsafePath as err:
        return [_unsafe_problem(err.where, err.kind, "where the sweep folder belongs")]
    if tree is None:
        return _compare(plan, None)
    with tree:
        return _compare(plan, tree)


def _could_be_stale(rec: Recorded) -> bool:
    """Whether a file the lock vouches for can be out of date rather than edited: not when the lock
    itself was edited by hand (its digest does not hold), since such a lock vouches for nothing."""
    return rec.journal is not None or rec.lock_bytes is None or not lock_digest.edited(rec.lock_bytes)


def _compare(plan: Plan, tree: OutputTree | None) -> list[Problem]:
    try:
        rec = read_recorded(tree, plan) if tree else None
    except UnsafePath as err:
        return [_unsafe_problem(err.where, err.kind, "where sweepgen keeps its records")]
    expected = {f.path: f.content() for f in plan.files}
    problems = _file_problems(plan, tree, rec, expected)
    if tree is None or rec is None:
        return problems + _missing_lock(plan, expected)
    if rec.journal is not None:
        problems.append(_interrupted(tree))
    problems += _extra_problems(plan, tree, rec, expected)
    lock_problem, recorded = _lock_problem(plan, rec, expected)
    if lock_problem is not None:
        problems.append(lock_problem)
    return _by_cause(plan, problems, recorded)


def _missing_lock(plan: Plan, expected: dict[str, bytes]) -> list[Problem]:
    """The missing lock file, as a problem where the spec writes any file."""
    if not expected:
        return []
    return [
        Problem(
            "lock",
            f"{plan.shown_dir}/{lock.LOCK_NAME}",
            "lock file is missing",
            hint="run `sweepgen render`",
        )
    ]


def _file_problems(
    plan: Plan, tree: OutputTree | None, rec: Recorded | None, expected: dict[str, bytes]
) -> list[Problem]:
    """What is wrong with each file the spec writes: missing, in the way, stale or edited."""
    problems: list[Problem] = []
    for path, data in expected.items():
        problem = _file_problem(tree, rec, path, f"{plan.shown_dir}/{path}", data)
        if problem is not None:
            problems.append(problem)
    return problems


def _file_problem(
    tree: OutputTree | None, rec: Recorded | None, path: str, where: str, data: bytes
) -> Problem | None:
    """What is wrong with one file the spec writes (``data``), if anything."""
    if tree is None:
        return _missing(where)
    node = tree.node(path)
    if node.blocked and node.kind != "file":
        return None  # the symlink (or FIFO…) standing where a folder belongs is reported by the walk
    if node.kind == "missing" or node.blocked:  # nothing there, or a file where a folder belongs
        return _missing(where)
    if node.kind != "file":
        return _in_the_way(tree, rec, path, where, node.kind)
    current = tree.read(path)
    return _changed(rec, path, where, current, data) if current != data else None


def _in_the_way(tree: OutputTree, rec: Recorded | None, path: str, where: str, kind: str) -> Problem:
    """Something not a file where the spec writes one: a folder an earlier render made (stale), or
    anything else (unsafe)."""
    if kind == "folder" and rec is not None and _ours(tree, path, rec):
        return Problem(
            "stale",
            where,
            "a folder of files generated earlier stands where the spec now writes this file",
            hint="run `sweepgen render` (it removes the folder) and commit",
        )
    return _unsafe_problem(where, kind, "where the spec's file belongs")


def _changed(rec: Recorded | None, path: str, where: str, current: bytes, data: bytes) -> Problem:
    """A file whose bytes differ from the render: stale when the lock recorded them, else edited."""
    line, diff = _diff(current, data, where)
    if rec and rec.accepts(path, hashlib.sha256(current).hexdigest()) and _could_be_stale(rec):
        return Problem(
            "stale",
            where,
            "out of date: the spec or template changed since it was rendered"
            + (" (or a render was interrupted)" if rec.journal is not None else ""),
            line=line,
            diff=diff,
            hint="run `sweepgen render` and commit",
        )
    return _edited(where, line, diff)


def _extra_problems(plan: Plan, tree: OutputTree, rec: Recorded, expected: dict[str, bytes]) -> list[Problem]:
    """What stands in the sweep folder that the spec does not write: orphans, leftovers, unsafe nodes."""
    entries = _unwritten(tree, expected)
    # tool files (__pycache__, .DS_Store, swap files) and git-ignored files are not orphans
    tolerated = foreign_ok(plan.sweep_dir, [p for p, k in entries if k == "file" and p not in rec.shas])
    return [
        _extra_problem(f"{plan.shown_dir}/{path}", path, kind, rec)
        for path, kind in entries
        if path not in tolerated
    ]


def _unwritten(tree: OutputTree, expected: dict[str, bytes]) -> list[tuple[str, str]]:
    """(path, kind) of everything in the sweep folder that is neither a spec's file nor a record."""
    return [
        (p, k)
        for p, k in tree.walk()
        if p not in expected and p not in (lock.LOCK_NAME, JOURNAL_NAME, *lock.RUN_STATE_NAMES)
    ]


def _extra_problem(where: str, path: str, kind: str, rec: Recorded) -> Problem:
    """One thing in the sweep folder that the spec does not write: unsafe unless a plain file, a
    temporary file left by a cut render, or an orphan (generated earlier, or never by sweepgen)."""
    if kind != "file":
        return _unsafe_problem(where, kind)
    if TEMP_NAME.fullmatch(path.rpartition("/")[2]):
        return Problem(
            "interrupted",
            where,
            "temporary file left by a render that did not finish",
            hint="run `sweepgen render`: it removes it",
        )
    return _orphan(where, recorded=path in rec.shas)


def _lock_problem(
    plan: Plan, rec: Recorded, expected: dict[str, bytes]
) -> tuple[Problem | None, lock.Lock | None]:
    """The lock's own problem (older format, missing, out of date, edited), and the lock as recorded."""
    problem: Problem | None = None
    shown = plan.shown_dir
    lock_path = f"{shown}/{lock.LOCK_NAME}"
    current_lock = rec.lock_bytes
    if rec.version is not None and rec.version < lock.LOCK_VERSION:
        problem = Problem(
            "lock",
            lock_path,
            f"lock file is in the older version-{rec.version} format",
            hint=f"run `sweepgen render` once: it writes the version-{lock.LOCK_VERSION} lock; "
            "nothing else changes",
        )
    elif current_lock is None:
        if expected:
            problem = Problem("lock", lock_path, "lock file is missing", hint="run `sweepgen render`")
    elif current_lock != plan.lock_bytes:
        line, diff = _diff(current_lock, plan.lock_bytes, lock_path)
        problem = Problem(
            "lock",
            lock_path,
            f"lock file is out of date: {lock_cause(_parsed(current_lock, lock_path), plan.lock)}"
            if not lock_digest.edited(current_lock)
            else "lock file was edited by hand: its digest does not match its content",
            line=line,
            diff=diff,
            hint="run `sweepgen render` and commit",
        )
    recorded = _parsed(current_lock, lock_path) if current_lock is not None else None
    return problem, recorded


def _parsed(raw: bytes, shown: str) -> lock.Lock | None:
    try:
        return lock.parse(raw, shown)
    except SweepgenError:
        return None


def _by_cause(plan: Plan, problems: list[Problem], recorded: lock.Lock | None) -> list[Problem]:
    """One line for what a changed input made stale, first; the stale files and the lock behind it
    become details (shown with --diff). Edited, missing and orphaned files stay lines of their own:
    each needs its own look."""
    stale = [p for p in problems if p.kind in ("stale", "lock")]
    causes = input_changes(recorded, plan.lock) if stale and recorded is not None else []
    if not causes:
        return problems
    lead = _lead(plan, causes, stale)
    for p in stale:
        p.detail = True
    return [lead, *problems]


def _lead(plan: Plan, causes: list[tuple[str, str]], stale: list[Problem]) -> Problem:
    """The line for the first changed input (the others named after it) and what it made stale."""
    (path, first), *more = causes
    also = f" (also: {'; '.join(f'{p} {c}' for p, c in more)})" if more else ""
    return Problem(
        "changed",
        path or plan.spec.path,
        ("" if first == "changed" else f"{first}: ")
        + f"{' and '.join(_made_stale(plan, stale))}{also} — run `{_render_command(plan)}`",
        hint="commit the rendered files; `sweepgen check --diff` shows each file's diff",
    )


def _made_stale(plan: Plan, stale: list[Problem]) -> list[str]:
    """What a changed input made stale: the sweep folder's files, its lock, or both."""
    files = sum(p.kind == "stale" for p in stale)
    made = [f"{files} of {len(plan.files)} file(s) in {plan.shown_dir}/ stale"] if files else []
    if any(p.kind == "lock" for p in stale):
        made.append("its lock out of date")
    return made


def _render_command(plan: Plan) -> str:
    """The command that renders the spec again, with ``-o`` where its output root is not the
    configured one."""
    command = f"sweepgen render {plan.spec.path}"
    if _needs_output_flag(plan.out_root):
        command += f" -o {display_path(plan.out_root)}"
    return command


def _needs_output_flag(out_root: str) -> bool:
    try:
        configured = settings.load().output_root()
    except SweepgenError:
        return True
    return os.path.abspath(configured) != os.path.abspath(out_root)


def _ours(tree: OutputTree, folder: str, rec: Recorded) -> bool:
    """Whether ``folder`` holds sweepgen's earlier files and nothing else (render may remove it)."""
    inside = [(rel, kind) for rel, kind in tree.walk(folders=True) if rel.startswith(folder + "/")]
    files = [rel for rel, kind in inside if kind != "folder"]
    return bool(files) and all(
        rel in rec.shas or TEMP_NAME.fullmatch(rel.rpartition("/")[2]) for rel in files
    )


def _interrupted(tree: OutputTree) -> Problem:
    running = tree.held_elsewhere()  # a render holds the folder while it writes
    return Problem(
        "interrupted",
        tree.where(JOURNAL_NAME),
        "a render is writing this folder right now"
        if running
        else "a render did not finish (killed, interrupted or out of disk space): files may mix "
        "the old and the new rendering",
        hint="wait for it, then check again"
        if running
        else "run `sweepgen render` (of the new spec or the old one): it recognises the files it wrote "
        "and finishes; nothing needs deleting by hand",
    )


def _diff(current: bytes, expected: bytes, where: str) -> tuple[int, str]:
    """First differing line (1-based, on disk) and a unified diff from disk to the rendered bytes."""
    old = current.decode("utf-8", errors="replace").splitlines(keepends=True)
    new = expected.decode("utf-8", errors="replace").splitlines(keepends=True)
    line = next((i + 1 for i, (a, b) in enumerate(zip(old, new)) if a != b), min(len(old), len(new)) + 1)
    lines = list(difflib.unified_diff(old, new, fromfile=f"{where} (on disk)", tofile=f"{where} (rendered)"))
    if len(lines) > MAX_DIFF_LINES:
        lines = lines[:MAX_DIFF_LINES] + [f"... ({len(lines) - MAX_DIFF_LINES} more diff lines)\n"]
    return line, "".join(line if line.endswith("\n") else line + "\n" for line in lines)
