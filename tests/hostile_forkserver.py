"""A process per command without Python's start-up per command, for tests/test_hostile_corpus.py.

The corpus runs hundreds of ``python -m sweepgen`` commands, each under an audit hook; most of each
was the interpreter starting and sweepgen's modules loading (pydantic models, jinja2: ~0.5 s of CPU
for a `render`). ``ForkServer`` starts one interpreter per test worker that loads sweepgen as
``python -m sweepgen`` loads it (the working folder first on sys.path, ``-m`` as argv[0],
``sweepgen.__main__`` as ``__main__`` while sweepgen.cli loads) and then forks a child per command.
The child takes the command's stdin, stdout, stderr and audit log, folder, environment and the
sys.path a fresh ``python -c`` would have, installs the same audit hook, runs sweepgen's
``__init__`` once more (its guard takes the working folder off sys.path, as it does as the program
starts), and then the same ``runpy.run_module("sweepgen", ...)`` as the fresh process, ending as an
interpreter ends (atexit, threads, the exit status of an uncaught SystemExit or exception).

What a forked child cannot be is refused, and the caller then starts a fresh process as before:
- an environment that differs from the server's in a variable Python reads as it starts (PYTHON*
  but PYTHONPATH, LANG, LC_*, TZ) or that a module read as the server loaded it (os.environ is
  watched then); HOME, the caches' folders and the like may differ, and the child has the command's;
- a sys.path entry of the command's that is not the server's (the project, a case's ``site:``
  folders, ``outside/pylib``) and that is no folder, or holds a module or package named like one
  the server has loaded or tried to (a committed ``click.py``, a ``sweepgen/``, an ``encodings/``), or a
  ``sitecustomize``, ``usercustomize`` or ``.pth``: in a fresh process that one might be imported
  instead, which a loaded module would hide.
Modules not loaded in the server are imported by the child itself, through the command's sys.path,
under the hook, as a fresh process imports them. What the hook of a forked command no longer sees is
the import of the modules the server loaded, from this checkout and the interpreter's own folders
(tests/test_hostile_corpus.py's test_a_forked_command_is_audited_as_a_fresh_process_is holds the
logs of both to that).
"""

from __future__ import annotations

import json
import os
import selectors
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

# the modules the server loads: every command's module, and what render and check load (the spec
# model, the template sandbox); none of them loads a plot library, torch or Optuna as it is imported
# (the server refuses to start if one is: mpl_safe decides by whether matplotlib is loaded)
PRELOAD = (
    "sweepgen.cli.render_cmd",
    "sweepgen.cli.check_cmd",
    "sweepgen.cli.diff_cmd",
    "sweepgen.cli.list_cmd",
    "sweepgen.cli.schema_cmd",
    "sweepgen.cli.run_cmd",
    "sweepgen.cli.status_cmd",
    "sweepgen.cli.report_cmd",
    "sweepgen.cli.init_cmd",
    "sweepgen.compile.api",
)
NOT_PRELOADED = (
    "matplotlib",
    "torch",
    "trl",
    "transformers",
    "optuna",
    "numpy",
    "scipy",
    "tensorboard",
    "wandb",
)
# the variables a forked child may have other than the server's; any other may differ too unless
# Python reads it as it starts (PYTHON*, the locale's, TZ) or a module read it as the server loaded
PER_COMMAND = frozenset({"PYTHONPATH", "HOSTILE_MARKER", "HOSTILE_AUDIT_FD"})
STARTUP_NAMES = frozenset({"sitecustomize", "usercustomize"})

