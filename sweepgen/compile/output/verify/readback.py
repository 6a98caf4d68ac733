"""A rendered file reads back as its kind, every key once, or the render stops.

The lock records each variant's config; the trainer reads the rendered file. A template that
writes a key twice (`lr: {{ config.lr }}` and, further down, a hard-coded `lr: 5`) makes a file that
YAML, JSON and Python dict readers take without a word, keeping the last value: the lock says 1,
the run uses 5. A template that writes a file its reader refuses (an unclosed bracket, a trailing
comma, a quote left open in a launch script) is found only when the job starts, after its wait in
the queue. So each rendered file of a kind sweepgen knows is read once, by the reader that kind
has (PyYAML's C parser, json, tomllib, Python's own ``ast``, bash itself through ``bash -n``),
and a file it refuses, or a mapping with a key twice, stops the render at the spec's ``template:``
line, naming the file, its line and the key. Files of one shape (``readback_shape``: the values
masked that cannot change how a file reads) are read once, so a sweep of one template costs one
read per shape, not per file.

A shell script is first parsed with the tree-sitter bash grammar (in-process, microseconds); only
one it cannot parse is given to ``bash -n`` (which reads without running anything), whose verdict
counts: the grammar misses some of bash's corners, bash does not. Without bash on the machine
that check is left to the run.
"""

from __future__ import annotations

import ast
import functools
import json
import os
import re
import shutil
import subprocess
import sys
import warnings
from collections.abc import Callable, Iterator
from typing import Any

import yaml

from sweepgen.compile.output.verify import readback_shape, sbatch_directives
from sweepgen.compile.spec.model import Spec
from sweepgen.compile.spec.variants.expand import Variant
from sweepgen.errors import TemplateError
from sweepgen.formats import jsonkeys
from sweepgen.formats.tomllines import error_place

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

Problem = tuple[int, int, str]  # (line, column, what), 1-based
_LOADER: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_RESOLVER: Any = yaml.resolver.Resolver()
BASH_SECONDS = 10.0  # `bash -n` of one file of at most `limits.output_bytes`


def check_reads_back(text: str, out_path: str, spec: Spec, variant: Variant) -> None:
    """Exit 2 when ``text``, the rendered ``out_path`` of ``variant``, does not read as its kind."""
    suffix = os.path.splitext(out_path)[1].lower()
    reader = READERS.get(suffix)
    if reader is None:
        return
    kind = SHAPED.get(suffix)
    shaped = readback_shape.shape(kind, text) if kind is not None else ""
    if kind is not None and readback_shape.known_good(kind, shaped):
        return  # another file of this shape read back: this one reads alike
    problem = reader(text)
    if problem is None:
        if kind is not None:
            readback_shape.remember_good(kind, shaped)
        return
    line, col, what = problem
    raise TemplateError(
        f"variant {variant.name!r}: {out_path} line {line}, column {col}: {what}",
        location=spec.loc(("template",)),
        hint="fix the template: the line above is in the file it rendered (a key written twice, or "
        "text the file's reader refuses or ignores)",
    )


def yaml_problem(text: str) -> Problem | None:
    """A YAML file's first syntax error or key written twice, from PyYAML's C event stream (no
    node objects, no values built: about half the cost of composing the document)."""
    try:
        return _first_twice(yaml.parse(text, Loader=_LOADER))
    except yaml.MarkedYAMLError as err:
        return (
            *_place(err.problem_mark or err.context_mark),
            f"YAML readers refuse it: {err.problem or err.context}",
        )
    except yaml.YAMLError as err:
        return 0, 0, f"YAML readers refuse it: {err}"


class _Mapping:
    """An open mapping: its keys so far (by resolved tag and text: plain `1` is an int, quoted "1"
    a string, plain and quoted `lr` one string, each with its line) and whether a key comes next."""

    __slots__ = ("key_next", "seen")

    def __init__(self) -> None:
        self.seen: dict[tuple[str, str], int] = {}
        self.key_next = True


def _first_twice(events: Iterator[Any]) -> Problem | None:
    """The first key written twice in one mapping; each open collection is a frame (a sequence's
    is None)."""
    frames: list[_Mapping | None] = []
    for event in events:
        frame = frames[-1] if frames else None
        is_key = frame is not None and frame.key_next
        if frame is not None:
            frame.key_next = not is_key  # a mapping alternates key, value
        if is_key and frame is not None and isinstance(event, yaml.ScalarEvent):
            problem = _seen_again(frame, event)
            if problem is not None:
                return problem
        _step(frames, event)
    return None


