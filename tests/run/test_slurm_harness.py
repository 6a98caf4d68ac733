"""When the Slurm test fixture (tests/slurm_cluster.py) may skip: only when this machine cannot run
the daemons, and then with a reason that says which requirement is missing."""

from __future__ import annotations

import os
import sys

import pytest
import slurm_cluster


def test_not_root_is_a_reason(monkeypatch):
    monkeypatch.setattr(sys, "platform", "linux")
    monkeypatch.setattr(os, "geteuid", lambda: 1000)
    assert "not root" in slurm_cluster.cannot_run_reason()


def test_missing_slurm_without_apt_is_a_reason(monkeypatch, tmp_path):
    monkeypatch.setattr(sys, "platform", "linux")
    monkeypatch.setattr(os, "geteuid", lambda: 0)
    monkeypatch.setattr(slurm_cluster.shutil, "which", lambda name, path=None: None)
    reason = slurm_cluster.cannot_run_reason()
    assert "no apt-get" in reason and "slurmctld" in reason


def test_missing_slurm_with_apt_is_not_a_reason(monkeypatch):
    monkeypatch.setattr(sys, "platform", "linux")
    monkeypatch.setattr(os, "geteuid", lambda: 0)
    monkeypatch.setattr(
        slurm_cluster.shutil,
        "which",
        lambda name, path=None: "/usr/bin/apt-get" if name == "apt-get" else None,
    )
    assert slurm_cluster.cannot_run_reason() is None  # slurm_up.sh installs the packages


def test_other_systems_are_a_reason(monkeypatch):
    monkeypatch.setattr(sys, "platform", "darwin")
    assert "Linux" in slurm_cluster.cannot_run_reason()


@pytest.mark.skipif(not sys.platform.startswith("linux") or os.geteuid() != 0, reason="needs root on Linux")
def test_this_ci_machine_can_run_slurm():
    # the reason the Slurm tests run here: a regression in the check would silently skip them
    assert slurm_cluster.cannot_run_reason() is None
