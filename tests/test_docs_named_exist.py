"""Every docs/ page the code names (in --help, hints, comments) exists: `run --until-decided --help`
sent readers to docs/STATISTICS.md, which there never was."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_every_docs_page_the_code_names_exists():
    named = {
        (str(path.relative_to(ROOT)), page)
        for package in ("sweepgen", "trainer")
        for path in (ROOT / package).rglob("*.py")
        for page in re.findall(r"docs/[A-Za-z0-9_.-]+\.md", path.read_text(encoding="utf-8"))
    }
    assert named  # the scan reads the tree
    assert sorted((where, page) for where, page in named if not (ROOT / page).is_file()) == []
