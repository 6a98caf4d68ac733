"""Helpers for writing small spec projects in tests."""

from __future__ import annotations

import textwrap
from pathlib import Path

HEAD = """\
sweepgen: 1
name: demo
template: ../templates/t.yaml.j2
output: "{{ variant.name }}.yaml"
"""
BASE = """\
base:
  training: {seed: 42, lr: 3.0e-6, group: 4}
  streamer: {rollouts: 4, strategy: identity, params: {}}
"""
TEMPLATE = "{{ config | to_yaml }}\n"


def write_project(
    root: Path,
    body: str = "",
    *,
    head: str = HEAD,
    base: str = BASE,
    template: str = TEMPLATE,
    name: str = "demo.yaml",
) -> Path:
    """specs/<name> = head + base + body (dedented); templates/t.yaml.j2 = template."""
    (root / "specs").mkdir(exist_ok=True)
    (root / "templates").mkdir(exist_ok=True)
    spec = root / "specs" / name
    spec.write_text(head + base + textwrap.dedent(body))
    (root / "templates" / "t.yaml.j2").write_text(template)
    return spec
