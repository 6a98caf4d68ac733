"""pyproject.toml's hand-written package list (package-dir installs trainer/ as sweepgen_trainer, which
find cannot express) holds every package folder, so no subpackage is left out of a wheel."""

from __future__ import annotations

from pathlib import Path

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib

ROOT = Path(__file__).resolve().parent.parent


def _installed_name(folder: Path) -> str:
    parts = folder.relative_to(ROOT).parts
    return ".".join(("sweepgen_trainer", *parts[1:]) if parts[0] == "trainer" else parts)


def test_every_package_folder_is_listed_and_trainer_installs_as_sweepgen_trainer():
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    assert config["package-dir"] == {"sweepgen_trainer": "trainer"}
    folders = {
        _installed_name(init.parent)
        for top in ("sweepgen", "trainer")
        for init in (ROOT / top).rglob("__init__.py")
    }
    folders.add("sweepgen_trainer.data")  # the prompt sets: package data, no __init__.py
    assert set(config["packages"]) == folders
    assert "trainer" not in {name.partition(".")[0] for name in config["packages"]}
