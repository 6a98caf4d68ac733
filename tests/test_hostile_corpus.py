"""The hostile-inputs corpus: every folder under tests/fixtures/hostile/ is a project an attacker wrote.

Each case is ``project/`` (what a pull request or a shared runs folder holds) beside ``outside/``
(canaries: files whose text must never be printed, modules that leave a marker when imported), plus
``case.yaml``: what git cannot hold (``setup:`` links, hard links, FIFOs, non-UTF-8 names, large
files), the environment, folders of the case that stand for installed packages (``site:``), and the
commands to run in ``project/``. The shared canaries of ``_outside/`` are
copied into every case's ``outside/``.

Each command runs as ``python -m sweepgen`` in a process of its own under an audit hook that records
every file opened and every folder listed, so what is *read* is checked without relying on atimes: a
child forked from a server that has sweepgen loaded already (tests/hostile_forkserver.py: the same
hook, environment and sys.path, without the interpreter's start-up), or a fresh interpreter where a
child could differ (a locale of the case's, a module of the case's named like a loaded one). For
every command: it ends within ``BOUND`` seconds, exits 0, 1 or 2 (or what the case says), prints no
traceback, no canary text, no raw control character and no CI workflow command; and afterwards
nothing under ``outside/`` was created, changed or deleted, no file under it was opened, no folder
outside the project was listed, and no canary module was imported.
"""

from __future__ import annotations

import functools
import json
import os
import re
import shutil
import stat
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from hostile_forkserver import ForkServer

from sweepgen.compile.output.lockfile import lock_digest
from sweepgen.fs import filenames

ROOT = Path(__file__).resolve().parent.parent
CASES = Path(__file__).resolve().parent / "fixtures" / "hostile"
SHARED_OUTSIDE = CASES / "_outside"
NAMES = sorted(p.name for p in CASES.iterdir() if (p / "case.yaml").is_file())
CANARY = "HOSTILE-CANARY-7f3a9c"  # in every file under outside/
CANARY_MODULES = ("hostile_canary",)  # importable from outside/ (on PYTHONPATH) and the project
BOUND = 60.0  # seconds per command: generous on a loaded 2-core machine; a hang is what is tested
_RAW = re.compile(r"[\x00-\x08\x0b-\x1f\x7f\x9b]")  # a C0 control (tab and newline aside), DEL, CSI
_WORKFLOW = re.compile(r"^[ \t]*::[a-z-]+", re.MULTILINE)

# Run as `python -c` before sweepgen is imported: an audit hook that logs, as JSON lines on an fd
# opened before it was installed, every open (with its flags) and folder listing, and every import.
_AUDIT = r"""
import json, os, runpy, sys
_fd = int(os.environ.pop("HOSTILE_AUDIT_FD"))
_busy = [False]
_CHANGE = {"os.rename", "os.remove", "os.rmdir", "os.mkdir", "os.chmod", "os.chown", "os.truncate",
           "os.link", "os.symlink", "os.utime", "shutil.rmtree", "shutil.move", "fcntl.flock"}
def _hook(event, args):
    if _busy[0] or (event not in ("open", "os.listdir", "os.scandir", "import") and event not in _CHANGE):
        return
    _busy[0] = True
    try:
        first = args[0] if args else None
        if isinstance(first, bytes):
            first = os.fsdecode(first)
        if event in _CHANGE:
            named = first if isinstance(first, str) else repr(first)
            rec = {"e": event, "p": named, "f": 0, "cwd": os.getcwd()}
            os.write(_fd, (json.dumps(rec, ensure_ascii=True) + "\n").encode())
        elif event == "import" or isinstance(first, str):
            flags = args[2] if event == "open" and len(args) > 2 and isinstance(args[2], int) else 0
            cwd = os.getcwd() if isinstance(first, str) and not os.path.isabs(first) else ""
            rec = {"e": event, "p": first, "f": flags, "cwd": cwd}
            os.write(_fd, (json.dumps(rec, ensure_ascii=True) + "\n").encode())
    except Exception:
        pass
    finally:
        _busy[0] = False
sys.addaudithook(_hook)
# as `python -m sweepgen` starts: the working folder first on sys.path, `-m` as argv[0] while the
# package loads (`python -c` put "" there, which would import a committed module whatever sweepgen does)
sys.path[0] = os.getcwd()
sys.argv = ["-m", *sys.argv[1:]]
#REINIT
runpy.run_module("sweepgen", run_name="__main__", alter_sys=True)
"""
# In a child of the fork server (tests/hostile_forkserver.py), where sweepgen is loaded already, the
# line above runs its __init__ again, in place: its guard takes the working folder off sys.path, as
# it does as `python -m sweepgen` loads it (a comment in the fresh process, where it loads then)
_REINIT = """_init = sys.modules["sweepgen"].__spec__.origin
with open(_init, "rb") as _fh:
    exec(compile(_fh.read(), _init, "exec"), sys.modules["sweepgen"].__dict__)
"""


