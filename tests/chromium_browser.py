"""Headless Chromium for the tests marked ``browser``: Debian's ``chromium`` driven by playwright.

tests/conftest.py registers this module as a plugin. The session-scoped ``chromium`` fixture finds
the system browser, or installs it with ci/browser/chromium_up.sh (apt-get, as the Slurm harness
installs slurm-wlm), and launches it headless through playwright's ``executable_path``: playwright
never downloads a browser of its own.

Skips only when this machine cannot have the browser (not Linux, or chromium missing and no root or
no apt-get to install it), and says why. With the environment variable CI set, even that fails: CI
must run these tests. An install or a launch that fails on a machine that could run it always fails.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
UP = ROOT / "ci" / "browser" / "chromium_up.sh"
CANDIDATES = ("/usr/bin/chromium", "/usr/bin/chromium-browser")
INSTALL_TIMEOUT_S = 900


def _installed() -> str | None:
    return next((c for c in CANDIDATES if os.access(c, os.X_OK)), None)


def cannot_run_reason() -> str | None:
    if not sys.platform.startswith("linux"):
        return "the tests drive Debian's chromium, on Linux"
    if _installed():
        return None
    if os.geteuid() != 0:
        return "chromium is not installed and this is not root (ci/browser/chromium_up.sh uses apt-get)"
    if shutil.which("apt-get") is None:
        return "chromium is not installed and there is no apt-get to install it"
    return None


@pytest.fixture(scope="session")
def chromium():
    """A launched headless playwright Browser on the system Chromium."""
    reason = cannot_run_reason()
    if reason:
        if os.environ.get("CI"):
            pytest.fail(f"CI is set, so the browser tests must run, but {reason}")
        pytest.skip(f"no browser: {reason}")
    path = _installed()
    if path is None:
        proc = subprocess.run(["bash", str(UP)], capture_output=True, text=True, timeout=INSTALL_TIMEOUT_S)
        if proc.returncode != 0:
            pytest.fail(f"ci/browser/chromium_up.sh failed (exit {proc.returncode}):\n{proc.stderr[-4000:]}")
        path = proc.stdout.strip().splitlines()[-1]
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        # --no-sandbox: Chromium's sandbox refuses to start as root (CI runs as root)
        browser = pw.chromium.launch(executable_path=path, headless=True, args=["--no-sandbox"])
        try:
            yield browser
        finally:
            browser.close()
