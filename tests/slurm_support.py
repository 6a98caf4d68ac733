"""Helpers of the tests on the real Slurm: drive the CLI, read `status --format json`, wait for it."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from typing import Any

from click.testing import CliRunner, Result

from sweepgen.cli import main


def cli(*args: str) -> Result:
    return CliRunner().invoke(main, list(args))


def status_json(sweep_dir: str) -> dict[str, dict[str, Any]]:
    result = cli("status", sweep_dir, "--format", "json")
    assert result.exit_code in (0, 1), result.output
    return {row["run"]: row for row in json.loads(result.stdout)}


def wait_until(
    sweep_dir: str, done: Callable[[dict[str, dict[str, Any]]], bool], timeout: float, what: str
) -> dict[str, dict[str, Any]]:
    deadline = time.monotonic() + timeout
    while True:
        rows = status_json(sweep_dir)
        if done(rows):
            return rows
        assert time.monotonic() < deadline, f"timed out waiting for {what}: {rows}"
        time.sleep(1)