def _case(name: str) -> dict[str, Any]:
    # libyaml's safe loader: the pure-Python one took 0.6 CPU-s for the corpus, read at each worker's
    # collection and again by the tests (the same data: both loaders compared on every case)
    data = yaml.load((CASES / name / "case.yaml").read_text(encoding="utf-8"), Loader=yaml.CSafeLoader)
    assert isinstance(data, dict) and data.get("about") and data.get("commands"), name
    return data


def _fs_path(base: Path, rel: str, latin1: bool) -> bytes:
    """A path under ``base``; ``latin1``: each character of ``rel`` is one byte (non-UTF-8 names)."""
    raw = rel.encode("latin-1") if latin1 else rel.encode("utf-8")
    return os.fsencode(base) + b"/" + raw


def _edit(case: Path, step: dict[str, Any]) -> None:
    """A lock edited as anyone can: text replaced, its digest recomputed when asked."""
    target = case / step["edit"]
    text = target.read_text(encoding="utf-8")
    for old, new in step.get("replace", []):
        assert old in text, (step, text)
        text = text.replace(old, new, 1)
    if step.get("reseal"):
        text = lock_digest.seal(re.sub(r'  "digest": "[0-9a-f]{64}",\n', "", text))
    target.write_text(text, encoding="utf-8")


def _write(case: Path, step: dict[str, Any], latin1: bool) -> None:
    """A file of text or hex bytes, repeated ``times`` between a prefix and a suffix."""
    target = _fs_path(case, step["write"], latin1)
    os.makedirs(os.path.dirname(target), exist_ok=True)
    data = bytes.fromhex(step["hex"]) if "hex" in step else step["text"].encode("utf-8", "surrogateescape")
    data = (
        step.get("prefix", "").encode() + data * int(step.get("times", 1)) + step.get("suffix", "").encode()
    )
    with open(target, "wb") as fh:
        fh.write(data)


def _make(case: Path, step: dict[str, Any], latin1: bool) -> bool:
    """A new entry git cannot hold: a link, a hard link (another name for a file of the case, as
    `cp -al` or another user makes), a FIFO; False when ``step`` makes none of them."""
    kind = next((k for k in ("hardlink", "link", "fifo") if k in step), None)
    if kind is None:
        return False
    target = _fs_path(case, step[kind], latin1)
    os.makedirs(os.path.dirname(target), exist_ok=True)
    if kind == "hardlink":
        os.link(_fs_path(case, step["to"], latin1), target)
    elif kind == "link":
        os.symlink(step["to"], target)
    else:
        os.mkfifo(target)
    return True


def _setup(case: Path, steps: list[dict[str, Any]]) -> None:
    """What git cannot hold (links, FIFOs, names that are not UTF-8, large or binary files, modes),
    and git itself where a case is about what a commit holds."""
    for step in steps:
        latin1 = bool(step.get("latin1"))
        if _make(case, step, latin1):
            continue
        if "edit" in step:
            _edit(case, step)
        elif "chmod" in step:  # a folder others can write (a shared runs folder), by mode
            os.chmod(_fs_path(case, step["chmod"], latin1), int(str(step["mode"]), 0))
        elif "remove" in step:  # a file a command wrote, to be replaced by a later step
            os.unlink(_fs_path(case, step["remove"], latin1))
        elif "mkdir" in step:
            os.makedirs(_fs_path(case, step["mkdir"], latin1), exist_ok=True)
        elif "git" in step:  # what a pull request commits, in a repository of the project's own
            subprocess.run(
                ["git", "-C", str(case / "project"), *step["git"]], check=True, capture_output=True
            )
        elif "write" in step:
            _write(case, step, latin1)
        elif "exists" in step or "own" in step:
            _holds(case, step, latin1)
        else:
            raise AssertionError(f"unknown setup step {step}")


