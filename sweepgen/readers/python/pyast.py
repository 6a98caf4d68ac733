"""Read a Python config file as data through a small safe evaluator over ``ast``: never imported, never run.

Config files (mmdetection/mmengine, detectron2 LazyConfig, ml_collections, dataclass-style) are
programs whose meaning is mostly data. The evaluator runs the parts that are data and keeps the
rest as ``NotEvaluated`` nodes (compared by their normalised source, reported with file:line):

* literals and containers, ``dict()/list()/tuple()``, arithmetic, string and boolean operations
  and comparisons on known values, f-strings, names bound earlier (Python's aliasing included:
  ``pipeline[0]['scale'] = 160`` changes every place that holds ``pipeline``);
* assignment to names, subscripts and attributes, ``+=``, and in-place mutation through
  ``.update() .append() .extend() .insert() .setdefault() .pop()``; comprehensions, ``for`` loops
  and ``if`` over known values; functions defined in the file, called with known arguments;
* ml_collections: a module ``get_config()`` is called and the file *is* what it returns;
  ``ConfigDict``, ``config_dict.create``, ``FieldReference`` and ``get_ref`` are data, a
  ``placeholder(int)`` is ``Ref("placeholder(int)")``;
* ``import``s bind ``Ref`` names ("torch.bfloat16" as a reference, never equal to the string);
  calls to anything else are ``CallData`` ``{"call", "args", "kwargs"}`` with evaluated arguments;
* relative imports (``from .base import *`` in ``with read_base():``, detectron2's
  ``from ..common.optim import SGD as optimizer``) are followed only when the caller passes
  ``import_base`` (``diff --resolve-bases``); otherwise they bind ``Ref`` names;
* docstrings and comments are no data; ``if`` on an unknown condition, or a call made for its side
  effect, is kept under ``__statements__``, and a name bound inside such an ``if`` becomes not
  evaluated.
"""

from __future__ import annotations

import ast
import io
import tokenize
import warnings
from pathlib import Path
from typing import Any

from sweepgen.errors import ConfigError, Location
from sweepgen.readers import inputsize
from sweepgen.readers.model import NotEvaluated, ReadResult, Ref
from sweepgen.readers.python.pystatements import Evaluator
from sweepgen.readers.python.pyvalues import CallData, ImportBase, frozen_views, is_call_or_expr

__all__ = [
    "CallData",
    "ImportBase",
    "NotEvaluated",
    "Ref",
    "is_call_or_expr",
    "read_python",
    "read_python_file",
]


def read_python_file(
    path: str | Path, *, import_base: ImportBase | None = None, bases: dict[str, Any] | None = None
) -> ReadResult:
    path = Path(path)
    source = inputsize.read_bytes(path, "python")
    return read_python(source, str(path), import_base=import_base, bases=bases)


def read_python(
    source: str | bytes,
    filename: str = "<string>",
    *,
    import_base: ImportBase | None = None,
    bases: dict[str, Any] | None = None,
) -> ReadResult:
    """``bases``: the merged ``_base_`` files, so that ``_base_.a.b`` reads a copy of their value."""
    try:
        with warnings.catch_warnings():  # "invalid escape sequence" and the like: not ours to print
            warnings.simplefilter("ignore")
            tree = ast.parse(source, filename=filename)
    except SyntaxError as err:
        raise ConfigError(
            f"invalid Python syntax: {err.msg}",
            location=Location(filename, err.lineno or 0, err.offset or 0),
            hint="the file is parsed, never run; fix the syntax so that `python -m py_compile` accepts it",
        ) from err
    except (ValueError, RecursionError, MemoryError) as err:  # null bytes, absurd nesting
        why = str(err) or (
            "nested too deeply for Python's parser" if isinstance(err, MemoryError) else type(err).__name__
        )
        raise ConfigError(
            f"cannot parse Python config: {why}",
            location=Location(filename, *_largest_statement(source)),
            hint="the file is parsed, never run; `python -m py_compile` refuses it too: "
            "split the statement that starts here",
        ) from err
    result = ReadResult(filename, None)
    evaluator = Evaluator(filename, import_base, result)
    evaluator.bases = bases
    try:
        result.data = frozen_views(evaluator.module(tree.body))
    except RecursionError as err:
        raise ConfigError(
            "Python config is nested too deeply to read",
            location=Location(filename, *_largest_statement(source)),
            hint="split the statement that starts here into several",
        ) from err
    return result


_NO_WORDS = (tokenize.NL, tokenize.COMMENT, tokenize.INDENT, tokenize.DEDENT, tokenize.ENCODING)


def _largest_statement(source: str | bytes) -> tuple[int, int]:
    """(line, column) where the statement of the most tokens starts: what a parser (or the
    evaluator) too deep to say where it gave up gave up on, found by Python's own tokenizer, which
    reads without recursion; (0, 0) when even that fails (the error then names the file alone)."""
    best, count, start = (0, 0, 0), 0, (0, 0)
    if isinstance(source, bytes):
        tokens = tokenize.tokenize(io.BytesIO(source).readline)
    else:
        tokens = tokenize.generate_tokens(io.StringIO(source).readline)
    try:
        for tok in tokens:
            if tok.type in (tokenize.NEWLINE, tokenize.ENDMARKER):
                best = max(best, (count, -start[0], -start[1]))
                count = 0
            elif tok.type not in _NO_WORDS:
                start = start if count else tok.start
                count += 1
    except (tokenize.TokenError, SyntaxError, ValueError, MemoryError, RecursionError):
        pass  # what was read so far still tells
    best = max(best, (count, -start[0], -start[1]))
    return (-best[1], -best[2] + 1) if best[0] else (0, 0)
