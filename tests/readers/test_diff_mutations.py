"""The not-evaluated rule, as a property over the whole diff corpus: mutate one token of a config (a
digit, a name, a flag, a word inside an array, an unevaluable value, a conditional branch or a
constructor call) and ``sweepgen diff original mutant`` must not answer "no differences", unless the
token was inert (inside a comment or a docstring). Exit 2 (the mutant no longer reads) is an
answer too; exit 70 never is.

One test samples mutations with hypothesis; another (slow, about a minute, in CI's core lane) runs
every mutation of every corpus file (the count is in docs/DIFF.md)."""

from __future__ import annotations

import ast
import functools
import io
import pickle
import re
import shutil
import tokenize
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sweepgen.cli import main
from sweepgen.readers import compare
from sweepgen.readers.model import ReadResult

REPO = Path(__file__).resolve().parents[2]
CORPUS = REPO / "tests" / "diff_corpus"
_TOKEN = re.compile(r"[0-9]+|[A-Za-z_][A-Za-z0-9_]*")


@functools.cache
def _text(path: Path) -> str:
    """A corpus file's text, read once (each case's verdict and message need it)."""
    return path.read_text()


def corpus_files() -> list[tuple[Path, list[str]]]:
    """Every a.* and b.* of every pair that reads (the *_error pairs fail on purpose), with the
    pair's extra arguments."""
    out = []
    for folder in sorted(p for p in CORPUS.iterdir() if p.is_dir() and not p.name.endswith("_error")):
        args = (folder / "args").read_text().split() if (folder / "args").exists() else []
        # a test that runs a corpus config as Python leaves __pycache__/a.cpython-*.pyc beside it
        for path in sorted(p for p in folder.rglob("[ab].*") if "__pycache__" not in p.parts):
            out.append((path, args))
    return out


def inert_spans(path: Path, text: str) -> list[tuple[int, int]]:
    """Character ranges whose content means nothing to the program that reads the file."""
    suffix = path.suffix
    if suffix == ".py":
        return _python_inert(text)
    if suffix in (".json", ".toml"):
        return []
    spans = []
    offset = 0
    seen_command = False
    for line in text.splitlines(keepends=True):
        stripped = line.lstrip()
        directive = stripped.startswith("#SBATCH") and not seen_command
        if suffix in (".sh", ".sbatch") and stripped and not stripped.startswith("#"):
            seen_command = True  # sbatch reads directives only up to the first command
        comment = _comment_start(line)
        header = suffix not in (".sh", ".sbatch") and stripped.startswith("# @package")
        if comment is not None and not directive and not header:
            spans.append((offset + comment, offset + len(line)))
        offset += len(line)
    return spans


def _comment_start(line: str) -> int | None:
    """Where a `#` comment starts in a shell or YAML line: at the line's start or after a blank,
    outside quotes."""
    quote = ""
    for index, char in enumerate(line):
        if quote:
            quote = "" if char == quote else quote
        elif char in "'\"" and (index == 0 or not line[index - 1].isalnum()):
            quote = char
        elif char == "#" and (index == 0 or line[index - 1] in " \t"):
            return index
    return None


def _python_inert(text: str) -> list[tuple[int, int]]:
    starts = [0]
    for line in text.splitlines(keepends=True):
        starts.append(starts[-1] + len(line))
    spans = []
    for token in tokenize.generate_tokens(io.StringIO(text).readline):
        if token.type == tokenize.COMMENT:
            spans.append(
                (starts[token.start[0] - 1] + token.start[1], starts[token.end[0] - 1] + token.end[1])
            )
    for node in ast.walk(ast.parse(text)):
        # a bare string statement (a docstring) is documentation, not data
        if (
            isinstance(node, ast.Expr)
            and isinstance(node.value, ast.Constant)
            and isinstance(node.value.value, str)
        ):
            start = starts[node.lineno - 1] + node.col_offset
            end = starts[(node.end_lineno or node.lineno) - 1] + (node.end_col_offset or 0)
            spans.append((start, end))
    return spans


def mutations(text: str) -> list[tuple[int, int, str]]:
    """(start, end, replacement) for each token: a number's last digit stepped, a name extended."""
    out = []
    for match in _TOKEN.finditer(text):
        token = match.group()
        if token.isdigit():
            new = token[:-1] + str((int(token[-1]) + 1) % 10)
        else:
            new = token + "q"
        out.append((match.start(), match.end(), new))
    return out


def _inert(spans: list[tuple[int, int]], start: int) -> bool:
    return any(a <= start < b for a, b in spans)