def _holds(case: Path, step: dict[str, Any], latin1: bool) -> None:
    """What a command left, checked between commands: ``exists``, an entry it must have left in
    place (a link, a hard link); ``own``, a lock file `run` holds: this user's, writable by nobody
    else, one name."""
    if "exists" in step:
        assert os.path.lexists(_fs_path(case, step["exists"], latin1)), step
        return
    info = os.lstat(_fs_path(case, step["own"], latin1))
    assert stat.S_ISREG(info.st_mode) and info.st_uid == os.geteuid(), (step, info)
    assert not info.st_mode & 0o022 and info.st_nlink == 1, (step, oct(info.st_mode), info.st_nlink)


def _snapshot(root: Path) -> dict[bytes, tuple[str, bytes, int]]:
    """Every entry under ``root``, links never followed: kind, content or target, mode."""
    out: dict[bytes, tuple[str, bytes, int]] = {}
    for folder, dirs, files in os.walk(os.fsencode(root)):
        for name in dirs + files:
            p = os.path.join(folder, name)
            st = os.lstat(p)
            if stat.S_ISLNK(st.st_mode):
                out[p] = ("link", os.readlink(p), 0)
            elif stat.S_ISREG(st.st_mode):
                with open(p, "rb") as fh:
                    out[p] = ("file", fh.read(), stat.S_IMODE(st.st_mode))
            else:
                out[p] = ("other", b"", st.st_mode)
    return out


def _within(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip(os.sep) + os.sep)


def _trespasses(log: Path, outside: str, project: str) -> list[str]:
    """What the audit log shows was read outside: files under ``outside`` opened (a final link
    refused by O_NOFOLLOW aside), folders above or beside the project listed, canaries imported."""
    found = []
    nofollow = getattr(os, "O_NOFOLLOW", 0)
    # the command has ended, so the tree no longer changes: each folder is resolved once (a command
    # logs hundreds of opens, most in a few folders; realpath costs an lstat per component)
    folder_of = functools.cache(os.path.realpath)
    for text in log.read_text(encoding="ascii").splitlines():
        rec = json.loads(text)
        if rec["e"] == "import":
            if rec["p"].partition(".")[0] in CANARY_MODULES:
                found.append(f"imported {rec['p']}")
            continue
        if rec["e"] not in ("open", "os.listdir", "os.scandir"):
            continue  # a change (rename, mkdir...): what readers may change is _reader_writes's
        if rec["p"].startswith(("/dev/fd/", "/proc/self/fd/")):
            continue  # a file the command holds open: its open was logged (and checked) already
        path = os.path.join(rec["cwd"], rec["p"]) if rec["cwd"] else rec["p"]
        parent = folder_of(os.path.dirname(path) or ".")
        last = os.path.basename(path)
        joined = os.path.join(parent, last)
        link = os.path.islink(joined)
        if rec["e"] == "open" and rec["f"] & nofollow and link:
            continue  # refused: O_NOFOLLOW never opens a final link
        # in a resolved folder, only a final link (or `.`, `..`) resolves to another path
        real = os.path.realpath(joined) if link or last in ("", ".", "..") else joined
        if rec["e"] != "open" and real == os.path.join(outside, "pylib"):
            continue  # the import system lists every folder on sys.path
        if _within(real, outside):
            found.append(f"{rec['e']} {rec['p']!r} -> {real}")
        elif rec["e"] != "open" and _within(project, real) and real != project:  # a walk above the project
            found.append(f"{rec['e']} {rec['p']!r}: a folder above the project")
    return found


_WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND
_ATOMIC_TEMP = re.compile(r"(^|/)\.sweepgen-\d+-\d+\.tmp$")  # fs/atomic.py's temporary files
_MPL_CACHE = re.compile(r"^/.*/\.(cache|config)/matplotlib(/|$)")  # matplotlib's own, in the home


