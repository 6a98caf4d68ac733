"""Writing compiled plans to disk: all checks first, then a journal, atomic writes, the lock last.

Nothing lost: a file is only overwritten or removed when the previous lock of the same sweep (or the
journal of an interrupted render, see ``journal``) says sweepgen wrote it *and* its bytes still have
the sha256 recorded there. A hand-edited generated file, a foreign file, a symlink, FIFO or device in
the way stops the whole render before anything is written. The sweep folder is walked and written
through ``safefs.OutputTree``: no symlink is ever followed, so nothing outside it is touched.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
from dataclasses import dataclass, field

from sweepgen.compile.output.lockfile import lock
from sweepgen.compile.output.pipeline import Plan
from sweepgen.compile.output.render import RenderedFile
from sweepgen.compile.output.staging import Staging
from sweepgen.compile.output.write.journal import JOURNAL_NAME, Recorded, journal_bytes, read_recorded
from sweepgen.compile.spec.model import SAFE_NAME
from sweepgen.errors import Location, UserError
from sweepgen.fs.outtree import Node, OutputTree, check_names, name_max
from sweepgen.fs.safefs import TEMP_NAME, UnsafePath, unsafe_hint

CREATE, UPDATE, UNCHANGED, REMOVE = "create", "update", "unchanged", "remove"


@dataclass
class Action:
    path: str  # relative to the sweep folder
    action: str
    variant: str | None = None
    run_name: str | None = None


@dataclass
class Outcome:
    plan: Plan | None  # None: the spec was not compiled, its lock proved nothing changed
    actions: list[Action] = field(default_factory=list)
    lock_changed: bool = False
    recorded: Recorded | None = None
    leftovers: list[str] = field(default_factory=list)  # temp files of an interrupted render
    emptied: list[str] = field(default_factory=list)  # folders removed to make room for a file
    recased: list[str] = field(default_factory=list)  # outputs renamed in case only (_case_renamed)
    interrupted: bool = False  # a journal says an earlier render did not finish; this one will

    @property
    def writes(self) -> bool:
        """Whether applying this outcome changes anything on disk."""
        return (
            self.lock_changed
            or self.interrupted
            or bool(self.leftovers)
            or any(a.action != UNCHANGED for a in self.actions)
        )

    spec_path: str = ""  # as the user gave it
    shown_dir: str = ""  # the sweep folder as the user reads it

    def __post_init__(self) -> None:
        if self.plan is not None:
            self.spec_path, self.shown_dir = self.plan.spec.path, self.plan.shown_dir

    @property
    def files(self) -> int:
        """How many files the spec renders."""
        return (
            len(self.plan.files) if self.plan is not None else sum(a.action != REMOVE for a in self.actions)
        )

    def count(self, action: str) -> int:
        return sum(1 for a in self.actions if a.action == action)


def plan_actions(plans: list[Plan]) -> list[Outcome]:
    """Decide what each file needs; raises before anything is written if a file must not be touched."""
    _refuse_shared_folders(plans)
    # folders this render made to stage its files are not an earlier render's (checked above, by spec)
    made_here = {p.sweep_dir for p in plans if p.staging is not None and p.staging.fresh}
    for plan in plans:
        _check_case_on_disk(plan, made_here)
    return [_outcome(plan) for plan in plans]


def _refuse_shared_folders(plans: list[Plan]) -> None:
    """Two specs of one render whose sweep folders are one (or one on macOS and Windows, differing
    only in case): each would overwrite the other's files."""
    names: dict[str, str] = {}
    folded: dict[str, Plan] = {}
    for plan in plans:
        if plan.sweep_dir in names:
            raise UserError(
                f"specs {names[plan.sweep_dir]} and {plan.spec.path} both render to {plan.shown_dir}",
                location=plan.spec.loc(("name",)),
                hint="give each spec its own `name`",
            )
        names[plan.sweep_dir] = plan.spec.path
        other = folded.setdefault(plan.sweep_dir.lower(), plan)
        if other is not plan:
            raise _case_clash(plan, other.shown_dir, f"spec {other.spec.path}")


def _check_case_on_disk(plan: Plan, made_here: set[str]) -> None:
    """A sweep folder whose name differs only in case from one already in the output root: on macOS
    and Windows both are one folder, and one sweep would overwrite the other's files."""
    parent, name = os.path.split(plan.sweep_dir)
    try:
        entries = os.listdir(parent)
    except (FileNotFoundError, NotADirectoryError):
        return
    clash = next(
        (
            e
            for e in sorted(entries)
            if e != name and e.lower() == name.lower() and os.path.join(parent, e) not in made_here
        ),
        None,
    )
    if clash is not None:
        raise _case_clash(plan, os.path.join(os.path.dirname(plan.shown_dir), clash), "an earlier render")


