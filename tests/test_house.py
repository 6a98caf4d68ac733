"""The house rules bite: each tool of the lint lane, run with this project's configuration, fails on a
deliberate violation (and passes once it is fixed), and the test suite cannot skip what it selects."""

from __future__ import annotations

import ast
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import TRAIN_ONLY_MODULES

ROOT = Path(__file__).resolve().parent.parent
PYPROJECT = ROOT / "pyproject.toml"
TESTS = ROOT / "tests"


def run(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, *args], cwd=cwd, capture_output=True, text=True, timeout=300)


# --- ruff: lint rules, including "only the CLI prints or exits" -------------------------------------


@pytest.mark.parametrize(
    ("code", "bad", "good"),
    [
        ("F401", "import os\n", "import os\n\nprint_it = os.sep\n"),
        ("T201", 'def f() -> None:\n    print("hi")\n', "def f() -> None:\n    pass\n"),
        (
            "TID251",
            "import sys\n\n\ndef f() -> None:\n    sys.exit(2)\n",
            'def f() -> None:\n    raise ValueError("x")\n',
        ),
        # a function-local import needs a reason, unless it is a heavy optional library
        (
            "PLC0415",
            "def f() -> str:\n    import json\n\n    return json.dumps(1)\n",
            "def f() -> str:\n    import json  # noqa: PLC0415 - a reason\n\n    return json.dumps(1)\n",
        ),
        (
            "TID253",
            "import torch\n\nx = torch\n",
            "def f() -> object:\n    import torch\n\n    return torch\n",
        ),
        (
            "C901",
            "def f(x: int) -> int:\n"
            + "".join(f"    if x == {i}:\n        return {i}\n" for i in range(13))
            + "    return 0\n",
            "def f(x: int) -> int:\n    return {i: i for i in range(13)}.get(x, 0)\n",
        ),
    ],
)
def test_ruff_check_fails_on_a_violation_and_passes_without_it(tmp_path, code, bad, good):
    module = tmp_path / "core_module.py"
    module.write_text(bad)
    result = run("-m", "ruff", "check", "--no-cache", "--config", str(PYPROJECT), str(module), cwd=tmp_path)
    assert result.returncode == 1 and code in result.stdout, result.stdout + result.stderr
    module.write_text(good)
    result = run("-m", "ruff", "check", "--no-cache", "--config", str(PYPROJECT), str(module), cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr


def test_ruff_format_check_fails_on_unformatted_code(tmp_path):
    module = tmp_path / "m.py"
    module.write_text("x = [1,2]\n")
    args = ("-m", "ruff", "format", "--no-cache", "--check", "--config", str(PYPROJECT), str(module))
    result = run(*args, cwd=tmp_path)
    assert result.returncode == 1 and "m.py" in result.stdout, result.stdout + result.stderr
    module.write_text("x = [1, 2]\n")
    assert run(*args, cwd=tmp_path).returncode == 0


# --- mypy: strict on everything it checks (a plain `mypy` is `mypy --strict`) ------------------------


def test_mypy_is_strict_on_the_whole_package_and_the_trainer(tmp_path):
    untyped = "def double(x):\n    return x * 2\n"
    bare = "def keys(d: dict) -> list:\n    return list(d)\n"  # bare generics: two errors
    files = {
        "sweepgen/__init__.py": "",
        "sweepgen/compile/__init__.py": "",
        "sweepgen/compile/untyped.py": untyped,  # an unannotated function is an error
        "sweepgen/run/__init__.py": "",
        "sweepgen/run/untyped.py": untyped,
        "trainer/__init__.py": "",
        "trainer/untyped.py": untyped,
        "trainer/bare.py": bare,
        "sweepgen/untyped.py": untyped,  # the ground floor is strict too
        "sweepgen/bare.py": bare,
        # a value of type Any returned as a bool (warn_return_any)
        "sweepgen/anyret.py": "from typing import Any\n\n\ndef one(x: Any) -> bool:\n    return x == 1\n",
        "sweepgen/wrong.py": 'count: int = "three"\n',  # a type error anywhere is an error
    }
    for rel, text in files.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    checked = [rel for rel in files if not rel.endswith("__init__.py")]
    result = run(
        "-m",
        "mypy",
        "--config-file",
        str(PYPROJECT),
        "--cache-dir",
        str(tmp_path / ".mypy_cache"),
        *checked,
        cwd=tmp_path,
    )
    out = result.stdout
    assert result.returncode == 1, out + result.stderr
    for rel in ("sweepgen/compile/untyped", "sweepgen/run/untyped", "trainer/untyped", "sweepgen/untyped"):
        assert re.search(rf"{rel}\.py:1: error: .*\[no-untyped-def\]", out), out
    for rel in ("trainer/bare", "sweepgen/bare"):
        assert re.search(rf"{rel}\.py:1: error: .*\[type-arg\]", out), out
    assert re.search(r"sweepgen/anyret\.py:5: error: .*\[no-any-return\]", out), out
    assert re.search(r"sweepgen/wrong\.py:1: error: .*\[assignment\]", out), out
    assert "Found 10 errors in 8 files" in out, out


# --- import-linter: each contract breaks on a forbidden import added to a copy of the code ------------

LINT_IMPORTS = (
    "import sys; from importlinter.cli import lint_imports_command; sys.exit(lint_imports_command())"
)


@pytest.fixture(scope="module")
def code_copy(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """sweepgen/ and trainer/ (sources only, trainer/ under its installed name) and pyproject.toml,
    copied once per module."""
    root = tmp_path_factory.mktemp("house")
    for package, name in (("sweepgen", "sweepgen"), ("trainer", "sweepgen_trainer")):
        shutil.copytree(ROOT / package, root / name, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    shutil.copy(PYPROJECT, root / "pyproject.toml")
    return root


BREAKS = [  # (contract, module, forbidden import, what the broken report shows)
    (
        "light-core",
        "sweepgen/compile/spec/model.py",
        "import click",
        "sweepgen.compile.spec.model -> click",
    ),
    ("light-core", "sweepgen/run/core/base.py", "import torch", "sweepgen.run.core.base -> torch"),
    ("cli-no-ml", "sweepgen/cli/list_cmd.py", "import transformers", "-> transformers"),
    ("readers-generic", "sweepgen/readers/diff.py", "import sweepgen.compile.api", "sweepgen.compile"),
    (
        "no-trainer",
        "sweepgen/run/core/plan/tasks.py",
        "import sweepgen_trainer.config",
        "sweepgen.run.core.plan.tasks -> sweepgen_trainer",
    ),
    (
        "trainer-ground-floor",
        "sweepgen_trainer/config.py",
        "import sweepgen.compile.api",
        "sweepgen_trainer.config",
    ),
    (
        "layers",
        "sweepgen/compile/spec/variants/gate.py",
        "import sweepgen.run.core.base",
        "sweepgen.compile.spec.variants.gate",
    ),
]


@pytest.fixture(scope="module")
def kept(code_copy: Path) -> subprocess.CompletedProcess[str]:
    """lint-imports on the copy as it is, once, for every contract the test below breaks (each test
    puts the module it changes back): each must be kept before a forbidden import breaks it."""
    named = [arg for contract in dict.fromkeys(c for c, *_ in BREAKS) for arg in ("--contract", contract)]
    return run("-c", LINT_IMPORTS, "--no-cache", *named, cwd=code_copy)


@pytest.mark.parametrize(("contract", "module", "forbidden", "shown"), BREAKS)
def test_lint_imports_breaks_a_contract_on_a_forbidden_import(
    code_copy, kept, contract, module, forbidden, shown
):
    args = ("-c", LINT_IMPORTS, "--no-cache", "--contract", contract)
    assert kept.returncode == 0, kept.stdout + kept.stderr  # the copy as it is keeps the contract
    assert f"Contracts: {len({c for c, *_ in BREAKS})} kept, 0 broken." in kept.stdout, kept.stdout
    path = code_copy / module
    original = path.read_text()
    try:
        path.write_text(original + f"\n{forbidden}  # deliberate violation\n")
        broken = run(*args, cwd=code_copy)
    finally:
        path.write_text(original)
    assert broken.returncode == 1, broken.stdout + broken.stderr
    assert "BROKEN" in broken.stdout and shown in broken.stdout, broken.stdout


# --- the suite selects by marker and never skips for a missing dependency ----------------------------


def test_no_test_skips_for_a_missing_import():
    offenders = [
        f"{path.name}:{n}"
        for path in sorted(TESTS.rglob("*.py"))
        if not {"diff_corpus", "fixtures", "bad_inputs", "golden"} & set(path.relative_to(TESTS).parts)
        for n, line in enumerate(path.read_text().splitlines(), 1)
        if "importorskip(" in line and path.name != Path(__file__).name
    ]
    assert not offenders, f"select by marker instead (train/slurm): {offenders}"


@pytest.mark.parametrize("name", sorted(TRAIN_ONLY_MODULES))
def test_modules_collected_only_with_the_train_extra_hold_only_train_tests(name):
    tree = ast.parse(next(TESTS.rglob(name)).read_text())
    marks = [
        ast.unparse(node.value)
        for node in tree.body
        if isinstance(node, ast.Assign) and any(getattr(t, "id", None) == "pytestmark" for t in node.targets)
    ]
    assert marks and "pytest.mark.train" in marks[0], f"{name} needs `pytestmark = pytest.mark.train`"


# --- one version source ------------------------------------------------------------------------------


def test_the_version_comes_from_pyproject_installed_or_not(monkeypatch):
    import importlib.metadata

    from click.testing import CliRunner

    import sweepgen
    from sweepgen.cli import main

    try:
        import tomllib
    except ModuleNotFoundError:  # Python 3.10
        import tomli as tomllib

    declared = tomllib.loads(PYPROJECT.read_text())["project"]["version"]
    assert sweepgen.__version__ == declared
    assert CliRunner().invoke(main, ["--version"]).output == f"sweepgen, version {declared}\n"

    def not_installed(name: str) -> str:
        raise importlib.metadata.PackageNotFoundError(name)

    monkeypatch.setattr(importlib.metadata, "version", not_installed)
    assert sweepgen._version.__wrapped__() == declared  # the source-tree fallback reads the same field


# --- function length: over 80 lines only with a reason (scripts/code_shape.py --check) ---------------

LONG_BODY = "".join(f"    x += {i}\n" for i in range(80))


def test_every_long_function_gives_its_reason():
    result = run("scripts/code_shape.py", "--check", "80", cwd=ROOT)  # sweepgen/ and trainer/
    assert result.returncode == 0, result.stdout + result.stderr


def test_every_trainer_function_over_60_lines_gives_its_reason():
    result = run("scripts/code_shape.py", "--check", "60", "trainer", cwd=ROOT)
    assert result.returncode == 0, result.stdout + result.stderr


@pytest.mark.parametrize("package", ["sweepgen", "trainer"])
@pytest.mark.parametrize(
    ("def_line", "passes"),
    [
        ("def f(x: int) -> int:\n", False),
        ("def f(x: int) -> int:  # noqa: PLR0915\n", False),  # a noqa without its reason
        ("def f(x: int) -> int:  # noqa: PLR0915 - one step per stage, in order\n", True),
    ],
)
def test_the_length_check_wants_a_reasoned_noqa_on_the_def_line(tmp_path, package, def_line, passes):
    (tmp_path / package).mkdir()
    (tmp_path / package / "m.py").write_text(def_line + LONG_BODY + "    return x\n")
    result = run(
        str(ROOT / "scripts" / "code_shape.py"), "--root", str(tmp_path), "--check", "80", cwd=tmp_path
    )
    assert (result.returncode == 0) is passes, result.stdout
    if not passes:
        assert f"{package}/m.py:1 f (82 lines)" in result.stdout


# --- mean block complexity: radon's, under the ceiling (scripts/complexity.py --check) -------------

BRANCHY = "".join(f"    y = {i} if x > {i} and x < {i + 9} or x == {i} else y\n" for i in range(12))


def test_the_mean_block_complexity_of_sweepgen_is_under_its_ceiling():
    result = run("scripts/complexity.py", "--check", cwd=ROOT)
    assert result.returncode == 0, result.stdout + result.stderr


@pytest.mark.parametrize(
    ("def_line", "passes"),
    [
        ("def f(x: int) -> int:\n", False),
        ("def f(x: int) -> int:  # radon: exempt\n", False),  # a marker without its reason
        ("def f(x: int) -> int:  # radon: exempt - one rule per line of the table it mirrors\n", True),
        ("def f(x: int) -> int:  # noqa: C901 - one rule per line of the table it mirrors\n", True),
    ],
)
def test_the_complexity_check_fails_above_the_ceiling_unless_a_block_gives_its_reason(
    tmp_path, def_line, passes
):
    (tmp_path / "sweepgen").mkdir()
    simple = "def g(x: int) -> int:\n    return x\n"
    (tmp_path / "sweepgen" / "m.py").write_text(
        simple + "\n\n" + def_line + "    y = 0\n" + BRANCHY + "    return y\n"
    )
    result = run(
        str(ROOT / "scripts" / "complexity.py"), "--root", str(tmp_path), "--check", "4", cwd=tmp_path
    )
    assert (result.returncode == 0) is passes, result.stdout
    if not passes:
        assert "sweepgen/m.py:5 f" in result.stdout
