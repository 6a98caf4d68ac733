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
"""

from __future__ import annotations

import urllib.parse
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from sweepgen.errors import ConfigError
from sweepgen.run.core.base import RunTask
from sweepgen.run.core.config_where import key_location, rendered

_LOOPBACK = {"localhost", "127.0.0.1", "0.0.0.0", "::1", "::"}  # 0.0.0.0: TRL's default
_DEFAULT_HOST, _DEFAULT_PORT = "0.0.0.0", 8000  # TRL's GRPOConfig defaults
_HINT = (
    "start one `trl vllm-serve` per run at once and give each run its own port, e.g. an axis or "
    "derived: {vllm_server_port: ...} in the spec, or run them one at a time (--jobs 1)"
)


def check(sweep_dir: Path, tasks: Sequence[RunTask], at_once: int, executor: str) -> None:
    """Exit 2 when two of ``tasks`` (of the sweep in ``sweep_dir``), ``at_once`` of which may run
    together, name one vLLM server."""
    shared = first_shared(sweep_dir, [], tasks, at_once, executor)
    if shared is not None:
        raise shared


def first_shared(
    sweep_dir: Path, running: Sequence[RunTask], new: Sequence[RunTask], at_once: int, executor: str
) -> ConfigError | None:
    """The refusal of the first of ``new`` that names the vLLM server of one of ``running`` or of
    an earlier one of ``new``, when ``at_once`` runs may go together; None when none does."""
    if at_once < 2:
        return None
    return shared_among(sweep_dir, [(t, rendered(sweep_dir, t)) for t in [*running, *new]], at_once, executor)


def shared_among(
    sweep_dir: Path, configs: Sequence[tuple[RunTask, Mapping[str, Any]]], at_once: int, executor: str
) -> ConfigError | None:
    """The refusal of the first run of ``configs`` (each with its rendered config, in order) that
    names the vLLM server of an earlier one, when ``at_once`` runs may go together."""
    if at_once < 2:
        return None
    seen: dict[str, RunTask] = {}
    for task, config in configs:
        address = server_of(config)
        if address is None or (executor != "local" and _host(address) in _LOOPBACK):
            continue
        other = seen.setdefault(address, task)
        if other is not task:
            return ConfigError(
                f"runs {other.name!r} and {task.name!r} would share the vLLM server {address} "
                f"(use_vllm, vllm_mode: server) while up to {at_once} runs go at once: the server "
                "holds one policy's weights, so each run would generate from the other's",
                location=key_location(sweep_dir, task, _key(config)),
                key=_key(config),
                hint=_HINT,
            )
    return None


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