def _case_clash(plan: Plan, other_dir: str, whose: str) -> UserError:
    return UserError(
        f"sweep folder {plan.shown_dir} and {other_dir} (from {whose}) differ only in case",
        location=plan.spec.loc(("name",)),
        hint="they are one folder on macOS and Windows; rename one sweep (and remove the old folder)",
    )


def _outcome(plan: Plan) -> Outcome:
    parent, name = os.path.split(plan.sweep_dir)
    limit = name_max(parent)
    for f in plan.files:  # a name the file system refuses would stop the render half-way
        check_names(f.path, f"{plan.shown_dir}/{f.path}", limit)
    tree = _existing_folder(plan)
    out = Outcome(plan)
    if tree is None:
        out.actions = [Action(f.path, CREATE, f.variant.name, f.run_name) for f in plan.files]
        out.lock_changed = True
        return out
    # the staged plan's tree stays open (and held) until apply
    with tree if plan.staging is None else contextlib.nullcontext(tree):
        rec = _compare(plan, tree, out)
    out.lock_changed = rec.lock_bytes != plan.lock_bytes
    return out


def _existing_folder(plan: Plan) -> OutputTree | None:
    """The sweep folder as it stands (the staging's, open), or None where there is none yet or this
    render made it to stage its files."""
    if plan.staging is not None:
        return None if plan.staging.fresh else plan.staging.tree
    parent, name = os.path.split(plan.sweep_dir)
    return OutputTree.open(parent, name, plan.shown_dir, create=False)


def _compare(plan: Plan, tree: OutputTree, out: Outcome) -> Recorded:
    """Each file's action against the folder as the lock records it, added to ``out``; raises
    where something sweepgen did not write stands in the way."""
    rec = _recorded_here(plan, tree)
    out.recorded = rec
    out.interrupted = rec.journal is not None
    produced = {f.path for f in plan.files}
    stale = {p.casefold(): p for p in set(rec.shas) - produced - {lock.LOCK_NAME, JOURNAL_NAME}}
    blocked, in_the_way = _writes(plan, tree, rec, out, stale)
    removed = _removals(plan, tree, rec, produced, out)
    for _path, at in blocked:
        if at not in removed:
            raise _unsafe(tree, at, "file", True)
    _make_room(plan, tree, in_the_way, removed, out)
    return rec


def _recorded_here(plan: Plan, tree: OutputTree) -> Recorded:
    """What the sweep folder records (its lock, its journal), once nothing unsafe stands where they
    are written and the lock is this sweep's."""
    for own in (lock.LOCK_NAME, JOURNAL_NAME):  # both are written: nothing may stand there
        node = tree.node(own)
        if node.kind not in ("missing", "file") or node.blocked:
            raise _unsafe(tree, node.at, node.kind, node.blocked)
    rec = read_recorded(tree, plan)
    if rec.sweep is not None and rec.sweep != plan.spec.name:
        raise UserError(
            f"{plan.shown_dir}/{lock.LOCK_NAME} belongs to sweep {rec.sweep!r}",
            location=Location(f"{plan.shown_dir}/{lock.LOCK_NAME}"),
            hint="another sweep wrote this folder; rename one of them",
        )
    return rec


def _writes(
    plan: Plan, tree: OutputTree, rec: Recorded, out: Outcome, stale: dict[str, str]
) -> tuple[list[tuple[str, str]], list[str]]:
    """Each output's action, added to ``out``; returns (output path, the file standing where its
    folder belongs) pairs and the output paths where a folder stands (an output that was x/c.yaml).
    ``stale``: the recorded files no longer produced, by their case-folded path."""
    blocked: list[tuple[str, str]] = []
    in_the_way: list[str] = []
    for f in plan.files:
        node = tree.node(f.path)
        action = CREATE
        if node.kind == "file" and not node.blocked:
            action = _over_file(plan, tree, rec, f, stale, out)
        elif not _no_file_here(node):
            raise _unsafe(tree, node.at, node.kind, node.blocked)
        elif node.kind == "file":  # a file stands where a folder above the output belongs
            blocked.append((f.path, node.at))
        elif node.kind == "folder":
            in_the_way.append(f.path)  # fine if it holds only files this render removes
        out.actions.append(Action(f.path, action, f.variant.name, f.run_name))
    return blocked, in_the_way