def _seen_again(frame: _Mapping, event: Any) -> Problem | None:
    """The problem when the scalar key ``event`` is already a key of ``frame`` (a plain `<<`, YAML
    1.1's merge key, may repeat: each merges a mapping in)."""
    if event.value == "<<" and event.implicit[0]:
        return None
    ident = (event.tag or _RESOLVER.resolve(yaml.ScalarNode, event.value, event.implicit), event.value)
    line, col = _place(event.start_mark)
    first = frame.seen.get(ident)
    if first is None:
        frame.seen[ident] = line
        return None
    return (
        line,
        col,
        f"key {event.value!r} is written twice (first on line {first}): YAML readers keep the last "
        "without a word, so the run would not use the value the lock records",
    )


def _step(frames: list[_Mapping | None], event: Any) -> None:
    """Open or close a frame for a collection's start or end event."""
    if isinstance(event, yaml.MappingStartEvent):
        frames.append(_Mapping())
    elif isinstance(event, yaml.SequenceStartEvent):
        frames.append(None)
    elif isinstance(event, (yaml.MappingEndEvent, yaml.SequenceEndEvent)):
        frames.pop()


def _place(mark: Any) -> tuple[int, int]:
    """A PyYAML mark's (line, column), 1-based; (0, 0) where it has none."""
    return (mark.line + 1, mark.column + 1) if mark is not None else (0, 0)


def json_problem(text: str) -> Problem | None:
    try:
        json.loads(text, object_pairs_hook=jsonkeys.no_duplicate_keys)
    except json.JSONDecodeError as err:
        return err.lineno, err.colno, f"JSON readers refuse it: {err.msg}"
    except jsonkeys.DuplicateKey as twice:
        found = yaml_problem(text)  # JSON is YAML: its composer knows where the key is
        line, col = found[:2] if found is not None else (0, 0)
        return line, col, f"key {twice.key!r} is written twice: JSON readers keep the last without a word"
    except RecursionError:
        return 0, 0, "JSON readers refuse it: nested too deeply"
    except ValueError as err:  # an integer past Python's 4,300-digit conversion limit
        return (*_long_number_at(text), f"Python's JSON reader refuses it: {_first_clause(err)}")
    return None


def toml_problem(text: str) -> Problem | None:
    try:
        tomllib.loads(text)
    except tomllib.TOMLDecodeError as err:
        message, line, col = error_place(str(err), text)
        return line, col, f"TOML readers refuse it: {message}"
    except RecursionError:
        return 0, 0, "TOML readers refuse it: nested too deeply"
    except ValueError as err:  # an integer past Python's 4,300-digit conversion limit
        return (*_long_number_at(text), f"Python's TOML reader refuses it: {_first_clause(err)}")
    return None


def _long_number_at(text: str) -> tuple[int, int]:
    """(line, column), 1-based, of the first run of more than 4,300 digits; (0, 0) if none."""
    found = re.search(r"[0-9_]{4301,}", text)
    if found is None:
        return 0, 0
    before = text[: found.start()]
    return before.count("\n") + 1, found.start() - (before.rfind("\n") + 1) + 1


def _first_clause(err: ValueError) -> str:
    """Python's message without its advice to call sys.set_int_max_str_digits (not the reader's)."""
    return str(err).split(";")[0]


def python_problem(text: str) -> Problem | None:
    try:
        with warnings.catch_warnings():  # `"\q"` is a SyntaxWarning, printed on render's terminal
            warnings.simplefilter("ignore")
            tree = ast.parse(text)
    except SyntaxError as err:
        return err.lineno or 0, err.offset or 0, f"Python refuses it: {err.msg}"
    except (RecursionError, MemoryError, ValueError) as err:
        return 0, 0, f"Python refuses it: {type(err).__name__}"
    return _first_repeated(tree)


def _first_repeated(tree: ast.AST) -> Problem | None:
    """The first key or keyword given twice in a file Python parses: its parser accepts both, so
    only a walk of the tree finds them."""
    for node in ast.walk(tree):
        twice = _constant_twice(node) if isinstance(node, ast.Dict) else None
        if isinstance(node, ast.Call):
            twice = _keyword_twice(node)
        if twice is not None:
            return twice
    return None


