"""Two properties over every shell, Python, YAML, TOML and JSON file of the diff corpus:

* an edit that changes what the program or loader sees is never reported equal: a digit stepped, a
  name extended, a token deleted, a line (a command, a row, an argument) duplicated. For JSON,
  TOML and plain YAML the loader itself is the judge (the edit counts when json / tomllib / PyYAML
  read different data); for Python and shell, every edit outside comments and docstrings counts;
* a rewrite that changes nothing the program sees is never reported different: keys reordered,
  flow and block style, quoting, indentation and comments (JSON and YAML re-dumped, TOML re-written
  with its keys shuffled, Python through ``ast.unparse``, shell with comments between statements).

Hypothesis picks the file and the edit, with a bounded number of examples so CI's lane stays fast.
"""

from __future__ import annotations

import ast
import json
import random
import re
import shutil
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sweepgen.cli import main
from sweepgen.readers.diff import strictly_equal
from sweepgen.readers.structured.omegayaml import uses_omegaconf

if sys.version_info >= (3, 11):
    import tomllib
else:  # Python 3.10: the same parser as a package
    import tomli as tomllib

REPO = Path(__file__).resolve().parents[2]
CORPUS = REPO / "tests" / "diff_corpus"
KINDS = {".json": "json", ".toml": "toml", ".yaml": "yaml", ".yml": "yaml", ".py": "python",
         ".sh": "shell", ".sbatch": "shell"}  # fmt: skip
_TOKEN = re.compile(r"[0-9]+|[A-Za-z_][A-Za-z0-9_]*")


def _files() -> list[Path]:
    """Corpus files read on their own (no bases to resolve, no spec), one of each pair's sides."""
    out = []
    for folder in sorted(p for p in CORPUS.iterdir() if p.is_dir() and not p.name.endswith("_error")):
        if (folder / "args").exists():
            continue
        for path in sorted(folder.glob("[ab].*")):
            if path.suffix in KINDS:
                out.append(path)
    return out


FILES = _files()


def _verdict(path: Path, text: str, tmp: Path) -> tuple[int, str]:
    copy = tmp / f"edited{path.suffix}"
    original = tmp / f"original{path.suffix}"
    shutil.copyfile(path, original)
    copy.write_text(text)
    result = CliRunner().invoke(main, ["diff", str(original), str(copy)])
    assert "Traceback" not in result.output, result.output
    assert result.exit_code in (0, 1, 2), result.output
    return result.exit_code, result.output


def _plain_yaml(text: str) -> bool:
    return not uses_omegaconf(text) and not re.search(r"^sweepgen:", text, re.M) and "!" not in text


def _load(kind: str, text: str) -> Any:
    """What the program that owns the file reads; raises when it cannot read it."""
    if kind == "json":
        return json.loads(text)
    if kind == "toml":
        return tomllib.loads(text)
    if kind == "omegaconf":
        from omegaconf import OmegaConf

        config = OmegaConf.create(text)
        try:  # what the program reads: `${model.hidden}` and `${.hidden}` are one value to it
            return OmegaConf.to_container(config, resolve=True)
        except Exception:  # noqa: BLE001 - a custom resolver, a missing key: compared as written
            return OmegaConf.to_container(config, resolve=False)
    return yaml.safe_load(text)


def _omegaconf() -> bool:
    try:
        import omegaconf  # noqa: F401 - is the diff extra installed?
    except ImportError:
        return False
    return True


# edits -------------------------------------------------------------------------------------------


def _edits(text: str) -> list[tuple[str, str]]:
    """(kind, edited text) for each token and line edit of ``text``."""
    out = []
    for match in _TOKEN.finditer(text):
        token, a, b = match.group(), match.start(), match.end()
        new = token[:-1] + str((int(token[-1]) + 1) % 10) if token.isdigit() else token + "q"
        out.append(("step" if token.isdigit() else "extend", text[:a] + new + text[b:]))
        out.append(("delete", text[:a] + text[b:]))
    lines = text.splitlines(keepends=True)
    for index, line in enumerate(lines):
        if line.strip() and not line.lstrip().startswith("#"):
            out.append(("duplicate", "".join([*lines[: index + 1], line, *lines[index + 1 :]])))
    return out