# The server: argv[1] is its end of a SOCK_SEQPACKET pair. {child} is the code the child runs at the
# top level of this script (the hook and run of the corpus's fresh processes), so that it ends as
# `python -c` ends.
SERVER = r"""
import importlib, importlib.machinery, json, os, site, socket, sys, types
_sock = socket.socket(fileno=int(sys.argv[1]))
_given = [os.path.abspath(p) for p in os.environ["PYTHONPATH"].split(os.pathsep)]
assert sys.path[1:1 + len(_given)] == _given, (sys.path, _given)
_rest = sys.path[1 + len(_given):]  # the interpreter's own: the same for every PYTHONPATH
_main = sys.modules["__main__"]
_program = types.ModuleType("__main__")
_program.__spec__ = importlib.machinery.ModuleSpec("sweepgen.__main__", None)
sys.modules["__main__"] = _program
sys.path[0] = os.getcwd()
sys.argv = ["-m"]
_read = set()  # the variables read as the modules load: a child's must be the server's


class _Watched(type(os.environ)):
    def __getitem__(self, key):
        _read.add(key)
        return super().__getitem__(key)

    def __contains__(self, key):
        _read.add(key)
        return super().__contains__(key)


_tried = set()  # every import tried as the modules load, found or not (`msvcrt` where there is none)
_loading = [True]
sys.addaudithook(lambda event, args: _loading[0] and event == "import" and _tried.add(args[0]))
os.environ.__class__ = _Watched
for _name in {preload!r}:
    importlib.import_module(_name)
os.environ.__class__ = _Watched.__mro__[1]
_loading[0] = False
sys.modules["__main__"] = _main
assert not [m for m in {not_preloaded!r} if m in sys.modules], sorted(sys.modules)
_env = dict(os.environ)


def _path(env):
    # what a fresh `python -c` has: "" first (the corpus's hook code makes it the folder), then
    # PYTHONPATH and the interpreter's own, made absolute and without repeats as site.py does
    out, seen = [os.getcwd()], set()
    for entry in [*env.get("PYTHONPATH", "").split(os.pathsep), *_rest]:
        full = os.path.abspath(entry) if entry else os.getcwd()
        if full not in seen:
            seen.add(full)
            out.append(full)
    return out


def _startup(key):
    # read as Python starts (sys.path, encodings, the locale, the time zone as `time` loads), or
    # HOME where a user site folder is on sys.path
    return key.startswith(("PYTHON", "LC_")) or key in ("LANG", "LANGUAGE", "TZ") or (
        key == "HOME" and site.ENABLE_USER_SITE
    )


def _why_not(req):
    env = req["env"]
    differ = {{k for k in set(env) | set(_env) if env.get(k) != _env.get(k)}} - {per_command!r}
    # sysconfig reads HOME as it loads only to know whether a user base exists: any set HOME has one
    home_same = bool(env.get("HOME")) == bool(_env.get("HOME"))
    bad = sorted(k for k in differ if _startup(k) or (k in _read and not (k == "HOME" and home_same)))
    if bad:
        return "environment: " + ", ".join(bad)
    os.chdir(req["cwd"])
    # a name tried and not found as the server loaded (`msvcrt`) would be tried again in a fresh process
    loaded = {{m.partition(".")[0] for m in (*sys.modules, *_tried)}}
    for entry in _path(env):
        if entry in sys.path:
            continue
        if not os.path.isdir(entry):
            return "not a folder: " + entry
        for name in os.listdir(entry):
            top = name.partition(".")[0]
            if top in loaded or top in {startup!r} or name.endswith(".pth"):
                return f"{{os.path.join(entry, name)}} may shadow a loaded module"
    return None


def _serve():
    while True:
        msg, fds, _, _ = socket.recv_fds(_sock, 1 << 20, 4)
        if not msg:
            os._exit(0)
        req = json.loads(msg)
        if req.get("loaded"):  # the modules the server loaded or tried to, and its sys.path
            loaded = sorted(_tried | set(sys.modules))
            _sock.send(json.dumps({{"modules": loaded, "path": sys.path}}).encode())
            continue
        why = _why_not(req)
        if why is None:
            sys.stdout.flush()
            sys.stderr.flush()
            pid = os.fork()
            if pid == 0:
                _sock.close()
                return req, fds
        for fd in fds:
            os.close(fd)
        if why is not None:
            _sock.send(json.dumps({{"refused": why}}).encode())
            continue
        _sock.send(json.dumps({{"pid": pid}}).encode())
        _sock.send(json.dumps({{"status": os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])}}).encode())


_req, _fds = _serve()
for _to, _fd in zip((0, 1, 2), _fds):
    os.dup2(_fd, _to)
    os.close(_fd)
os.environ.clear()
os.environ.update(_req["env"], HOSTILE_AUDIT_FD=str(_fds[3]))
sys.path[:] = _path(_req["env"])
sys.path_importer_cache.clear()
importlib.invalidate_caches()
sys.argv = ["-c", *_req["args"]]
del _req, _fds, _to, _fd, _main, _program, _name
exec({child!r})
"""


