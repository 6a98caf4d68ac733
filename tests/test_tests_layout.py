"""tests/ mirrors the package: every folder of test modules is named after a package folder
(tests/compile for sweepgen/compile, tests/trainer/debate for trainer/debate), and no two test
modules share a name (the folders hold no __init__.py, so pytest imports each module by its name)."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

TESTS = Path(__file__).resolve().parent
ROOT = TESTS.parent
# folders under tests/ that hold data or helpers, not test modules
DATA_FOLDERS = frozenset({"bad_inputs", "diff_corpus", "fixtures", "golden"})


def collected_modules() -> list[Path]:
    return sorted(p for p in TESTS.rglob("test_*.py") if not DATA_FOLDERS & set(p.relative_to(TESTS).parts))


def mirrored_package(folder: Path) -> Path | None:
    """The package folder a tests/ folder stands for: tests/trainer/* under trainer/, the rest under
    sweepgen/; None when there is none."""
    rel = folder.relative_to(TESTS)
    for candidate in (ROOT / rel, ROOT / "sweepgen" / rel):
        if (candidate / "__init__.py").is_file():
            return candidate
    return None


def test_every_test_folder_names_a_package_folder() -> None:
    folders = {p.parent for p in collected_modules() if p.parent != TESTS}
    assert folders, "no test folders found: the layout test would pass vacuously"
    orphans = sorted(str(f.relative_to(TESTS)) for f in folders if mirrored_package(f) is None)
    assert orphans == [], f"test folders with no package folder of that name: {orphans}"


def test_no_two_test_modules_share_a_name() -> None:
    counts = Counter(p.name for p in collected_modules())
    assert [name for name, n in counts.items() if n > 1] == []


def test_no_test_module_is_named_after_code_that_is_gone() -> None:
    # names the issue found: test_validate*.py (the module is gate/constraints/schema now) and
    # test_shaping_*.py (trainer/debate/shaping.py), kept away for good
    stale = [p.name for p in collected_modules() if p.name.startswith(("test_validate", "test_shaping_"))]
    assert stale == []