def _reader_writes(log: Path, command: str) -> list[str]:
    """What a reading command (`status`, `check`; `report` but for its own outputs) created, wrote,
    renamed, removed or changed: `status` and `check` nothing at all (they read shared runs folders
    and pull requests); `report` only its output files, each written to a temporary file of its
    own and renamed into place, an earlier report's files it did not write again removed, and the
    folders they go in (its purpose; matplotlib keeps its font cache in the person's home)."""
    if command not in ("status", "check", "report"):
        return []
    found = []
    for text in log.read_text(encoding="ascii").splitlines():
        rec = json.loads(text)
        if rec["e"] in ("os.listdir", "os.scandir", "import") or (
            rec["e"] == "open" and not rec["f"] & _WRITE_FLAGS
        ):
            continue
        own = rec["e"] in ("open", "os.rename") and _ATOMIC_TEMP.search(str(rec["p"]))
        # an earlier report's file this one did not write (make._remove_stale): removed by its name
        own = own or (rec["e"] == "os.remove" and os.path.basename(str(rec["p"])) in filenames.REPORT_FILES)
        if command == "report" and (own or rec["e"] == "os.mkdir" or _MPL_CACHE.match(str(rec["p"]))):
            continue
        found.append(f"{rec['e']} {rec['p']!r}")
    return found


def test_corpus_covers_every_class():
    classes = {_case(name).get("class") for name in NAMES}
    assert {"code", "write", "read", "bound", "escape", "crash"} <= classes, classes
    assert len(NAMES) >= 30


def _param(name: str) -> Any:
    """A case as a test, with the marks its ``marks:`` names (``plot``: a case about what a library
    of the plot extra reads runs in the lane that has it, never as a no-op without it)."""
    return pytest.param(name, marks=[getattr(pytest.mark, m) for m in _case(name).get("marks", [])])


def _base_env() -> dict[str, str]:
    """The environment of every command, but for a case's own: this checkout's code, C.UTF-8."""
    env = {k: v for k, v in os.environ.items() if k not in ("CI", "GITHUB_ACTIONS", "LANG", "LC_ALL")}
    env.update(PYTHONPATH=str(ROOT), PYTHONDONTWRITEBYTECODE="1", LANG="C.UTF-8")
    return env


@pytest.fixture(scope="session")
def forkserver(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ForkServer]:
    server = ForkServer(tmp_path_factory.mktemp("forkserver"), _base_env(), _AUDIT, _REINIT)
    yield server
    server.close()


def _sweepgen(
    forkserver: ForkServer | None, args: list[str], project: str, env: dict[str, str], fd: int
) -> tuple[int, bytes, bytes]:
    """``python -m sweepgen ARGS`` under the audit hook, logging to ``fd``: a forked child, else
    (where the server refuses one, or without one) a fresh interpreter."""
    env = {**env, "HOSTILE_AUDIT_FD": str(fd)}
    forked = None if forkserver is None else forkserver.run(args, project, env, fd, BOUND * 2)
    if forked is not None:
        return forked  # type: ignore[no-any-return]
    done = subprocess.run(
        [sys.executable, "-c", _AUDIT, *args],
        cwd=project,
        env=env,
        pass_fds=(fd,),
        capture_output=True,
        timeout=BOUND * 2,
        check=False,
    )
    return done.returncode, done.stdout, done.stderr


@pytest.mark.parametrize("name", [_param(name) for name in NAMES])
def test_hostile_case(name: str, tmp_path: Path, forkserver: ForkServer):
    spec, case, env = _prepared(name, tmp_path / name)
    outside = os.path.realpath(case / "outside")
    project = os.path.realpath(case / "project")
    before = _snapshot(case / "outside")
    for command in spec["commands"]:
        if "args" not in command:  # a step between commands (a lock edited after a render)
            _setup(case, [command])
            continue
        args = [str(a) for a in command["args"]]
        log = tmp_path / "audit.log"
        with open(log, "wb") as fh:
            fd = fh.fileno()
            started = time.monotonic()
            code, stdout, stderr = _sweepgen(forkserver, args, project, env, fd)
            took = time.monotonic() - started
        out = (stdout + stderr).decode("utf-8", "replace")
        said = f"sweepgen {' '.join(args)} -> {code} in {took:.1f}s\n{out}"
        assert took < BOUND, said
        allowed = command.get("exit", [0, 1, 2])
        assert code in (allowed if isinstance(allowed, list) else [allowed]), said
        assert "Traceback" not in out and "internal error" not in out, said
        assert CANARY not in out, said
        assert not _RAW.search(out), said
        if "github" not in args:
            assert not _WORKFLOW.search(out), said
        for words in command.get("expect", []):
            assert words in out, said
        assert _trespasses(log, outside, project) == [], said
        assert _reader_writes(log, args[0]) == [], said
        assert _snapshot(case / "outside") == before, said