class ForkServer:
    """One server (a process of its own), forking a child per command; ``close`` ends it."""

    def __init__(self, cwd: Path, env: dict[str, str], child: str, reinit: str) -> None:
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        self._sock = ours
        code = SERVER.format(
            preload=PRELOAD,
            not_preloaded=NOT_PRELOADED,
            per_command=PER_COMMAND,
            startup=STARTUP_NAMES,
            child=child.replace("#REINIT\n", reinit),
        )
        self._proc = subprocess.Popen(
            [sys.executable, "-c", code, str(theirs.fileno())],
            cwd=cwd,
            env=env,
            pass_fds=(theirs.fileno(),),
            # the streams the children get, of the same kinds (sys.stdout and the rest are made as
            # the server starts, and remember whether their file was seekable): the test's stdin,
            # pipes (nothing is written to the server's own while it lives; stderr is read if it dies)
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        theirs.close()
        self.refused: list[str] = []

    def run(self, args: list[str], cwd: str, env: dict[str, str], audit_fd: int, timeout: float) -> Any:
        """(exit status, stdout, stderr) of ``args`` in a forked child, as subprocess.run gives them;
        None when the server refuses it (the caller starts a fresh process)."""
        r_out, w_out = os.pipe()
        r_err, w_err = os.pipe()
        req = {"args": args, "cwd": cwd, "env": {k: v for k, v in env.items() if k != "HOSTILE_AUDIT_FD"}}
        try:
            socket.send_fds(self._sock, [json.dumps(req).encode()], [0, w_out, w_err, audit_fd])
        finally:
            os.close(w_out)
            os.close(w_err)
        self._sock.settimeout(timeout)
        reply = self._reply()
        if "refused" in reply:
            os.close(r_out)
            os.close(r_err)
            self.refused.append(f"{args}: {reply['refused']}")
            return None
        deadline = time.monotonic() + timeout
        out, err = _read_both(r_out, r_err, deadline)
        if out is None:
            os.kill(reply["pid"], signal.SIGKILL)
            self._reply()
            raise subprocess.TimeoutExpired(args, timeout)
        self._sock.settimeout(max(deadline - time.monotonic(), 1.0))
        return self._reply()["status"], out, err

    def loaded(self) -> dict[str, Any]:
        """``modules``: the modules the server has loaded or tried to as it loaded sweepgen;
        ``path``: its sys.path."""
        self._sock.send(json.dumps({"loaded": True}).encode())
        self._sock.settimeout(60)
        return self._reply()

    def _reply(self) -> dict[str, Any]:
        msg = self._sock.recv(1 << 16)
        assert msg, "the fork server ended:\n" + self._proc.communicate()[1].decode(errors="replace")
        reply: dict[str, Any] = json.loads(msg)
        return reply

    def close(self) -> None:
        self._sock.close()  # the server reads the end and exits
        try:
            self._proc.wait(timeout=30)
        finally:
            if self._proc.poll() is None:
                self._proc.kill()
            self._proc.communicate()


def _read_both(r_out: int, r_err: int, deadline: float) -> tuple[bytes | None, bytes]:
    """All of both pipes, to the end (every writer closed, as subprocess.run reads them); None for
    stdout when ``deadline`` passed first."""
    chunks: dict[int, list[bytes]] = {r_out: [], r_err: []}
    with selectors.DefaultSelector() as sel:
        for fd in chunks:
            sel.register(fd, selectors.EVENT_READ)
        try:
            while sel.get_map():
                left = deadline - time.monotonic()
                if left <= 0:
                    return None, b""
                for key, _ in sel.select(left):
                    data = os.read(key.fd, 1 << 16)
                    if data:
                        chunks[key.fd].append(data)
                    else:
                        sel.unregister(key.fd)
        finally:
            os.close(r_out)
            os.close(r_err)
    return b"".join(chunks[r_out]), b"".join(chunks[r_err])
