"""Readers have one interface, no import cycles, and never import the compile pipeline; what they
cannot evaluate is reported with file:line, never silently equal."""

from __future__ import annotations

import ast
from pathlib import Path

from click.testing import CliRunner

from sweepgen.cli import main

READERS = Path(__file__).resolve().parents[2] / "sweepgen" / "readers"


def _imports(path: Path) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
            names.update(f"{node.module}.{a.name}" for a in node.names)
        elif isinstance(node, ast.Import):
            names.update(a.name for a in node.names)
    return names


def test_readers_never_import_compile_and_have_no_cycles():
    modules = {
        ".".join(p.relative_to(READERS.parents[1]).with_suffix("").parts): _imports(p)
        for p in READERS.rglob("*.py")
        if p.stem != "__init__"
    }
    for name, imports in modules.items():
        assert not any(
            i.startswith(("sweepgen.compile", "sweepgen.run", "sweepgen.cli", "click")) for i in imports
        ), name
    graph = {name: {i for i in imports if i in modules} for name, imports in modules.items()}
    seen: dict[str, int] = {}

    def visit(node: str, stack: tuple[str, ...]) -> None:
        assert node not in stack, f"import cycle: {' -> '.join((*stack, node))}"
        if seen.get(node):
            return
        for nxt in graph[node]:
            visit(nxt, (*stack, node))
        seen[node] = 1

    for name in graph:
        visit(name, ())


def test_a_change_inside_what_cannot_be_evaluated_is_reported_with_its_place(tmp_path):
    a, b = tmp_path / "a.py", tmp_path / "b.py"
    a.write_text("import os\nroot = os.environ['DATA']\nlr = 1\n")
    b.write_text("import os\nroot = os.environ['DATA2']\nlr = 1\n")
    run = CliRunner().invoke(main, ["diff", str(a), str(b)])
    assert run.exit_code == 1
    assert run.stdout.splitlines()[0] == (
        f"root: <not evaluated at {a}:2: os.environ['DATA']> -> <not evaluated at {b}:2: os.environ['DATA2']>"
    )
    same = CliRunner().invoke(main, ["diff", str(a), str(a)])
    assert same.stdout == "no differences\n"
    assert f"compared by normalised source ({a}:2)" in same.stderr


def test_json_report_points_at_the_line_that_set_the_value(tmp_path):
    import json

    a, b = tmp_path / "a.py", tmp_path / "b.py"
    a.write_text("model = dict(backbone=dict(depth=50))\n")
    b.write_text("model = dict(backbone=dict(depth=50))\n\nmodel.backbone.depth = 101\n")
    report = json.loads(CliRunner().invoke(main, ["diff", str(a), str(b), "--format", "json"]).stdout)
    (change,) = report["changes"]
    assert (change["path"], change["old_at"], change["new_at"]) == (
        "model.backbone.depth",
        f"{a}:1",
        f"{b}:3",
    )
