"""Read any config ``diff`` can compare, chosen by file suffix, never by guessing from content.

``--as`` (``kind=``) names the reader for a file whose suffix does not say it (a ``.conf`` that is
JSON, a launch script without ``.sh``).

One interface for every format: ``read_config(path) -> ReadResult`` (the data as a plain mapping,
the line of each path it knows, warnings, and not-evaluated nodes inside the data). Supported:
``.yaml``/``.yml`` (YAML 1.1 by default, as PyYAML and OmegaConf read it; ``yaml_version="1.2"``
for the spec reader's rules), ``.json``, ``.toml``, ``.py`` (a safe AST evaluator, never imported),
``.sh``/``.bash``/``.sbatch`` (the tree-sitter bash grammar). ``SPEC.yaml:VARIANT`` is resolved by
the CLI through the compile API: readers never import the compile pipeline.
"""

from __future__ import annotations

import functools
from pathlib import Path

from sweepgen.errors import ConfigError, Location
from sweepgen.fs.safefs import kind_of as kind_of_mode
from sweepgen.readers.model import MAX_VALUES, ReadResult, tree_size

SUFFIXES = (".yaml", ".yml", ".json", ".toml", ".py", ".sh", ".bash", ".sbatch", ".slurm")
# which reader each suffix gets, and the names `--as` forces one by
KINDS = {
    ".yaml": "yaml",
    ".yml": "yaml",
    ".json": "json",
    ".toml": "toml",
    ".py": "python",
    ".sh": "shell",
    ".bash": "shell",
    ".sbatch": "shell",
    ".slurm": "shell",
}
READERS = ("json", "yaml", "toml", "python", "shell")


def kind_of(ref: str, forced: str | None = None) -> str | None:
    """The reader a file gets: the one ``forced`` (``--as``), else its suffix's; None if neither."""
    return forced or _suffix_kind(ref)


@functools.lru_cache(maxsize=256)  # asked several times per side (sniffing, reading)
def _suffix_kind(ref: str) -> str | None:
    return KINDS.get(Path(ref).suffix.lower())


def _reader_of(ref: str, path: Path, kind: str | None) -> str:
    """The reader of an existing regular file: ``kind``, else its suffix's; an error otherwise."""
    if not path.is_file():
        if path.exists():
            raise ConfigError(
                f"is a {kind_of_mode(path.stat().st_mode)}, not a regular file; never read",
                location=Location(ref),
                hint="diff reads config files only (a FIFO would block it): give a file",
            )
        raise ConfigError(
            "no such file",
            location=Location(ref),
            hint="give a config file path, or SPEC.yaml:VARIANT for a variant of a sweep spec",
        )
    reader = kind_of(ref, kind)
    if reader is None:
        raise ConfigError(
            "a .env file has no reader"
            if _is_dotenv(path)
            else f"cannot tell the format of a {path.suffix or 'suffix-less'} file",
            location=Location(ref),
            hint=_DOTENV_HINT
            if _is_dotenv(path)
            else f"supported suffixes: {', '.join(SUFFIXES)}; "
            f"or name the reader with --as {'|'.join(READERS)}",
        )
    return reader


# No reader follows docker compose's or python-dotenv's rules (which differ between them): each
# decodes `\t` in double quotes where bash keeps it, so `--as shell` can call a real change equal.
_DOTENV_HINT = (
    "a .env file is read by docker compose and python-dotenv with their own quoting rules, which "
    'sweepgen does not model (`A="a\\tb"` is a tab to them, a backslash and t to bash); compare '
    "it as text (`diff -u`), or with --as shell only if the file is sourced by bash"
)


def _is_dotenv(path: Path) -> bool:
    name = path.name.lower()
    return name == ".env" or name.endswith(".env") or name.startswith(".env.")


def read_config(
    ref: str, *, resolve_bases: bool = False, yaml_version: str = "1.1", kind: str | None = None
) -> ReadResult:
    """The config in the file ``ref``, read as ``kind`` (json, yaml, toml, python, shell) when
    given, else as its suffix says.

    ``resolve_bases`` follows mmengine ``_base_`` files, ``with read_base()`` imports and
    detectron2-style relative imports (see ``sweepgen.readers.python.pyinherit``); without it, each file
    is read as written (its own names still resolve).
    """
    path = Path(ref)
    reader = _reader_of(ref, path, kind)
    if resolve_bases and reader in ("python", "yaml", "json", "toml"):
        if reader != KINDS.get(path.suffix.lower()):
            raise ConfigError(
                f"--resolve-bases follows bases by their suffix, and this file is read --as {reader}",
                location=Location(ref),
                hint="give the file the suffix of its format, or leave out --resolve-bases",
            )
        result = _read(path, "bases", yaml_version)
    else:
        result = _read(path, reader, yaml_version)
    try:
        too_big = tree_size(result.data) > MAX_VALUES
    except RecursionError:
        too_big = True
    if too_big:
        # shared references (YAML aliases, `x = [x, x]`) can spell an exponentially large tree
        raise ConfigError(
            f"the config expands to more than {MAX_VALUES:,} values (or nests too deeply)",
            location=Location(ref),
            hint="aliases or repeated references multiply its size; write the data out plainly",
        )
    return result


# Each reader is imported when a file of its kind is read: `sweepgen diff a.json b.json` never loads
# the shell or Python readers (tens of ms of start-up each), and a shell diff never loads PyYAML.
def _read(path: Path, reader: str, yaml_version: str) -> ReadResult:
    if reader == "bases":
        from sweepgen.readers.python.pyinherit import read_with_bases  # noqa: PLC0415 - see above

        return read_with_bases(path, yaml_version=yaml_version)
    if reader == "python":
        from sweepgen.readers.python.pyast import read_python_file  # noqa: PLC0415 - see above

        return read_python_file(path)
    if reader in ("yaml", "json", "toml"):
        from sweepgen.readers.structured.formats import STRUCTURED, read_yaml_file  # noqa: PLC0415 - see above

        if reader == "yaml":
            return read_yaml_file(path, yaml_version, header=True)
        return STRUCTURED["." + reader](path)
    from sweepgen.readers.shell.shellconfig import read_shell_file  # noqa: PLC0415 - see above

    return read_shell_file(path)