def _keyword_twice(node: ast.Call) -> Problem | None:
    """``dict(lr=1, lr=2)``: Python's compiler refuses it (its parser, ``ast.parse``, does not)."""
    seen: set[str] = set()
    for keyword in node.keywords:
        if keyword.arg is not None and keyword.arg in seen:
            return (
                keyword.lineno,
                keyword.col_offset + 1,
                f"Python refuses it: keyword argument repeated: {keyword.arg}",
            )
        if keyword.arg is not None:  # `**extra` names no keyword
            seen.add(keyword.arg)
    return None


def _constant_twice(node: ast.Dict) -> Problem | None:
    """A dict display with one constant key twice: Python keeps the last without a word."""
    seen: set[Any] = set()  # by Python's own equality: 1, 1.0 and True are one key
    for key in node.keys:
        if isinstance(key, ast.Constant) and isinstance(key.value, (str, int, float, bool)):
            if key.value in seen:
                return (
                    key.lineno,
                    key.col_offset + 1,
                    f"key {key.value!r} is written twice in one dict: Python keeps the last without a word",
                )
            seen.add(key.value)
    return None


_BASH_FAMILY = re.compile(r"#!\s*\S*?(?:/|\benv\s+(?:-\S+\s+)*)(?:ba|da|k)?sh\b")


def shell_problem(text: str) -> Problem | None:
    if text.startswith("#!") and not _BASH_FAMILY.match(text):
        # a `#!/usr/bin/env zsh` (or python) script: not bash's to read; sbatch reads it alike
        return sbatch_directives.problem(text, None) if sbatch_directives.has_directives(text) else None
    tree = _bash_grammar().parse(text.encode("utf-8", "surrogateescape"))
    found = _sbatch_problem(text, tree)
    if found is not None or not _grammar_refuses(tree):
        return found
    return _bash_refuses(text)


def _bash_refuses(text: str) -> Problem | None:
    """bash's own reading of a script the grammar refuses: the grammar lags bash's syntax, so only
    bash's refusal counts; without bash (or when it hangs) the run will say."""
    bash = shutil.which("bash")
    if bash is None:
        return None  # the grammar alone is not trusted to refuse a script: the run will say
    try:
        done = subprocess.run(
            # read, never run (the script comes on stdin); extglob on, as a script that turns it on
            # with `shopt` is read with it (-n never runs the `shopt`)
            [bash, "-O", "extglob", "-n"],
            input=text.encode("utf-8", "surrogateescape"),
            capture_output=True,
            timeout=BASH_SECONDS,
            env={"PATH": os.environ.get("PATH", ""), "LC_ALL": "C"},
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    if done.returncode == 0:
        return None
    return _bash_place(done.stderr.decode("utf-8", "replace"))


def _sbatch_problem(text: str, tree: Any) -> Problem | None:
    if not sbatch_directives.has_directives(text):
        return None
    return sbatch_directives.problem(text, _line_comments(tree.root_node))


def _grammar_refuses(tree: Any) -> bool:
    return bool(tree.root_node.has_error)


def _line_comments(root: Any) -> set[int]:
    """The rows where a comment starts at column 0 (a here-document's lines are no comments)."""
    rows: set[int] = set()
    stack = [root]
    while stack:
        node = stack.pop()
        if node.type == "comment":
            if node.start_point[1] == 0:
                rows.add(node.start_point[0])
        else:
            stack.extend(node.children)
    return rows


@functools.cache
def _bash_grammar() -> Any:
    """One parser per process for every rendered script, not a new one per file."""
    import tree_sitter
    import tree_sitter_bash  # noqa: PLC0415 - lazy: tree-sitter loads only for rendered shell files

    return tree_sitter.Parser(tree_sitter.Language(tree_sitter_bash.language()))


def _bash_place(stderr: str) -> Problem:
    """bash's first complaint, "bash: line N: what", as (N, 1, what)."""
    for line in stderr.splitlines():
        _, sep, rest = line.partition(": line ")
        number, sep2, what = rest.partition(": ")
        if sep and sep2 and number.isdigit():
            return int(number), 1, f"bash -n refuses it: {what.strip()}"
    return 0, 0, f"bash -n refuses it: {stderr.strip()[:200]}"


# the kinds whose files are read once per shape (readback_shape); JSON and shell are read each time
SHAPED = {".yaml": "yaml", ".yml": "yaml", ".py": "python", ".toml": "toml"}
READERS: dict[str, Callable[[str], Problem | None]] = {
    ".yaml": yaml_problem,
    ".yml": yaml_problem,
    ".json": json_problem,
    ".toml": toml_problem,
    ".py": python_problem,
    ".sh": shell_problem,
    ".bash": shell_problem,
    ".sbatch": shell_problem,
    ".slurm": shell_problem,
}
