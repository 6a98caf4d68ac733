"""What the reader tests of `sweepgen diff` share: bash itself as the oracle (a stub program that
prints what it gets) and the changes `compare` reports on two texts written to a scratch folder."""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from sweepgen.readers.compare import Comparison, compare

BASH = shutil.which("bash")
needs_bash = pytest.mark.skipif(BASH is None, reason="bash is not installed")

# the program a script runs, as bash runs it: each word it gets, then its environment (sorted, bash's
# own variables left out)
STUB_ENV = (
    "python() { printf '<%s>' \"$@\"; echo; env | LC_ALL=C sort | "
    "grep -vE '^(_|SHLVL|PWD|OLDPWD|BASH_[A-Z_]*)='; }\n"
)
# ... each word it gets, then what it reads on stdin
STUB_STDIN = "python() { printf '<%s>' \"$@\"; echo; echo '[stdin]'; cat; echo '[/stdin]'; }\n"


def bash_sees(
    script: str,
    folder: Path,
    *,
    stub: str = STUB_ENV,
    args: Sequence[str] = (),
    environment: dict[str, str] | None = None,
) -> str:
    """What bash prints running `stub` then `script` (as s.sh in `folder`, with `args`), and its
    exit status."""
    path = folder / "s.sh"
    path.write_text(stub + script)
    run = subprocess.run(
        [BASH, str(path), *args],  # type: ignore[list-item]
        capture_output=True,
        text=True,
        check=False,
        cwd=folder,
        env={"PATH": "/usr/bin:/bin", **(environment or {})},
        timeout=60,
    )
    return f"{run.stdout}rc={run.returncode}"


def bash_output(script: str) -> list[str]:
    """The records (NUL-separated) `bash -c script` prints."""
    out = subprocess.run([BASH, "-c", script], capture_output=True, check=True)  # type: ignore[list-item]
    return out.stdout.decode().split("\0")


def compared(
    one: str, two: str, suffix: str = ".sh", folder: Path | None = None, **options: Any
) -> Comparison:
    """`compare` of the two texts, written as a<suffix> and b<suffix> (in `folder`, else a scratch
    folder)."""
    if folder is None:
        with tempfile.TemporaryDirectory() as scratch:
            return compared(one, two, suffix, Path(scratch), **options)
    (folder / f"a{suffix}").write_text(one)
    (folder / f"b{suffix}").write_text(two)
    return compare(str(folder / f"a{suffix}"), str(folder / f"b{suffix}"), **options)


def changes(one: str, two: str, suffix: str = ".sh", folder: Path | None = None, **options: Any) -> list[str]:
    """What `sweepgen diff` reports on the two texts (through compare: `@order` included), by path."""
    return [change.dotted for change in compared(one, two, suffix, folder, **options).changes]


def line_changes(one: str, two: str, folder: Path | None = None) -> list[str]:
    """`changes` of two scripts of one line each."""
    return changes(one + "\n", two + "\n", ".sh", folder)


def bash_runs(line: str, folder: Path) -> str:
    """What bash prints and exits with for ``line`` run in ``folder``, whose stand-in programs come
    first on PATH: the oracle the launch-wrapper tests compare the diff's readings with."""
    run = subprocess.run(
        ["bash", "-c", f"{line}\n"],
        capture_output=True,
        text=True,
        check=False,
        cwd=folder,
        stdin=subprocess.DEVNULL,
        env={"PATH": f"{folder}:/usr/bin:/bin:/usr/sbin:/sbin"},
        timeout=60,
    )
    return f"{run.stdout}{run.stderr}rc={run.returncode}"
