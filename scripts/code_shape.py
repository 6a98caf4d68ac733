"""Count what the house rules watch: functions over 60 and over 80 lines, and function-local imports.

Usage (from the repo root, or with ``--root`` pointing at another checkout)::

    python scripts/code_shape.py                    # sweepgen/ and trainer/
    python scripts/code_shape.py --list 80          # also name every function over 80 lines
    python scripts/code_shape.py --root /tmp/old    # the same counts for another tree

A function's length is its source lines from ``def`` to its last line (decorators left out); nested
functions count on their own and inside their parent. An import is function-local when it sits
anywhere inside a function body.
"""

from __future__ import annotations

import argparse
import ast
from pathlib import Path

PACKAGES = ("sweepgen", "trainer")


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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", type=Path, default=Path(__file__).resolve().parent.parent)
    parser.add_argument("--list", type=int, default=0, metavar="N", help="name the functions over N lines")
    args = parser.parse_args()
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