def _inert(path: Path, original: str, edited: str) -> bool:
    """Does the edit touch only what the program never sees (comments, docstrings, blank lines)?"""
    if path.suffix == ".py":
        try:
            return _python_meaning(original) == _python_meaning(edited)
        except SyntaxError:
            return False
    return _without_comments(original) == _without_comments(edited)


def _python_meaning(text: str) -> str:
    tree = ast.parse(text)
    for node in ast.walk(tree):
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            # `from m import (A, B, A)` imports A once: a name listed twice is the same import
            unique = {(alias.name, alias.asname): alias for alias in node.names}
            node.names = list(unique.values())
        body = getattr(node, "body", None)
        if not isinstance(body, list) or not body:
            continue
        # a docstring is documentation, and a string statement after it (a docstring line
        # duplicated) evaluates to nothing: neither is what the program reads
        kept = [s for s in body if not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant)
                                        and isinstance(s.value.value, str))]  # fmt: skip
        node.body = kept or [ast.Pass()]  # type: ignore[attr-defined]
    return ast.dump(tree)


def _without_comments(text: str) -> list[str]:
    kept = []
    for line in text.splitlines():
        stripped = line.strip()
        if stripped.startswith("#") and not stripped.startswith(("#SBATCH", "# @package")):
            continue
        kept.append(re.sub(r"\s+#[^'\"]*$", "", line).rstrip())
    return [line for line in kept if line]


# lines that, run twice in a row, leave the program as once; a `return` repeated after itself is
# never reached
_IDEMPOTENT = re.compile(
    r"\s*((export\s+)?[A-Za-z_][A-Za-z0-9_]*=[^=]|export\s+[A-Za-z_][A-Za-z0-9_]*\s*$|[\w.]+\s*=[^=]|(from\s+\S+\s+)?import\s|#!|set\s|&>|[0-9]*>|return\b|\s*$)"
)


def _same_to_the_program(original: str, edited: str) -> bool:
    """A word the edit changed into one the program reads alike: a number written another way
    (`0.00015` and `.00015`), or a script run through `python` or directly."""
    old, new = original.split(), edited.split()
    if len(old) == len(new) + 1:
        index = next((i for i, (a, b) in enumerate(zip(old, new)) if a != b), len(new))
        return re.fullmatch(r"python[0-9.]*", old[index]) is not None
    changed = [(a, b) for a, b in zip(old, new) if a != b]
    if len(old) != len(new) or len(changed) != 1:
        return False
    (a, b), number = changed[0], _number(changed[0][0])
    return a.rpartition("=")[0] == b.rpartition("=")[0] and number is not None and number == _number(b)


def _number(word: str) -> float | None:
    """The number a word spells, or the value of its `key=value` (`kl_coef=0.001"` in a quoted
    list of overrides): `0.001` and `.001` are one float to the program; None when no number."""
    try:
        return float(word.rpartition("=")[2].strip("\"'"))
    except ValueError:
        return None


def _added_line(original: str, edited: str) -> str:
    """The line a duplicate edit added."""
    old, new = original.splitlines(), edited.splitlines()
    index = next((i for i, (a, b) in enumerate(zip(old, new)) if a != b), len(old))
    return new[index]


CASES = [(path, kind, edited) for path in FILES for kind, edited in _edits(path.read_text())]


