"""Runs started together that name one vLLM server: refused before any of them starts.

TRL's GRPO with ``use_vllm: true`` and ``vllm_mode: server`` sends its generation requests to the
``trl vllm-serve`` at ``vllm_server_base_url`` (else ``vllm_server_host``:``vllm_server_port``,
TRL's defaults ``0.0.0.0``:``8000``) and pushes its new weights there before it generates. The
server holds one set of weights: two runs at once on one server generate from each other's policy,
a wrong result that looks right, or hang in its weight-update group. A command that starts a server
per run on the config's port has the same fault: the second run's trainer finds the first one's
server already answering.

Local runs at once share the machine, so one address, loopback included, is one server. On Slurm
a loopback address names a server on each job's own node, so only another host shared by runs at
once is refused. A config without ``vllm_mode`` is not judged: TRL's default changed between
releases. A search checks each trial it renders against the trials still running (first_shared).

The command line's ``--vllm_server_host 10.0.0.5`` (``--use_vllm``, ``--vllm_mode server``, any of
the server's keys) is TRL's over every run's config: every run gets that value, so it is judged as
each run's (on_command_line); a value holding a placeholder filled per run is not known here, and
such a command is not judged.
"""

from __future__ import annotations

import urllib.parse
from collections.abc import Mapping, Sequence
from pathlib import Path
from types import MappingProxyType
from typing import Any

from sweepgen.errors import ConfigError
from sweepgen.run.core.base import RunTask
from sweepgen.run.start import command_overrides
from sweepgen.run.start.config_where import key_location, rendered

_LOOPBACK = {"localhost", "127.0.0.1", "0.0.0.0", "::1", "::"}  # 0.0.0.0: TRL's default
_DEFAULT_HOST, _DEFAULT_PORT = "0.0.0.0", 8000  # TRL's GRPOConfig defaults
_HINT = (
    "start one `trl vllm-serve` per run at once and give each run its own port, e.g. an axis or "
    "derived: {vllm_server_port: ...} in the spec, or run them one at a time (--jobs 1)"
)


_NO_FLAGS: Mapping[str, Any] = MappingProxyType({})
_KEYS = ("use_vllm", "vllm_mode", "vllm_server_base_url", "vllm_server_host", "vllm_server_port")


def on_command_line(flags: Mapping[str, str | None]) -> dict[str, Any] | None:
    """The server keys the command's ``flags`` (command_overrides.flag_values) set, as a config
    would hold them; None when one of them is filled per run (its server is not known here)."""
    found: dict[str, Any] = {}
    for key in (k for k in _KEYS if k in flags):
        value = flags[key]
        if value is not None and command_overrides.filled_per_run(value):
            return None
        found[key] = _as_config(key, value)
    return found


def _as_config(key: str, value: str | None) -> Any:
    if key == "use_vllm":
        return command_overrides.flag_bool(value)
    if key == "vllm_server_port" and value is not None and value.isdigit():
        return int(value)
    return value


def check(
    sweep_dir: Path,
    tasks: Sequence[RunTask],
    at_once: int,
    executor: str,
    flags: Mapping[str, Any] | None = _NO_FLAGS,
) -> None:
    """Exit 2 when two of ``tasks`` (of the sweep in ``sweep_dir``), ``at_once`` of which may run
    together, name one vLLM server (``flags``: the server keys the command line sets)."""
    shared = first_shared(sweep_dir, [], tasks, at_once, executor, flags)
    if shared is not None:
        raise shared


def first_shared(
    sweep_dir: Path,
    running: Sequence[RunTask],
    new: Sequence[RunTask],
    at_once: int,
    executor: str,
    flags: Mapping[str, Any] | None = _NO_FLAGS,
) -> ConfigError | None:
    """The refusal of the first of ``new`` that names the vLLM server of one of ``running`` or of
    an earlier one of ``new``, when ``at_once`` runs may go together; None when none does."""
    if at_once < 2:
        return None
    configs = [(t, rendered(sweep_dir, t)) for t in [*running, *new]]
    return shared_among(sweep_dir, configs, at_once, executor, flags)


def shared_among(
    sweep_dir: Path,
    configs: Sequence[tuple[RunTask, Mapping[str, Any]]],
    at_once: int,
    executor: str,
    flags: Mapping[str, Any] | None = _NO_FLAGS,
) -> ConfigError | None:
    """The refusal of the first run of ``configs`` (each with its rendered config, in order) that
    names the vLLM server of an earlier one, when ``at_once`` runs may go together; ``flags``: the
    server keys the command line sets (on_command_line), TRL's over each config; None: not known."""
    if at_once < 2 or flags is None:
        return None
    seen: dict[str, RunTask] = {}
    for task, config in configs:
        address = server_of({**config, **flags})
        if address is None or (executor != "local" and _host(address) in _LOOPBACK):
            continue
        other = seen.setdefault(address, task)
        if other is not task:
            return _refusal(sweep_dir, (other, task), address, at_once, {**config, **flags}, flags)
    return None


def _refusal(
    sweep_dir: Path,
    runs: tuple[RunTask, RunTask],
    address: str,
    at_once: int,
    config: Mapping[str, Any],
    flags: Mapping[str, Any],
) -> ConfigError:
    key = _key(config)
    said = " ".join(f"--{k}" if v is True else f"--{k} {v}" for k, v in flags.items())
    where = f"; --command sets `{said}` for every run" if flags else ""
    return ConfigError(
        f"runs {runs[0].name!r} and {runs[1].name!r} would share the vLLM server {address} "
        f"(use_vllm, vllm_mode: server{where}) while up to {at_once} runs go at once: the server "
        "holds one policy's weights, so each run would generate from the other's",
        location=None if key in flags else key_location(sweep_dir, runs[1], key),
        key=None if key in flags else key,
        hint=_HINT if not flags else f"remove `{said}` from --command and {_HINT}",
    )


def server_of(config: Mapping[str, Any]) -> str | None:
    """The address of the vLLM server a TRL config generates with (``http://host:port``, loopback
    spelled ``localhost``); None when it names none."""
    if config.get("use_vllm") is not True or config.get("vllm_mode") != "server":
        return None
    base_url = config.get("vllm_server_base_url")
    if isinstance(base_url, str) and base_url.strip():
        return _from_url(base_url.strip())
    host = str(config.get("vllm_server_host", _DEFAULT_HOST)).lower()
    return f"http://{_named(host)}:{config.get('vllm_server_port', _DEFAULT_PORT)}"


def _from_url(url: str) -> str:
    """``http://127.0.0.1:8000/`` as ``http://localhost:8000``; a URL that does not parse, as written."""
    try:
        parts = urllib.parse.urlsplit(url)
        port = parts.port or (443 if parts.scheme == "https" else 80)
    except ValueError:
        return url.rstrip("/").lower()
    return f"{parts.scheme.lower()}://{_named(parts.hostname or '')}:{port}{parts.path.rstrip('/')}"


def _named(host: str) -> str:
    return "localhost" if host.strip("[]") in _LOOPBACK else host


def _host(address: str) -> str:
    """The host of an address ``server_of`` gives."""
    try:
        return urllib.parse.urlsplit(address).hostname or ""
    except ValueError:
        return ""


def _key(config: Mapping[str, Any]) -> str:
    base_url = config.get("vllm_server_base_url")
    return "vllm_server_base_url" if isinstance(base_url, str) and base_url.strip() else "vllm_mode"
