"""matplotlib for ``report.png``, kept from reading the checkout or reading names as markup.

matplotlib reads ``./matplotlibrc`` from the working folder when it is first imported, before any
other configuration, and by path: in a checkout it is the pull request's (or a shared runs folder
owner's). A link there was read wherever it led and its lines printed in matplotlib's warnings, a
FIFO hung the import, and ``text.usetex: True`` made matplotlib run ``latex`` on every label. So it
is imported from sweepgen's own package folder (the working folder restored by descriptor after),
and the person's own configuration (``MATPLOTLIBRC``, their config folder) is read as before.

Labels are run, group and metric names: matplotlib reads ``$…$`` in them as mathtext (an unknown
``$\\foo$`` made ``report`` fail, a valid one drew another name) and, with ``text.usetex``, hands
them to LaTeX (``\\input{…}`` reads any file into the PNG). Figures are drawn with neither.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from contextlib import AbstractContextManager
from typing import Any


def pyplot() -> Any:
    """``matplotlib.pyplot`` on the Agg backend (files only, no display)."""
    if "matplotlib" not in sys.modules:
        _import_away_from_the_working_folder()
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def plain_text() -> AbstractContextManager[Any]:
    """Figures made inside draw every text as written: no mathtext, no LaTeX."""
    import matplotlib

    return matplotlib.rc_context({"text.parse_math": False, "text.usetex": False})


def _import_away_from_the_working_folder() -> None:
    back, path = _way_back(), sys.path[:]
    # `python -c` puts "" (the working folder, whichever it is now) on sys.path: in this folder
    # `import html` (pyparsing's) would find sweepgen's own html.py
    sys.path[:] = [p for p in path if p not in ("", ".")]
    try:
        os.chdir(os.path.dirname(os.path.abspath(__file__)))
        import matplotlib  # noqa: F401 - reads its rc files now
    finally:
        back()
        sys.path[:] = path


def _way_back() -> Callable[[], None]:
    """What returns to the working folder: by descriptor (the folder itself, even if its path was
    swapped meanwhile), or by name where there is no ``fchdir`` (Windows)."""
    if not hasattr(os, "fchdir"):
        here = os.getcwd()
        return lambda: os.chdir(here)
    # O_PATH (Linux): a folder the user may enter but not list is still one to come back to
    how = getattr(os, "O_PATH", os.O_RDONLY) | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_CLOEXEC", 0)
    fd = os.open(".", how)

    def back() -> None:
        try:
            os.fchdir(fd)
        finally:
            os.close(fd)

    return back
