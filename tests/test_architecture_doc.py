"""docs/ARCHITECTURE.md's layout names every module of sweepgen and trainer, and nothing that is not
there: the page is held to the tree, so a new module must be given its line and a removed one loses it."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "ARCHITECTURE.md"
PACKAGES = ("sweepgen", "trainer")


def layout_block(text: str) -> list[str]:
    """The lines of the first code block under ``## Layout``."""
    section = text.split("## Layout", 1)[1]
    return section.split("```", 2)[1].splitlines()[1:]


def listed_modules(lines: list[str]) -> set[str]:
    """Module paths the layout names: a line's leading ``name.py`` words, under the folders
    (``name/``) that enclose it by indentation; descriptions after them are not read."""
    listed: set[str] = set()
    folders: list[tuple[int, str]] = []  # (indent, folder path)
    for line in lines:
        words = line.split()
        if not words:
            continue
        indent = len(line) - len(line.lstrip())
        while folders and folders[-1][0] >= indent:
            folders.pop()
        parent = folders[-1][1] if folders else ""
        if words[0].endswith("/"):
            folders.append((indent, parent + words[0]))
            continue
        for word in words:
            if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*\.py", word):
                break
            listed.add(parent + word)
    return listed


def tree_modules() -> set[str]:
    return {p.relative_to(ROOT).as_posix() for pkg in PACKAGES for p in (ROOT / pkg).rglob("*.py")}


def test_the_layout_names_every_module_and_only_modules_that_exist():
    listed = listed_modules(layout_block(DOC.read_text(encoding="utf-8")))
    present = tree_modules()
    # a subpackage's __init__.py holds only its docstring: its folder's line describes it
    required = {m for m in present if not (m.endswith("/__init__.py") and m.count("/") > 1)}
    missing = sorted(required - listed)
    assert not missing, f"docs/ARCHITECTURE.md lists no line for {missing}: add one each"
    gone = sorted(listed - present)
    assert not gone, f"docs/ARCHITECTURE.md lists modules that do not exist: {gone}"


def test_the_parser_sees_nesting_and_stops_at_the_description():
    lines = [
        "pkg/",
        "  a.py b.py    two modules on one line, then words about c.py",
        "  sub/         a folder",
        "    c.py         inside sub",
        "  d.py         back at the top",
    ]
    assert listed_modules(lines) == {"pkg/a.py", "pkg/b.py", "pkg/sub/c.py", "pkg/d.py"}