def _no_file_here(node: Node) -> bool:
    """Nothing stands at an output's path that it would replace: nothing at all, a file where a
    folder above it belongs (blocked), or a folder (the output was x/c.yaml). Anything else that
    is not a plain file (a symlink, a blocked folder) is unsafe."""
    return node.kind == "missing" or (node.kind, node.blocked) in (("file", True), ("folder", False))


def _over_file(
    plan: Plan, tree: OutputTree, rec: Recorded, f: RenderedFile, stale: dict[str, str], out: Outcome
) -> str:
    """The action for an output where a plain file stands, which must be one sweepgen wrote."""
    current = tree.read(f.path)
    was = _case_renamed(tree, f.path, stale)
    if was is not None:  # removed under its old name first, then written under the new one
        _may_replace(plan, was, current, rec)
        out.recased.append(f.path)
        return UPDATE
    if _same(current, f):
        return UNCHANGED
    _may_replace(plan, f.path, current, rec)
    return UPDATE


def _case_renamed(tree: OutputTree, path: str, stale: dict[str, str]) -> str | None:
    """The recorded file that ``path`` renames in case only (``Seed1.yaml`` -> ``seed1.yaml``, ``x/``
    -> ``X/``) when the file system found ``path`` as that file, stored under its old name (macOS,
    Windows, exFAT): that entry is removed as a stale file, so the output must be written again,
    never kept as unchanged. Told by the names stored in each folder (inode numbers differ
    between two spellings of one name on some of these file systems)."""
    was = stale.get(path.casefold())
    if was is None or was == path:
        return None
    stored: list[str] = []
    for part in path.split("/"):
        names = tree.names("/".join(stored))
        if part not in names:
            part = next((n for n in names if n.casefold() == part.casefold()), part)
        stored.append(part)
    return was if "/".join(stored) == was else None


def _same(current: bytes, f: RenderedFile) -> bool:
    """Whether a file on disk holds what was rendered (by its sha256 when the bytes are staged)."""
    return current == f.data if f.data is not None else hashlib.sha256(current).hexdigest() == f.sha256


def _removals(plan: Plan, tree: OutputTree, rec: Recorded, produced: set[str], out: Outcome) -> set[str]:
    """The files the lock lists that this render no longer produces, each removal added to ``out``."""
    removed = set()
    for path in sorted(set(rec.shas) - produced - {lock.LOCK_NAME, JOURNAL_NAME}):
        _check_listed(plan, path)
        node = tree.node(path)
        if _no_file_here(node):
            continue  # a folder here: the file became one (x -> x/c.yaml), its files have their own entries
        if node.kind != "file":
            raise _unsafe(tree, node.at, node.kind, node.blocked)
        _may_replace(plan, path, tree.read(path), rec)
        out.actions.append(Action(path, REMOVE))
        removed.add(path)
    return removed


def _check_listed(plan: Plan, path: str) -> None:
    """A path the lock lists is removed only if it is made of safe names (no ``..``, no ``/``)."""
    if not all(SAFE_NAME.fullmatch(p) for p in path.split("/")):
        raise UserError(
            f"lock lists an unsafe path {path!r}",
            location=Location(f"{plan.shown_dir}/{lock.LOCK_NAME}"),
            hint="the lock was edited by hand; restore it from git",
        )


def _make_room(plan: Plan, tree: OutputTree, in_the_way: list[str], removed: set[str], out: Outcome) -> None:
    """Temporary files left by a cut render, and the folders standing where outputs go: only a
    folder sweepgen filled, and empties now, makes room for a file."""
    entries = _not_staged(tree, plan.staging)
    out.leftovers = [rel for rel, kind in entries if kind == "file" and _is_temp(rel)]
    for folder in in_the_way:
        if not _emptied(folder, entries, removed, out.leftovers):
            raise _unsafe(tree, folder, "folder", False)
        out.emptied.append(folder)


def _not_staged(tree: OutputTree, staging: Staging | None) -> list[tuple[str, str]]:
    """The output tree's (path, kind) entries, less this render's own staging folder: its files
    are this render's, never in the way of it."""
    return [(rel, kind) for rel, kind in tree.walk(folders=True) if staging is None or not staging.owns(rel)]


