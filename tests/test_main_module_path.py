"""`python -m sweepgen` in a checkout under review: Python puts the working folder first on sys.path,
so a committed click.py (or yaml.py, dataclasses.py) was imported in place of the library and ran."""

from __future__ import annotations

from pathlib import Path

from fs_support import sweepgen


def test_python_m_sweepgen_imports_nothing_from_the_working_folder(tmp_path: Path) -> None:
    marker = tmp_path / "IMPORTED"
    project = tmp_path / "project"
    project.mkdir()
    for name in ("click.py", "dataclasses.py", "yaml.py", "jinja2.py"):
        (project / name).write_text(f"open({str(marker)!r}, 'a').write({name!r})\nraise SystemExit(9)\n")
    done = sweepgen(project, "diff", "a.yaml", "b.yaml")  # `python -m sweepgen`
    assert not marker.exists(), marker.read_text()
    assert done.returncode == 2 and "a.yaml" in done.stderr, done.stdout + done.stderr  # not found