def _prepared(name: str, case: Path) -> tuple[dict[str, Any], Path, dict[str, str]]:
    """Case ``name`` made in ``case``: its spec, and the environment of its commands."""
    spec = _case(name)
    shutil.copytree(CASES / name, case, symlinks=True, ignore=shutil.ignore_patterns("case.yaml"))
    shutil.copytree(SHARED_OUTSIDE, case / "outside", dirs_exist_ok=True)
    (case / "project").mkdir(exist_ok=True)
    _setup(case, spec.get("setup") or [])
    outside = os.path.realpath(case / "outside")
    env = _base_env()
    # `site:` folders of the case stand for installed packages (beside the project, never in it)
    site = [str(case / folder) for folder in spec.get("site", [])]
    env.update(
        PYTHONPATH=os.pathsep.join([str(ROOT), *site, os.path.join(outside, "pylib")]),
        HOSTILE_MARKER=os.path.join(outside, "IMPORTED"),
    )
    env.update({k: str(v) for k, v in (spec.get("env") or {}).items()})
    return spec, case, env


def test_the_audit_log_is_read_through_every_link(tmp_path: Path):
    """The checker itself: a read outside is found however the path reached it (a link in the middle,
    a final link, `..`, relative to the command's folder), and what is no read is not one."""
    outside, project = tmp_path / "outside", tmp_path / "project"
    (outside / "pylib").mkdir(parents=True)
    (outside / "canary.txt").write_text(CANARY)
    (project / "sub").mkdir(parents=True)
    (project / "mid").symlink_to(outside)
    (project / "final").symlink_to(outside / "canary.txt")
    (project / "own.txt").write_text("x")
    nofollow = getattr(os, "O_NOFOLLOW", 0)
    records = [
        ("open", str(project / "mid" / "canary.txt"), 0, ""),  # a link in the middle
        ("open", "final", 0, str(project)),  # a final link, relative
        ("open", "final", nofollow, str(project)),  # refused by O_NOFOLLOW: no read
        ("open", "../../outside/canary.txt", 0, str(project / "sub")),  # `..` out of the project
        ("os.listdir", str(project / "sub" / ".." / ".."), 0, ""),  # a folder above the project
        ("os.listdir", "..", 0, str(project / "sub")),  # the project itself: no trespass
        ("os.scandir", str(project / "mid" / "pylib"), 0, ""),  # sys.path's folder: the import system
        ("open", str(project / "own.txt"), 0, ""),
        ("import", "hostile_canary.sub", 0, ""),
        ("import", "json", 0, ""),
    ]
    log = tmp_path / "audit.log"
    log.write_text("".join(json.dumps({"e": e, "p": p, "f": f, "cwd": c}) + "\n" for e, p, f, c in records))
    found = _trespasses(log, os.path.realpath(outside), os.path.realpath(project))
    assert len(found) == 5, found
    assert [f.split()[0] for f in found] == ["open", "open", "open", "os.listdir", "imported"], found
    assert "a folder above the project" in found[3] and found[4] == "imported hostile_canary.sub"


def _records(log: Path, case: Path) -> set[tuple[str, str, int, str]]:
    """The audit log's records, the case's folder written CASE (the two runs have one each), and
    a process's own numbers (in a temporary file's name, /proc/PID) written N."""
    root = os.path.realpath(case)
    out = set()
    for text in log.read_text(encoding="ascii").splitlines():
        rec = json.loads(text)
        path = str(rec["p"]).replace(root, "CASE")
        path = re.sub(
            r"^/proc/\d+/", "/proc/N/", re.sub(r"\.sweepgen-\d+-\d+\.tmp", ".sweepgen-N-N.tmp", path)
        )
        out.add((rec["e"], path, rec["f"], rec["cwd"].replace(root, "CASE")))
    return out


# a case of reads (a lock naming a module of the project) and one of runs (run, status, report, cancel)
COMPARED = ("lock_module_in_project", "run_state_link")


def _loading(rec: tuple[str, str, int, str], modules: set[str], folders: list[str]) -> bool:
    """Whether a record is the loading of a module: its import, when the server had loaded it (or
    tried to), or an open or listing in the interpreter's folders or this checkout (not the case's)."""
    event, path, _, cwd = rec
    if event == "import":
        return path in modules
    return not cwd and any(_within(path, folder) for folder in folders)


