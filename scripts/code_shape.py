"""Count what the house rules watch: functions over 60 and over 80 lines, and function-local imports.

Usage (from the repo root, or with ``--root`` pointing at another checkout)::

    python scripts/code_shape.py                    # sweepgen/ and trainer/
    python scripts/code_shape.py --list 80          # also name every function over 80 lines
    python scripts/code_shape.py --root /tmp/old    # the same counts for another tree
    python scripts/code_shape.py --check 80         # exit 1 naming each function (sweepgen/, trainer/)
                                                    # over 80 lines without `# noqa: CODE - reason`
    python scripts/code_shape.py --check 60 trainer # the same for the packages named, at 60 lines

A function may run long only with a reason, given on its ``def`` line as the ``# noqa`` of the rule
it breaks (C901, PLR0912, PLR0915): ruff has no length rule, and its RUF100 refuses a ``noqa`` that
names no broken rule, so a long function that breaks none is split instead.

A function's length is its source lines from ``def`` to its last line (decorators left out); nested
functions count on their own and inside their parent. An import is function-local when it sits
anywhere inside a function body.
"""

from __future__ import annotations

import argparse
import ast
import re
import sys
from pathlib import Path

PACKAGES = ("sweepgen", "trainer")  # counted, and held to the --check limit unless others are named
REASONED_NOQA = re.compile(r"#\s*noqa:\s*[A-Z]+[0-9]+(\s*,\s*[A-Z]+[0-9]+)*\s+-\s+\S")


def functions(tree: ast.AST) -> list[ast.FunctionDef | ast.AsyncFunctionDef]:
    return [n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]


def local_imports(tree: ast.AST) -> int:
    seen: set[int] = set()
    for fn in functions(tree):
        for node in ast.walk(fn):
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                seen.add(id(node))  # an import inside nested functions is counted once
    return len(seen)


def shape(root: Path, package: str) -> tuple[list[tuple[int, str]], int]:
    lengths: list[tuple[int, str]] = []
    imports = 0
    for path in sorted((root / package).rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        rel = path.relative_to(root).as_posix()
        for fn in functions(tree):
            assert fn.end_lineno is not None
            lengths.append((fn.end_lineno - fn.lineno + 1, f"{rel}:{fn.lineno} {fn.name}"))
        imports += local_imports(tree)
    return lengths, imports


def unexplained_long(root: Path, limit: int, packages: tuple[str, ...] = PACKAGES) -> list[str]:
    """``path:line name (N lines)`` for each function of ``packages`` over ``limit`` lines whose def
    line carries no ``# noqa: CODE - reason``."""
    found = []
    for path in sorted(p for package in packages for p in (root / package).rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        lines = text.splitlines()
        for fn in functions(ast.parse(text)):
            assert fn.end_lineno is not None
            length = fn.end_lineno - fn.lineno + 1
            if length > limit and not REASONED_NOQA.search(lines[fn.lineno - 1]):
                found.append(f"{path.relative_to(root).as_posix()}:{fn.lineno} {fn.name} ({length} lines)")
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", type=Path, default=Path(__file__).resolve().parent.parent)
    parser.add_argument("--list", type=int, default=0, metavar="N", help="name the functions over N lines")
    parser.add_argument(
        "--check",
        type=int,
        default=0,
        metavar="N",
        help="fail on a function over N lines with no reason",
    )
    parser.add_argument("packages", nargs="*", help=f"the packages --check holds (default: {PACKAGES})")
    args = parser.parse_args()
    unknown = sorted(set(args.packages) - set(PACKAGES))
    if unknown:
        parser.error(f"unknown package {', '.join(unknown)}; choose from {', '.join(PACKAGES)}")
    if args.check:
        found = unexplained_long(args.root, args.check, tuple(args.packages) or PACKAGES)
        for where in found:
            print(f"{where}: over {args.check} lines; split it, or give the reason as `# noqa: CODE - why`")
        sys.exit(1 if found else 0)
    print(f"{'package':10} {'functions':>9} {'>60 lines':>9} {'>80 lines':>9} {'local imports':>13}")
    for package in PACKAGES:
        lengths, imports = shape(args.root, package)
        over60 = sum(n > 60 for n, _ in lengths)
        over80 = sum(n > 80 for n, _ in lengths)
        print(f"{package:10} {len(lengths):9} {over60:9} {over80:9} {imports:13}")
        if args.list:
            for n, where in sorted(lengths, reverse=True):
                if n > args.list:
                    print(f"  {n:4}  {where}")


if __name__ == "__main__":
    main()