@settings(
    max_examples=120,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(case=st.sampled_from(CASES))
def test_an_edit_the_program_sees_is_never_reported_equal(tmp_path_factory, case):
    path, kind, edited = case
    original = path.read_text()
    reader = KINDS[path.suffix]
    if reader == "yaml" and not _plain_yaml(original):
        if not _omegaconf() or re.search(r"^sweepgen:", original, re.M) or "!" in original:
            return  # a spec, or a tag: no loader here to judge by
        reader = "omegaconf"
    if reader in ("json", "toml", "yaml", "omegaconf"):
        try:
            seen = not strictly_equal(_load(reader, original), _load(reader, edited))
        except Exception:  # noqa: BLE001 - the loader refuses the edit: sweepgen must refuse it too
            seen = True
    elif kind == "duplicate" and _IDEMPOTENT.match(_added_line(original, edited)):
        return  # `X=8`, `import torch` or `return x` twice: nothing changes for the program
    else:
        seen = not _inert(path, original, edited) and not _same_to_the_program(original, edited)
    if not seen:
        return
    code, output = _verdict(path, edited, tmp_path_factory.mktemp("edit"))
    assert code in (1, 2), f"{path.relative_to(REPO)} ({kind}): reported equal\n{output}"


def test_the_corpus_offers_every_format_and_edit_kind():
    assert {KINDS[p.suffix] for p in FILES} == {"json", "toml", "yaml", "python", "shell"}
    assert {kind for _, kind, _ in CASES} == {"step", "extend", "delete", "duplicate"}


# rewrites ----------------------------------------------------------------------------------------


def _rewrite(path: Path, rng: random.Random) -> str | None:
    text = path.read_text()
    reader = KINDS[path.suffix]
    if reader == "json":
        return json.dumps(_shuffled(json.loads(text), rng), indent=rng.choice([None, 1, 4]))
    if reader == "toml":
        return "# rewritten\n" + _toml(_shuffled(tomllib.loads(text), rng))
    if reader == "yaml":
        if not _plain_yaml(text) or "<<" in text or "&" in text:
            return None
        data = _shuffled(yaml.safe_load(text), rng)
        return "# rewritten\n" + yaml.safe_dump(data, default_flow_style=rng.choice([True, False, None]))
    if reader == "python":
        return ast.unparse(ast.parse(text))  # comments gone, quotes and layout normalised
    if "<<" in text or "\\\n" in text:
        return None  # here-documents and continued lines: a comment there is data
    lines = text.splitlines(keepends=True)
    return "".join(
        # a comment above `#!` would make the shebang a comment: the program run otherwise
        line
        if not line.strip() or rng.random() < 0.5 or (i == 0 and line.startswith("#!"))
        else "# note\n" + line
        for i, line in enumerate(lines)
    )


def _shuffled(value: Any, rng: random.Random) -> Any:
    if isinstance(value, dict):
        items = list(value.items())
        rng.shuffle(items)
        return {k: _shuffled(v, rng) for k, v in items}
    if isinstance(value, list):
        return [_shuffled(v, rng) for v in value]
    return value


def _toml(data: dict[str, Any], prefix: str = "") -> str:
    """A small TOML writer: scalars and arrays inline, tables as [headers], arrays of tables as
    [[headers]]."""
    plain = {k: v for k, v in data.items() if not isinstance(v, dict) and not _tables(v)}
    out = [f"{json.dumps(k)} = {_toml_value(v)}\n" for k, v in plain.items()]
    for key, value in data.items():
        name = f"{prefix}{json.dumps(key)}"
        if isinstance(value, dict):
            out.append(f"\n[{name}]\n{_toml(value, name + '.')}")
        elif _tables(value):
            out.extend(f"\n[[{name}]]\n{_toml(item, name + '.')}" for item in value)
    return "".join(out)


def _tables(value: Any) -> bool:
    return isinstance(value, list) and bool(value) and all(isinstance(v, dict) for v in value)


def _toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, str):
        return json.dumps(value)
    if isinstance(value, list):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{json.dumps(k)} = {_toml_value(v)}" for k, v in value.items()) + "}"
    raise TypeError(type(value))


@settings(
    max_examples=80,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(path=st.sampled_from(FILES), seed=st.integers(0, 2**16))
def test_a_rewrite_the_program_cannot_see_is_never_reported_different(tmp_path_factory, path, seed):
    rewritten = _rewrite(path, random.Random(seed))
    if rewritten is None:
        return
    code, output = _verdict(path, rewritten, tmp_path_factory.mktemp("rewrite"))
    assert code == 0, f"{path.relative_to(REPO)}: a rewrite reported as\n{output}\n---\n{rewritten}"


@pytest.mark.parametrize("kind", ["json", "toml", "yaml", "python", "shell"])
def test_every_format_has_a_rewrite(kind):
    rng = random.Random(0)
    assert any(_rewrite(p, rng) is not None for p in FILES if KINDS[p.suffix] == kind)