def _emptied(folder: str, entries: list[tuple[str, str]], removed: set[str], leftovers: list[str]) -> bool:
    """Whether this render empties ``folder``: it removes a file the lock lists there, and
    everything else inside is a folder, another such file or a temporary file left by a cut render."""
    inside = [(rel, kind) for rel, kind in entries if rel.startswith(folder + "/")]
    ours = any(rel in removed for rel, _kind in inside)
    return ours and all(kind == "folder" or rel in removed or rel in leftovers for rel, kind in inside)


def _is_temp(rel: str) -> bool:
    return TEMP_NAME.fullmatch(rel.rpartition("/")[2]) is not None


def _unsafe(tree: OutputTree, at: str, kind: str, blocked: bool) -> UnsafePath:
    where = tree.where(at)
    need = "create a folder" if blocked else "write a file"
    return UnsafePath(
        f"{where} is a {kind} where sweepgen must {need}"
        + ("; sweepgen never writes through symlinks" if kind == "symlink" else ""),
        where=where,
        kind=kind,
        hint=unsafe_hint(kind),
    )


def _may_replace(plan: Plan, path: str, current: bytes, rec: Recorded) -> None:
    shown = f"{plan.shown_dir}/{path}"
    if path not in rec.shas:
        raise UserError(
            f"{shown} exists and was not generated by sweepgen for this sweep",
            location=Location(shown),
            hint="move it out of the way (sweepgen never overwrites files it did not write)",
        )
    if not rec.accepts(path, hashlib.sha256(current).hexdigest()):
        raise UserError(
            f"{shown} was edited by hand after sweepgen generated it",
            location=Location(shown),
            hint="`sweepgen check` shows the edit; move the change into the spec or template, "
            "then delete the file and render again",
        )


def apply(outcomes: list[Outcome]) -> None:
    """Per sweep folder: journal, remove stale generated files, write changed files, lock, no journal.

    Removing first lets an output that was the file ``x`` become ``x/c.yaml`` (and only files the
    lock or journal recorded, with a recorded sha256, are ever removed: checked in plan_actions).
    Killed anywhere in between, the journal lets the next render finish (see ``journal``). A streamed
    plan's files are renamed from their staged names (the folder held since), not written.
    """
    for out in outcomes:
        plan = out.plan
        if not out.writes:
            if plan is not None and plan.staging is not None:
                plan.staging.finish()  # every staged file is the one already in place
            continue
        assert plan is not None  # an outcome without a plan writes nothing
        if plan.staging is not None:
            _apply_one(out, plan, plan.staging.tree)  # clears what is left staged
            plan.staging.close()
            continue
        parent, name = os.path.split(plan.sweep_dir)
        tree = OutputTree.open(parent, name, plan.shown_dir, create=True)
        assert tree is not None  # created
        with tree:
            _hold(tree)
            _apply_one(out, plan, tree)


def _apply_one(out: Outcome, plan: Plan, tree: OutputTree) -> None:
    recorded = out.recorded or Recorded(None, None, None, None, {})
    tree.write(JOURNAL_NAME, journal_bytes(recorded, plan))
    _remove_old(out, tree)
    _write_files(out, plan, tree)
    if out.lock_changed:
        tree.write(lock.LOCK_NAME, plan.lock_bytes)
    if plan.staging is not None:
        plan.staging.clear()  # before the journal goes: a finished render leaves no temporary file
    tree.remove(JOURNAL_NAME, prune=False)


def _remove_old(out: Outcome, tree: OutputTree) -> None:
    """Temporary files, stale files and the folders they emptied, before anything is written."""
    for rel in out.leftovers:
        tree.remove(rel)
    for act in out.actions:
        if act.action == REMOVE:
            tree.remove(act.path)
    for folder in out.emptied:
        tree.remove_empty_folder(folder)
    for path in out.recased:  # `x/` removed with its files: `X/` made under its own name
        tree.make_dirs_as_named(path.rpartition("/")[0])


def _write_files(out: Outcome, plan: Plan, tree: OutputTree) -> None:
    """The created and updated files: renamed from staging, or written from memory."""
    staging = plan.staging
    index = {f.path: (i, f.data) for i, f in enumerate(plan.files)}
    for act in out.actions:
        if act.action in (CREATE, UPDATE):
            i, data = index[act.path]
            if staging is not None:
                staging.commit(i, act.path)
            else:
                assert data is not None  # kept in memory when not staged
                tree.write(act.path, data)


def _hold(tree: OutputTree) -> None:
    """One render per sweep folder at a time."""
    if not tree.hold():
        raise UserError(
            f"another sweepgen render is writing {tree.shown}",
            location=Location(tree.shown),
            hint="wait for it to finish, then render again",
        )
