"""A case-insensitive file system for the tests that need one, as macOS, Windows and exFAT drives are.

tests/conftest.py registers this module as a plugin. The ``casefold_dir`` fixture makes an exFAT
image in the test's temporary folder, attaches it to a loop device and mounts it through FUSE
(``exfat-fuse``: no kernel module needed, where the kernel lacks vfat), installing the tools with
ci/casefold/exfat_up.sh (apt-get) when they are missing; it unmounts and detaches at the end.

Skips only where this machine cannot mount one (not Linux, not root, no /dev/fuse or loop devices,
tools missing and no apt-get), and says why. With the environment variable CI set, even that
fails: CI must run these tests. A mount that fails on a machine that could mount always fails.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
UP = ROOT / "ci" / "casefold" / "exfat_up.sh"
TOOLS = ("mkfs.exfat", "mount.exfat-fuse", "losetup")
IMAGE_BYTES = 64 << 20


def cannot_mount_reason() -> str | None:
    if not sys.platform.startswith("linux"):
        return "the mount is made with Linux loop devices and FUSE"
    if os.geteuid() != 0:
        return "mounting an exFAT image needs root (loop device, FUSE mount)"
    if not os.path.exists("/dev/fuse"):
        return "no /dev/fuse on this machine"
    if not os.path.exists("/dev/loop-control"):
        return "no loop devices on this machine (/dev/loop-control)"
    missing = [t for t in TOOLS if shutil.which(t) is None]
    if missing and shutil.which("apt-get") is None:
        return f"{', '.join(missing)} missing and there is no apt-get to install them"
    return None


def _run(*argv: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run(list(argv), capture_output=True, text=True, timeout=timeout)
    if proc.returncode != 0:
        pytest.fail(f"{' '.join(argv)} failed (exit {proc.returncode}):\n{proc.stderr[-4000:]}")
    return proc


@pytest.fixture
def casefold_dir(tmp_path: Path) -> Iterator[Path]:
    """An empty folder on a freshly mounted case-insensitive (exFAT) file system."""
    reason = cannot_mount_reason()
    if reason:
        if os.environ.get("CI"):
            pytest.fail(f"CI is set, so the case-insensitive file-system tests must run, but {reason}")
        pytest.skip(f"no case-insensitive mount: {reason}")
    if any(shutil.which(t) is None for t in TOOLS):
        _run("bash", str(UP), timeout=900)
    image, mount = tmp_path / "exfat.img", tmp_path / "mnt"
    mount.mkdir()
    with open(image, "wb") as fh:
        fh.truncate(IMAGE_BYTES)
    _run("mkfs.exfat", str(image))
    loop = _run("losetup", "--find", "--show", str(image)).stdout.strip()
    try:
        _run("mount.exfat-fuse", loop, str(mount))
        try:
            (mount / "Probe").write_text("x")  # the point of it: one name in any case
            assert (mount / "PROBE").read_text() == "x", "the exFAT mount is not case-insensitive"
            (mount / "Probe").unlink()
            yield mount
        finally:
            _unmount(mount)
    finally:
        subprocess.run(["losetup", "--detach", loop], capture_output=True, timeout=60)


def _unmount(mount: Path) -> None:
    # a process that just ended may still hold the mount busy for a moment: retry until a deadline
    deadline = time.monotonic() + 60
    while True:
        proc = subprocess.run(["umount", str(mount)], capture_output=True, text=True, timeout=60)
        if proc.returncode == 0 or not os.path.ismount(mount):
            return
        if time.monotonic() > deadline:
            pytest.fail(f"umount {mount} failed: {proc.stderr}")
        time.sleep(0.2)