def verdict(path: Path, args: list[str], start: int, end: int, new: str, tmp: Path) -> tuple[int, str]:
    """(exit code, output) of diffing ``path`` with its one-token mutant, placed beside it (a copy of
    the pair's folder) so that relative bases still resolve."""
    folder = path.parent
    copy = tmp / "pair" / str(abs(hash(str(folder))))
    if not copy.exists():
        shutil.copytree(folder, copy)
    text = _text(path)
    mutant = copy / f"mutant{path.suffix}"
    mutant.write_text(text[:start] + new + text[end:])
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(compare, "read_config", functools.partial(_read_once, str(copy / path.name)))
        result = CliRunner().invoke(main, ["diff", str(copy / path.name), str(mutant), *args])
    return result.exit_code, result.output


_READINGS: dict[tuple[object, ...], bytes] = {}
_READ_CONFIG = compare.read_config


def _read_once(original: str, ref: str, **how: Any) -> ReadResult:
    """``read_config`` as ``compare`` calls it, the unchanged original read once per way of reading
    it (the YAML reading the pair agrees on, --resolve-bases, --as) and handed out as a deep copy,
    unpickled (a tenth of ``copy.deepcopy``'s CPU): ``compare`` writes into what it reads
    (``@order``, realigned entries), so no case sees another's writes. Every mutant is read afresh;
    so is everything but the original."""
    if ref != original:
        return _READ_CONFIG(ref, **how)
    key = (ref, Path(ref).read_bytes(), *sorted(how.items()))
    if key not in _READINGS:  # a reading that raises is not kept: it raises again, each time
        _READINGS[key] = pickle.dumps(_READ_CONFIG(ref, **how))
    return pickle.loads(_READINGS[key])


def reading_key(path: Path, args: list[str]) -> tuple[str, ...]:
    """What ``sweepgen diff`` reads of a file and its mutant: the text, the reader (by suffix) and
    the arguments; with --resolve-bases also every file of the pair's folder (the bases). Two corpus
    files with one key give the same verdict for every mutation (the pairs copy some files)."""
    key = (_text(path), path.suffix, *args)
    if "--resolve-bases" not in args:
        return key
    folder = path.parent
    files = sorted(p for p in folder.rglob("*") if p.is_file() and p != path)
    return (*key, *(f"{p.relative_to(folder)}\0{p.read_bytes().hex()}" for p in files))


def corpus_cases(files: list[tuple[Path, list[str]]]) -> list[tuple[Path, list[str], int, int, str]]:
    """Every mutation of every file that is not inert, each distinct reading once: a file that is a
    copy of one before it (same text, reader and arguments) is left out, its mutants are the same
    (each file read and tokenised once: this runs when the module is collected, in every xdist
    worker)."""
    out = []
    seen: set[tuple[str, ...]] = set()
    for path, args in files:
        key = reading_key(path, args)
        if key in seen:
            continue
        seen.add(key)
        text = _text(path)
        spans = inert_spans(path, text)
        out.extend(
            (path, args, start, end, new) for start, end, new in mutations(text) if not _inert(spans, start)
        )
    return out


FILES = corpus_files()
CASES = corpus_cases(FILES)


def _check(case: tuple[Path, list[str], int, int, str], tmp: Path) -> None:
    path, args, start, end, new = case
    code, output = verdict(path, args, start, end, new, tmp)
    where = f"{path.relative_to(REPO)} @{start}: {_text(path)[start:end]!r} -> {new!r}"
    assert code in (1, 2), f"{where}: exit {code}\n{output}"
    assert "Traceback" not in output, where


def test_the_corpus_offers_mutations_of_every_kind():
    assert len(FILES) >= 200
    assert len(CASES) > 5000
    # a copy left out takes no reader and no reading with it: each distinct reading keeps its mutants
    assert {path.suffix for path, _ in FILES} == {case[0].suffix for case in CASES}
    mutated = {reading_key(path, args) for path, args, *_ in CASES}
    assert {reading_key(path, args) for path, args in FILES if corpus_cases([(path, args)])} == mutated


# A sample of CASES for a run without the slow test: test_every_one_token_mutation_of_the_corpus
# below checks every one of them in the same lane, so more examples here only repeat its cases
@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.sampled_from(CASES))
def test_one_token_mutation_is_never_reported_equal(tmp_path_factory, case):
    _check(case, tmp_path_factory.mktemp("mutant"))


@pytest.mark.slow
def test_every_one_token_mutation_of_the_corpus(tmp_path):
    bad = []
    for case in CASES:
        try:
            _check(case, tmp_path)
        except AssertionError as err:
            bad.append(str(err).splitlines()[0])
    print(f"{len(CASES)} mutations, {len(bad)} reported equal or crashed")
    assert not bad, "\n".join(bad[:50])