def _scan(
    rec: tuple[str, str, int, str], case: Path, path: list[str], modules: set[str], folders: list[str]
) -> bool:
    """Whether a record is the import system listing a sys.path folder or one of the loading's
    (PYTHONPATH's come before an installed sweepgen's: a fresh process lists them on its way to a
    module the server holds, a child on its way to one it does not)."""
    return rec[0] in ("os.listdir", "os.scandir") and (
        rec[1].replace("CASE", str(case)) in path or _loading(rec, modules, folders)
    )


def test_a_forked_command_is_audited_as_a_fresh_process_is(tmp_path: Path, forkserver: ForkServer):
    """The fork server is as strict as a fresh interpreter: corpus cases' commands (render, check,
    run, status, report, cancel) exit with the same status and print the same in a forked child, and
    the fresh process's audit log holds no record the child's misses but the loading of the modules
    the server had loaded already; the child's holds more only listings of sys.path's folders and
    the interpreter's (its import system starts afresh, under the hook) and the read of sweepgen's
    __init__, run again."""
    loaded = forkserver.loaded()
    modules = set(loaded["modules"])
    case_free = [p for p in loaded["path"] if p and not _within(p, str(tmp_path))]
    folders = sorted({str(ROOT), sys.prefix, sys.base_prefix, *case_free})
    compared: list[list[str]] = []
    refused = len(forkserver.refused)  # by earlier tests of this worker (a case's own locale)
    for name in COMPARED:
        spec, fresh_case, env = _prepared(name, tmp_path / "fresh" / name)
        forked_case = _prepared(name, tmp_path / "forked" / name)[1]
        forked_env = {k: v.replace(str(fresh_case), str(forked_case)) for k, v in env.items()}
        for command in spec["commands"]:
            if "args" not in command:
                _setup(fresh_case, [command])
                _setup(forked_case, [command])
                continue
            args = [str(a) for a in command["args"]]
            if args in compared:  # a case runs the same command again, on other files: once is enough
                continue
            compared.append(args)
            runs = []
            for case, server, environ in ((fresh_case, None, env), (forked_case, forkserver, forked_env)):
                log = tmp_path / "audit.log"
                with open(log, "wb") as fh:
                    code, out, err = _sweepgen(
                        server, args, os.path.realpath(case / "project"), environ, fh.fileno()
                    )
                said = (out + err).decode("utf-8", "replace").replace(os.path.realpath(case), "CASE")
                runs.append((code, re.sub(r"\d+", "N", said), _records(log, case)))
            (code, said, old), (forked_code, forked_said, new) = runs
            assert (forked_code, forked_said) == (code, said), args
            child_path = [*env["PYTHONPATH"].split(os.pathsep), *loaded["path"]]

            missed = sorted(
                r
                for r in old - new
                if not (_loading(r, modules, folders) or _scan(r, fresh_case, child_path, modules, folders))
            )
            assert missed == [], (args, missed)
            more = sorted(
                r
                for r in new - old
                if not _scan(r, fresh_case, child_path, modules, folders)
                and r[:2] != ("open", str(ROOT / "sweepgen" / "__init__.py"))
            )
            assert more == [], (args, more)
    assert forkserver.refused[refused:] == [], forkserver.refused[refused:]
    assert {a[0] for a in compared} >= {"render", "check", "run", "status", "report", "cancel"}, compared


def test_the_fork_server_refuses_what_a_child_could_not_be(tmp_path: Path, forkserver: ForkServer):
    """Run by a fresh interpreter instead: a command whose folder holds a module named like one the
    server loaded (a committed click.py: in a fresh process the folder is first on sys.path as
    sweepgen's package loads), or whose environment sets a locale (read as Python starts)."""
    (tmp_path / "click.py").write_text("import hostile_canary\n")
    other = tmp_path / "other"
    other.mkdir()
    env = {**_base_env(), "HOSTILE_MARKER": str(tmp_path / "IMPORTED")}
    with open(tmp_path / "audit.log", "wb") as fh:
        assert forkserver.run(["--help"], str(tmp_path), env, fh.fileno(), BOUND) is None
        assert "click.py may shadow a loaded module" in forkserver.refused[-1], forkserver.refused
        assert forkserver.run(["--help"], str(other), {**env, "LC_ALL": "C"}, fh.fileno(), BOUND) is None
        assert forkserver.refused[-1].endswith("environment: LC_ALL"), forkserver.refused
        code, out, _ = forkserver.run(["--help"], str(other), env, fh.fileno(), BOUND)
    assert code == 0 and b"Usage:" in out, out
